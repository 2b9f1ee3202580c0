// weird_activation — paper 001 §6 (Figure 4): gradient sparsity without activation sparsity.
//
// Weird-J-SquaredReLU has a flat area of width 2·w_half around 0 where σ' = 0; shifting it,
// σ(x − Δx) + Δy with (Δx, Δy) ∈ {±1.6}², moves that area away from zero in both directions, so
// that neither the value, the sign nor the norm of activations or pre-activations is what a
// sparsity-seeking training could push towards zero. If gradient sparsity is what training
// seeks (§4), pre-activations gather in [Δx − w_half, Δx + w_half] where α = Δy ≠ 0. The paper
// trains ViT-Base with unrestricted DB-MLPs on CIFAR-10 (Adam, lr 1e-4, 100 epochs; App. E) and
// finds "most layers have at least 70% activations concentrating at the flat area", while
// activations are not sparse (they sit at Δy = ±1.6).
// Here: four DB-MLPs (LayerNorm with scale and shift, zeroth biases without Algorithm 1), one per
// shift, trained with Adam on Fashion-MNIST; the flat-area fraction per layer on the training
// batches over training. Checks: in every network, most layers end with ≥ 70% in the flat area;
// and activations are not sparse (the fraction of exactly-zero activations stays far below it).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/recipes.hpp>
#include <sparseact/nn/train.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::flatness;

