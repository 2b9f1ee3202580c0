// momlp_regression — paper 003 §6.1, Table 4 and App. D: a MoMLP (Algorithm 2: prototypes by eq. (39), deepened
// experts trained on their Voronoi cells by eq. (40), routed by eq. (5)) against its baseline, one PReLU MLP of
// width w√K with as many hidden parameters as all experts together (App. D.3.2), on a 1D fBm path and on Ackley
// and Rastrigin in 2D and 3D. We add the MLP of width w (the active parameters of one expert) and a sweep over K,
// and sweep the fBm's Hurst index, which the paper leaves unstated (ERRATA 003).
//
// Checks are directions, paired by run (every model of a run shares its split): θ = mean ln(MSE_other / MSE_MoMLP) by a
// one-sided paired t; the effect that counts is Table 4's own ratio of means for the baseline (the claim); the MLP of
// width w and the sweep over K are our own questions (the paper trains K = 4 against its baseline only), with a 10 %
// smallest effect of interest that sets power only.
// Every model trains on standardised targets (the paper states no preprocessing; MSEs are reported in the targets' units).
//
// Scales: --scale quick (w = 16, small grids, 3 runs, under 2 minutes); no flag (w = 32, the paper's grids,
// 5 runs, minutes on 2 cores); --scale paper (w = 1000 as App. D.3.1, 10 runs: hours, for a cluster).
#include <cmath>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/moe/regression_study.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::moe;

