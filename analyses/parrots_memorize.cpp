// parrots_memorize — paper 004 (Mixture of Parrots) §3, Theorems 3.5–3.6 (L130–160) and App. D.2 (Lemmas D.6–D.8,
// Corollary D.9, Theorem D.12, Lemma D.13; L669–822): n Gaussian sequences with ±1 labels, reduced by the averaging
// attention of L720 to x̄ ∈ R^m, routed by Lemma D.6's sign router to K experts, each a depth-2 ReLU net (no bias) on
// the last m − log₂K coordinates with a random first layer and an output layer found by an exact LP; the minimal
// width by bisection for every expert and for the dense model (K = 1), and the parameter counts as built
// (parrots/memorize.hpp). One work item per (n, K, draw); the data of (n, draw) are the same for every K.
// Scales (GLPK's simplex on an n_e × n_e/2 LP takes ~1 s at n_e = 512, ~10 s at 1024, ~150 s at 2048, so LPs run only
// up to a size): quick n ≤ 2048, MoE LPs where n/K ≤ 256, dense n ≤ 512 (~10 s of CPU, ~5 s on 2 cores); paper, the default,
// n ≤ 8192, n/K ≤ 512, dense n ≤ 1024 (~2.5 min of CPU, ~75 s on 2 idle cores); every cell records its routing.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/parrots/memorize.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::parrots;

