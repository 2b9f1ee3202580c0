// flatness/checkpoint and flatness/sparsity_log: what the paper 001 analyses measure over training,
// against the separate library calls and against direct computations from the pre-activations and
// the full Hessian.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/flatness/checkpoint.hpp>
#include <sparseact/flatness/hessian_trace.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/flatness/sparsity_log.hpp>
#include <sparseact/nn/activation.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/hvp.hpp>

using namespace sparseact;
using namespace sparseact::nn;
using namespace sparseact::flatness;

namespace {

MlpConfig small_config(Activation act, bool zeroth_bias, int blocks = 2) {
  MlpConfig c;
  c.d_in = 5;
  c.d = 6;
  c.d_out = 3;
  for (int l = 0; l < blocks; ++l) {
    BlockConfig b;
    b.n = 9;
    b.activation = act;
    b.ln_affine = false;
    b.ln_bias = false;
    b.zeroth_bias = zeroth_bias;
    c.blocks.push_back(b);
  }
  return c;
}

Batch random_batch(const MlpConfig& c, Eigen::Index B, std::uint64_t stream) {
  Batch b;
  b.x.resize(c.d_in, B);
  fill_random(b.x.data(), static_cast<std::size_t>(b.x.size()), Distribution::normal, 1.5, 11, stream);
  for (Eigen::Index s = 0; s < B; ++s) b.labels.push_back(static_cast<int>((5 * s + 2) % c.d_out));
  return b;
}

Eigen::VectorXd random_theta(const Mlp& net, std::uint64_t stream) {
  Eigen::VectorXd theta = init_params(net, 21, stream);
  Eigen::VectorXd noise(net.num_params);
  fill_random(noise.data(), static_cast<std::size_t>(noise.size()), Distribution::normal, 0.3, 22, stream);
  return theta + noise;
}

// Fraction of a block's entries satisfying `pred(pre-activation, activation)`, α recomputed from P
// by nn::activation_value (not read from the forward cache).
template <class Pred>
double fraction(const Activation& act, const Eigen::MatrixXd& pre, Pred pred) {
  double count = 0;
  for (Eigen::Index i = 0; i < pre.size(); ++i) count += pred(pre.data()[i], activation_value(act, pre.data()[i])) ? 1.0 : 0.0;
  return count / static_cast<double>(pre.size());
}

}  // namespace

TEST_CASE("measure_checkpoint is flatness_stats, bound_terms and hutchinson_layer_traces on the same samples", "[flatness]") {
  const MlpConfig c = small_config({ActivationKind::j_squared_relu}, true);
  const Mlp net = make_mlp(c);
  const Eigen::VectorXd theta = random_theta(net, 1);
  const Batch samples = random_batch(c, 24, 2);
  estimators::TraceOptions opt;
  opt.seed = 5;
  opt.stream = stream_id(3, 7);
  opt.stop.min_samples = 10;
  opt.stop.max_samples = 400;
  opt.batch = 10;
  opt.stop.rel_tol = 0.05;
  const Checkpoint cp = measure_checkpoint(net, theta, samples, opt, 7);

  // the separate calls, in the order the analyses made them: bit for bit the same numbers
  const FlatnessStats st = flatness_stats(net, theta, samples, LossKind::cross_entropy);
  const BoundTerms bt = bound_terms(net, st);
  const HessianOperator H(net, theta, samples, LossKind::cross_entropy);
  const estimators::TraceEstimate tr = hutchinson_layer_traces(H, opt);
  CHECK(cp.step == 7);
  CHECK(cp.stats.loss == st.loss);
  CHECK(cp.stats.accuracy == st.accuracy);
  CHECK(cp.stats.layer_grad_sq == st.layer_grad_sq);
  REQUIRE(cp.stats.blocks.size() == st.blocks.size());
  for (std::size_t l = 0; l < st.blocks.size(); ++l) {
    CHECK(cp.stats.blocks[l].eta_KKt_eta == st.blocks[l].eta_KKt_eta);
    CHECK(cp.stats.blocks[l].x_eta == st.blocks[l].x_eta);
    CHECK(cp.stats.blocks[l].gV_alpha == st.blocks[l].gV_alpha);
  }
  for (auto f : {&BoundTerms::lemma4, &BoundTerms::lemma5, &BoundTerms::theorem2, &BoundTerms::corollary1, &BoundTerms::theorem3})
    CHECK(cp.bounds.*f == bt.*f);
  CHECK(cp.trace() == tr.estimate);
  CHECK(cp.trace_half_width() == tr.half_width);
  CHECK(cp.traces.probes == tr.probes);
  REQUIRE(cp.traces.segments.size() == tr.segments.size());
  for (std::size_t l = 0; l < tr.segments.size(); ++l) {
    CHECK(cp.traces.segments[l].estimate == tr.segments[l].estimate);
    CHECK(cp.traces.segments[l].std_error == tr.segments[l].std_error);
  }

  // against ground truth: the trace of the full Hessian lies in the estimate's interval (up to a
  // 4.5σ allowance, as test_flatness does), and Lemma 4's gap is |tr − E‖∇ℓ‖²| / |tr|
  const double exact = hessian(net, theta, samples, LossKind::cross_entropy).trace();
  CHECK(std::abs(cp.trace() - exact) <= 4.5 * cp.traces.std_error);
  CHECK(cp.lemma4_gap() == Approx(std::abs(cp.trace() - st.grad_sq) / std::abs(cp.trace())).epsilon(1e-15));
}

