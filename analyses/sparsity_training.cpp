// sparsity_training — paper 001 §7.1 (Tables 1–2) in miniature: training from scratch, vanilla vs
// modified, and the fraction of activated neurons.
//
// Vanilla: ReLU MLP blocks after LayerNorm (scale and shift), residual connections.
// Modified (§4.1, §5, §7.1): zero-initialised zeroth biases before every block, J-SquaredReLU
// (eq. 4), unbiased LayerNorms and Algorithm 1 after every step with c = 0.1.
// Sparsity as §3.3 measures it: the fraction of nonzero activations, per layer, on the batch each
// step trained on ("training sparsity", integrated over steps, i.e. averaged over logged steps)
// and on test data after training ("testing sparsity"); then averaged over layers. The paper
// reports the modification's relative change: −55.92% training / −36.03% testing (ViT-Base/16,
// ImageNet-1K) and −49.25% / −39.64% (T5-Base, C4), at a small cost in accuracy (77.35% → 76.77%).
// Checks: the modification lowers both fractions (relative change < 0, over paired seeds); our
// relative changes are reported next to the paper's.
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/app/sweep.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/flatness/records.hpp>
#include <sparseact/flatness/refine.hpp>
#include <sparseact/flatness/sparsity_log.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/data_cache.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/recipes.hpp>
#include <sparseact/nn/train.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::flatness;

