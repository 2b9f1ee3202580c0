// flatness_bounds — paper 001 §4.3–4.4: flatness tr(H_θ) against its sparsity lower bounds.
//
// Lemma 4: tr(H) = E‖∇_θ ℓ‖² − E[tr(∇²f_Y)/f_Y], ≈ E‖∇_θ ℓ‖² for well-learned models.
// Lemma 5: ‖∇_{θ_l} ℓ‖² ≥ [DB] ‖∇_{x^{l-1}} ℓ‖² + ‖H^l(X^{l-1} + D^l)ᵀ‖² + ‖G_V^l(A^l)ᵀ‖².
// Theorem 2, eq. (5): tr(H) ≥ Σ_l [DB] E ηᵀKKᵀη + E‖H(X + D)ᵀ‖² + E‖G_V Aᵀ‖²   (via Lemma 4's ≈).
// Corollary 1, eq. (6): the same with single tokens, ‖x + d‖²‖η‖² and ‖g_V‖²‖α‖².
// Theorem 3: LayerNorms without affine before every block: d Σ E‖η‖² (vanilla) or
//            Σ E ηᵀKKᵀη + (√d − c)² Σ E‖η‖² (DB-MLP, ‖d^l‖ ≤ c), plus Σ E‖g_V‖²‖α‖².
//
// Two LayerNorm-ed MLPs (LN without affine, Theorem 3's setting) train on Fashion-MNIST: a vanilla
// ReLU MLP and a DB-MLP with J-SquaredReLU under Algorithm 1 (c = 0.1). At checkpoints, on one
// fixed set of training samples (the empirical distribution every E above is taken over), we
// estimate tr(H) (Hutchinson with per-layer partial sums, stopping on the interval's width) and
// every right-hand side. Checks: each bound ≤ the trace within the estimator's interval at the
// end of training; Lemma 4's relative gap |tr H − E‖∇ℓ‖²| / tr H shrinks as the model learns.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/flatness/hessian_trace.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/flatness/refine.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/hvp.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/recipes.hpp>
#include <sparseact/nn/train.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::flatness;

