#include <sparseact/routing/mask_policy.hpp>

#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/train.hpp>
#include <sparseact/routing/comet_batch.hpp>
#include <sparseact/routing/moe_mlp.hpp>

namespace sparseact::routing {

namespace {

constexpr std::uint64_t kDropout = 2, kTrainExample = 3, kTestExample = 4, kTied = 5, kInit = 6, kOrder = 7;

struct Named {
  Policy p;
  const char* name;
};
constexpr Named kNames[] = {{Policy::standard, "standard"}, {Policy::smaller, "smaller"},     {Policy::dropout, "dropout"},
                            {Policy::topk, "topk"},         {Policy::comet, "comet"},         {Policy::layerwise, "layerwise"},
                            {Policy::bernoulli, "bernoulli"}, {Policy::example_tied, "example_tied"}, {Policy::l1, "l1"},
                            {Policy::moe_trainable, "moe_trainable"}, {Policy::moe_fixed, "moe_fixed"}};

/// Bernoulli(p) units of one example, per hidden layer, from its own stream: fixed whatever the batch.
Eigen::VectorXd example_bits(std::uint64_t seed, std::uint64_t stream, Eigen::Index example, std::size_t layer, int n, double p) {
  Rng rng(seed, stream_id(stream_id(stream, std::uint64_t(example)), layer));
  Eigen::VectorXd m(n);
  for (auto& v : m) v = rng.uniform() < p ? 1.0 : 0.0;
  return m;
}

/// The fraction of a labelled set whose argmax output is its label; `predict(X, first)` gives the outputs
/// of test columns first, first + 1, … (1000 at a time).
double accuracy_by(const nn::Dataset& test, const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&, Eigen::Index)>& predict) {
  long correct = 0;
  for (Eigen::Index at = 0; at < test.size(); at += 1000) {
    const Eigen::Index n = std::min<Eigen::Index>(1000, test.size() - at);
    const Eigen::MatrixXd out = predict(test.x.middleCols(at, n), at);
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::Index best = 0;
      out.col(j).maxCoeff(&best);
      correct += best == test.labels[std::size_t(at + j)];
    }
  }
  return double(correct) / double(test.size());
}

}  // namespace

Policy parse_policy(const std::string& name) {
  for (const Named& n : kNames)
    if (name == n.name) return n.p;
  throw std::invalid_argument("model '" + name +
                              "': use standard, smaller, dropout, topk, comet, layerwise, bernoulli, example_tied, l1, moe_trainable or moe_fixed");
}

