// lsh_buckets — paper 000, Lemma 4.2: the buckets of a Euclidean LSH restricted to a k-subspace.
//
// Lemma 4.2: a Euclidean LSH in d dimensions with K = C·k hyperplanes and width ε partitions
// Γ = (k-subspace) ∩ [−1, 1]^d into buckets such that, with probability ≥ 0.9,
//   (1) every bucket's part of Γ has diameter ≤ ε/c,
//   (2) at most (2√d/ε)^{O(k)} buckets meet Γ.
// The proof: x₁, x₂ in one bucket ⇒ ‖A(x₁ − x₂)‖_∞ ≤ ε ⇒ ‖A(x₁ − x₂)‖₂ ≤ ε√K (ERRATA 000: √K, not
// √k), and σ_min(A) ≥ c√k w.p. ≥ 9/10 (eq. 3), A = A_full U ∈ R^{K×k} the directions projected on Γ.
//
// For each (d, k, ε, C) and trial (lsh/bucket_geometry's bucket_trial): a Haar subspace Γ, a fresh
// LSH, uniform samples on Γ hashed into buckets (exact code keys); per bucket the diameter from its
// samples and, for k ≤ 3, exactly from the vertices of the bucket polytope; σ_min(A U); the number
// of buckets hit and the arrangement bound on it.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/lsh/bucket_geometry.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::lsh;

namespace {

struct Config {
  int d, k, C;
  double eps;
};

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "lsh_buckets",
                     .paper = "000",
                     .claims = {"Lemma 4.2"},
                     .description = "Bucket diameters and bucket counts of a Euclidean LSH on a k-subspace (paper 000 Lemma 4.2)",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();

  std::string d_text, k_text, eps_text, C_text;
  int trials = 0, samples = 0;
  analysis.scaled_option("--d", d_text, std::string("8,32"), std::string("8,32,128"), "ambient dimensions d, comma-separated");
  analysis.scaled_option("--k", k_text, std::string("1,2"), std::string("1,2,3"), "subspace dimensions k ≤ d, comma-separated");
  analysis.scaled_option("--eps", eps_text, std::string("1,0.5"), std::string("2,1"), "LSH widths ε (ε_LSH), comma-separated");
  analysis.scaled_option("--C", C_text, std::string("4"), std::string("4"), "hyperplane factors C (K = C·k hash functions), comma-separated");
  analysis.scaled_option("--trials", trials, 12, 30, "independent (Γ, LSH) draws per grid point")->check(CLI::Range(2, 100000));
  analysis.scaled_option("--samples", samples, 5000, 10000, "uniform samples on Γ per trial")->check(CLI::Range(100, 10000000));

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    const auto ds = parse_number_list("--d", d_text, 1, 4096, true);
    const auto ks = parse_number_list("--k", k_text, 1, 16, true);
    const auto epss = parse_number_list("--eps", eps_text, 1e-3, 1e3, false);
    const auto Cs = parse_number_list("--C", C_text, 1, 64, true);
    std::vector<Config> grid;
    for (double d : ds)
      for (double k : ks) {
        if (k > d) throw InputError(fmt::format("--k: k = {} exceeds d = {}; need k ≤ d", k, d));
        for (double C : Cs)
          for (double e : epss) grid.push_back({int(d), int(k), int(C), e});
      }

    // The constant c of the diameter statement, fixed before the run: with the √K normalisation of
    // ERRATA 000, ε√K/σ_min(AU) ≤ ε/c iff σ_min(AU) ≥ c√K. AU is a K × k matrix of i.i.d. N(0, 1)
    // (U orthonormal, a_i ~ N(0, I_d)), whose σ_min concentrates at √K − √k (Gordon's inequality
    // E σ_min ≥ √K − √k; the Marchenko–Pastur edge): c = 1 − √(k/K) = 1 − 1/√C, the typical value.
    auto c_of = [](int C) { return 1.0 - 1.0 / std::sqrt(static_cast<double>(C)); };
    // Eq. (3) with an explicit constant (Davidson–Szarek 2001, Thm II.13): P[σ_min ≥ √K − √k − t] ≥ 1 − e^{−t²/2};
    // t = √(2 ln 10) makes it ≥ 0.9.
    const double t90 = std::sqrt(2 * std::log(10.0));
    const double alpha = 0.05;                    // family-wise level of the intervals
    const double alpha_each = alpha / grid.size();  // Bonferroni over the grid points