namespace {

/// What the run did, in the paper's terms (recorded as data.setting).
json setting(int N, int m, double c, const std::vector<int>& ns, const std::vector<int>& Ks, int draws, double delta, long max_points, long dense_max_n) {
  return {
      {"task", fmt::format("n sequences X ∈ R^(N×m), N = {}, m = {}, entries i.i.d. N(0, c = {}), labels uniform ±1 (L130)", N, m, c)},
      {"attention", fmt::format("averaging (L720; Theorem D.5's Q = K = 0, V = I): x̄ = mean of the N rows ~ N(0, c/N = {} I_m); not counted in parameters", c / N)},
      {"router", "Lemma D.6: expert = binary number of [x̄_b > 0], b = 1 … log₂K, first coordinate most significant; router parameters K·m (L740), 0 for K = 1"},
      {"experts", "h(x) = Σ_j a_j ReLU(⟨w_j, x⟩), no bias (Daniely's h_{W,a}, L712/L738), on the last m − log₂K coordinates (L724); w_j ~ N(0, I) drawn "
                  "unit after unit (nested in q); a from the LP y_i h(x_i) ≥ 1 (GLPK), every yes verified in cpp_rational; shared width q = max_j q*_j"},
      {"minimal_width", "bisection on q ≤ n_e + 32 from Cover's median ⌈n_e/2⌉, galloping by √n_e/2; monotone because the draws are nested"},
      {"parameters", "expert q(m − log₂K + 1), router Km, active = router + expert, total = router + K·expert; dense = q(m + 1)"},
      {"n", ns}, {"K", Ks}, {"draws", draws}, {"delta", delta},
      {"lp_limits", fmt::format("LPs run where n/K ≤ {} (K ≥ 2) and n ≤ {} (dense); larger cells record loads only (GLPK's simplex on an "
                                "n_e × n_e/2 LP: ~1 s at n_e = 512, ~10 s at 1024, ~150 s at 2048)", max_points, dense_max_n)},
      {"scales", "quick: n ≤ 2048, LPs where n/K ≤ 256 and dense n ≤ 512; paper (default): n ≤ 8192, n/K ≤ 512, dense n ≤ 1024"},
      {"figures", "mean over draws of the solved cells; dashed: K = √(n/m) where that is a power of 2"},
      {"d6_level", "5% family-wise over the K ≥ 2 tested (Bonferroni)"},
      {"thm35_regime", "expert fit: n ≥ K² ln(K/δ)/2 (Corollary D.9); √ rule: K = √(n/m) exactly"},
      {"streams", "data from (seed, n, draw), shared by every K; expert j's first layer from (seed, n, draw, K, j)"}};
}

/// Minimal active (or total) parameters against n, one series per K, and the K = √(n/m) rule dashed (mean over draws).
plot::Figure parameters_figure(bool is_active, int m, const std::vector<int>& ns, const std::vector<int>& Ks,
                               const std::map<std::pair<int, int>, std::vector<CellParameters>>& solved) {
  const char* what = is_active ? "active" : "total";
  const auto mean = [&](int K, int n) {
    double sum = 0;
    for (const CellParameters& p : solved.at({K, n})) sum += double(is_active ? p.built.active : p.built.total);
    return sum / double(solved.at({K, n}).size());
  };
  plot::Figure fig{.name = fmt::format("parrots_memorize_{}", what), .title = fmt::format("Minimal {} parameters to memorize n sequences (m = {})", what, m),
                   .xlabel = "n", .ylabel = fmt::format("{} parameters", what), .logx = true, .logy = true, .legend = "top left"};
  for (int K : Ks) {
    plot::Series s{.label = K == 1 ? "dense" : fmt::format("K = {}", K), .style = plot::Style::linespoints};
    for (int n : ns)
      if (solved.count({K, n})) s.x.push_back(n), s.y.push_back(mean(K, n));
    if (!s.x.empty()) fig.series.push_back(std::move(s));
  }
  plot::Series root{.label = "K = √(n/m)", .style = plot::Style::lines, .color = "gray40", .dashed = true};
  for (int n : ns)
    if (const int K = sqrt_rule_experts(n, m); K >= 2 && solved.count({K, n})) root.x.push_back(n), root.y.push_back(mean(K, n));
  if (root.x.size() >= 2) fig.series.push_back(std::move(root));
  return fig;
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "parrots_memorize", .paper = "004", .claims = {"Lemma D.6", "Lemma D.7", "Lemma D.8", "Theorem 3.5", "Theorem 3.6", "Lemma D.13"},
                     .description = "Memorizing n Gaussian sequences: Lemma D.6's router, expert loads (Lemma D.7), minimal expert widths by exact "
                                    "LPs (Lemma D.8), active and total parameters of the MoE against the dense model; one work item per (n, K, draw)",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  std::string n_text, K_text = "1,2,4,8,16,32,64";
  int m = 32, N = 8, draws = 5;
  long max_points = 0, dense_max_n = 0;
  double c = 1, delta = 0.01;
  analysis.scaled_option("--n", n_text, std::string("256,512,1024,2048"), std::string("256,512,1024,2048,4096,8192"), "numbers of sequences n (comma list)");
  app.add_option("--K", K_text, "numbers of experts K, powers of 2 (comma list; K = 1 is the dense model)")->capture_default_str();
  app.add_option("--m", m, "embedding dimension m")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--N", N, "sequence length N")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--c", c, "variance c of the sequences' entries, > 0")->capture_default_str();
  app.add_option("--draws", draws, "draws of the data (and first layers) per (n, K)")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--delta", delta, "δ of Lemma D.7 and Corollary D.9 (Theorem 3.5: 1 − δ = 0.99)")->capture_default_str();
  analysis.scaled_option("--max-points", max_points, 256L, 512L, "MoE cells run their LPs when n/K ≤ this")->check(CLI::Range(1L, 1L << 20));
  analysis.scaled_option("--dense-max-n", dense_max_n, 512L, 1024L, "the dense model (K = 1) runs its LPs when n ≤ this")->check(CLI::Range(1L, 1L << 20));

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    std::vector<int> ns, Ks;
    for (double v : parse_number_list("--n", n_text, 1, 1 << 20, true)) ns.push_back(int(v));
    for (double v : parse_number_list("--K", K_text, 1, 1 << 20, true)) Ks.push_back(int(v));
    if (!(c > 0) || !std::isfinite(c)) throw InputError(fmt::format("--c {}: the variance must be positive and finite", c));
    if (!(delta > 0 && delta < 1)) throw InputError(fmt::format("--delta {}: must lie in (0, 1)", delta));
    for (int K : Ks) {
      if ((K & (K - 1)) != 0) throw InputError(fmt::format("--K {}: not a power of 2 (App. D.2, L671)", K));
      if (m <= log2_experts(K)) throw InputError(fmt::format("--m {}: K = {} routes on log₂K = {} coordinates; need m > log₂K", m, K, log2_experts(K)));
    }
    const auto budget = [&](int K) { return K == 1 ? dense_max_n : max_points; };