std::vector<Policy> parse_policies(const std::string& comma_list) {
  if (comma_list.empty()) return all_policies();
  std::vector<Policy> out;
  for (std::size_t begin = 0;;) {
    const std::size_t end = comma_list.find(',', begin);
    out.push_back(parse_policy(comma_list.substr(begin, end == std::string::npos ? std::string::npos : end - begin)));
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

const char* to_string(Policy p) noexcept {
  for (const Named& n : kNames)
    if (p == n.p) return n.name;
  return "?";
}

const std::vector<Policy>& all_policies() {
  static const std::vector<Policy> all = [] {
    std::vector<Policy> v;
    for (const Named& n : kNames) v.push_back(n.p);
    return v;
  }();
  return all;
}

nn::PlainMlp policy_backbone(const std::vector<int>& widths, const PolicyConfig& cfg, nn::PlainActivation f, bool biases) {
  nn::PlainMlp net{widths, f, biases};
  if (cfg.policy == Policy::smaller)
    for (std::size_t l = 1; l + 1 < widths.size(); ++l) net.widths[l] = active_units(cfg.p_k, widths[l]);
  return net;
}

MaskedMlp::MaskedMlp(nn::PlainMlp net, PolicyConfig cfg, std::uint64_t seed, std::uint64_t stream)
    : net_(std::move(net)), cfg_(cfg), seed_(seed), stream_(stream) {
  if (!(cfg_.p_k > 0 && cfg_.p_k <= 1)) throw std::invalid_argument("MaskedMlp: p_k must lie in (0, 1]");
  for (std::size_t l = 1; l + 1 < net_.widths.size(); ++l) k_.push_back(active_units(cfg_.p_k, net_.widths[l]));
  if (cfg_.policy == Policy::comet || cfg_.policy == Policy::layerwise)
    router_ = make_comet_router(net_.widths, cfg_.p_k, seed, stream_id(stream, 1), cfg_.rule);
  if (cfg_.policy == Policy::example_tied)
    for (std::size_t l = 1; l + 1 < net_.widths.size(); ++l) {
      Rng rng(seed, stream_id(stream_id(stream, kTied), l));  // a fixed random subset of the units
      Eigen::VectorXd on(net_.widths[l]);
      for (auto& v : on) v = rng.uniform() < cfg_.tied_fraction ? 1.0 : 0.0;
      always_on_.push_back(on);
    }
}

nn::MaskRule MaskedMlp::rule(const Eigen::MatrixXd& X, const std::vector<Eigen::Index>& index, bool training, TestMasks mode, long step) const {
  const Eigen::Index M = X.cols();
  if (mode == TestMasks::all_on && !training) return [](std::size_t, const Eigen::MatrixXd&, const Eigen::MatrixXd&) { return Eigen::MatrixXd(); };
  switch (cfg_.policy) {
    case Policy::standard:
    case Policy::smaller:
    case Policy::moe_trainable:  // MoE models are MoeModel; as a MaskedMlp they are the plain backbone
    case Policy::moe_fixed:
    case Policy::l1: return [](std::size_t, const Eigen::MatrixXd&, const Eigen::MatrixXd&) { return Eigen::MatrixXd(); };
    case Policy::dropout:
      return [=, this](std::size_t l, const Eigen::MatrixXd& a, const Eigen::MatrixXd&) {
        if (!training) return Eigen::MatrixXd();
        Rng rng(seed_, stream_id(stream_id(stream_id(stream_, kDropout), std::uint64_t(step)), l));
        Eigen::MatrixXd m(a.rows(), a.cols());
        for (auto& v : m.reshaped()) v = rng.uniform() < cfg_.p_k ? 1.0 / cfg_.p_k : 0.0;
        return m;
      };
    case Policy::topk:
      return [this](std::size_t l, const Eigen::MatrixXd& a, const Eigen::MatrixXd&) { return kwta_columns(a, k_[l - 1], cfg_.rule); };
    case Policy::comet: {
      const auto masks = std::make_shared<std::vector<Eigen::MatrixXd>>(comet_masks(*router_, X));
      return [masks](std::size_t l, const Eigen::MatrixXd&, const Eigen::MatrixXd&) { return (*masks)[l - 1]; };
    }
    case Policy::layerwise:
      return [this](std::size_t l, const Eigen::MatrixXd&, const Eigen::MatrixXd& x_prev) {
        return kwta_columns(router_->V[l - 1] * x_prev, k_[l - 1], cfg_.rule);
      };
    case Policy::bernoulli:
    case Policy::example_tied:
      return [=, this](std::size_t l, const Eigen::MatrixXd& a, const Eigen::MatrixXd&) {
        const bool tied = cfg_.policy == Policy::example_tied;
        if (tied && !training) return Eigen::MatrixXd(always_on_[l - 1].replicate(1, M));  // Maini et al.: generalisation units only
        Eigen::MatrixXd m(a.rows(), M);
        const std::uint64_t family = stream_id(stream_, training ? kTrainExample : kTestExample);
        for (Eigen::Index j = 0; j < M; ++j) {
          m.col(j) = example_bits(seed_, family, index[std::size_t(j)], l, int(a.rows()), cfg_.p_k);
          if (tied) m.col(j) = m.col(j).cwiseMax(always_on_[l - 1]);
        }
        return m;
      };
  }
  return {};
}

const Eigen::MatrixXd& MaskedMlp::forward(const Eigen::VectorXd& theta, const nn::Batch& batch) {
  fwd_ = nn::plain_forward(net_, theta, batch.x, rule(batch.x, batch.index, true, TestMasks::policy, steps_++), masks_);
  return fwd_.a.back();
}

void MaskedMlp::backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& dlogits, Eigen::VectorXd& grad) {
  grad = nn::plain_gradient(net_, theta, fwd_, dlogits, masks_);
  if (cfg_.policy != Policy::l1) return;
  Eigen::Index at = 0;  // λ sign(W) on the weights, not the biases
  for (std::size_t l = 1; l < net_.widths.size(); ++l) {
    const Eigen::Index n = Eigen::Index(net_.widths[l]) * net_.widths[l - 1];
    grad.segment(at, n) += cfg_.l1 * theta.segment(at, n).array().sign().matrix();
    at += n + (net_.biases ? net_.widths[l] : 0);
  }
}

Eigen::MatrixXd MaskedMlp::predict(const Eigen::VectorXd& theta, const Eigen::MatrixXd& X, Eigen::Index first_index, TestMasks mode) const {
  std::vector<Eigen::Index> index;
  for (Eigen::Index j = 0; j < X.cols(); ++j) index.push_back(first_index + j);
  std::vector<Eigen::MatrixXd> masks;
  return nn::plain_forward(net_, theta, X, rule(X, index, false, mode, 0), masks).a.back();
}

double MaskedMlp::accuracy(const Eigen::VectorXd& theta, const nn::Dataset& test, TestMasks mode) const {
  return accuracy_by(test, [&](const Eigen::MatrixXd& X, Eigen::Index first) { return predict(theta, X, first, mode); });
}

bool runs_on_gpu(Policy p) noexcept {
  return p == Policy::standard || p == Policy::smaller || p == Policy::topk || p == Policy::comet || p == Policy::layerwise;
}

cuda::PlainTrainSpec gpu_spec(const nn::PlainMlp& net, const PolicyConfig& cfg, std::uint64_t seed, std::uint64_t stream) {
  if (!runs_on_gpu(cfg.policy)) throw std::invalid_argument(std::string("gpu_spec: policy ") + to_string(cfg.policy) + " does not train on the GPU");
  if (!(cfg.p_k > 0 && cfg.p_k <= 1)) throw std::invalid_argument("gpu_spec: p_k must lie in (0, 1]");
  cuda::PlainTrainSpec spec{.widths = net.widths, .activation = int(net.f), .biases = net.biases};
  spec.tie_rule = int(cfg.rule);
  if (cfg.policy == Policy::standard || cfg.policy == Policy::smaller) return spec;
  spec.masks = cfg.policy == Policy::topk ? cuda::PlainMasks::topk : cfg.policy == Policy::comet ? cuda::PlainMasks::router : cuda::PlainMasks::layerwise;
  spec.kwta_kernel = kwta_kernel_from_environment();
  for (std::size_t l = 1; l + 1 < net.widths.size(); ++l) spec.k.push_back(active_units(cfg.p_k, net.widths[l]));
  if (cfg.policy != Policy::topk) {
    const CometRouter router = make_comet_router(net.widths, cfg.p_k, seed, stream_id(stream, 1), cfg.rule);  // as MaskedMlp's
    for (const Eigen::MatrixXd& V : router.V) spec.V.emplace_back(V.data(), V.data() + V.size());
  }
  return spec;
}

namespace {

/// A GPU run of train_masked: θ and the training set on the card, the batches in the CPU run's order.
TrainRun train_on_gpu(const TrainRunConfig& cfg, const nn::PlainMlp& net, std::uint64_t base, const nn::Dataset& train, const nn::Dataset& test) {
  nn::BatchStream stream(train, cfg.batch, cfg.seed, stream_id(base, kOrder));
  const Eigen::VectorXd theta0 = nn::init_plain_mlp(net, cfg.seed, stream_id(base, kInit));
  cuda::PlainTrainer gpu(gpu_spec(net, cfg.policy, cfg.seed, base), theta0, train.x, train.labels);
  const long per_epoch = train.size() / cfg.batch;
  // The twin: the run's first steps on the CPU (MaskedMlp and nn::Sgd, the same θ_0 and batches).
  std::vector<double> cpu_losses, gpu_losses;
  double twin_seconds = 0;
  const bool twin = twin::due("routing.train_masked");
  if (twin) {
    const twin::Timer timer;
    MaskedMlp cpu(net, cfg.policy, cfg.seed, base);
    nn::BatchStream same(train, cfg.batch, cfg.seed, stream_id(base, kOrder));
    nn::Sgd sgd;
    sgd.lr = cfg.lr;
    Eigen::VectorXd theta = theta0;
    const nn::TrainOptions options{.steps = std::min<long>(twin::kTrainingSteps, long(cfg.epochs) * per_epoch), .loss = nn::LossKind::cross_entropy};
    nn::train(cpu, theta, sgd, nn::constant_schedule(cfg.lr), same, options, [&](const nn::TrainStep& s) { cpu_losses.push_back(s.loss); });
    twin_seconds = timer.seconds();
  }
  TrainRun run;
  run.device = Device::cuda;
  for (int e = 0; e < cfg.epochs; ++e) {
    double sum = 0;
    for (long t = 0; t < per_epoch; ++t) {
      const double loss = gpu.sgd_step(stream.next().index, cfg.lr);
      if (twin && gpu_losses.size() < cpu_losses.size()) gpu_losses.push_back(loss);
      sum += loss;
    }
    run.train_loss.push_back(sum / double(per_epoch));
    run.test_acc.push_back(accuracy_by(test, [&](const Eigen::MatrixXd& X, Eigen::Index) { return gpu.logits(X); }));
  }
  if (twin)
    twin::record_losses("routing.train_masked", fmt::format("{} (width {})", to_string(cfg.policy.policy), net.widths[1]), cpu_losses, gpu_losses,
                        twin_seconds);
  return run;
}

}  // namespace

TrainRun train_masked(const TrainRunConfig& cfg, const nn::Dataset& train, const nn::Dataset& test) {
  const nn::PlainMlp net = policy_backbone(cfg.widths, cfg.policy, nn::PlainActivation::relu, /*biases=*/true);
  // Same-shape models of one (replicate, width) share θ_0, the router's stream and the data order: the
  // comparisons are paired.
  const std::uint64_t base = stream_id(stream_id(0x002'0521, cfg.replicate), std::uint64_t(cfg.widths[1]));
  if (cfg.device == Device::cuda && runs_on_gpu(cfg.policy.policy)) return train_on_gpu(cfg, net, base, train, test);
  nn::BatchStream stream(train, cfg.batch, cfg.seed, stream_id(base, kOrder));
  nn::Sgd sgd;
  sgd.lr = cfg.lr;
  const long per_epoch = train.size() / cfg.batch;
  TrainRun run;
  const bool moe = cfg.policy.policy == Policy::moe_trainable || cfg.policy.policy == Policy::moe_fixed;
  MaskedMlp masked(net, cfg.policy, cfg.seed, base);
  MoeModel moe_model(MoeMlp{net, cfg.policy.p_k, cfg.policy.router_hidden, cfg.policy.policy == Policy::moe_trainable});
  Eigen::VectorXd theta = moe ? init_moe_mlp(moe_model.net(), cfg.seed, stream_id(base, kInit)) : nn::init_plain_mlp(net, cfg.seed, stream_id(base, kInit));
  for (int e = 0; e < cfg.epochs; ++e) {
    double sum = 0;
    const auto on_step = [&](const nn::TrainStep& s) { sum += s.loss; };
    const nn::TrainOptions options{.steps = per_epoch, .loss = nn::LossKind::cross_entropy};
    if (moe) nn::train(moe_model, theta, sgd, nn::constant_schedule(cfg.lr), stream, options, on_step);
    else nn::train(masked, theta, sgd, nn::constant_schedule(cfg.lr), stream, options, on_step);
    run.train_loss.push_back(sum / double(per_epoch));
    run.test_acc.push_back(moe ? accuracy_by(test, [&](const Eigen::MatrixXd& X, Eigen::Index) { return moe_forward(moe_model.net(), theta, X).a.back(); }) : masked.accuracy(theta, test, TestMasks::policy));
    if (cfg.policy.policy == Policy::bernoulli) run.test_acc_all_on.push_back(masked.accuracy(theta, test, TestMasks::all_on));
  }
  return run;
}

double constant_predictor_loss(const std::vector<int>& labels, int classes) {
  if (labels.empty() || classes < 1) throw std::invalid_argument("constant_predictor_loss: no labels");
  std::vector<double> count(std::size_t(classes), 0.0);
  for (int y : labels) {
    if (y < 0 || y >= classes) throw std::invalid_argument(fmt::format("constant_predictor_loss: label {} outside [0, {})", y, classes));
    ++count[std::size_t(y)];
  }
  // Predicting the frequencies q_c costs −Σ_c q_c ln q_c per example: the labels' entropy.
  double h = 0;
  for (double c : count)
    if (c > 0) {
      const double q = c / double(labels.size());
      h -= q * std::log(q);
    }
  return h;
}

bool did_not_train(double final_train_loss, double constant_loss) {
  return !(final_train_loss < (1 - kDidNotTrainShare) * constant_loss);
}

std::size_t TrainedRecord::not_trained() const {
  std::size_t n = 0;
  for (double l : final_train_loss) n += did_not_train(l, constant_loss);
  return n;
}

json TrainedRecord::to_json() const {
  double sum = 0;
  for (double l : final_train_loss) sum += l;
  return {{"final_train_loss", final_train_loss},
          {"final_train_loss_mean", final_train_loss.empty() ? json(nullptr) : json(sum / double(final_train_loss.size()))},
          {"constant_predictor_loss", constant_loss},
          {"seeds_not_trained", not_trained()},
          {"trained", !final_train_loss.empty() && not_trained() == 0}};
}

Check& not_evidence_untrained(Check& check, const std::string& reason) {
  if (check.tolerance.is_null()) check.tolerance = json::object();
  check.tolerance["model_did_not_train"] = reason;
  check.tolerance["verdict_without_training_rule"] = check.verdict;
  check.verdict = "inconclusive";
  check.holds = false;
  check.note = "Not evidence: " + reason + (check.note.empty() ? "" : " " + check.note);
  return check;
}

}  // namespace sparseact::routing
