#include <sparseact/flatness/bound_run.hpp>

#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/flatness/checkpoint.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/flatness/records.hpp>
#include <sparseact/flatness/refine.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/recipes.hpp>
#include <sparseact/nn/train.hpp>

namespace sparseact::flatness {

Record bound_run(const BoundRunConfig& cfg, const nn::Dataset& data, const nn::Batch& eval) {
  nn::BlockConfig b;
  b.activation.kind = cfg.activation;
  b.layernorm = true;
  b.ln_affine = false;  // Theorem 3: "LayerNorm layers, with affine transformation turned off"
  b.ln_bias = false;
  b.zeroth_bias = cfg.algorithm1;
  b.residual = true;
  const nn::Mlp net = nn::make_mlp(nn::uniform_mlp_config(data.x.rows(), cfg.d, cfg.n, cfg.blocks, b, 10));
  Eigen::VectorXd theta = nn::init_params(net, cfg.seed, stream_id(1, cfg.stream));
  nn::AdamW opt = nn::adamw_weights_only(net, cfg.lr, cfg.wd);
  if (cfg.algorithm1) opt.hooks.push_back(algorithm1_hook(net, cfg.c));
  nn::BatchStream stream(data, cfg.batch, cfg.seed, stream_id(2, cfg.stream));
  std::vector<Checkpoint> cps;
  std::vector<double> id_lemma5, id_theorem2, id_corollary1;  // the three right-hand sides, each from its own formula
  nn::MlpModel mlp(net);
  nn::train(mlp, theta, opt, nn::constant_schedule(cfg.lr), stream, {.steps = cfg.steps, .log_every = cfg.every}, {},
            [&](long t, const nn::Batch&) {
              estimators::TraceOptions probes{.seed = cfg.seed, .stream = stream_id(stream_id(3, cfg.stream), static_cast<std::uint64_t>(t)),
                                              .batch = 10};
              probes.stop.min_samples = 10;
              probes.stop.max_samples = cfg.max_probes;
              probes.stop.rel_tol = cfg.rel_tol;
              cps.push_back(measure_checkpoint(net, theta, eval, probes, t));
              const BoundIdentities ids = bound_identities(net, theta, eval);
              id_lemma5.push_back(ids.lemma5), id_theorem2.push_back(ids.theorem2), id_corollary1.push_back(ids.corollary1);
            });
  Record r;
  put_checkpoints(r, "cp", cps);
  r.set("identities.lemma5", id_lemma5).set("identities.theorem2", id_theorem2).set("identities.corollary1", id_corollary1);
  return r.set("parameters", double(net.num_params)).set("data", data.description);
}

}  // namespace sparseact::flatness
