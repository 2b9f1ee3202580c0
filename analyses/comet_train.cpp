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

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::routing;

namespace {

struct RunKey {
  Policy model;
  int width;
  double sparsity;  ///< 1 − p_k; 0 for the standard model
  int seed;
  int epochs;       ///< the grid's --epochs, or --small-epochs for standard_beats_comet_small's runs
};

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
    if (models_text.empty()) models = all_policies();
    else
      for (const std::string& m : CLI::detail::split(models_text, ','))
        try { models.push_back(parse_policy(m)); } catch (const std::invalid_argument& e) { throw InputError(std::string("--models: ") + e.what()); }
    const nn::Dataset train = nn::fashion_mnist("train", train_n, 1), test = nn::fashion_mnist("test", test_n, 1);

    // --- Run: one work item per (model, width, sparsity, seed); the standard model once per width ---
    std::vector<RunKey> runs;
    for (double w : widths)
      for (int s = 0; s < seeds; ++s)
        for (Policy m : models) {
          if (m == Policy::standard) { runs.push_back({m, int(w), 0.0, s, epochs}); continue; }
          for (double sp : sparsities) runs.push_back({m, int(w), sp, s, epochs});
        }
    // standard_beats_comet_small's own runs: the standard and COMET models at the smallest width and 1 − p_k = 0.9, trained
    // --small-epochs (same θ_0, router and data order as the grid's runs of that seed).
    const bool has_small = std::find(models.begin(), models.end(), Policy::standard) != models.end() &&
                           std::find(models.begin(), models.end(), Policy::comet) != models.end() &&
                           std::find(sparsities.begin(), sparsities.end(), 0.9) != sparsities.end();
    const int small_run_epochs = has_small && small_epochs > epochs ? small_epochs : epochs;
    if (small_run_epochs != epochs)
      for (int s = 0; s < seeds; ++s) {
        runs.push_back({Policy::standard, int(widths.front()), 0.0, s, small_run_epochs});
        runs.push_back({Policy::comet, int(widths.front()), 0.9, s, small_run_epochs});
      }
    const auto config = [&](const RunKey& k) {
      return TrainRunConfig{.widths = {784, k.width, k.width, k.width, 10},
                            .policy = {.policy = k.model, .p_k = 1 - k.sparsity, .tied_fraction = tied_fraction, .l1 = l1, .router_hidden = router_hidden},
                            .epochs = k.epochs, .batch = batch, .lr = lr, .seed = a.common.seed, .replicate = std::uint64_t(k.seed),
                            .device = a.common.device};
    };
    const std::vector<Record> records = a.sweep({
        .label = "training runs", .count = runs.size(),
        .key = [&](std::size_t i) {
          const std::string key = fmt::format("model={} width={} sparsity={:g} seed={}", to_string(runs[i].model), runs[i].width, runs[i].sparsity, runs[i].seed);
          return runs[i].epochs == epochs ? key : fmt::format("{} epochs={}", key, runs[i].epochs);
        },
        .cost = [&](std::size_t i) {
          return double(runs[i].epochs) * runs[i].width * (784 + 2.0 * runs[i].width) * (runs[i].model == Policy::smaller ? 1 - runs[i].sparsity : 1.0);
        },
        .item = [&](std::size_t i) {
          const TrainRun t = train_masked(config(runs[i]), train, test);
          return Record().set("test_acc", t.test_acc).set("train_loss", t.train_loss).set("test_acc_all_on", t.test_acc_all_on)
              .set("on_gpu", t.device == Device::cuda ? 1.0 : 0.0);
        }});
    if (a.common.device == Device::cuda) {  // cuda/plain_train.hpp covers the policies whose masks depend on the batch alone
      std::size_t on_gpu = 0;
      for (const Record& rec : records) on_gpu += rec.num("on_gpu") == 1.0;
      r.data["devices"] = fmt::format("{} of {} training runs on the GPU (standard, smaller, topk, comet, layerwise); dropout, bernoulli, "
                                      "example_tied, l1 and the MoE models on the CPU", on_gpu, records.size());
    }