namespace {

constexpr BlockField kActivated = &BlockStats::activation_density;  // §3.3: the fraction of α ≠ 0

struct Run {
  SparsityLog train;                 // on the batch each step trained on
  std::vector<double> test_density;  // [layer], on test data after training
  double integrated_train = 0, test = 0, accuracy = 0;
};

/// Per paired seed: the modification's relative change (modified − vanilla) / vanilla.
std::vector<Point> relative_changes(const std::vector<std::vector<Run>>& runs, double Run::*value) {
  std::vector<Point> out;
  for (std::size_t s = 0; s < runs[0].size(); ++s) {
    const double v = runs[0][s].*value, m = runs[1][s].*value;
    out.push_back({fmt::format("seed {}", s), (m - v) / v, 0.0});
  }
  return out;
}

/// Evidence over paired seeds that the mean of `per_seed` is > 0: a one-sample t (paired_t_test against 0).
Evidence over_seeds(const std::vector<double>& per_seed, const std::string& what) {
  const stats::TTest t = stats::paired_t_test(per_seed, std::vector<double>(per_seed.size(), 0.0), stats::Alternative::greater);
  return evidence(t, per_seed.size(), "paired seeds", "paired t over seeds of " + what);
}

/// The reductions −(modified − vanilla)/vanilla per seed, > 0 where the modification lowers the fraction (sign −1: the
/// relative changes themselves).
std::vector<double> reductions(const std::vector<Point>& changes, double sign = 1) {
  std::vector<double> out;
  for (const Point& p : changes) out.push_back(-sign * p.measured);
  return out;
}

plot::Figure training_figure(const std::vector<std::vector<Run>>& runs, int blocks) {
  plot::Figure fig{.name = "sparsity_training",
                   .title = "paper 001 §7.1: fraction of activated neurons on training batches (layer average, seed 0)",
                   .xlabel = "training step",
                   .ylabel = "fraction of nonzero activations"};
  const char* names[2] = {"vanilla", "modified"};
  const char* colors[2] = {"#1f77b4", "#d62728"};
  for (int v = 0; v < 2; ++v) {
    const Run& run = runs[v][0];
    const std::vector<double> x(run.train.steps.begin(), run.train.steps.end());
    fig.series.push_back({.x = x, .y = run.train.layer_mean_curve(kActivated),
                          .label = fmt::format("{} (test after training: {:.3f})", names[v], run.test), .color = colors[v]});
    for (int l = 0; l < blocks; ++l)
      fig.series.push_back({.x = x, .y = run.train.curve(l, kActivated), .label = l == 0 ? fmt::format("{} per layer", names[v]) : "",
                            .color = colors[v], .width = 0.7, .dashed = true});
  }
  return fig;
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "sparsity_training",
                     .paper = "001",
                     .claims = {"Section 7.1", "Table 1", "Table 2", "Algorithm 1"},
                     .description = "Training and testing activation sparsity of vanilla vs modified (zeroth biases, J-SquaredReLU, Algorithm 1) MLPs from scratch; "
                                    "work items at --scale paper: 6, one per (seed, variant) training run",
                     .default_scale = Scale::quick});
  int train_n = 0, test_n = 0, pool = 0, d = 0, n = 0, blocks = 0, batch = 0, steps = 0, log_every = 0, seeds = 0;
  double lr = 1e-3, wd = 0.1, c = 0.1;
  analysis.scaled_option("--train", train_n, 20000, 60000, "training images")->check(CLI::Range(256, 60000));
  analysis.scaled_option("--test", test_n, 2000, 10000, "test images for testing sparsity and accuracy")->check(CLI::Range(100, 10000));
  analysis.scaled_option("--pool", pool, 2, 1, "average pooling of the 28×28 images (1, 2, 4 or 7)")->check(CLI::IsMember({1, 2, 4, 7}));
  analysis.scaled_option("--d", d, 64, 128, "hidden-feature dimension d")->check(CLI::Range(2, 2048));
  analysis.scaled_option("--n", n, 256, 512, "block width n (4d, as in ViT/T5)")->check(CLI::Range(2, 8192));
  analysis.scaled_option("--blocks", blocks, 4, 6, "MLP blocks")->check(CLI::Range(1, 32));
  analysis.scaled_option("--batch", batch, 128, 256, "batch size")->check(CLI::Range(1, 4096));
  analysis.scaled_option("--steps", steps, 1500, 10000, "training steps")->check(CLI::Range(1, 10000000));
  analysis.scaled_option("--log-every", log_every, 25, 50, "steps between training-sparsity logs")->check(CLI::Range(1, 1000000));
  analysis.scaled_option("--seeds", seeds, 2, 3, "paired seeds (the same data order and init stream for both variants; at least 2 for the paired t)")
      ->check(CLI::Range(2, 100));
  auto& app = analysis.app();
  app.add_option("--lr", lr, "AdamW peak learning rate (cosine annealing, no warmup, as §7.1's ViT recipe)")->check(CLI::Range(1e-8, 10.0))->capture_default_str();
  app.add_option("--wd", wd, "AdamW weight decay on weight matrices")->check(CLI::Range(0.0, 10.0))->capture_default_str();
  app.add_option("--c", c, "Algorithm 1's factor c")->check(CLI::Range(0.0, 100.0))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const std::uint64_t seed = a.common.seed;
    if (batch > train_n) throw InputError(fmt::format("batch size {} must be in [1, {}] (the training set's size)", batch, train_n));  // before any item
    // --- Run: every (seed, variant) a work item, vanilla (0) and modified (1) --------------------------
    const Grid grid{{static_cast<std::size_t>(seeds), 2}};
    // A missing dataset or too few images is bad input before the first item (and before --resume
    // makes .sweep/); the items then share this process's copy.
    nn::shared_fashion_mnist("train", train_n, pool);
    nn::shared_fashion_mnist("test", test_n, pool);
    const std::vector<Record> records = a.sweep({
        .label = "runs", .count = grid.count(),
        .key = [&](std::size_t i) { const auto g = grid.coords(i); return fmt::format("seed={},variant={}", g[0], g[1] == 1 ? "modified" : "vanilla"); },
        .cost = [&](std::size_t) { return double(steps) * batch * d * n * blocks; },
        .item = [&](std::size_t i) {
          const auto g = grid.coords(i);
          const int s = static_cast<int>(g[0]), v = static_cast<int>(g[1]);
          const nn::Dataset& train_set = nn::shared_fashion_mnist("train", train_n, pool);
          const nn::Dataset& test_set = nn::shared_fashion_mnist("test", test_n, pool);
          nn::BlockConfig b;
          b.activation.kind = v == 1 ? nn::ActivationKind::j_squared_relu : nn::ActivationKind::relu;
          b.ln_affine = true;
          b.ln_bias = v == 0;  // Algorithm 1 runs on unbiased LayerNorms
          b.zeroth_bias = v == 1;
          const nn::Mlp net = nn::make_mlp(nn::uniform_mlp_config(train_set.x.rows(), d, n, blocks, b, 10));
          // paired: the same weight stream for K, V, W (the layouts differ only by d^l and β)
          Eigen::VectorXd theta = nn::init_params(net, seed, stream_id(1, s));
          nn::AdamW opt = nn::adamw_weights_only(net, lr, wd);
          if (v == 1) opt.hooks.push_back(algorithm1_hook(net, c));
          nn::BatchStream stream(train_set, batch, seed, stream_id(2, s));
          SparsityLog log;
          nn::MlpModel mlp(net);
          nn::train(mlp, theta, opt, nn::cosine_schedule(lr, 0, steps), stream, {.steps = steps, .log_every = log_every}, {},
                    [&](long t, const nn::Batch& trained_on) {
                      if (t > 0) log.record(t, net, theta, trained_on.x);  // training sparsity: the batches trained on
                    });
          const auto tested = forward_sparsity(net, theta, test_set.x);
          Record r;
          put_sparsity_log(r, "train", log);
          return r.set("test_density", per_block(tested, kActivated)).set("test", block_mean(tested, kActivated))
              .set("accuracy", nn::accuracy(net, theta, test_set)).set("data", train_set.description);
        }});
    std::vector<std::vector<Run>> runs(2, std::vector<Run>(static_cast<std::size_t>(seeds)));
    for (int s = 0; s < seeds; ++s)
      for (int v = 0; v < 2; ++v) {
        const Record& rec = records[grid.index({static_cast<std::size_t>(s), static_cast<std::size_t>(v)})];
        Run& run = runs[v][s];
        run.train = get_sparsity_log(rec, "train");
        run.integrated_train = run.train.integrated(kActivated);
        run.test_density = rec.arr("test_density");
        run.test = rec.num("test");
        run.accuracy = rec.num("accuracy");
      }

    // --- Tables 1–2 style -----------------------------------------------------------------------------
    Table summary{"summary", {"variant", "seed", "training_sparsity", "testing_sparsity", "test_accuracy"}, {}};
    Table per_layer{"per_layer", {"variant", "seed", "layer", "training_sparsity", "testing_sparsity"}, {}};
    double tr[2] = {0, 0}, te[2] = {0, 0}, acc[2] = {0, 0};
    for (int s = 0; s < seeds; ++s)
      for (int v = 0; v < 2; ++v) {
        const Run& run = runs[v][s];
        summary.add_row({double(v), double(s), run.integrated_train, run.test, run.accuracy});
        tr[v] += run.integrated_train / seeds;
        te[v] += run.test / seeds;
        acc[v] += run.accuracy / seeds;
        const std::vector<double> train_l = run.train.integrated_per_block(kActivated);
        for (int l = 0; l < blocks; ++l) per_layer.add_row({double(v), double(s), double(l + 1), train_l[l], run.test_density[l]});
      }
    const double dtr = (tr[1] - tr[0]) / tr[0], dte = (te[1] - te[0]) / te[0];
    a.result.data["training_sparsity"] = {{"vanilla", tr[0]}, {"modified", tr[1]}, {"relative_change", dtr}};
    a.result.data["testing_sparsity"] = {{"vanilla", te[0]}, {"modified", te[1]}, {"relative_change", dte}};
    a.result.data["test_accuracy"] = {{"vanilla", acc[0]}, {"modified", acc[1]}};
    a.result.data["paper"] = {{"vit", {{"training", -0.5592}, {"testing", -0.3603}}}, {"t5", {{"training", -0.4925}, {"testing", -0.3964}}}};
    a.result.data["data_note"] = nn::kFashionMnistNote;

    // --- Checks ---------------------------------------------------------------------------------------
    const std::string setting = fmt::format(
        "{} blocks, d = {}, n = {}, AdamW lr {} cosine, wd {}, batch {}, {} steps, {} paired seeds; {} Test: {} images. "
        "Vanilla {:.4f} / {:.4f} (train / test fraction activated), accuracy {:.4f}; modified {:.4f} / {:.4f}, accuracy {:.4f}",
        blocks, d, n, lr, wd, batch, steps, seeds, std::string(nn::kFashionMnistNote) + " " + records[0].str("data"), test_n, tr[0], te[0],
        acc[0], tr[1], te[1], acc[1]);
    // The paper's relative changes (−36% to −56%) are for ViT-Base and T5-Base; this miniature departs from them. The 10%
    // below was chosen after two seeds had been seen, so it is not fixed before the data (DESIGN.md): it sets the power and
    // the run size for 80 %, and only the interval against 0 can decide (issue 38).
    constexpr double kReduction = 0.10;
    const Effect reduction{kReduction, "smallest effect of interest (power only; chosen after the data, not prefixed): a 10% relative "
                                       "reduction (the paper's −36% to −56% are ViT-Base and T5-Base numbers; this is a miniature)", false};
    const std::string departed = "a ReLU MLP in miniature on Fashion-MNIST, not ViT-Base/ImageNet-1K or T5-Base/C4";
    const std::string departure = "Departure: a ReLU MLP in miniature on Fashion-MNIST, not ViT-Base/ImageNet-1K or T5-Base/C4. ";
    const std::vector<Point> train_changes = relative_changes(runs, &Run::integrated_train), test_changes = relative_changes(runs, &Run::test);
    direction(a, {.id = "training_sparsity_lower",
                  .claim = "Section 7.1 (Tables 1-2)",
                  .statement = "the modification lowers the training fraction of activated neurons (integrated over steps, averaged over "
                               "layers): θ = E_seed (vanilla − modified)/vanilla > 0, one-sided",
                  .note = departure + fmt::format("Relative change of the seeds' means {:.4g} (paper: −55.92% ViT, −49.25% T5). {}", dtr, setting),
                  .detail = {{"relative_change_per_seed", reductions(train_changes, -1)}, {"relative_change_of_means", dtr}, {"paper", {{"vit", -0.5592}, {"t5", -0.4925}}}},
                  .departure = departed},
              over_seeds(reductions(train_changes), "(vanilla − modified)/vanilla, training fraction"), reduction);
    direction(a, {.id = "testing_sparsity_lower",
                  .claim = "Section 7.1 (Tables 1-2)",
                  .statement = "the modification lowers the testing fraction of activated neurons after training: θ = E_seed "
                               "(vanilla − modified)/vanilla > 0, one-sided",
                  .note = departure + fmt::format("Relative change of the seeds' means {:.4g} (paper: −36.03% ViT, −39.64% T5). {}", dte, setting),
                  .detail = {{"relative_change_per_seed", reductions(test_changes, -1)}, {"relative_change_of_means", dte}, {"paper", {{"vit", -0.3603}, {"t5", -0.3964}}}},
                  .departure = departed},
              over_seeds(reductions(test_changes), "(vanilla − modified)/vanilla, testing fraction"), reduction);
    // "A small cost in accuracy" as non-inferiority: θ = E_seed (modified − vanilla) + Δ > 0. The margin is the paper's own
    // number, fixed before the data (DESIGN.md, margins; issue 47): Table 1's Acc@1 drop, 77.35% → 76.77% = 0.58 points
    // (ViT-Base). The effect at no loss at all (θ = Δ) sets power only; the interval against 0 decides.
    constexpr double kAccuracyMargin = 0.7735 - 0.7677;
    const std::string margin_source = "paper 001 Table 1: Acc@1 77.35% (vanilla) → 76.77% (modified), a 0.58-point drop";
    std::vector<double> accuracy_margin;
    for (std::size_t sd = 0; sd < runs[0].size(); ++sd) accuracy_margin.push_back(runs[1][sd].accuracy - runs[0][sd].accuracy + kAccuracyMargin);
    Evidence accuracy_evidence = over_seeds(accuracy_margin, "modified − vanilla accuracy + 0.58 points");
    accuracy_evidence.range_lo = -1.0 + kAccuracyMargin;  // a difference of accuracies lies in [−1, 1]
    accuracy_evidence.range_hi = 1.0 + kAccuracyMargin;
    direction(a, {.id = "accuracy_cost",
                  .claim = "Section 7.1 (Table 1)",
                  .statement = "the sparsity costs no more accuracy than the paper's (non-inferiority): θ = E_seed (modified − vanilla test "
                               "accuracy) + 0.58 points > 0, the margin the paper's own drop (Table 1, ViT-Base)",
                  .note = departure + fmt::format("Margin Δ = 0.58 points, {} (fixed before the data). {}", margin_source, setting),
                  .detail = {{"vanilla", acc[0]}, {"modified", acc[1]}, {"margin", kAccuracyMargin}, {"margin_source", margin_source}},
                  .departure = departed},
              accuracy_evidence,
              {kAccuracyMargin, "no accuracy lost at all (θ = Δ = 0.58 points, " + margin_source + "); sets power only", false});

    // --- Figures (Fig. 5c / 6e) and tables ------------------------------------------------------------
    a.add_figure(training_figure(runs, blocks));
    a.add_table(std::move(summary));
    a.add_table(std::move(per_layer));
  });
}
