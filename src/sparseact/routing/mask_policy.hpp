#pragma once
// COMET and the baselines of paper 002 §5.2.1 as mask policies on one plain MLP (eqs. (1)–(2), (8)), a
// Model for nn/train, and the miniature of Figure 4's training runs.
//
//   standard      no masks
//   smaller       no masks, hidden widths round(p_k N_ℓ)
//   dropout       m ~ Bernoulli(p_k)/p_k afresh each step (inverted dropout, drop rate 1 − p_k); all on at test
//   topk          m_ℓ = C_k(a_ℓ) on the backbone's own pre-activations, train and test
//   comet         m_ℓ from the fixed random router of eqs. (4)–(6), train and test
//   layerwise     c_ℓ = V_ℓ x_{ℓ−1}: the fixed router reads the backbone's activations, train and test
//   bernoulli     m ~ Bernoulli(p_k) fixed per training example; at test fixed per test example (another
//                 stream; the paper leaves it unstated), all-on reported beside
//   example_tied  Maini et al. (2023): a fixed fraction (tied_fraction, 0.4) of "generalisation" units
//                 always on, the others Bernoulli(p_k) fixed per training example; at test only the
//                 generalisation units
//   l1            no masks, λ‖W‖₁ added to the loss (subgradient λ sign(θ) on the weights; λ = l1)
//   moe_trainable ⌊1/p_k⌋ experts of round(p_k N_ℓ) units per layer, a top-1 router with one hidden layer,
//                 the expert's output scaled by its gate probability (routing/moe_mlp.hpp)
//   moe_fixed     the same router frozen at its initialisation, no scaling
//
// k_ℓ = max(1, round(p_k N_ℓ)) and ties as routing/kwta. The MoE models are their own nn/train Model
// (MoeModel); train_masked runs either kind.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/cuda/plain_train.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/plain_mlp.hpp>
#include <sparseact/routing/comet.hpp>

namespace sparseact::routing {

enum class Policy { standard, smaller, dropout, topk, comet, layerwise, bernoulli, example_tied, l1, moe_trainable, moe_fixed };
/// Throws std::invalid_argument naming the choices for an unknown name.
Policy parse_policy(const std::string& name);
const char* to_string(Policy p) noexcept;
/// A comma list of policy names ("comet,standard"); the empty list is all_policies(). Throws
/// std::invalid_argument (parse_policy's message) on an unknown name.
std::vector<Policy> parse_policies(const std::string& comma_list);
const std::vector<Policy>& all_policies();

struct PolicyConfig {
  Policy policy = Policy::comet;
  double p_k = 0.5;
  double tied_fraction = 0.4;  ///< example_tied: always-on units
  double l1 = 1e-4;            ///< l1: λ
  int router_hidden = 32;      ///< MoE: the router's hidden width
  TieRule rule = TieRule::strict;
};

/// The backbone a policy trains: widths N_0, N_1 … N_{L−1}, N_L (smaller: hidden widths round(p_k N_ℓ)).
nn::PlainMlp policy_backbone(const std::vector<int>& widths, const PolicyConfig& cfg, nn::PlainActivation f, bool biases);

enum class TestMasks { policy, all_on };

/// The policies whose training runs on the GPU (cuda/plain_train.hpp): standard, smaller, topk, comet and
/// layerwise, whose masks are functions of the batch alone. The random masks (dropout, bernoulli,
/// example_tied), l1's subgradient and the MoE models train on the CPU.
bool runs_on_gpu(Policy p) noexcept;
/// The GPU session that trains MaskedMlp(net, cfg, seed, stream): the same router (V_ℓ from
/// Rng(seed, stream_id(stream_id(stream, 1), ℓ))), the same k_ℓ and tie rule. Throws std::invalid_argument for
/// a policy that does not run on the GPU.
cuda::PlainTrainSpec gpu_spec(const nn::PlainMlp& net, const PolicyConfig& cfg, std::uint64_t seed, std::uint64_t stream);

/// The masked MLP as an nn/train Model (forward(θ, batch), backward). Random masks come from
/// Rng(seed, stream_id(stream, …)); the router (comet, layerwise) from stream_id(stream, 1).
class MaskedMlp {
 public:
  MaskedMlp(nn::PlainMlp net, PolicyConfig cfg, std::uint64_t seed, std::uint64_t stream);