    Table per_trial{"trials",
                    {"d", "k", "eps", "C", "trial", "sigma_min", "sigma_min_over_sqrt_k", "sigma_min_over_sqrt_K", "buckets",
                     "singleton_fraction", "diam_sampled", "diam_exact", "diam_bound", "eps_over_c", "arrangement_bound_log",
                     "acceptance"},
                    {}};
    Table per_point{"grid",
                    {"d", "k", "eps", "C", "c", "p_hat", "p_lo", "p_hi", "max_diam", "median_diam", "eps_over_c", "buckets_mean",
                     "buckets_log_mean", "singleton_fraction", "beta_point", "sigma_min_median"},
                    {}};

    std::string method;
    double worst_always_ratio = 0, worst_gap = INFINITY, worst_count_ratio = -INFINITY;
    long eq3_hits = 0, eq3_n = 0;
    std::size_t collisions = 0;
    double min_p_hi = 1, min_p_hat = 1;
    std::string min_p_where;
    bool prob_holds = true;
    std::vector<double> fit_x, fit_y;  // k·log(2√d/ε), mean log buckets
    std::vector<double> all_sig_k;     // σ_min/√k, for the paper-normalised constant
    json points = json::array();
    auto progress = a.progress("grid", grid.size() * static_cast<std::size_t>(trials));
    for (std::size_t g = 0; g < grid.size(); ++g) {
      const Config& cf = grid[g];
      const int K = cf.C * cf.k;
      const double c = c_of(cf.C), target = cf.eps / c;
      long good = 0;
      double max_diam = 0, log_b = 0, b_mean = 0, single = 0;
      std::vector<double> diams, sigs;
      for (int t = 0; t < trials; ++t) {
        const std::uint64_t stream = stream_id(stream_id(0x4c534842, g), static_cast<std::uint64_t>(t));
        const BucketTrial tr = bucket_trial(cf.d, cf.k, K, cf.eps, samples, a.common.seed, stream, Device::cpu);
        method = tr.sampling_method;
        const double diam = cf.k <= 3 ? tr.diam_exact : tr.diam_sampled;  // exact where we can
        good += diam <= target;
        max_diam = std::max(max_diam, diam);
        diams.push_back(diam);
        sigs.push_back(tr.sigma_min);
        all_sig_k.push_back(tr.sigma_min / std::sqrt(double(cf.k)));
        worst_always_ratio = std::max(worst_always_ratio, std::max(tr.diam_sampled, cf.k <= 3 ? tr.diam_exact : 0.0) / tr.bound);
        if (cf.k <= 3) worst_gap = std::min(worst_gap, tr.exact_minus_sampled);
        worst_count_ratio = std::max(worst_count_ratio, std::log(double(tr.buckets)) - tr.log_arrangement);
        eq3_hits += tr.sigma_min >= std::sqrt(double(K)) - std::sqrt(double(cf.k)) - t90;
        ++eq3_n;
        collisions += tr.fingerprint_collisions;
        log_b += std::log(double(tr.buckets)) / trials;
        b_mean += double(tr.buckets) / trials;
        single += double(tr.singletons) / samples / trials;
        per_trial.add_row({double(cf.d), double(cf.k), cf.eps, double(cf.C), double(t), tr.sigma_min, tr.sigma_min / std::sqrt(double(cf.k)),
                           tr.sigma_min / std::sqrt(double(K)), double(tr.buckets), double(tr.singletons) / samples, tr.diam_sampled,
                           tr.diam_exact, tr.bound, target, tr.log_arrangement, tr.acceptance});
        progress->advance();
      }
      const stats::Interval ci = stats::wilson_interval(good, trials, alpha_each);
      const double p_hat = double(good) / trials;
      if (ci.hi < 0.9) prob_holds = false;
      if (ci.hi < min_p_hi || (ci.hi == min_p_hi && p_hat < min_p_hat)) {
        min_p_hi = ci.hi;
        min_p_hat = p_hat;
        min_p_where = fmt::format("d={}, k={}, ε={}, C={}", cf.d, cf.k, cf.eps, cf.C);
      }
      std::sort(diams.begin(), diams.end());
      std::sort(sigs.begin(), sigs.end());
      const double scale = 2 * std::sqrt(double(cf.d)) / cf.eps;
      const double beta_point = log_b / (cf.k * std::log(scale));
      // The fit uses grid points whose counts are nearly complete: a Good–Turing unseen mass (singleton
      // fraction) ≤ 0.05.
      if (cf.C == int(Cs[0]) && single <= 0.05) {
        fit_x.push_back(cf.k * std::log(scale));
        fit_y.push_back(log_b);
      }
      per_point.add_row({double(cf.d), double(cf.k), cf.eps, double(cf.C), c, p_hat, ci.lo, ci.hi, max_diam, diams[diams.size() / 2], target,
                         b_mean, log_b, single, beta_point, sigs[sigs.size() / 2]});
      points.push_back({{"d", cf.d}, {"k", cf.k}, {"eps", cf.eps}, {"C", cf.C}, {"c", c}, {"p_hat", p_hat}, {"ci", {ci.lo, ci.hi}},
                        {"max_diameter", max_diam}, {"eps_over_c", target}, {"buckets_mean", b_mean}, {"beta_point", beta_point},
                        {"singleton_fraction", single}});
    }