int main(int argc, char** argv) {
  Analysis analysis({.name = "weird_activation",
                     .paper = "001",
                     .claims = {"Section 6", "Figure 4"},
                     .description = "Shifted Weird-J-SquaredReLU networks: pre-activations gather in the flat area (gradient sparsity) while activations are not sparse",
                     .default_scale = Scale::quick});
  int train_n = 0, pool = 0, d = 0, n = 0, blocks = 0, batch = 0, steps = 0, log_every = 0;
  double lr = 1e-3, w_half = 1.5, shift = 1.6, threshold = 0.7;
  analysis.scaled_option("--train", train_n, 20000, 60000, "training images")->check(CLI::Range(256, 60000));
  analysis.scaled_option("--pool", pool, 2, 1, "average pooling of the 28×28 images (1, 2, 4 or 7)")->check(CLI::IsMember({1, 2, 4, 7}));
  analysis.scaled_option("--d", d, 64, 128, "hidden-feature dimension d")->check(CLI::Range(2, 2048));
  analysis.scaled_option("--n", n, 256, 512, "block width n")->check(CLI::Range(2, 8192));
  analysis.scaled_option("--blocks", blocks, 4, 8, "MLP blocks")->check(CLI::Range(1, 32));
  analysis.scaled_option("--batch", batch, 64, 64, "batch size (App. E: 64)")->check(CLI::Range(1, 4096));
  analysis.scaled_option("--steps", steps, 1500, 20000, "training steps")->check(CLI::Range(1, 10000000));
  analysis.scaled_option("--log-every", log_every, 50, 100, "steps between logs")->check(CLI::Range(1, 1000000));
  auto& app = analysis.app();
  app.add_option("--lr", lr, "Adam learning rate (App. E: 1e-4 over 100 epochs; larger here for fewer steps)")->check(CLI::Range(1e-8, 10.0))->capture_default_str();
  app.add_option("--w-half", w_half, "half width of the flat area")->check(CLI::Range(1e-3, 100.0))->capture_default_str();
  app.add_option("--shift", shift, "|Δx| = |Δy|")->check(CLI::Range(0.0, 100.0))->capture_default_str();
  app.add_option("--threshold", threshold, "flat-area fraction a layer must reach")->check(CLI::Range(0.0, 1.0))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    const std::uint64_t seed = a.common.seed;
    const nn::Dataset data = nn::fashion_mnist("train", train_n, pool);
    const double signs[4][2] = {{+1, +1}, {+1, -1}, {-1, +1}, {-1, -1}};
    Table table{"flat_fraction", {"net", "dx", "dy", "step", "layer", "flat_fraction", "zero_activation_fraction", "activation_density"}, {}};
    json per_net = json::array();
    int nets_ok = 0;
    double worst_zero = 0;
    std::string summary;
    auto progress = a.progress("networks", 4);
    for (int k = 0; k < 4; ++k) {
      const double dx = signs[k][0] * shift, dy = signs[k][1] * shift;
      nn::BlockConfig block;
      block.activation = {nn::ActivationKind::weird_j_squared_relu, w_half, dx, dy};
      block.zeroth_bias = true;  // App. E: unrefined DB-MLP, no Algorithm 1, LayerNorm as in ViT
      const nn::Mlp net = nn::make_mlp(nn::uniform_mlp_config(data.x.rows(), d, n, blocks, block, 10));
      Eigen::VectorXd theta = nn::init_params(net, seed, stream_id(1, 0));  // the same init for all four
      nn::AdamW opt;  // Adam: no weight decay (App. E)
      opt.weight_decay = 0.0;
      nn::BatchStream stream(data, batch, seed, stream_id(2, 0));
      std::vector<double> steps_logged;
      std::vector<std::vector<double>> flat(static_cast<std::size_t>(blocks));
      std::vector<double> first_flat, last_flat, last_zero;
      nn::MlpModel model(net);
      // At t = 0 the batch step 0 trains on, later the one step t − 1 trained on: training batches.
      nn::train(model, theta, opt, nn::constant_schedule(lr), stream, {.steps = steps, .log_every = log_every}, {},
                [&](long t, const nn::Batch& b) {
        nn::ForwardCache f;
        nn::forward(net, theta, b.x, f);
        const auto sp = forward_sparsity(net, theta, b.x);
        steps_logged.push_back(double(t));
        last_flat.clear();
        last_zero.clear();
        for (int l = 0; l < blocks; ++l) {
          const double zero = (f.blocks[l].act.array().abs() <= 1e-6).cast<double>().mean();
          flat[l].push_back(sp[l].flat_fraction);
          last_flat.push_back(sp[l].flat_fraction);
          last_zero.push_back(zero);
          table.add_row({double(k), dx, dy, double(t), double(l + 1), sp[l].flat_fraction, zero, sp[l].activation_density});
        }
        if (t == 0) first_flat = last_flat;
      });
      const int layers_ok = static_cast<int>(std::count_if(last_flat.begin(), last_flat.end(), [&](double f) { return f >= threshold; }));
      if (2 * layers_ok > blocks) ++nets_ok;
      const double zero_max = *std::max_element(last_zero.begin(), last_zero.end());
      worst_zero = std::max(worst_zero, zero_max);
      std::string fl, f0;
      for (int l = 0; l < blocks; ++l) fl += fmt::format("{}{:.3f}", l ? ", " : "", last_flat[l]), f0 += fmt::format("{}{:.3f}", l ? ", " : "", first_flat[l]);
      summary += fmt::format("{}(Δx, Δy) = ({:+}, {:+}): flat fraction per layer {} at the end (init: {}), {} of {} layers ≥ {}",
                             summary.empty() ? "" : "; ", dx, dy, fl, f0, layers_ok, blocks, threshold);
      per_net.push_back({{"dx", dx}, {"dy", dy}, {"final_flat_fraction", last_flat}, {"initial_flat_fraction", first_flat},
                         {"final_zero_activation_fraction", last_zero}, {"layers_at_threshold", layers_ok}});

      plot::Figure fig{.name = fmt::format("weird_activation_{}{}", dx > 0 ? "px" : "mx", dy > 0 ? "py" : "my"),
                       .title = fmt::format("paper 001 Fig. 4: Weird-J-SquaredReLU shifted by (Δx, Δy) = ({:+}, {:+}), w_half = {}", dx, dy, w_half),
                       .xlabel = "training step",
                       .ylabel = "fraction of pre-activations in the flat area"};
      fig.yrange = std::make_pair(0.0, 1.0);
      fig.legend = "bottom right";
      for (int l = 0; l < blocks; ++l) fig.series.push_back({.x = steps_logged, .y = flat[l], .label = fmt::format("layer {}", l + 1)});
      fig.lines.push_back({.at = threshold, .vertical = false, .label = fmt::format("{:.0f}%", 100 * threshold)});
      a.add_figure(std::move(fig));
      progress->advance();
    }
    progress->finish();
    const std::string setting = fmt::format("{} DB-MLP blocks (LN scale+shift, zeroth biases unrestricted), d = {}, n = {}, Adam lr {}, "
                                            "batch {}, {} steps. {} {}",
                                            blocks, d, n, lr, batch, steps, nn::kFashionMnistNote, data.description);
    r.add_check({.id = "flat_area_majority",
                 .claim = "paper 001 Section 6 (Figure 4)",
                 .statement = fmt::format("in each of the four shifted networks, most layers end training with ≥ {:.0f}% of pre-activations in the flat area [Δx − w_half, Δx + w_half]", 100 * threshold),
                 .predicted = 4,
                 .measured = nets_ok,
                 .holds = nets_ok == 4,
                 .tolerance = {{"most", "more than half of the layers"}},
                 .note = summary + ". " + setting});
    r.add_check({.id = "activations_not_sparse",
                 .claim = "paper 001 Section 6 (Figure 4)",
                 .statement = "activations are not sparse: in every layer of every network, the fraction of exactly-zero activations (|α| ≤ 1e-6) is below the flat-area threshold's complement",
                 .predicted = fmt::format("< {:.2f}", 1 - threshold),
                 .measured = worst_zero,
                 .holds = worst_zero < 1 - threshold,
                 .tolerance = {{"derivation", "flat-area activations equal Δy = ±shift ≠ 0, so a network with most pre-activations in the flat area has few zeros"}},
                 .note = "measured: the largest zero fraction over layers and networks at the end. " + setting});
    r.data["networks"] = per_net;
    a.add_table(std::move(table));
  });
}