    // --- Run: one item per (n, K, draw) ---------------------------------------------------------------------
    const Grid grid{{ns.size(), Ks.size(), std::size_t(draws)}};
    const auto at = [&](std::size_t i) { const auto g = grid.coords(i); return std::tuple{ns[g[0]], Ks[g[1]], int(g[2])}; };
    const std::vector<Record> records = a.sweep({
        .label = "cells", .count = grid.count(),
        .key = [&](std::size_t i) { const auto [n, K, t] = at(i); return fmt::format("n={} K={} draw={}", n, K, t); },
        .cost = [&](std::size_t i) { const auto [n, K, t] = at(i); const double p = double(n) / K; return p <= budget(K) ? K * p * p * p : n; },
        .item = [&](std::size_t i) { const auto [n, K, t] = at(i); return to_record(memorization_cell({n, N, m, c}, K, t, a.common.seed, budget(K))); }});

    // --- Reduce -------------------------------------------------------------------------------------------------
    Table cells{"cells", {"n", "K", "draw", "d", "max_load", "two_n_over_K", "solved", "q", "expert_params", "router_params", "active", "total",
                          "mean_expert_params", "own_width_total", "lps", "unverified", "lemma_d8_width"}, {}};
    Table experts{"experts", {"n", "K", "draw", "expert", "load", "q"}, {}};
    std::map<int, std::vector<std::int64_t>> pooled;          // K → loads summed over n and draws (Lemma D.6)
    std::map<std::pair<int, int>, std::pair<long, long>> d7;  // (n, K) → (draws with max load ≤ 2n/K, draws)
    std::map<std::pair<int, int>, std::vector<CellParameters>> solved;  // (K, n) → solved draws
    long lps = 0, unverified = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto [n, K, t] = at(i);
      const MemorizationCell cell = cell_from_record(records[i]);
      const CellParameters p = cell_parameters(cell, m, K);
      auto& acc = pooled[K];
      acc.resize(std::size_t(K), 0);
      for (int j = 0; j < K; ++j) {
        acc[std::size_t(j)] += cell.loads[std::size_t(j)];
        if (cell.solved) experts.add_row({double(n), double(K), double(t), double(j), double(cell.loads[std::size_t(j)]), double(cell.widths[std::size_t(j)])});
      }
      if (K >= 2 && n >= lemma_d7_min_n(K, delta)) d7[{n, K}].first += p.max_load <= 2.0 * n / K, d7[{n, K}].second += 1;
      if (p.valid) solved[{K, n}].push_back(p);
      lps += cell.lps, unverified += cell.unverified;
      const auto v = [&](double x) { return p.valid ? x : NAN; };
      cells.add_row({double(n), double(K), double(t), double(m - log2_experts(K)), double(p.max_load), 2.0 * n / K, cell.solved ? 1.0 : 0.0, double(cell.q),
                     v(double(p.built.expert)), double(p.built.router), v(double(p.built.active)), v(double(p.built.total)), v(p.mean_expert), v(p.own_total),
                     double(cell.lps), double(cell.unverified), lemma_d8_width(n, m, K)});
    }
    const auto mean_of = [](const std::vector<CellParameters>& ps, auto field) { double s = 0; for (const auto& p : ps) s += field(p); return s / double(ps.size()); };

    // --- Lemma D.6: routing is uniform over the K experts ---------------------------------------------------
    std::vector<Point> gof;
    json d6 = json::array();
    const double tested = double(std::count_if(Ks.begin(), Ks.end(), [](int K) { return K >= 2; }));
    for (const auto& [K, counts] : pooled) {
      if (K < 2) continue;
      const stats::ChiSquaredTest t = stats::chi_squared_uniform(counts);
      const double crit = stats::chi_squared_quantile(1 - 0.05 / tested, t.df);
      gof.push_back({fmt::format("K = {}", K), t.statistic, crit});
      d6.push_back({{"K", K}, {"chi2", t.statistic}, {"df", t.df}, {"p", t.p_value}, {"examples", t.n}, {"critical", crit}});
    }
    if (!gof.empty())
      for_all(a, {.id = "d6_uniform_routing", .claim = "Lemma D.6",
                  .statement = "P(route = j) = 1/K for every expert j: Pearson's χ² of the expert counts (pooled over n and draws) ≤ the χ²_{K−1} "
                               "quantile at 5% family-wise (Bonferroni over the K tested)", .detail = {{"tests", d6}}},
              Relation::at_most, gof, "K values");

    // --- Lemma D.7: the largest load ≤ 2n/K in at least 1 − δ of the draws when n ≥ K² ln(1/δ)/2 -----------
    long k7 = 0, n7 = 0;
    json d7_cells = json::array();
    for (const auto& [key, v] : d7) k7 += v.first, n7 += v.second, d7_cells.push_back({{"n", key.first}, {"K", key.second}, {"within", v.first}, {"draws", v.second}});
    if (n7 > 0) {
      const stats::Interval ci = stats::clopper_pearson_interval(k7, n7);
      const double frac = double(k7) / double(n7);
      compare(a, {.id = "d7_max_load", .claim = "Lemma D.7",
                  .statement = "where n ≥ K² ln(1/δ)/2, max_j load_j ≤ 2n/K in at least 1 − δ of the draws (the fraction of draws, allowed its "
                               "Clopper–Pearson 95% upper margin)",
                  .note = fmt::format("{} of {} draws over the qualifying (n, K ≥ 2) cells; CP 95% [{:.4f}, {:.4f}]. The lemma bounds one fixed expert; "
                                      "the largest load is the stronger statement (Corollary D.9's union bound asks n ≥ K² ln(K/δ)/2).", k7, n7, ci.lo, ci.hi),
                  .detail = {{"cells", d7_cells}, {"cp_interval", {ci.lo, ci.hi}}}},
              frac, Relation::at_least, 1 - delta, ci.hi - frac);
    }

    // --- Lemma D.8: the minimal expert width ≤ 8 n ln⁴(m − log₂K)/(mK) --------------------------------------
    std::vector<Point> d8;
    for (const auto& [key, ps] : solved) {
      const auto [K, n] = key;
      int q = 0;
      for (const auto& p : ps) q = std::max(q, p.q);
      if (4.0 * n >= double(m) * K) d8.push_back({fmt::format("n = {}, K = {}", n, K), double(q), lemma_d8_width(n, m, K)});  // L734: 4n/(mK) ≥ 1
    }
    if (!d8.empty())
      for_all(a, {.id = "d8_expert_width", .claim = "Lemma D.8",
                  .statement = "each cell's shared expert width max_j q*_j (largest over draws) ≤ Lemma D.8's sufficient width 8n ln⁴(m − log₂K)/(mK) (L732)",
                  .note = "q* is the minimal width with a random first layer and an LP output layer; the lemma's width is for Daniely's trained first layer."},
              Relation::at_most, d8, "(n, K) cells");

    // --- Theorems 3.6 and 3.5: log–log slopes of the parameter counts --------------------------------------------
    const auto slope_check = [&](const std::string& id, const std::string& claim, const std::string& statement, const std::vector<double>& x,
                                 const std::vector<double>& y, const std::vector<double>& y_own, double predicted, const std::string& note) {
      std::vector<double> distinct(x);
      std::sort(distinct.begin(), distinct.end());
      if (std::unique(distinct.begin(), distinct.end()) - distinct.begin() < 2 || x.size() < 3) return;
      const stats::LinearFit f = stats::loglog_fit(x, y), g = stats::loglog_fit(x, y_own);
      const stats::Interval ci = f.slope_interval(), gi = g.slope_interval();
      json detail = {{"slope", f.slope}, {"slope_se", f.slope_se}, {"points", f.n}, {"own_width_slope", g.slope}, {"own_width_ci", {gi.lo, gi.hi}}};
      interval_contains(a, {.id = id, .claim = claim, .statement = statement,
                            .note = fmt::format("slope {:.3f} ± {:.3f} (SE), {} points. With each expert at its own minimal width: {:.3f} [{:.3f}, {:.3f}]. {}",
                                                f.slope, f.slope_se, f.n, g.slope, gi.lo, gi.hi, note), .detail = detail}, ci.lo, ci.hi, predicted);
      r.data["fits"][id] = detail;
    };
    std::vector<double> xd, yd, xe, ye, ye_own, xs, ya, ya_own, yt, yt_own;
    json cover = json::array();
    for (const auto& [key, ps] : solved) {
      const auto [K, n] = key;
      for (const auto& p : ps) {
        if (K == 1) xd.push_back(n), yd.push_back(double(p.built.active));
        if (K >= 2 && n >= corollary_d9_min_n(K, delta)) xe.push_back(double(n) / K), ye.push_back(double(p.built.expert)), ye_own.push_back(p.mean_expert);
        if (K >= 2 && K == sqrt_rule_experts(n, m))
          xs.push_back(n), ya.push_back(double(p.built.active)), ya_own.push_back(p.mean_active), yt.push_back(double(p.built.total)), yt_own.push_back(p.own_total);
      }
      if (K == 1) cover.push_back({{"n", n}, {"mean_q", mean_of(ps, [](const auto& p) { return double(p.q); })}, {"cover_median", cover_median_width(n)}});
    }
    const std::string max_note = "The shared width is the largest of K experts' minimal widths, whose excess over n/(2K) shrinks as n/K grows, and "
                                 "d = m − log₂K shrinks as K grows (a log factor Õ hides). Theorem 3.5 bounds from above: a smaller slope is slower "
                                 "growth than the bound allows, not a violation of it.";
    slope_check("thm36_dense_linear", "Theorem 3.6", "the dense model's minimal parameter count q*(m + 1) grows like n: log–log slope's 95% CI contains 1", xd, yd, yd, 1.0,
                "Theorem 3.6 bounds every model from below (Ω̃(n)); here one family (random first layer, LP output layer) is measured.");
    slope_check("thm35_expert_n_over_K", "Theorem 3.5", "each expert's minimal parameters q*(m − log₂K + 1) follow n/K: log–log slope in n/K (cells with "
                "K ≥ 2 and n ≥ K² ln(K/δ)/2, Corollary D.9) has a 95% CI containing 1", xe, ye, ye_own, 1.0, max_note);
    slope_check("thm35_active_sqrt", "Theorem 3.5", "at K = √(n/m) the MoE's active parameters (router Km + one expert) grow like √(nm): slope in n contains 0.5",
                xs, ya, ya_own, 0.5, "Only n with √(n/m) a power of 2 (K must be one, L671). " + max_note);
    slope_check("thm35_total_linear", "Theorem 3.5", "at K = √(n/m) the MoE's total parameters (router + K experts) grow like n: slope in n contains 1", xs, yt, yt_own, 1.0,
                "Only n with √(n/m) a power of 2. " + max_note);

    // --- Lemma D.13: for each n, some K gives fewer active parameters than the dense model ----------------------
    std::vector<Point> sep;
    json d13 = json::array();
    const auto active = [](const CellParameters& p) { return double(p.built.active); };
    for (int n : ns) {
      if (!solved.count({1, n})) continue;
      const double dense = mean_of(solved[{1, n}], active);
      int best_K = 0;
      double best = INFINITY;
      for (int K : Ks)
        if (K >= 2 && solved.count({K, n})) {
          const double moe = mean_of(solved[{K, n}], active);
          d13.push_back({{"n", n}, {"K", K}, {"moe_active", moe}, {"dense", dense}});
          if (moe < best) best = moe, best_K = K;
        }
      if (best_K > 0) sep.push_back({fmt::format("n = {} (best K = {})", n, best_K), best, dense});
    }
    if (!sep.empty())
      for_all(a, {.id = "d13_active_below_dense", .claim = "Lemma D.13",
                  .statement = "there are MoEs with fewer active parameters than the dense model: at every n, the fewest minimal active parameters over "
                               "K ≥ 2 (mean over draws) < the dense model's minimal parameters",
                  .note = "The lemma's proof needs n/K + K < n; at small n and large K the router's Km alone can exceed the dense count (every cell in detail).",
                  .detail = {{"cells", d13}}},
              Relation::less, sep, "n values");

    // --- Outputs ----------------------------------------------------------------------------------------------------
    for (const bool is_active : {true, false}) a.add_figure(parameters_figure(is_active, m, ns, Ks, solved));
    a.add_table(std::move(cells));
    a.add_table(std::move(experts));
    r.data["dense_vs_cover"] = cover;
    r.data["lps"] = lps;
    r.data["unverified_lp_answers"] = unverified;
    r.data["setting"] = setting(N, m, c, ns, Ks, draws, delta, max_points, dense_max_n);
  });
}