    // --- Tables: curves, and final accuracies by (model, width, sparsity) over seeds -------------------
    Table curves{"curves", {"model", "width", "sparsity", "seed", "epochs", "epoch", "test_acc", "train_loss", "test_acc_all_on"}, {}};
    // At lr 0.05 test accuracy jumps by points between epochs (issue 28): beside the last epoch, the
    // mean over the last kLast epochs, a steadier reading of where a model has got to.
    const std::size_t last_k = std::min<std::size_t>(kLastEpochs, std::size_t(std::max(epochs, 0)));
    const auto acc_by_seed = [&](Policy m, int w, double sp, std::size_t last, int ep) {
      std::vector<double> v;
      for (std::size_t i = 0; i < runs.size(); ++i)
        if (runs[i].model == m && runs[i].width == w && (m == Policy::standard || runs[i].sparsity == sp) && runs[i].epochs == ep &&
            !records[i].arr("test_acc").empty()) {
          const auto& acc = records[i].arr("test_acc");
          stats::RunningMean mean;
          for (std::size_t e = acc.size() - std::min(last, acc.size()); e < acc.size(); ++e) mean.push(acc[e]);
          v.push_back(mean.mean());
        }
      return v;
    };
    const auto final_acc = [&](Policy m, int w, double sp, int ep) { return acc_by_seed(m, w, sp, 1, ep); };
    // The final training loss of every seed's run against the constant predictor's (DESIGN.md: a model within 1 % of it did
    // not train, and a comparison with it is not evidence).
    const double constant_loss = constant_predictor_loss(train.labels, 10);
    const auto trained = [&](Policy m, int w, double sp, int ep) {
      TrainedRecord rec{{}, constant_loss};
      for (std::size_t i = 0; i < runs.size(); ++i)
        if (runs[i].model == m && runs[i].width == w && (m == Policy::standard || runs[i].sparsity == sp) && runs[i].epochs == ep &&
            !records[i].arr("train_loss").empty())
          rec.final_train_loss.push_back(records[i].arr("train_loss").back());
      return rec;
    };
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto& acc = records[i].arr("test_acc");
      const auto& loss = records[i].arr("train_loss");
      const auto& all_on = records[i].arr("test_acc_all_on");
      for (std::size_t e = 0; e < acc.size(); ++e)
        curves.add_row({double(runs[i].model), double(runs[i].width), runs[i].sparsity, double(runs[i].seed), double(runs[i].epochs), double(e + 1), acc[e], loss[e],
                        all_on.empty() ? std::nan("") : all_on[e]});
    }

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
    // A comparison with a model whose final training loss stayed within 1 % of the constant predictor's is not evidence.
    const auto require_trained = [&](Check& c, Policy a_model, Policy b_model, int w, double sp, int ep) {
      const TrainedRecord ra = trained(a_model, w, sp, ep), rb = trained(b_model, w, sp, ep);
      c.detail["final_train_loss"] = {{to_string(a_model), ra.to_json()}, {to_string(b_model), rb.to_json()}};
      std::string reason;
      for (const auto& [m, rec] : {std::pair{a_model, ra}, std::pair{b_model, rb}})
        if (rec.not_trained() > 0)
          reason += fmt::format("{} did not train in {} of {} seeds (final training loss {:.4f}, constant predictor's {:.4f}; within 1 % "
                                "of it means chance). ",
                                to_string(m), rec.not_trained(), rec.final_train_loss.size(), fmt::join(rec.final_train_loss, ", "), constant_loss);
      if (!reason.empty()) not_evidence_untrained(c, reason + "A comparison with a model that did not train is inconclusive (DESIGN.md).");
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
      const stats::TTest t = stats::paired_t_test(final_acc(better, w, sp, ep), final_acc(worse, w, sp, ep), stats::Alternative::greater);
      const std::size_t last = std::min<std::size_t>(kLastEpochs, std::size_t(ep));
      const stats::TTest tk = stats::paired_t_test(acc_by_seed(better, w, sp, last, ep), acc_by_seed(worse, w, sp, last, ep), stats::Alternative::greater);
      Check& c = direction(a, {.id = id, .claim = "§5.2.1, Figure 4", .statement = statement,
                               .note = fmt::format("width {}, 1 − p_k = {:g}, {} epochs: {} − {} = {:+.4f} at the last epoch (paired over {} seeds, se {:.4f}; "
                                                   "the verdict's reading); over the mean of the last {} epochs {:+.4f} (se {:.4f}). {}{}",
                                                   w, sp, ep, to_string(better), to_string(worse), t.mean_difference, t.n, t.std_error, last,
                                                   tk.mean_difference, tk.std_error, extra, departures(ep)),
                               .detail = {{"epochs", ep}, {"last_epochs", last}, {"last_epochs_mean_difference", tk.mean_difference},
                                          {"last_epochs_std_error", tk.std_error}},
                               .departure = departure(ep)},
                           accuracy_evidence(t), {kAccuracyEffect, kAccuracyEffectSource, false});
      require_trained(c, better, worse, w, sp, ep);
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
      const stats::TTest t = stats::paired_t_test(final_acc(Policy::smaller, wmax, 0.5, epochs), final_acc(Policy::standard, wmax, 0.5, epochs));
      const stats::TTest tk = stats::paired_t_test(acc_by_seed(Policy::smaller, wmax, 0.5, last_k, epochs), acc_by_seed(Policy::standard, wmax, 0.5, last_k, epochs));
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
      require_trained(c, Policy::smaller, Policy::standard, wmax, 0.5, epochs);
    }
    json finals = json::array();
    json losses = json::array();
    for (double w : widths)
      for (Policy m : models)
        for (double sp : m == Policy::standard ? std::vector<double>{0.0} : sparsities) {
          const std::vector<double> f = final_acc(m, int(w), sp, epochs);
          stats::RunningMean mean;
          for (double v : f) mean.push(v);
          stats::RunningMean last_mean;
          for (double v : acc_by_seed(m, int(w), sp, last_k, epochs)) last_mean.push(v);
          finals.push_back({{"model", to_string(m)}, {"width", w}, {"sparsity", sp}, {"final_test_acc_mean", mean.mean()},
                            {"last_epochs_test_acc_mean", last_mean.mean()}, {"last_epochs", last_k}, {"seeds", f.size()}});
          json l = trained(m, int(w), sp, epochs).to_json();
          l["model"] = to_string(m), l["width"] = w, l["sparsity"] = sp, l["epochs"] = epochs;
          losses.push_back(std::move(l));
        }
    if (small_run_epochs != epochs)
      for (const auto& [m, sp] : {std::pair{Policy::standard, 0.0}, std::pair{Policy::comet, 0.9}}) {
        json l = trained(m, wmin, sp, small_run_epochs).to_json();
        l["model"] = to_string(m), l["width"] = wmin, l["sparsity"] = sp, l["epochs"] = small_run_epochs;
        losses.push_back(std::move(l));
      }
    r.data["training_loss"] = {{"constant_predictor_loss", constant_loss},
                               {"rule", "a run did not train when its final training loss (the last epoch's mean over its steps) is ≥ 99 % of the "
                                        "constant predictor's, the cross-entropy of predicting the training labels' frequencies (DESIGN.md)"},
                               {"runs", losses}};
    json codes = json::object();
    for (Policy m : all_policies()) codes[std::to_string(int(m))] = to_string(m);
    r.data["final_accuracy"] = finals;
    r.data["model_codes"] = codes;
    r.data["setting"] = fmt::format("4-layer ReLU MLPs 784–N×3–10 with biases, SGD lr {:g}, batch {}, {} epochs, {} training / {} test images, {} seeds; "
                                    "example-tied fraction {:g}, L1 λ {:g} on weights; MoE: ⌊1/p_k⌋ experts of round(p_k N) units, top-1 router 1 hidden layer "
                                    "of {} (trainable: output × gate probability; fixed: frozen at init). {}{}",
                                    lr, batch, epochs, train_n, test_n, seeds, tied_fraction, l1, router_hidden,
                                    small_run_epochs == epochs ? std::string()
                                                               : fmt::format("standard_beats_comet_small's standard and COMET runs: {} epochs. ", small_run_epochs),
                                    nn::kFashionMnistNote);
    a.add_table(std::move(curves));

    // --- Figure 4 in miniature: final test accuracy against width, per model, one figure per sparsity ---
    for (double sp : sparsities) {
      plot::Figure fig{.name = fmt::format("comet_train_fig4_sparsity{:g}", sp), .title = fmt::format("Final test accuracy, 1 − p_k = {:g}", sp),
                       .xlabel = "hidden width N", .ylabel = "test accuracy (mean over seeds)", .logx = true, .legend = "bottom right"};
      for (Policy m : models) {
        std::vector<double> x, y;
        for (double w : widths) {
          stats::RunningMean mean;
          for (double v : final_acc(m, int(w), sp, epochs)) mean.push(v);
          if (mean.count() > 0) x.push_back(w), y.push_back(mean.mean());
        }
        fig.series.push_back({.x = x, .y = y, .label = to_string(m), .style = plot::Style::linespoints});
      }
      a.add_figure(std::move(fig));
    }
  });
}
