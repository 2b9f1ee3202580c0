// comet_train — paper 002 §5.2.1, Figure 4 and Appendix A.1–A.2 in miniature: 4-layer MLPs trained on
// image classification with COMET's fixed routing, its layer-wise variant and the baselines (standard,
// smaller, dropout, Top-k, Bernoulli per example, example-tied dropout, L1, MoE with a trainable or a
// fixed top-1 router), SGD, several seeds.
// The paper's findings we check: COMET beats the standard MLP when the model is large and moderately
// sparse, loses when it is small and very sparse; a smaller dense model matches the standard one at
// large width; COMET beats the per-example random masks (§2).
//
// Fashion-MNIST stands in for CIFAR-10. Default: widths {100, 500} × 1 − p_k ∈ {0.5, 0.9}, 3 seeds,
// 5 epochs on the first 10000 training images (about ten minutes on 2 cores); --scale paper is A.1
// (widths 100–3000, 1 − p_k 0.1/0.5/0.9, lr 1e-4, 100 epochs; A.2 with --lr 1e-3).
// Each "A beats B" is a one-sided paired t over seeds (app::direction), its power at a smallest effect of
// 1 point of accuracy (the paper prints no gap; it sets power only); "matches" is a TOST whose 1-point
// margin is ours, not the paper's, so it cannot decide (DESIGN.md, margins) and reads "inconclusive".
// Every model's final training loss is recorded against the constant predictor's (the labels'
// entropy, ln 10 here): a comparison with a model that stayed within 1 % of it did not train and is
// "inconclusive" (routing::did_not_train). At width 100 and 1 − p_k = 0.9 COMET leaves chance only after
// about 10 epochs at lr 0.05, so standard_beats_comet_small is read from runs of --small-epochs (30 by
// default) of the standard and COMET models alone, beside the 5-epoch grid of Figure 4.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/routing/mask_policy.hpp>
#include <sparseact/routing/train_grid.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::routing;