    // --- Fit: log #buckets = β · k log(2√d/ε) (the lemma's form, through the origin), and with an intercept.
    // Through the origin with at least one point; with an intercept with three points and two
    // distinct x (no SE from two). NaN where the grid gives too little.
    const bool origin_ok = !fit_x.empty() && std::any_of(fit_x.begin(), fit_x.end(), [](double x) { return x != 0; });
    const bool line_ok = fit_x.size() > 2 && std::any_of(fit_x.begin(), fit_x.end(), [&](double x) { return x != fit_x[0]; });
    const stats::LinearFit origin_fit = origin_ok ? stats::linear_fit_through_origin(fit_x, fit_y) : stats::LinearFit{};
    const stats::LinearFit line_fit = line_ok ? stats::linear_fit(fit_x, fit_y) : stats::LinearFit{};
    const double beta = origin_ok ? origin_fit.slope : NAN;
    const double beta_se = fit_x.size() > 1 ? origin_fit.slope_se : NAN;
    const double slope = line_ok ? line_fit.slope : NAN, intercept = line_ok ? line_fit.intercept : NAN;
    const double slope_se = line_ok ? line_fit.slope_se : NAN;
    const double C_min = *std::min_element(Cs.begin(), Cs.end());
    std::sort(all_sig_k.begin(), all_sig_k.end());
    const double c_paper_q10 = all_sig_k[all_sig_k.size() / 10];