namespace {

struct Checkpoint {
  long step = 0;
  double loss = 0, accuracy = 0;
  double trace = 0, trace_half_width = 0, trace_se = 0;
  long probes = 0;
  BoundTerms bounds;
  std::vector<double> layer_trace, layer_trace_se;
  FlatnessStats stats;
};

struct Model {
  std::string name, label;
  nn::MlpConfig config;
  bool algorithm1 = false;
};

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "flatness_bounds",
                     .paper = "001",
                     .claims = {"Lemma 4", "Lemma 5", "Theorem 2", "Corollary 1", "Theorem 3"},
                     .description = "Hessian trace of LayerNorm-ed (DB-)MLPs on Fashion-MNIST against the sparsity bounds of paper 001 §4.3-4.4",
                     .default_scale = Scale::quick});
  int train_n = 0, pool = 0, d = 0, n = 0, blocks = 0, batch = 0, steps = 0, checkpoints = 0, eval_n = 0, max_probes = 0;
  double lr = 1e-3, wd = 0.0, c = 0.1, rel_tol = 0.05;
  analysis.scaled_option("--train", train_n, 10000, 60000, "training images")->check(CLI::Range(256, 60000));
  analysis.scaled_option("--pool", pool, 4, 2, "average pooling of the 28×28 images (1, 2, 4 or 7)")->check(CLI::IsMember({1, 2, 4, 7}));
  analysis.scaled_option("--d", d, 32, 64, "hidden-feature dimension d")->check(CLI::Range(2, 1024));
  analysis.scaled_option("--n", n, 128, 256, "block width n (K is n×d)")->check(CLI::Range(2, 4096));
  analysis.scaled_option("--blocks", blocks, 2, 3, "MLP blocks")->check(CLI::Range(1, 16));
  analysis.scaled_option("--batch", batch, 64, 128, "training batch size")->check(CLI::Range(1, 4096));
  analysis.scaled_option("--steps", steps, 1500, 6000, "training steps")->check(CLI::Range(1, 10000000));
  analysis.scaled_option("--checkpoints", checkpoints, 6, 8, "checkpoints (step 0 and then evenly spaced)")->check(CLI::Range(2, 100));
  analysis.scaled_option("--eval", eval_n, 256, 1024, "training samples the trace and the bounds are measured on")->check(CLI::Range(8, 60000));
  analysis.scaled_option("--max-probes", max_probes, 60, 300, "most Hutchinson probes per checkpoint")->check(CLI::Range(2, 100000));
  auto& app = analysis.app();
  app.add_option("--lr", lr, "AdamW learning rate")->check(CLI::Range(1e-8, 10.0))->capture_default_str();
  app.add_option("--wd", wd, "AdamW weight decay on weights")->check(CLI::Range(0.0, 10.0))->capture_default_str();
  app.add_option("--c", c, "Algorithm 1's zeroth-bias factor c (DB-MLP)")->check(CLI::Range(0.0, 100.0))->capture_default_str();
  app.add_option("--rel-tol", rel_tol, "stop probing once the 95% interval's half-width ≤ rel-tol·trace")->check(CLI::Range(1e-6, 1.0))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    const std::uint64_t seed = a.common.seed;
    if (eval_n > train_n) throw InputError(fmt::format("--eval {} exceeds --train {}", eval_n, train_n));
    const nn::Dataset data = nn::fashion_mnist("train", train_n, pool);
    const nn::Batch eval = nn::make_batch(data, 0, eval_n);

    auto block = [&](nn::ActivationKind act, bool zeroth_bias) {
      nn::BlockConfig b;
      b.activation.kind = act;
      b.layernorm = true;
      b.ln_affine = false;  // Theorem 3: "LayerNorm layers, with affine transformation turned off"
      b.ln_bias = false;
      b.zeroth_bias = zeroth_bias;
      b.residual = true;
      return b;
    };
    std::vector<Model> models(2);
    models[0] = {"vanilla", "vanilla MLP (ReLU)", {}, false};
    models[1] = {"db_mlp", fmt::format("DB-MLP (J-SquaredReLU, Algorithm 1, c = {})", c), {}, true};
    for (int m = 0; m < 2; ++m)
      models[m].config = nn::uniform_mlp_config(data.x.rows(), d, n, blocks,
                                                m == 0 ? block(nn::ActivationKind::relu, false) : block(nn::ActivationKind::j_squared_relu, true), 10);

    Table table{"checkpoints", {"model", "step", "loss", "accuracy", "trace", "trace_half_width", "probes", "lemma4_grad_sq",
                                "lemma5", "theorem2", "corollary1", "theorem3", "theorem3_relu", "lemma4_rel_gap"}, {}};
    Table layers{"layers", {"model", "step", "layer", "trace", "trace_se", "grad_sq", "x_eta", "eta_KKt_eta", "gV_alpha", "eta_sq",
                            "x_sq", "activation_density", "gradient_density", "trace_KKt", "trace_M"}, {}};
    json per_model = json::object();
    const long every = std::max<long>(1, steps / (checkpoints - 1));
    auto progress = a.progress("checkpoints", static_cast<std::size_t>(2 * checkpoints));

    for (int m = 0; m < 2; ++m) {
      const Model& model = models[m];
      const nn::Mlp net = nn::make_mlp(model.config);
      Eigen::VectorXd theta = nn::init_params(net, seed, stream_id(1, m));
      nn::AdamW opt = nn::adamw_weights_only(net, lr, wd);
      if (model.algorithm1) opt.hooks.push_back(algorithm1_hook(net, c));
      nn::BatchStream stream(data, batch, seed, stream_id(2, m));
      const auto segs = nn::layer_segments(net);
      std::vector<Checkpoint> cps;
      nn::MlpModel mlp(net);
      nn::train(mlp, theta, opt, nn::constant_schedule(lr), stream, {.steps = steps, .log_every = every}, {}, [&](long t, const nn::Batch&) {
        Checkpoint cp;
        cp.step = t;
        cp.stats = flatness_stats(net, theta, eval, nn::LossKind::cross_entropy);
        cp.loss = cp.stats.loss;
        cp.accuracy = cp.stats.accuracy;
        cp.bounds = bound_terms(net, cp.stats);
        const nn::HessianOperator H(net, theta, eval, nn::LossKind::cross_entropy);
        estimators::TraceOptions to;
        to.seed = seed;
        to.stream = stream_id(stream_id(3, m), static_cast<std::uint64_t>(t));
        to.stop.min_samples = 10;
        to.stop.max_samples = max_probes;
        to.batch = 10;
        to.stop.rel_tol = rel_tol;
        const estimators::TraceEstimate tr = hutchinson_layer_traces(H, to);
        cp.trace = tr.estimate;
        cp.trace_half_width = tr.half_width;
        cp.trace_se = tr.std_error;
        cp.probes = tr.probes;
        for (const estimators::SegmentTrace& layer : tr.segments) {
          cp.layer_trace.push_back(layer.estimate);
          cp.layer_trace_se.push_back(layer.std_error);
        }
        const BoundTerms& b = cp.bounds;
        table.add_row({double(m), double(t), cp.loss, cp.accuracy, cp.trace, cp.trace_half_width, double(cp.probes), b.lemma4,
                       b.lemma5, b.theorem2, b.corollary1, b.theorem3, b.theorem3_relu, std::abs(cp.trace - b.lemma4) / std::abs(cp.trace)});
        for (std::size_t l = 0; l < segs.size(); ++l) {
          std::vector<double> row{double(m), double(t), double(l), cp.layer_trace[l], cp.layer_trace_se[l], cp.stats.layer_grad_sq[l]};
          if (l >= 1 && l <= cp.stats.blocks.size()) {
            const BlockStats& bs = cp.stats.blocks[l - 1];
            row.insert(row.end(), {bs.x_eta, bs.zeroth_bias ? bs.eta_KKt_eta : 0.0, bs.gV_alpha, bs.eta_sq, bs.x_sq,
                                   bs.activation_density, bs.gradient_density, bs.trace_KKt, bs.trace_M});
          } else {
            row.insert(row.end(), 9, NAN);
          }
          layers.add_row(std::move(row));
        }
        cps.push_back(std::move(cp));
        progress->advance();
      });

      // --- Checks -------------------------------------------------------------------------------
      const Checkpoint& first = cps.front();
      const Checkpoint& last = cps.back();
      const std::string at_end = fmt::format("{} after {} AdamW steps (lr {}, batch {}), measured on {} training samples: "
                                             "loss {:.4f}, accuracy {:.3f}; tr(H) = {:.6g} ± {:.3g} (95%, {} probes)",
                                             model.label, last.step, lr, batch, eval_n, last.loss, last.accuracy, last.trace,
                                             last.trace_half_width, last.probes);
      auto bound_check = [&](const std::string& id, const std::string& claim, const std::string& what, double value) {
        // the same comparison at every checkpoint, for the note: Theorem 2 assumes a well-learned model
        std::string by_step;
        for (const Checkpoint& cp : cps) {
          const double v = id == "lemma5" ? cp.bounds.lemma5 : id == "thm2" ? cp.bounds.theorem2 : id == "cor1" ? cp.bounds.corollary1 : cp.bounds.theorem3;
          by_step += fmt::format("{}{}: {:.4g} vs {:.4g}{}", by_step.empty() ? "" : "; ", cp.step, v, cp.trace,
                                 v <= cp.trace + cp.trace_half_width ? "" : " (exceeds)");
        }
        r.add_check({.id = fmt::format("{}_{}", id, model.name),
                     .claim = "paper 001 " + claim,
                     .statement = fmt::format("{}: {} ≤ tr(H_θ) at the end of training, within the trace's 95% interval", model.label, what),
                     .predicted = fmt::format("≤ {:.6g}", last.trace + last.trace_half_width),
                     .measured = value,
                     .holds = value <= last.trace + last.trace_half_width,
                     .tolerance = {{"trace_half_width_95", last.trace_half_width}},
                     .note = at_end + ". Bound vs trace by step: " + by_step});
      };
      bound_check("lemma5", "Lemma 5 (summed over blocks, with Lemma 4)", "Σ_l [DB] E‖∇_x ℓ‖² + E‖∇_K ℓ‖² + E‖∇_V ℓ‖²", last.bounds.lemma5);
      bound_check("thm2", "Theorem 2", "eq. (5) Σ_l [DB] E ηᵀKKᵀη + E‖H(X+D)ᵀ‖² + E‖G_V Aᵀ‖²", last.bounds.theorem2);
      bound_check("cor1", "Corollary 1", "eq. (6) Σ_l [DB] E ηᵀKKᵀη + E‖x+d‖²‖η‖² + E‖g_V‖²‖α‖²", last.bounds.corollary1);
      bound_check("thm3", "Theorem 3",
                  m == 0 ? "d Σ E‖η‖² + Σ E‖g_V‖²‖α‖²" : "Σ E ηᵀKKᵀη + (√d − c)² Σ E‖η‖² + Σ E‖g_V‖²‖α‖² (c = ‖d^l‖)",
                  last.bounds.theorem3);
      // Lemma 4's approximation: the relative gap over training
      const double gap0 = std::abs(first.trace - first.bounds.lemma4) / std::abs(first.trace);
      const double gap1 = std::abs(last.trace - last.bounds.lemma4) / std::abs(last.trace);
      const double unc = last.trace_half_width / std::abs(last.trace) + first.trace_half_width / std::abs(first.trace);
      std::string gaps;
      for (const Checkpoint& cp : cps)
        gaps += fmt::format("{}{}: {:.3g}", gaps.empty() ? "" : ", ", cp.step, (cp.trace - cp.bounds.lemma4) / cp.trace);
      r.add_check({.id = fmt::format("lemma4_gap_{}", model.name),
                   .claim = "paper 001 Lemma 4",
                   .statement = fmt::format("{}: the relative gap |tr(H) − E‖∇ℓ‖²| / tr(H) shrinks as the model becomes well-learned "
                                            "(end of training < initialisation)", model.label),
                   .predicted = fmt::format("< {:.4g}", gap0),
                   .measured = gap1,
                   .holds = gap1 < gap0,
                   .tolerance = {{"relative_interval_of_the_two_traces", unc}},
                   .note = fmt::format("Signed gap (tr H − E‖∇ℓ‖²)/tr H by step: {}. At init tr(H) = {:.5g}, E‖∇ℓ‖² = {:.5g}. {}. The E's "
                                       "are over the {} fixed training samples, for which Lemma 4's identity is exact; its second "
                                       "term vanishes only when f_θ(y|x) matches the labels' distribution.",
                                       gaps, first.trace, first.bounds.lemma4, at_end, eval_n)});
      // Lemma 5's chain below E‖∇ℓ‖² is rigorous (no approximation): check it too
      r.add_check({.id = fmt::format("lemma5_exact_{}", model.name),
                   .claim = "paper 001 Lemma 5",
                   .statement = fmt::format("{}: Σ_l Lemma 5's right-hand side ≤ E‖∇_θ ℓ‖² at every checkpoint (no approximation involved)", model.label),
                   .predicted = "≤ E‖∇_θ ℓ‖²",
                   .measured = [&] {
                     double worst = 0;
                     for (const Checkpoint& cp : cps) worst = std::max(worst, cp.bounds.lemma5 / cp.bounds.lemma4);
                     return worst;
                   }(),
                   .holds = std::all_of(cps.begin(), cps.end(), [](const Checkpoint& cp) { return cp.bounds.lemma5 <= cp.bounds.lemma4 * (1 + 1e-12); }),
                   .tolerance = {{"relative", 1e-12}},
                   .note = "measured: the largest ratio (Lemma 5 sum)/E‖∇ℓ‖² over checkpoints; the rest of E‖∇ℓ‖² is the input/output "
                           "layers, the biases and LayerNorm/zeroth-bias parameters."});

      // --- Figure -------------------------------------------------------------------------------
      plot::Figure fig{.name = "flatness_bounds_" + model.name,
                       .title = fmt::format("paper 001 §4.3: tr(H) and its lower bounds, {}", model.label),
                       .xlabel = "training step",
                       .ylabel = "value (log scale)"};
      fig.logy = true;
      fig.legend = "top right";
      std::vector<double> xs, tr, hw, l4, l5, t3;
      for (const Checkpoint& cp : cps) {
        xs.push_back(double(cp.step));
        tr.push_back(cp.trace);
        hw.push_back(cp.trace_half_width);
        l4.push_back(cp.bounds.lemma4);
        l5.push_back(cp.bounds.theorem2);
        t3.push_back(cp.bounds.theorem3);
      }
      fig.series.push_back({.x = xs, .y = tr, .label = "tr(H_θ) (Hutchinson, 95%)", .style = plot::Style::linespoints, .color = "#000000", .yerr = hw});
      fig.series.push_back({.x = xs, .y = l4, .label = "Lemma 4: E‖∇_θ ℓ‖²", .style = plot::Style::linespoints, .color = "#1f77b4"});
      fig.series.push_back({.x = xs, .y = l5, .label = "Theorem 2 eq. (5) = Corollary 1 eq. (6)", .style = plot::Style::linespoints, .color = "#d62728"});
      fig.series.push_back({.x = xs, .y = t3, .label = "Theorem 3", .style = plot::Style::linespoints, .color = "#2ca02c", .dashed = true});
      a.add_figure(std::move(fig));

      json md = json::object();
      md["parameters"] = net.num_params;
      md["trace"] = tr;
      md["trace_half_width"] = hw;
      md["lemma4"] = l4;
      md["theorem2"] = l5;
      md["theorem3"] = t3;
      md["steps"] = xs;
      per_model[model.name] = md;
    }
    progress->finish();
    r.data = per_model;
    r.data["data_note"] = std::string(nn::kFashionMnistNote) + " " + data.description;
    a.add_table(std::move(table));
    a.add_table(std::move(layers));
  });
}