namespace {

/// The effect that counts in every accuracy comparison: §5.2.1 prints no accuracies and Figure 4 shows
/// them only as curves (no gap is printed in the text), so a stated smallest effect of interest.
constexpr double kAccuracyEffect = 0.01;
constexpr std::size_t kLastEpochs = 3;  // the "mean of the last epochs" reading beside the last epoch's
const char* const kAccuracyEffectSource =
    "smallest effect of interest: 1 point of test accuracy (§5.2.1 and Figure 4 print no gap as a number)";

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "comet_train",
                     .paper = "002",
                     .claims = {"§5.2.1", "Figure 4", "Appendix A.1"},
                     .description = "COMET vs standard, smaller, dropout, Top-k, Bernoulli, example-tied, L1 and MoE MLPs on Fashion-MNIST "
                                    "(paper 002 §5.2.1, Figure 4 in miniature); one work item per training run",
                     .gpu_path = true,
                     .standard_run = true});
  auto& app = analysis.app();
  // Parameters (by scale when not given: quick / default / paper).
  std::string widths_text, sparsity_text, models_text;
  int seeds = 3, epochs = 0, small_epochs = 0, train_n = 0, test_n = 0, batch = 64;
  double lr = 0, tied_fraction = 0.4, l1 = 1e-4;
  int router_hidden = 32;
  analysis.scaled_option("--widths", widths_text, "32,64", "100,500", "100,500,1000,2000,3000", "hidden widths N (3 hidden layers each)");
  analysis.scaled_option("--sparsity", sparsity_text, "0.5,0.9", "0.5,0.9", "0.1,0.5,0.9", "1 − p_k values");
  app.add_option("--models", models_text, "comma list of standard, smaller, dropout, topk, comet, layerwise, bernoulli, example_tied, l1, "
                                        "moe_trainable, moe_fixed [all]");
  app.add_option("--seeds", seeds, "replicates")->check(CLI::Range(2, 1000))->capture_default_str();
  analysis.scaled_option("--epochs", epochs, 2, 5, 100, "epochs")->check(CLI::Range(1, 100000));
  analysis.scaled_option("--small-epochs", small_epochs, 20, 30, 100,
                         "epochs of the standard and COMET runs that standard_beats_comet_small compares (smallest width, 1 − p_k = 0.9, "
                         "where COMET leaves chance only after about 10 epochs); at most --epochs: read from the grid, no extra runs")
      ->check(CLI::Range(1, 100000));
  analysis.scaled_option("--train", train_n, 1000, 10000, 60000, "training images")->check(CLI::Range(1, 60000));
  analysis.scaled_option("--test", test_n, 500, 2000, 10000, "test images")->check(CLI::Range(1, 10000));
  app.add_option("--batch", batch, "batch size")->check(CLI::Range(1, 60000))->capture_default_str();
  analysis.scaled_option("--lr", lr, 0.05, 0.05, 1e-4, "SGD learning rate (A.1: 1e-4; A.2: 1e-3)")->check(CLI::PositiveNumber);
  app.add_option("--tied-fraction", tied_fraction, "example-tied dropout: always-on units")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--l1", l1, "λ of the L1 baseline")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--router-hidden", router_hidden, "MoE baselines: the top-1 router's hidden width")->check(CLI::Range(1, 100000))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    const std::vector<double> widths = parse_number_list("--widths", widths_text, 2, 100000, true);
    const std::vector<double> sparsities = parse_number_list("--sparsity", sparsity_text, 0, 0.999999);
    std::vector<Policy> models;
    try { models = parse_policies(models_text); } catch (const std::invalid_argument& e) { throw InputError(std::string("--models: ") + e.what()); }
    const nn::Dataset train = nn::fashion_mnist("train", train_n, 1), test = nn::fashion_mnist("test", test_n, 1);

    // --- Run: one work item per (model, width, sparsity, seed), the standard model once per width; then
    // standard_beats_comet_small's own runs of --small-epochs (routing/train_grid.hpp) ---------------
    const int small_run_epochs = small_comparison_epochs(models, sparsities, epochs, small_epochs);
    GridResults grid{figure4_runs(widths, sparsities, models, seeds, epochs, small_epochs), {}};
    const std::vector<GridRun>& runs = grid.runs;
    const auto config = [&](const GridRun& k) {
      return TrainRunConfig{.widths = {784, k.width, k.width, k.width, 10},
                            .policy = {.policy = k.model, .p_k = 1 - k.sparsity, .tied_fraction = tied_fraction, .l1 = l1, .router_hidden = router_hidden},
                            .epochs = k.epochs, .batch = batch, .lr = lr, .seed = a.common.seed, .replicate = std::uint64_t(k.seed),
                            .device = a.common.device};
    };
    grid.records = a.sweep({
        .label = "training runs", .count = runs.size(),
        .key = [&](std::size_t i) { return sweep_key(runs[i], epochs); },
        .cost = [&](std::size_t i) { return sweep_cost(runs[i]); },
        .item = [&](std::size_t i) { return to_record(train_masked(config(runs[i]), train, test)); }});
    if (a.common.device == Device::cuda)  // cuda/plain_train.hpp covers the policies whose masks depend on the batch alone
      r.data["devices"] = fmt::format("{} of {} training runs on the GPU (standard, smaller, topk, comet, layerwise); dropout, bernoulli, "
                                      "example_tied, l1 and the MoE models on the CPU", grid.on_gpu(), runs.size());

    // At lr 0.05 test accuracy jumps by points between epochs (issue 28): beside the last epoch, the
    // mean over the last kLastEpochs epochs, a steadier reading of where a model has got to.
    const std::size_t last_k = std::min<std::size_t>(kLastEpochs, std::size_t(std::max(epochs, 0)));
    // Every run's final training loss against the constant predictor's (DESIGN.md: a model within 1 % of it did not
    // train, and a comparison with it is not evidence).
    const double constant_loss = constant_predictor_loss(train.labels, 10);

    // --- Checks (final accuracy, paired by seed: one-sided direction and TOST) ------------------------
    const int wmax = int(widths.back()), wmin = int(widths.front());
    const auto has = [&](Policy m) { return std::find(models.begin(), models.end(), m) != models.end(); };
    const auto has_sp = [&](double sp) { return std::find(sparsities.begin(), sparsities.end(), sp) != sparsities.end(); };
    const auto departures = [&](int ep) {
      return fmt::format(
          "Departures from A.1 (for a 2-core budget): Fashion-MNIST for CIFAR-10, {} training / {} test images, {} epochs (A.1: 100), "
          "SGD lr {:g} (A.1: 1e-4), widths {} (A.1: 100–3000; \"large\" is our largest), {} seeds (A.1: 3). The paper's high-capacity "
          "regime is not reached at this scale; --scale paper runs A.1.",
          train_n, test_n, ep, lr, widths_text, seeds);
    };
    const auto departure = [&](int ep) {
      return fmt::format("Fashion-MNIST for CIFAR-10, {} epochs (A.1: 100), SGD lr {:g} (A.1: 1e-4), widths {}", ep, lr, widths_text);
    };
    // Accuracy differences lie in [−1, 1], and so do their printed bounds.
    const auto accuracy_evidence = [](const stats::TTest& t) {
      Evidence e = evidence(t, t.n, "seeds (paired)", "paired t over seeds");
      e.range_lo = -1, e.range_hi = 1;
      return e;
    };
    const auto compare = [&](const std::string& id, Policy better, Policy worse, int w, double sp, int ep, const std::string& statement,
                             const std::string& extra) {
      if (!has(better) || !has(worse) || !has_sp(sp) || ep == 0) return;
      const stats::TTest t = stats::paired_t_test(grid.accuracy(better, w, sp, ep), grid.accuracy(worse, w, sp, ep), stats::Alternative::greater);
      const std::size_t last = std::min<std::size_t>(kLastEpochs, std::size_t(ep));
      const stats::TTest tk = stats::paired_t_test(grid.accuracy(better, w, sp, ep, last), grid.accuracy(worse, w, sp, ep, last), stats::Alternative::greater);
      Check& c = direction(a, {.id = id, .claim = "§5.2.1, Figure 4", .statement = statement,
                               .note = fmt::format("width {}, 1 − p_k = {:g}, {} epochs: {} − {} = {:+.4f} at the last epoch (paired over {} seeds, se {:.4f}; "
                                                   "the verdict's reading); over the mean of the last {} epochs {:+.4f} (se {:.4f}). {}{}",
                                                   w, sp, ep, to_string(better), to_string(worse), t.mean_difference, t.n, t.std_error, last,
                                                   tk.mean_difference, tk.std_error, extra, departures(ep)),
                               .detail = {{"epochs", ep}, {"last_epochs", last}, {"last_epochs_mean_difference", tk.mean_difference},
                                          {"last_epochs_std_error", tk.std_error}},
                               .departure = departure(ep)},
                           accuracy_evidence(t), {kAccuracyEffect, kAccuracyEffectSource, false});
      require_trained(c, {{to_string(better), grid.trained(better, w, sp, ep, constant_loss)},
                          {to_string(worse), grid.trained(worse, w, sp, ep, constant_loss)}});
    };
    compare("comet_beats_standard_large", Policy::comet, Policy::standard, wmax, 0.5, epochs,
            "large model, 1 − p_k = 0.5: COMET's test accuracy > the standard MLP's", "");
    compare("standard_beats_comet_small", Policy::standard, Policy::comet, wmin, 0.9, small_run_epochs,
            fmt::format("small model (width {}), 1 − p_k = 0.9: the standard MLP's test accuracy > COMET's", wmin),
            small_run_epochs == epochs
                ? ""
                : fmt::format("Read from the standard and COMET runs of {} epochs (--small-epochs), not the {}-epoch grid: at {} epochs COMET "
                              "at this width and sparsity stays at chance (data.training_loss), and more epochs (toward A.1's 100, with our lr) "
                              "is the change chosen; A.1's lr 1e-4 would train slower still. ",
                              small_run_epochs, epochs, epochs));
    compare("comet_beats_bernoulli", Policy::comet, Policy::bernoulli, wmax, 0.5, epochs,
            "COMET > Bernoulli masks fixed per example (§2: input-dependent beats random routing)", "");
    compare("comet_beats_example_tied", Policy::comet, Policy::example_tied, wmax, 0.5, epochs, "COMET > example-tied dropout (§2)", "");
    if (has(Policy::smaller) && has(Policy::standard) && has_sp(0.5) && epochs > 0) {
      const stats::TTest t = stats::paired_t_test(grid.accuracy(Policy::smaller, wmax, 0.5, epochs), grid.accuracy(Policy::standard, wmax, 0.5, epochs));
      const stats::TTest tk = stats::paired_t_test(grid.accuracy(Policy::smaller, wmax, 0.5, epochs, last_k),
                                                   grid.accuracy(Policy::standard, wmax, 0.5, epochs, last_k));
      Check& c = equivalent(a, {.id = "smaller_matches_standard", .claim = "§5.2.1, Figure 4",
                                .statement = "at the largest width a smaller dense model (round(p_k N) units, 1 − p_k = 0.5) matches the standard one: "
                                             "|smaller − standard| < Δ (TOST, paired by seed)",
                                .note = fmt::format("width {}: smaller − standard = {:+.4f} at the last epoch (paired over {} seeds, se {:.4f}; the "
                                                    "verdict's reading); over the mean of the last {} epochs {:+.4f} (se {:.4f}). §5.2.1 says "
                                                    "\"matches\" and neither it nor A.1 prints a margin or a spread: Δ = 1 point is ours, so the "
                                                    "check cannot decide (DESIGN.md, margins) until a margin is fixed before a run. {}",
                                                    wmax, t.mean_difference, t.n, t.std_error, last_k, tk.mean_difference, tk.std_error, departures(epochs)),
                                .detail = {{"epochs", epochs}, {"last_epochs", last_k}, {"last_epochs_mean_difference", tk.mean_difference},
                                           {"last_epochs_std_error", tk.std_error}},
                                .departure = departure(epochs)},
                            accuracy_evidence(t), kAccuracyEffect,
                            "stated by us: 1 point of test accuracy (§5.2.1 and A.1 print no margin or spread; not fixed before the data)");
      require_trained(c, {{"smaller", grid.trained(Policy::smaller, wmax, 0.5, epochs, constant_loss)},
                          {"standard", grid.trained(Policy::standard, wmax, 0.5, epochs, constant_loss)}});
    }
    r.data["training_loss"] = {{"constant_predictor_loss", constant_loss},
                               {"rule", "a run did not train when its final training loss (the last epoch's mean over its steps) is ≥ 99 % of the "
                                        "constant predictor's, the cross-entropy of predicting the training labels' frequencies (DESIGN.md)"},
                               {"runs", grid.training_losses(widths, models, sparsities, epochs, constant_loss,
                                                             small_run_epochs != epochs ? std::vector<std::pair<Policy, double>>{{Policy::standard, 0.0}, {Policy::comet, 0.9}}
                                                                                        : std::vector<std::pair<Policy, double>>{},
                                                             wmin, small_run_epochs)}};
    json codes = json::object();
    for (Policy m : all_policies()) codes[std::to_string(int(m))] = to_string(m);
    r.data["final_accuracy"] = grid.final_accuracy(widths, models, sparsities, epochs, last_k);
    r.data["model_codes"] = codes;
    r.data["setting"] = fmt::format("4-layer ReLU MLPs 784–N×3–10 with biases, SGD lr {:g}, batch {}, {} epochs, {} training / {} test images, {} seeds; "
                                    "example-tied fraction {:g}, L1 λ {:g} on weights; MoE: ⌊1/p_k⌋ experts of round(p_k N) units, top-1 router 1 hidden layer "
                                    "of {} (trainable: output × gate probability; fixed: frozen at init). {}{}",
                                    lr, batch, epochs, train_n, test_n, seeds, tied_fraction, l1, router_hidden,
                                    small_run_epochs == epochs ? std::string()
                                                               : fmt::format("standard_beats_comet_small's standard and COMET runs: {} epochs. ", small_run_epochs),
                                    nn::kFashionMnistNote);
    a.add_table(grid.curves());

    // --- Figure 4 in miniature: final test accuracy against width, per model, one figure per sparsity ---
    for (double sp : sparsities) {
      plot::Figure fig{.name = fmt::format("comet_train_fig4_sparsity{:g}", sp), .title = fmt::format("Final test accuracy, 1 − p_k = {:g}", sp),
                       .xlabel = "hidden width N", .ylabel = "test accuracy (mean over seeds)", .logx = true, .legend = "bottom right"};
      for (Policy m : models) {
        std::vector<double> x, y;
        for (double w : widths) {
          stats::RunningMean mean;
          for (double v : grid.accuracy(m, int(w), sp, epochs)) mean.push(v);
          if (mean.count() > 0) x.push_back(w), y.push_back(mean.mean());
        }
        fig.series.push_back({.x = x, .y = y, .label = to_string(m), .style = plot::Style::linespoints});
      }
      a.add_figure(std::move(fig));
    }
  });
}