    // --- Checks -----------------------------------------------------------------------------------
    r.add_check({.id = "same_bucket_distance_bound",
                 .claim = "paper 000 Lemma 4.2",
                 .statement = "x₁, x₂ in one bucket ⇒ ‖x₁ − x₂‖ ≤ ε√K / σ_min(A U), K = Ck (proof of Lemma 4.2 with ERRATA's √K)",
                 .predicted = 1.0,
                 .measured = worst_always_ratio,
                 .holds = worst_always_ratio <= 1.0 + 1e-9,
                 .tolerance = {{"relative", 1e-9}, {"derivation", "rounding of the distances and of σ_min"}},
                 .note = fmt::format("Largest ratio (bucket diameter)/(ε√K/σ_min(AU)) over every trial and grid point; diameters from samples "
                                     "(every sampled pair) and, for k ≤ 3, exactly from the bucket polytopes. Always true: a failure is a bug.")});
    r.add_check({.id = "exact_diameter_dominates_samples",
                 .claim = "paper 000 Lemma 4.2",
                 .statement = "for every hit bucket (k ≤ 3): exact polytope diameter ≥ diameter of its samples",
                 .predicted = 0.0,
                 .measured = std::isfinite(worst_gap) ? worst_gap : 0.0,
                 .holds = !std::isfinite(worst_gap) || worst_gap >= -1e-9,
                 .tolerance = {{"absolute", 1e-9}},
                 .note = "min over buckets of (exact − sampled); the samples lie in the closed polytope, so this is ≥ 0 up to rounding."});
    r.add_check({.id = "diameter_probability",
                 .claim = "paper 000 Lemma 4.2",
                 .statement = "P[every bucket meeting Γ has diameter ≤ ε/c] ≥ 0.9, c = 1 − 1/√C",
                 .predicted = 0.9,
                 .measured = {{"p_hat", min_p_hat}, {"ci_upper", min_p_hi}, {"at", min_p_where}},
                 .holds = prob_holds,
                 .tolerance = {{"rule", "holds when the Wilson interval's upper end ≥ 0.9 at every grid point (the data are consistent with ≥ 0.9)"},
                               {"level", fmt::format("family-wise 95% (Bonferroni over {} grid points, each at {:.2g})", grid.size(), alpha_each)}},
                 .note = fmt::format("c fixed before the run: ε√K/σ_min(AU) ≤ ε/c ⇔ σ_min(AU) ≥ c√K, and σ_min(AU) of the K×k Gaussian AU "
                                     "concentrates at √K − √k, so c = 1 − √(k/K) = 1 − 1/√C. Diameters exact (bucket polytope vertices) "
                                     "for k ≤ 3 over the buckets the samples hit, from samples for k > 3 (a lower bound). Worst grid point "
                                     "shown ({} trials each). In the paper's normalisation σ_min(A) ≥ c√k, the 10% quantile of "
                                     "σ_min(AU)/√k over all trials is {:.3f}; with that c the statement ‖x₁−x₂‖ ≤ ε/c does not follow "
                                     "(ERRATA: the proof gives ε√K/σ_min = ε√C/c).",
                                     trials, c_paper_q10)});
    const stats::Interval eq3 = stats::wilson_interval(eq3_hits, eq3_n, alpha);
    r.add_check({.id = "eq3_sigma_min",
                 .claim = "paper 000 Lemma 4.2",
                 .statement = "eq. (3): P[σ_min(A U) ≥ √K − √k − √(2 ln 10)] ≥ 0.9 (Davidson–Szarek), A U ∈ R^{K×k}",
                 .predicted = 0.9,
                 .measured = {{"p_hat", double(eq3_hits) / eq3_n}, {"ci", {eq3.lo, eq3.hi}}, {"trials", eq3_n}},
                 .holds = eq3.hi >= 0.9,
                 .tolerance = {{"rule", "Wilson 95% upper end ≥ 0.9"}},
                 .note = fmt::format("Pooled over all grid points and trials. The bound is the explicit form of eq. (3)'s "
                                     "σ_min ≥ c√k; for small K it is weak (√K − √k < 2.15 makes it trivial). Median σ_min/√K per "
                                     "grid point in grid.csv.")});
    r.add_check({.id = "bucket_count_arrangement",
                 .claim = "paper 000 Lemma 4.2",
                 .statement = "#buckets meeting Γ ≤ Σ_{j≤k} binom(n, j), n = number of LSH hyperplanes crossing the box of P",
                 .predicted = 0.0,
                 .measured = worst_count_ratio,
                 .holds = worst_count_ratio <= 1e-12,
                 .tolerance = {{"on", "max over trials of log(#buckets hit) − log(bound)"}},
                 .note = "Always true (cells of a hyperplane arrangement in R^k); counts are of buckets hit by samples, which "
                         "undercount the buckets meeting Γ (the singleton fraction, a Good–Turing estimate of the unseen mass, is in grid.csv)."});
    r.add_check({.id = "bucket_count_exponent",
                 .claim = "paper 000 Lemma 4.2",
                 .statement = "#buckets ≤ (2√d/ε)^{βk} with β = O(1): fitted β ≤ C (the exponent of the trivial bound (range/ε)^{Ck})",
                 .predicted = C_min,
                 .measured = {{"beta", beta}, {"beta_se", beta_se}, {"slope_with_intercept", slope}, {"slope_se", slope_se},
                              {"intercept", intercept}},
                 .holds = std::isfinite(beta) && beta + 2 * (std::isfinite(beta_se) ? beta_se : 0) <= C_min,
                 .tolerance = {{"rule", "β + 2·SE ≤ min C"}},
                 .note = fmt::format("Least squares of mean log #buckets on k·log(2√d/ε) through the origin over the grid at C = {} "
                                     "({} points with singleton fraction ≤ 0.05); with an intercept the slope is {:.3f} ± {:.3f}. An arrangement of n ∝ K·√d/ε "
                                     "hyperplanes in R^k has O(n^k) cells, so β ≈ 1 is expected, far below C. Counts are of buckets "
                                     "hit by {} samples: a lower bound.",
                                     Cs[0], fit_x.size(), slope, slope_se, samples)});