  const Eigen::MatrixXd& forward(const Eigen::VectorXd& theta, const nn::Batch& batch);
  void backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& dlogits, Eigen::VectorXd& grad);

  /// Outputs a_L for test inputs X (columns first_index, … of the test set: per-example test masks read it).
  Eigen::MatrixXd predict(const Eigen::VectorXd& theta, const Eigen::MatrixXd& X, Eigen::Index first_index, TestMasks mode) const;
  /// Accuracy over a labelled set, 1000 inputs at a time.
  double accuracy(const Eigen::VectorXd& theta, const nn::Dataset& test, TestMasks mode) const;

  const nn::PlainMlp& net() const { return net_; }
  const PolicyConfig& config() const { return cfg_; }

 private:
  nn::MaskRule rule(const Eigen::MatrixXd& X, const std::vector<Eigen::Index>& index, bool training, TestMasks mode, long step) const;

  nn::PlainMlp net_;
  PolicyConfig cfg_;
  std::uint64_t seed_, stream_;
  std::optional<CometRouter> router_;
  std::vector<int> k_;
  std::vector<Eigen::VectorXd> always_on_;  ///< example_tied: 0/1 per hidden layer
  nn::PlainForward fwd_;
  std::vector<Eigen::MatrixXd> masks_;
  long steps_ = 0;
};

/// One training run of §5.2.1's miniature: SGD on cross-entropy, test accuracy after every epoch.
struct TrainRunConfig {
  std::vector<int> widths;  ///< the standard model's widths
  PolicyConfig policy;
  int epochs = 5;
  Eigen::Index batch = 64;
  double lr = 0.05;
  std::uint64_t seed = 1;
  std::uint64_t replicate = 0;  ///< init, router and data order depend on (seed, replicate, width) only
  Device device = Device::cpu;  ///< cuda: policies that runs_on_gpu train there (the others on the CPU), with the
                                ///< training twin of core/twin.hpp (the first steps again on the CPU)
};
struct TrainRun {
  std::vector<double> test_acc, train_loss;  ///< per epoch 1 … epochs
  std::vector<double> test_acc_all_on;       ///< bernoulli only: all masks on at test
  Device device = Device::cpu;               ///< where it trained
};


TrainRun train_masked(const TrainRunConfig& cfg, const nn::Dataset& train, const nn::Dataset& test);


// --- A comparison with a model that did not train is not evidence (DESIGN.md, issue 47) -----------

/// The cross-entropy (nats) of the constant predictor that outputs the training labels' frequencies:
/// the entropy of the label distribution, ln 10 for 10 balanced classes. Labels lie in [0, classes);
/// throws std::invalid_argument otherwise or when there are none.
double constant_predictor_loss(const std::vector<int>& labels, int classes);

/// The share of the constant predictor's loss within which a final training loss means the model did
/// not train (DESIGN.md: 1 %).
inline constexpr double kDidNotTrainShare = 0.01;

/// Whether a run did not train: its final training loss stayed within kDidNotTrainShare of the constant
/// predictor's loss, i.e. final ≥ (1 − 1 %)·constant (a run that ended above it, or diverged to NaN, did
/// not train either).
bool did_not_train(double final_train_loss, double constant_loss);

/// One model's final training losses (one per seed) against the constant predictor's.
struct TrainedRecord {
  std::vector<double> final_train_loss;
  double constant_loss = 0.0;
  /// Seeds whose run did not train (did_not_train).
  std::size_t not_trained() const;
  /// Data for the JSON: the losses, their mean, the constant predictor's loss, the seeds that did not train.
  json to_json() const;
};

/// A comparison that involves a model which did not train is not evidence, whatever its interval says:
/// the check reads `inconclusive`, `holds` false, its note opens with `reason`, and
/// tolerance.model_did_not_train keeps the reason and the verdict the interval alone gave
/// (tolerance.verdict_without_training_rule). Returns the check.
Check& not_evidence_untrained(Check& check, const std::string& reason);

}  // namespace sparseact::routing