TEST_CASE("SparsityLog: per-block fractions and §7.1's averages against counts over the pre-activations", "[flatness]") {
  const Activation relu{ActivationKind::relu};
  const MlpConfig c = small_config(relu, false, 3);
  const Mlp net = make_mlp(c);
  SparsityLog log;
  std::vector<std::vector<double>> direct;  // [log][block]: fraction of P > 0 (ReLU: α ≠ 0)
  for (long t = 0; t < 4; ++t) {
    const Eigen::VectorXd theta = random_theta(net, static_cast<std::uint64_t>(10 + t));
    const Batch b = random_batch(c, 17 + static_cast<Eigen::Index>(t), static_cast<std::uint64_t>(30 + t));
    log.record(10 * t, net, theta, b.x);
    ForwardCache f;
    forward(net, theta, b.x, f);
    std::vector<double> row;
    for (const auto& blk : f.blocks) row.push_back(fraction(relu, blk.pre, [](double p, double) { return p > 1e-6; }));
    direct.push_back(row);
  }
  REQUIRE(log.size() == 4);
  CHECK(log.steps == std::vector<long>{0, 10, 20, 30});
  const BlockField act = &BlockStats::activation_density;
  double integrated = 0;
  std::vector<double> per_block_mean(3, 0.0);
  for (std::size_t i = 0; i < 4; ++i) {
    double layer_mean = 0;
    for (std::size_t l = 0; l < 3; ++l) {
      CHECK(log.at(i, act)[l] == Approx(direct[i][l]).epsilon(1e-14));
      CHECK(log.curve(l, act)[i] == Approx(direct[i][l]).epsilon(1e-14));
      layer_mean += direct[i][l] / 3;
      per_block_mean[l] += direct[i][l] / 4;
    }
    CHECK(log.layer_mean_curve(act)[i] == Approx(layer_mean).epsilon(1e-14));
    integrated += layer_mean / 4;
  }
  CHECK(log.integrated(act) == Approx(integrated).epsilon(1e-14));
  for (std::size_t l = 0; l < 3; ++l) CHECK(log.integrated_per_block(act)[l] == Approx(per_block_mean[l]).epsilon(1e-14));
  CHECK(block_mean(log.blocks[2], act) == Approx((direct[2][0] + direct[2][1] + direct[2][2]) / 3).epsilon(1e-14));
  // ReLU: α = 0 exactly where it is not activated
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t l = 0; l < 3; ++l) CHECK(log.blocks[i][l].zero_fraction == Approx(1 - direct[i][l]).epsilon(1e-14));
  CHECK(std::isnan(SparsityLog{}.integrated(act)));
}

TEST_CASE("SparsityLog of shifted Weird-J-SquaredReLU: flat area and zeros counted from P and σ(P − Δx) + Δy", "[flatness]") {
  for (const double dy : {1.6, -1.6, 0.0}) {
    INFO("dy = " << dy);
    const Activation weird{ActivationKind::weird_j_squared_relu, 1.5, 1.6, dy};
    const MlpConfig c = small_config(weird, true);
    const Mlp net = make_mlp(c);
    const Eigen::VectorXd theta = random_theta(net, 40);
    const Batch b = random_batch(c, 40, 41);
    SparsityLog log;
    log.record(0, net, theta, b.x);
    ForwardCache f;
    forward(net, theta, b.x, f);
    for (std::size_t l = 0; l < f.blocks.size(); ++l) {
      const Eigen::MatrixXd& P = f.blocks[l].pre;
      // §6's flat area: |P − Δx| < w_half (σ' = 0 and α = Δy there)
      const double flat = fraction(weird, P, [](double p, double) { return std::abs(p - 1.6) < 1.5; });
      const double zero = fraction(weird, P, [](double, double a) { return std::abs(a) <= 1e-6; });
      CHECK(log.curve(l, &BlockStats::flat_fraction)[0] == Approx(flat).epsilon(1e-14));
      CHECK(log.at(0, &BlockStats::zero_fraction)[l] == Approx(zero).epsilon(1e-14));
      if (dy == 0.0) CHECK(zero >= flat);      // unshifted: the flat area is at α = 0
      else CHECK(zero < 0.05);                 // shifted: the flat area sits at α = Δy ≠ 0
      CHECK(flat > 0.05);                      // the case is not vacuous
    }
  }
}