    r.data["points"] = points;
    r.data["beta"] = beta;
    r.data["beta_se"] = beta_se;
    r.data["slope_with_intercept"] = slope;
    r.data["c_rule"] = "c = 1 − 1/√C";
    r.data["c_paper_normalisation_q10"] = c_paper_q10;
    r.data["sampling_method"] = method;
    r.data["fingerprint_collisions"] = collisions;
    r.data["diameter_source"] = "exact polytope vertices for k ≤ 3 (buckets hit by samples), max pairwise sample distance otherwise";
    a.add_table(std::move(per_trial));

    // --- Figures ------------------------------------------------------------------------------------
    plot::Figure fd{.name = "lsh_buckets_diameter",
                    .title = "Largest bucket diameter on Γ vs ε (median over trials and d)",
                    .xlabel = "LSH width ε",
                    .ylabel = "max bucket diameter",
                    .logx = true,
                    .logy = true};
    plot::Figure fb{.name = "lsh_buckets_count",
                    .title = fmt::format("Buckets hit on Γ vs 2√d/ε (C = {}), fit (2√d/ε)^(βk), β = {:.3f} ± {:.3f}", Cs[0], beta, beta_se),
                    .xlabel = "2√d/ε",
                    .ylabel = "non-empty buckets (hit by samples)",
                    .logx = true,
                    .logy = true};
    fb.legend = "top left";
    fd.legend = "top left";
    const auto& rows = per_point.rows;
    std::vector<double> eps_sorted = epss;
    std::sort(eps_sorted.begin(), eps_sorted.end());
    for (double k : ks) {
      for (double C : Cs) {
        std::vector<double> xs, ys;
        for (double e : eps_sorted) {
          std::vector<double> v;
          for (const auto& row : rows)
            if (row[1] == k && row[3] == C && row[2] == e) v.push_back(row[9]);
          if (v.empty()) continue;
          std::sort(v.begin(), v.end());
          xs.push_back(e);
          ys.push_back(v[v.size() / 2]);
        }
        fd.series.push_back({.x = xs, .y = ys, .label = fmt::format("k = {}, C = {}{}", k, C, k <= 3 ? " (exact)" : " (samples)"),
                             .style = plot::Style::linespoints});
      }
      std::vector<double> bx, by;
      for (const auto& row : rows)
        if (row[1] == k && row[3] == Cs[0]) bx.push_back(2 * std::sqrt(row[0]) / row[2]), by.push_back(row[11]);
      static const char* palette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"};
      const std::string colour = palette[static_cast<int>(k - 1) % 6];
      fb.series.push_back({.x = bx, .y = by, .label = fmt::format("k = {}", k), .style = plot::Style::points, .color = colour});
      std::vector<double> fx = bx, fy;
      std::sort(fx.begin(), fx.end());
      for (double x : fx) fy.push_back(std::exp(beta * k * std::log(x)));
      fb.series.push_back({.x = fx, .y = fy, .label = fmt::format("(2√d/ε)^(βk), k = {}", k), .color = colour, .dashed = true});
    }
    for (double C : Cs) {
      std::vector<double> sy;
      for (double e : eps_sorted) sy.push_back(e / c_of(int(C)));
      fd.series.push_back({.x = eps_sorted, .y = sy, .label = fmt::format("ε/c, c = 1 − 1/√{}", C), .color = "black", .dashed = true});
    }
    a.add_table(std::move(per_point));
    a.add_figure(std::move(fd));
    a.add_figure(std::move(fb));
  });
}
