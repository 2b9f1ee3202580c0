// lsh_lower_bound — paper 000 Theorem 4.3 (proof in App. A.2): the dense lower bound.
//
// On the slice G ∩ [−1, 1]^d of a k-dimensional subspace spanned by cube diagonals, the family
// f_σ(x) = Σ_v σ_v max(0, ε − L‖x − v‖) (ERRATA 000 sign fix), v the centres of a grid of cubes of
// side 2ε/L, has 2^{|V|} members that are (1) L-Lipschitz, (2) as many as 2^{(√d L/(Cε))^k},
// (3) pairwise 2ε apart in sup norm. So a dense model with B bits per parameter needs width
// t ≥ |V|/B to ε-approximate all of them, while Theorem 4.1's LSH learner uses a table of
// O((L√d/ε)^k) buckets (ERRATA 000) and a forward pass of O(dk log(L√d/ε)).
//
// This run builds the family, measures (1)–(3) on random members and point pairs, counts |V|
// against a rigorous volume bound, reports C, and sets the width bound next to the LSH table size
// (formula, and the non-empty buckets of an actual Euclidean LSH of width ε/L on G).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/lower_bound.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::lsh;

namespace {

// A uniformly random unit vector of R^m.
Eigen::VectorXd unit(Rng& rng, Eigen::Index m) {
  Eigen::VectorXd u(m);
  do {
    for (Eigen::Index i = 0; i < m; ++i) u(i) = rng.normal();
  } while (u.norm() == 0);
  return u / u.norm();
}

// Number of distinct columns of a code matrix.
Eigen::Index distinct_codes(const CodeMatrix& codes) {
  std::vector<std::vector<std::int32_t>> cols(static_cast<std::size_t>(codes.cols()));
  for (Eigen::Index n = 0; n < codes.cols(); ++n) cols[n].assign(codes.col(n).data(), codes.col(n).data() + codes.rows());
  std::sort(cols.begin(), cols.end());
  return static_cast<Eigen::Index>(std::unique(cols.begin(), cols.end()) - cols.begin());
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "lsh_lower_bound",
                     .paper = "000",
                     .claims = {"Theorem 4.3"},
                     .description = "The dense lower bound's hard family of L-Lipschitz functions (paper 000 Theorem 4.3, App. A.2)",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();

  int d = 0, k = 0, members = 0, pairs = 0, bits = 32;
  double eps = 0, L = 0;
  analysis.scaled_option("--d", d, 16, 64, "ambient dimension d")->check(CLI::Range(1, 4096));
  analysis.scaled_option("--k", k, 2, 2, "dimension k of the subspace (1, 2 or 3)")->check(CLI::Range(1, 3));
  analysis.scaled_option("--eps", eps, 0.1, 0.05, "ℓ∞ error ε (bump height)")->check(CLI::Range(1e-4, 100.0));
  analysis.scaled_option("--L", L, 1.0, 1.0, "Lipschitz constant L")->check(CLI::Range(1e-4, 1e4));
  analysis.scaled_option("--members", members, 6, 16, "random members σ tested")->check(CLI::Range(2, 1000));
  analysis.scaled_option("--pairs", pairs, 4000, 40000, "point pairs per member and pair kind")->check(CLI::Range(10, 10000000));
  app.add_option("--bits", bits, "bits B per parameter of the dense model")->check(CLI::Range(1, 64))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    const std::uint64_t seed = a.common.seed;
    // --- The family ----------------------------------------------------------------------------
    BumpFamily F;
    try {
      F = make_bump_family(d, k, eps, L);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
    const Eigen::Index V = F.size();
    if (V < 2)
      throw InputError(fmt::format("--eps {}: only {} cube(s) of side 2ε/L fit in the slice; need √d L/ε well above 2k = {}", eps, V, 2 * k));
    const double s = F.side, rad = F.radius();

    // Members: random σ, plus σ_0 with one sign flipped (the closest pair: they differ at one centre).
    std::vector<Eigen::VectorXd> sigma;
    for (int m = 0; m < members; ++m) sigma.push_back(random_signs(F, seed, stream_id(1, m)));
    Rng pick(seed, stream_id(1, 1000000));
    const Eigen::Index flipped_at = static_cast<Eigen::Index>(pick.below(static_cast<std::uint64_t>(V)));
    sigma.push_back(sigma[0]);
    sigma.back()(flipped_at) *= -1;
    const int M = static_cast<int>(sigma.size());

    // --- (1) L-Lipschitz: four kinds of pairs per member ------------------------------------------
    //   uniform: x, x' uniform on G ∩ cube;  local: x' = x + E δ, |δ| ∈ [0.05 s, 1.5 s] (straddles cells);
    //   off: x' = x + g, g ∈ R^d, |g| ∈ [0.05 s, 1.5 s] (the definition asks it on R^d);
    //   radial: x = v + t u, x' = v + t' u in one bump, t ∈ [0, 0.45 ε/L], t' ∈ [0.55 ε/L, ε/L]: ratio = L.
    const char* kinds[] = {"uniform", "local", "off_slice", "radial"};
    Table ratio_table{"lipschitz", {"member", "kind", "max_ratio_over_L", "min_pair_distance", "pairs"}, {}};
    double max_ratio = 0, radial_min = INFINITY, max_grad = 0;
    int overlap = 0;
    auto progress = a.progress("members", static_cast<std::size_t>(M));
    for (int m = 0; m < M; ++m) {
      const Eigen::VectorXd& sg = sigma[m];
      for (int kind = 0; kind < 4; ++kind) {
        const std::uint64_t st = stream_id(stream_id(2, m), kind);
        Rng rng(seed, stream_id(st, 1));
        Eigen::MatrixXd X1, X2;
        if (kind == 3) {
          X1.resize(d, pairs);
          X2.resize(d, pairs);
          for (int p = 0; p < pairs; ++p) {
            const Eigen::Index v = static_cast<Eigen::Index>(rng.below(static_cast<std::uint64_t>(V)));
            const Eigen::VectorXd u = F.E * unit(rng, k);
            X1.col(p) = F.centres.col(v) + rng.uniform(0.0, 0.45 * rad) * u;
            X2.col(p) = F.centres.col(v) + rng.uniform(0.55 * rad, rad) * u;
          }
        } else {
          X1 = sample_slice(F, pairs, seed, stream_id(st, 0));
          if (kind == 0) {
            X2 = sample_slice(F, pairs, seed, stream_id(st, 2));
          } else {
            X2 = X1;
            for (int p = 0; p < pairs; ++p) {
              const Eigen::VectorXd u = (kind == 1) ? Eigen::VectorXd(F.E * unit(rng, k)) : unit(rng, d);
              X2.col(p) += rng.uniform(0.05 * s, 1.5 * s) * u;
            }
          }
          overlap = std::max({overlap, max_overlap(F, X1), max_overlap(F, X2)});
          max_grad = std::max(max_grad, gradient(F, sg, X1).colwise().norm().maxCoeff());
        }
        const RatioStats st_ratio = lipschitz_ratios(F, sg, X1, X2);
        ratio_table.add_row({double(m), double(kind), st_ratio.max_ratio / L, st_ratio.min_distance, double(st_ratio.pairs)});
        max_ratio = std::max(max_ratio, st_ratio.max_ratio);
        if (kind == 3) {
          // The smallest radial ratio: every radial pair in one bump has ratio exactly L.
          const Eigen::VectorXd f1 = evaluate(F, sg, X1), f2 = evaluate(F, sg, X2);
          for (int p = 0; p < pairs; ++p) radial_min = std::min(radial_min, std::abs(f1(p) - f2(p)) / (X1.col(p) - X2.col(p)).norm());
        }
      }
      progress->advance();
    }
    progress->finish();

    // --- (3) separation: values at the centres, pairwise sup-distance on the grid ----------------
    Eigen::MatrixXd at_centres(V, M);
    double centre_err = 0;
    for (int m = 0; m < M; ++m) {
      at_centres.col(m) = evaluate(F, sigma[m], F.centres);
      centre_err = std::max(centre_err, (at_centres.col(m) - eps * sigma[m]).cwiseAbs().maxCoeff());
    }
    Table sep_table{"separation", {"member1", "member2", "sup_distance_on_grid", "differing_signs"}, {}};
    double min_sup = INFINITY;
    int tested_pairs = 0;
    for (int m1 = 0; m1 < M; ++m1)
      for (int m2 = m1 + 1; m2 < M; ++m2) {
        const Eigen::Index differ = (sigma[m1].array() != sigma[m2].array()).count();
        if (differ == 0) continue;  // equal members (possible only for tiny |V|)
        const double sup = (at_centres.col(m1) - at_centres.col(m2)).cwiseAbs().maxCoeff();
        sep_table.add_row({double(m1), double(m2), sup, double(differ)});
        min_sup = std::min(min_sup, sup);
        ++tested_pairs;
      }
    const double spacing = min_centre_spacing(F);

    // --- (2) the family's size, C, and the width bound vs the LSH table -----------------------------
    const double count_lb = centre_count_lower_bound(d, k, eps, L);
    const double C = proof_constant(d, k, eps, L, double(V));
    double kfact = 1;
    for (int j = 2; j <= k; ++j) kfact *= j;
    const double C_inf = std::pow(kfact, 1.0 / k);
    const double t_min = width_lower_bound(double(V), bits);
    const double table = lsh_table_size(d, k, eps, L);
    const double sqd = std::sqrt(double(d));
    const double samples_lb = k * std::pow(sqd * L / (C * eps), k) * std::log(2 * sqd * L / (C * eps));

    // An actual Euclidean LSH (paper 000 §2.2, hash.hpp) of width ε/L with D = 2k hashes, on points
    // uniform on G: the non-empty buckets met by the samples (a lower estimate of the count).
    const Eigen::Index lsh_D = 2 * k, lsh_N = std::min<Eigen::Index>(200000, 20 * V);
    const EuclideanLsh lsh = make_euclidean_lsh(d, lsh_D, eps / L, seed, 3);
    const Eigen::Index buckets = distinct_codes(hash(lsh, sample_slice(F, lsh_N, seed, 4)));

    // Sweep of |V| against L/ε for k = 1, 2, 3 (counting only).
    Table size_table{"family_size", {"k", "eps", "sqrt_d_L_over_eps", "centres", "lower_bound", "C", "lsh_table_size", "width_lower_bound"}, {}};
    plot::Figure size_fig{.name = "lsh_lower_bound_size",
                          .title = fmt::format("Theorem 4.3: family size log2|F| = |V| against √d L/ε, d = {}", d),
                          .xlabel = "√d L / ε",
                          .ylabel = "count"};
    size_fig.logx = size_fig.logy = true;
    size_fig.legend = "bottom right";
    json slopes = json::object();
    const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c"};
    for (int kk = 1; kk <= 3; ++kk) {
      if (d % (1 << (kk - 1)) != 0 || d < kk) continue;
      std::vector<double> xs, vs, lbs, tbs;
      for (double f : {0.25, 0.35, 0.5, 0.71, 1.0, 1.41, 2.0}) {
        const double e = eps / f;
        const double n_axis = std::floor(sqd * L / e);  // cells per axis, ⌊2√d/(2ε/L)⌋
        if (std::pow(n_axis, kk) > 4e6) continue;
        const BumpFamily G = make_bump_family(d, kk, e, L);
        if (G.size() < 1) continue;
        const double x = sqd * L / e;
        xs.push_back(x);
        vs.push_back(double(G.size()));
        lbs.push_back(std::max(centre_count_lower_bound(d, kk, e, L), 1e-300));
        tbs.push_back(lsh_table_size(d, kk, e, L));
        size_table.add_row({double(kk), e, x, double(G.size()), centre_count_lower_bound(d, kk, e, L),
                            proof_constant(d, kk, e, L, double(G.size())), tbs.back(), width_lower_bound(double(G.size()), bits)});
      }
      if (xs.empty()) continue;
      slopes[fmt::format("k{}", kk)] = xs.size() >= 2 ? stats::loglog_fit(xs, vs).slope : NAN;
      size_fig.series.push_back({.x = xs, .y = vs, .label = fmt::format("|V|, k = {}", kk), .style = plot::Style::linespoints, .color = colors[kk - 1]});
      std::vector<double> lx, ly;
      for (std::size_t i = 0; i < xs.size(); ++i)
        if (lbs[i] >= 1) lx.push_back(xs[i]), ly.push_back(lbs[i]);
      if (!lx.empty())
        size_fig.series.push_back({.x = lx, .y = ly, .label = fmt::format("(√dL/ε − 2k)^k/k!, k = {}", kk), .color = colors[kk - 1], .width = 1.5, .dashed = true});
      size_fig.series.push_back({.x = xs, .y = tbs, .label = fmt::format("LSH table (L√d/ε)^k, k = {}", kk), .style = plot::Style::lines, .color = colors[kk - 1], .width = 1.0});
    }

    // --- Checks ----------------------------------------------------------------------------------
    const std::string setting = fmt::format("d = {}, k = {}, ε = {}, L = {}: |V| = {} centres, cube side 2ε/L = {:.4g}", d, k, eps, L, V, s);
    r.add_check({.id = "thm43_lipschitz",
                 .claim = "paper 000 Theorem 4.3",
                 .statement = "every member f_σ is L-Lipschitz: max |f_σ(x) − f_σ(x')| / ‖x − x'‖₂ ≤ L over the tested pairs",
                 .predicted = L,
                 .measured = max_ratio,
                 .holds = max_ratio <= L * (1 + 1e-12),
                 .tolerance = {{"relative", 1e-12}, {"derivation", "rounding of ε − L‖x − v‖ at pair distances ≥ 0.05·2ε/L"}},
                 .note = fmt::format("{} members ({} random, plus member 0 with the sign at centre {} flipped) × 4 kinds × {} pairs: "
                                     "uniform on G ∩ cube, local steps in G of 0.05–1.5 cube sides (straddling cells), steps off G in R^d, "
                                     "and radial pairs inside one bump, whose ratios are all exactly L (smallest radial ratio/L = {:.15f}: "
                                     "the bound is attained). Largest ‖∇f_σ‖ at the sampled points {:.15g}. Bumps use the ERRATA 000 "
                                     "form σ_v max(0, ε − L‖x − v‖). {}.",
                                     M, members, flipped_at, pairs, radial_min / L, max_grad, setting)});
    r.add_check({.id = "thm43_separation",
                 .claim = "paper 000 Theorem 4.3",
                 .statement = "for distinct members, sup_x |f_σ(x) − f_σ'(x)| ≥ 2ε, measured on the grid centres (App. A.2; the theorem needs > ε)",
                 .predicted = 2 * eps,
                 .measured = min_sup,
                 .holds = min_sup >= 2 * eps * (1 - 1e-12),
                 .tolerance = {{"relative", 1e-12}},
                 .note = fmt::format("Minimum over {} pairs of distinct tested members (including the pair differing at one centre) of "
                                     "max over the {} centres of |f_σ(v) − f_σ'(v)|, every value computed by evaluating the members at "
                                     "the centres. max_v |f_σ(v) − σ_v ε| = {:.3g} over all members. {}.",
                                     tested_pairs, V, centre_err, setting)});
    r.add_check({.id = "thm43_supports_disjoint",
                 .claim = "paper 000 Theorem 4.3",
                 .statement = "bump supports B(v, ε/L) are disjoint: distinct centres are ≥ 2ε/L apart, and no point lies in two supports",
                 .predicted = 2 * rad,
                 .measured = spacing,
                 .holds = spacing >= 2 * rad * (1 - 1e-12) && overlap <= 1,
                 .tolerance = {{"relative", 1e-12}, {"max_supports_at_a_point", 1}},
                 .note = fmt::format("Smallest distance from a centre to the centres of its 3^k − 1 neighbouring cells, in R^d. "
                                     "Largest number of open supports containing one sampled point: {} (of {} points). Radius ε/L = "
                                     "half the cube side, so each support is the ball inscribed in its cube.",
                                     overlap, 6 * M * pairs)});
    r.add_check({.id = "thm43_family_size",
                 .claim = "paper 000 Theorem 4.3",
                 .statement = "log2 |F| = |V| ≥ (√d L/(C ε))^k: counted |V| ≥ the volume bound (√d L/ε − 2k)^k / k!",
                 .predicted = count_lb,
                 .measured = double(V),
                 .holds = double(V) >= count_lb,
                 .tolerance = {{"derivation", "cubes meeting the inner parallel body at depth s√k of the cross-polytope P = "
                                              "{Σ|y_j| ≤ √d} lie in P and cover it: |V| s^k ≥ (2(√d − ks))^k/k!"}},
                 .note = fmt::format("G is spanned by {} orthogonal cube diagonals; G ∩ [−1,1]^d is the cross-polytope Σ|y_j| ≤ √d "
                                     "(volume (2√d)^k/k!). V = centres of whole grid cubes inside it ({} cubes have their centre inside). "
                                     "ERRATA 000 (2√d vs √d): with the proof's form (√d L/(Cε))^k, the measured |V| gives C = {:.4f} "
                                     "(→ (k!)^(1/k) = {:.4f} as ε → 0; the App. A.2 property-2 form (2√dL/(Cε))^k gives C = {:.4f}). "
                                     "log-log slopes of |V| against √dL/ε: {}.",
                                     k, F.centre_count, C, C_inf, 2 * C, slopes.dump())});
    r.add_check({.id = "thm43_width_vs_lsh",
                 .claim = "paper 000 Theorem 4.3",
                 .statement = "the dense width bound t ≥ log2|F|/B = |V|/B stays below Theorem 4.1's LSH table size (L√d/ε)^k (the bounds nearly match)",
                 .predicted = table,
                 .measured = t_min,
                 .holds = t_min <= table,
                 .tolerance = {{"bits_per_parameter", bits}},
                 .note = fmt::format("t ≥ {:.6g} for B = {}; LSH table (L√d/ε)^k = {:.6g} (ERRATA 000 reading, O-constant 1): ratio {:.4g}. "
                                     "A Euclidean LSH (hash.hpp, D = 2k = {} hashes, width ε/L, a_i ~ N(0, I_d) unnormalised) met {} "
                                     "non-empty buckets with {} points uniform on G. Dense forward pass ≥ d·t = {:.4g} multiply-adds vs the "
                                     "LSH's d·D = {}. Sample bound Ω(k(√dL/(Cε))^k log(2√dL/(Cε))) = {:.4g} with the measured C.",
                                     t_min, bits, table, table / t_min, lsh_D, buckets, lsh_N, d * t_min, d * lsh_D, samples_lb)});

    r.data["centres"] = V;
    r.data["centre_count_centres_inside"] = F.centre_count;
    r.data["cells_per_axis"] = F.cells_per_axis;
    r.data["log2_family_size"] = F.log2_family_size();
    r.data["count_lower_bound"] = count_lb;
    r.data["C"] = C;
    r.data["C_asymptotic"] = C_inf;
    r.data["proof_count_with_C_asymptotic"] = proof_count(d, k, eps, L, C_inf);
    r.data["width_lower_bound"] = t_min;
    r.data["bits_per_parameter"] = bits;
    r.data["lsh_table_size"] = table;
    r.data["lsh_nonempty_buckets"] = buckets;
    r.data["lsh_hashes"] = lsh_D;
    r.data["lsh_points"] = lsh_N;
    r.data["sample_lower_bound"] = samples_lb;
    r.data["max_lipschitz_ratio"] = max_ratio;
    r.data["min_radial_ratio"] = radial_min;
    r.data["max_gradient_norm"] = max_grad;
    r.data["min_sup_distance"] = min_sup;
    r.data["min_centre_spacing"] = spacing;
    r.data["max_overlap"] = overlap;
    r.data["loglog_slopes"] = slopes;

    // --- Tables: the grid with member 0 --------------------------------------------------------------
    Table grid{"grid", {"index"}, {}};
    for (int j = 0; j < k; ++j) grid.columns.push_back(fmt::format("y{}", j + 1));
    grid.columns.insert(grid.columns.end(), {"sigma0", "f0_at_centre"});
    for (Eigen::Index v = 0; v < V; ++v) {
      std::vector<double> row{double(v)};
      for (int j = 0; j < k; ++j) row.push_back(F.centres_y(j, v));
      row.push_back(sigma[0](v));
      row.push_back(at_centres(v, 0));
      grid.add_row(std::move(row));
    }
    a.add_table(std::move(grid));
    a.add_table(std::move(ratio_table));
    a.add_table(std::move(sep_table));
    a.add_table(std::move(size_table));

    // --- Figures ---------------------------------------------------------------------------------
    if (k == 1) {
      plot::Figure fig{.name = "lsh_lower_bound_member",
                       .title = fmt::format("Two members along the diagonal, d = {}, ε = {}, L = {} ({} bumps)", d, eps, L, V),
                       .xlabel = "position along the diagonal e_1, y = ⟨x, 1⟩/√d",
                       .ylabel = "f_σ(y e_1)"};
      const int P = static_cast<int>(std::min<Eigen::Index>(20000, 40 * V + 1));
      Eigen::MatrixXd X(d, P);
      std::vector<double> ys(P);
      for (int p = 0; p < P; ++p) {
        ys[p] = -sqd + 2 * sqd * p / (P - 1);
        X.col(p) = ys[p] * F.E.col(0);
      }
      const Eigen::VectorXd f0 = evaluate(F, sigma[0], X), f1 = evaluate(F, sigma.back(), X);
      fig.series.push_back({.x = ys, .y = std::vector<double>(f1.data(), f1.data() + P), .label = fmt::format("σ_0 with centre {} flipped", flipped_at), .color = "#d62728", .dashed = true});
      fig.series.push_back({.x = ys, .y = std::vector<double>(f0.data(), f0.data() + P), .label = "member σ_0", .color = "#1f77b4"});
      fig.lines.push_back({.at = eps, .vertical = false, .label = "±ε"});
      fig.lines.push_back({.at = -eps, .vertical = false});
      a.add_figure(std::move(fig));
    } else {
      // Heat-map-like scatter on a window of about 12 × 12 cubes around the midpoint of P's edge
      // y1 + y2 = √d (y3 at the middle cube's centre for k = 3), points binned by value.
      const double y3 = k == 3 ? F.grid_lo + (std::floor(F.cells_per_axis / 2.0) + 0.5) * s : 0.0;
      const double half = std::min(6 * s, sqd / 2), c1 = sqd / 2, c2 = sqd / 2;
      const int px = 120;
      std::vector<Eigen::VectorXd> pts;
      for (int i = 0; i < px; ++i)
        for (int j = 0; j < px; ++j) {
          Eigen::VectorXd y = Eigen::VectorXd::Zero(k);
          y(0) = c1 - half + 2 * half * (i + 0.5) / px;
          y(1) = c2 - half + 2 * half * (j + 0.5) / px;
          if (k == 3) y(2) = y3;
          if (in_slice(F, y, 0.0)) pts.push_back(y);
        }
      Eigen::MatrixXd Y(k, static_cast<Eigen::Index>(pts.size()));
      for (std::size_t i = 0; i < pts.size(); ++i) Y.col(i) = pts[i];
      const Eigen::VectorXd fv = evaluate(F, sigma[0], F.E * Y);
      plot::Figure fig{.name = "lsh_lower_bound_member",
                       .title = fmt::format("σ_0 by value, d = {}, k = {}, ε = {}, L = {}{}", d, k, eps, L,
                                            k == 3 ? fmt::format(" (y3 = {:.3g})", y3) : std::string()),
                       .xlabel = "y_1",
                       .ylabel = "y_2"};
      const double edges[] = {-INFINITY, -0.6, -0.2, 0.2, 0.6, INFINITY};
      const char* bin_colors[] = {"#08519c", "#9ecae1", "#d9d9d9", "#fcae91", "#a50f15"};
      const char* bin_labels[] = {"f ≤ −0.6ε", "−0.6ε < f ≤ −0.2ε", "|f| < 0.2ε", "0.2ε ≤ f < 0.6ε", "f ≥ 0.6ε"};
      for (int b = 0; b < 5; ++b) {
        plot::Series sr{.label = bin_labels[b], .style = plot::Style::points, .color = bin_colors[b], .width = 1.0};
        for (Eigen::Index i = 0; i < Y.cols(); ++i)
          if (fv(i) / eps > edges[b] && fv(i) / eps <= edges[b + 1]) sr.x.push_back(Y(0, i)), sr.y.push_back(Y(1, i));
        if (!sr.x.empty()) fig.series.push_back(std::move(sr));
      }
      const double lim = sqd - std::abs(y3);
      fig.series.push_back({.x = {c1 - half, c1 + half}, .y = {lim - (c1 - half), lim - (c1 + half)}, .label = "edge of G ∩ cube", .color = "black"});
      fig.xrange = std::make_pair(c1 - half, c1 + half);
      fig.yrange = std::make_pair(c2 - half, c2 + half);
      fig.width = fig.height = 800;
      fig.legend = "outside right";
      a.add_figure(std::move(fig));
    }
    a.add_figure(std::move(size_fig));
  });
}