namespace {

// Table 4 (MoMLP, baseline: mean ± sd of the test MSE over 10 runs).
const json kTable4 = {{"fbm", {{"momlp", {0.057, 0.085}}, {"baseline", {0.128, 0.012}}}},
                      {"ackley2", {{"momlp", {0.00015, 0.00006}}, {"baseline", {0.08723, 0.01059}}}},
                      {"ackley3", {{"momlp", {0.00068, 0.00010}}, {"baseline", {0.09303, 0.03156}}}},
                      {"rastrigin2", {{"momlp", {0.0480, 0.0073}}, {"baseline", {3.0511, 0.3581}}}},
                      {"rastrigin3", {{"momlp", {1.0062, 0.0446}}, {"baseline", {8.0376, 4.0499}}}}};

/// θ = mean over runs of ln(other) − ln(momlp), paired by run (the runs' splits are shared by every model).
Evidence log_ratio(const std::vector<double>& other, const std::vector<double>& momlp, int runs) {
  std::vector<double> lo, lm;
  for (double v : other) lo.push_back(std::log(v));
  for (double v : momlp) lm.push_back(std::log(v));
  return evidence(stats::paired_t_test(lo, lm, stats::Alternative::greater), std::size_t(runs), "runs (paired splits)",
                  "paired t over runs on ln MSE(other) − ln MSE(MoMLP)");
}

/// Our own question, per target: the MoMLP's test MSE against K at fixed expert width. Per run, the least-squares
/// slope of ln MSE on log₂ K (one split per run, every K on it); θ = −mean slope. by_k[j][run]: the MSE at ks[j].
void check_mse_falls_with_K(Analysis& a, const std::string& name, const std::vector<double>& ks,
                            const std::vector<std::vector<double>>& by_k, const std::string& departures, const std::string& departure) {
  const std::size_t runs = by_k.front().size();
  std::vector<double> falls, zeros(runs, 0.0);
  for (std::size_t run = 0; run < runs; ++run) {
    std::vector<double> lk, lm;
    for (std::size_t j = 0; j < ks.size(); ++j) lk.push_back(std::log2(ks[j])), lm.push_back(std::log(by_k[j][run]));
    falls.push_back(-stats::linear_fit(lk, lm).slope);
  }
  direction(a, {.id = "mse_falls_with_K_" + name, .claim = "Theorem 4.1 (more experts, same expert size)",
                .statement = fmt::format("{}: the MoMLP's test MSE falls as K grows at fixed expert width: θ = −(slope of ln MSE on log₂ K over "
                                         "K ∈ {{{}}}) > 0", name, fmt::join(ks, ", ")),
                .note = fmt::format("per-run slopes {:.3f}. Our own question: Theorem 4.1 bounds the best approximation's error "
                                    "for a given number of experts and expert size, and §6.1 trains K = 4 only; the paper asks nothing "
                                    "of trained nets' test MSE against K, so a falling or rising MSE here is neither for nor against "
                                    "it. {}", fmt::join(falls, ", "), departures),
                .kind = Kind::own_question, .departure = departure},
            evidence(stats::paired_t_test(falls, zeros, stats::Alternative::greater), runs, "runs",
                     "one-sample t over runs of each run's least-squares slope"),
            {std::log(1 / 0.9), "smallest effect of interest: 10 % lower MSE per doubling of K (0.105); Theorem 4.1 prints no rate in K for "
                                "trained nets", false});
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "momlp_regression", .paper = "003", .claims = {"§6.1", "Table 4", "Algorithm 2", "App. D.3"},
                     .description = "MoMLP (Algorithm 2) vs its width-w√K baseline and the width-w MLP on fBm, Ackley and Rastrigin "
                                    "(Table 4), with a K sweep and a Hurst sweep; one work item per trained model",
                     .gpu_path = true,
                     .standard_run = true});
  auto& app = analysis.app();
  std::string targets_text = "fbm,ackley2,ackley3,rastrigin2,rastrigin3", ks_text, hurst_sweep_text, budget_text = "steps";
  int K = 4, width = 0, layers = 3, runs = 0, epochs = 0, stage1 = 0, batch = 64, s1 = 0, s2 = 0, s3 = 0;
  double lr = 1e-4, sigma = 1e-2, hurst = 0.5;
  app.add_option("--targets", targets_text, "fbm, ackley2, ackley3, rastrigin2, rastrigin3")->capture_default_str();
  app.add_option("--K", K, "experts of the Table 4 comparison (App. D: 4)")->check(CLI::Range(1, 4096))->capture_default_str();
  analysis.scaled_option("--K-sweep", ks_text, "1,2,4,8", "1,2,4,8", "1,2,4,8,16", "expert counts of the sweep");
  analysis.scaled_option("--width", width, 16, 32, 1000, "w, each expert's width")->check(CLI::Range(1, 100000));
  app.add_option("--layers", layers, "hidden layers after deepening (App. D.3.1: 3)")->check(CLI::Range(1, 64))->capture_default_str();
  analysis.scaled_option("--runs", runs, 3, 5, 10, "runs: fresh split and initialisation")->check(CLI::Range(2, 1000));
  analysis.scaled_option("--epochs", epochs, 10, 40, 200, "eq. (40) epochs (unstated)")->check(CLI::Range(1, 1000000));
  analysis.scaled_option("--stage1-epochs", stage1, 2, 10, 50, "eq. (39) epochs (unstated)")->check(CLI::Range(1, 1000000));
  app.add_option("--batch", batch, "batch size (unstated)")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--lr", lr, "Adam learning rate (App. D.3.1: 1e-4)")->check(CLI::Range(1e-12, 10.0))->capture_default_str();
  app.add_option("--sigma", sigma, "deepening noise σ (unstated)")->check(CLI::Range(0.0, 10.0))->capture_default_str();
  app.add_option("--budget", budget_text, "each expert's training length (unstated): epochs (over its cell) or steps (as many as one model's "
                                          "epochs over all data: equal wall time with one machine per expert)")
      ->check(CLI::IsMember({"epochs", "steps"}))->capture_default_str();
  app.add_option("--hurst", hurst, "Hurst index of the fBm target (unstated)")->check(CLI::Range(0.01, 0.99))->capture_default_str();
  analysis.scaled_option("--hurst-sweep", hurst_sweep_text, "", "0.1,0.3,0.5,0.7,0.9", "0.1,0.3,0.5,0.7,0.9", "Hurst indices for MoMLP vs baseline on fBm");
  analysis.scaled_option("--s1", s1, 1000, 10000, 10000, "grid points, n = 1 (L320: 10000)")->check(CLI::Range(10, 10000000));
  analysis.scaled_option("--s2", s2, 40, 150, 150, "grid points a side, n = 2 (L320: 150)")->check(CLI::Range(3, 10000));
  analysis.scaled_option("--s3", s3, 12, 30, 30, "grid points a side, n = 3 (L320: 30)")->check(CLI::Range(3, 1000));

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    const std::vector<Target> targets = parse_targets(targets_text);
    std::vector<double> ks = parse_number_list("--K-sweep", ks_text, 1, 4096, true);
    const std::vector<double> hursts = hurst_sweep_text.empty() ? std::vector<double>{} : parse_number_list("--hurst-sweep", hurst_sweep_text, 0.01, 0.99);
    if (std::find(ks.begin(), ks.end(), double(K)) == ks.end()) ks.push_back(K);
    std::sort(ks.begin(), ks.end());
    const auto side = [&](Target t) { return dimension(t) == 1 ? s1 : dimension(t) == 2 ? s2 : s3; };
    const MomlpSettings settings{.K = K, .width = width, .hidden_layers = layers, .stage1_epochs = stage1, .epochs = epochs, .batch = batch,
                                 .lr = lr, .sigma = sigma, .budget = budget_text == "steps" ? Budget::steps : Budget::epochs,
                                 .device = a.common.device};  // cuda: stage 3 and the baselines on the GPU (stage 1 on the CPU)

    // --- Run: one item per trained model -----------------------------------------------------------------
    const std::vector<StudyItem> items = study_items(targets, runs, ks, K, hurst, hursts);
    const std::vector<Record> records = a.sweep({
        .label = "trained models", .count = items.size(),
        .key = [&](std::size_t i) { return sweep_key(items[i]); },
        .cost = [&](std::size_t i) { const StudyItem& it = items[i];
          const double w = it.model == Model::baseline ? baseline_width(width, it.K) : width;
          return std::pow(double(side(it.target)), dimension(it.target)) * w * w; },
        .item = [&](std::size_t i) {
          const StudyItem& it = items[i];
          const std::uint64_t split_stream = stream_id(0x003'0d02, std::uint64_t(it.target) * 1000 + std::uint64_t(it.run));
          const Split split = split_80_20(grid_dataset(it.target, side(it.target), it.hurst, a.common.seed), a.common.seed, split_stream);
          return to_record(run_regression({.model = it.model, .K = it.K, .momlp = settings}, split, a.common.seed,
                                          stream_id(split_stream, std::uint64_t(it.model) * 4096 + std::uint64_t(it.K))));
        }});

    const auto mses = [&](Target t, double h, Model m, int k) { return test_mses(items, records, t, h, m, k); };
    const auto mean_sd = [](const std::vector<double>& v) {
      stats::RunningMean m;
      for (double x : v) m.push(x);
      return json::array({m.mean(), std::sqrt(m.variance())});
    };

    // --- Checks: Table 4 per target; MSE against K -------------------------------------------------------
    // Every model of a run shares that run's split, so effects pair by run. θ = mean over runs of ln(MSE_other / MSE_MoMLP),
    // > 0 when the MoMLP is better. Table 4 prints means, so the paper's own effect is ln(baseline mean / MoMLP mean): a
    // ratio of MSEs has no units and carries over to our targets and scales as it stands.
    const std::string departures = fmt::format(
        "Departures: experts of width w = {} (App. D.3.1: 1000; the paper's width is hours a model on 2 cores), {} runs (Table 4: 10), "
        "{} + {} epochs and batch {} (unstated), targets standardised with the training split's mean and sd (unstated; without it Adam's "
        "lr-1e-4 steps leave a narrow net short of Rastrigin's mean).", width, runs, stage1, epochs, batch);
    // The departure field (DESIGN.md: same departure, same kind): the model's scale departs from App. D.3.1 unless w = 1000.
    const std::string departure = width == 1000 ? std::string() : fmt::format("experts of width {} (App. D.3.1: 1000)", width);
    const Effect sesoi{std::log(1 / 0.9), "smallest effect of interest: a 10 % lower test MSE (ln(1/0.9) = 0.105); the paper prints no such row", false};
    json table4 = json::object();
    for (Target t : targets) {
      const std::string name = to_string(t);
      const std::vector<double> mo = mses(t, hurst, Model::momlp, K), base = mses(t, hurst, Model::baseline, K),
                                eq = mses(t, hurst, Model::equal_active, K);
      table4[name] = {{"momlp", mean_sd(mo)}, {"baseline", mean_sd(base)}, {"equal_active", mean_sd(eq)}, {"paper", kTable4[name]}};
      const std::string numbers = fmt::format("test MSE over {} runs: MoMLP {:.4g} ± {:.2g}, baseline (width {}) {:.4g} ± {:.2g}, width-{} MLP {:.4g} ± {:.2g}; "
                                              "Table 4: MoMLP {} ± {}, baseline {} ± {}. ", runs, double(table4[name]["momlp"][0]), double(table4[name]["momlp"][1]),
                                              baseline_width(width, K), double(table4[name]["baseline"][0]), double(table4[name]["baseline"][1]), width,
                                              double(table4[name]["equal_active"][0]), double(table4[name]["equal_active"][1]),
                                              double(kTable4[name]["momlp"][0]), double(kTable4[name]["momlp"][1]), double(kTable4[name]["baseline"][0]),
                                              double(kTable4[name]["baseline"][1]));
      const double papers = std::log(double(kTable4[name]["baseline"][0]) / double(kTable4[name]["momlp"][0]));
      // Table 4 prints mean ± sd over its 10 runs: the ratio's own standard error on the log scale (delta method) is the
      // paper's spread, and the size test uses the lower end of the paper's one-sided 95 % interval (DESIGN.md).
      const double papers_se = stats::log_ratio_std_error(double(kTable4[name]["baseline"][0]), double(kTable4[name]["baseline"][1]), 10,
                                                          double(kTable4[name]["momlp"][0]), double(kTable4[name]["momlp"][1]), 10);
      direction(a, {.id = "momlp_beats_baseline_" + name, .claim = "§6.1, Table 4",
                    .statement = fmt::format("{}: the MoMLP (K = {}) has a lower test MSE than the baseline of width w√K: θ = E ln(MSE_baseline / MSE_MoMLP) > 0", name, K),
                    .note = numbers + departures, .departure = departure},
                log_ratio(base, mo, runs),
                {papers, fmt::format("paper 003 Table 4: baseline {} / MoMLP {} = {:.3g}× (θ = ln of it = {:.3f}; its own SE {:.3f} from Table 4's "
                                     "sd over 10 runs, delta method)", double(kTable4[name]["baseline"][0]),
                                     double(kTable4[name]["momlp"][0]), std::exp(papers), papers, papers_se), true, papers_se});
      // Table 4 has no row for an MLP of the experts' width: our own question, reported apart.
      direction(a, {.id = "momlp_beats_equal_active_" + name, .claim = "Theorem 4.1 (§6.1 setting)",
                    .statement = fmt::format("{}: the MoMLP has a lower test MSE than one MLP of its experts' width w (equal active parameters): "
                                             "θ = E ln(MSE_width-w / MSE_MoMLP) > 0", name),
                    .note = numbers + departures, .kind = Kind::own_question, .departure = departure},
                log_ratio(eq, mo, runs), sesoi);
      if (ks.size() >= 3) {
        std::vector<std::vector<double>> by_k;  // per K, the MoMLP's test MSE per run
        for (double k : ks) by_k.push_back(mses(t, hurst, Model::momlp, int(k)));
        check_mse_falls_with_K(a, name, ks, by_k, departures, departure);
      }
    }
    json by_hurst = json::array();
    for (double h : hursts) by_hurst.push_back({{"hurst", h}, {"momlp", mean_sd(mses(Target::fbm, h, Model::momlp, K))},
                                                {"baseline", mean_sd(mses(Target::fbm, h, Model::baseline, K))}});
    r.data["table4"] = table4;
    r.data["hurst_sweep"] = by_hurst;
    r.data["codes"] = {{"target", "0 fbm, 1 ackley2, 2 ackley3, 3 rastrigin2, 4 rastrigin3"}, {"model", "0 momlp, 1 baseline (w√K), 2 equal_active (w)"}};
    r.data["setting"] = fmt::format("grids {} / {}² / {}³ on [0,1] (n = 1) and [−1,1]^n, 80/20 split per run shared by every model; experts: {} hidden "
                                    "layers of w = {}, PReLU (one γ per neuron, γ₀ = 0.25), Adam lr {:g}, batch {}; Algorithm 2: {} epochs of eq. (39) with "
                                    "one hidden layer, deepening σ = {:g}, eq. (40) for {} ({} epochs: {}); baselines {} epochs; fBm Hurst {:g}, one path per seed.",
                                    s1, s2, s3, layers, width, lr, batch, stage1, sigma, budget_text, epochs,
                                    budget_text == "steps" ? "each expert takes the steps of that many epochs over all training data" : "over its own cell",
                                    stage1 + epochs, hurst);
    a.add_table(runs_table(items, records));

    // --- Figures: MSE against K per target (baselines as K = their width's K); fBm MSE against H --------
    plot::Figure fig{.name = "momlp_regression_K", .title = "MoMLP test MSE against K (dashed: the width-w√K baseline)", .xlabel = "K",
                     .ylabel = "test MSE (mean over runs)", .logx = true, .logy = true, .width = 1200, .legend = "outside right"};
    const char* colors[] = {"#0072b2", "#009e73", "#e69f00", "#cc79a7", "#d55e00"};  // one per target: MoMLP and its baseline
    for (Target t : targets) {
      std::vector<double> x, y;
      for (double k : ks) x.push_back(k), y.push_back(double(mean_sd(mses(t, hurst, Model::momlp, int(k)))[0]));
      const std::string color = colors[int(t)];
      fig.series.push_back({.x = x, .y = y, .label = std::string(to_string(t)) + " MoMLP", .style = plot::Style::linespoints, .color = color});
      fig.series.push_back({.x = {ks.front(), ks.back()}, .y = std::vector<double>(2, double(table4[to_string(t)]["baseline"][0])),
                            .label = std::string(to_string(t)) + " baseline", .style = plot::Style::lines, .color = color, .dashed = true});
    }
    a.add_figure(std::move(fig));
    if (!hursts.empty()) {
      plot::Figure fh{.name = "momlp_regression_hurst", .title = "fBm: test MSE against the Hurst index", .xlabel = "H", .ylabel = "test MSE", .logy = true};
      std::vector<double> x, ym, yb;
      for (const json& h : by_hurst) x.push_back(h["hurst"]), ym.push_back(h["momlp"][0]), yb.push_back(h["baseline"][0]);
      fh.series.push_back({.x = x, .y = ym, .label = "MoMLP", .style = plot::Style::linespoints});
      fh.series.push_back({.x = x, .y = yb, .label = "baseline", .style = plot::Style::linespoints});
      a.add_figure(std::move(fh));
    }
  });
}
