// nn/hvp's quadratic forms: HessianOperator::quadratic_forms_block gives, per probe z and layer l,
// z_lᵀ(Hz)_l without forming Hz (hvp.hpp: ⟨v_K, R{g_K}⟩ from products the R-pass has anyway), equal
// to the Hz path's per-layer dot products to rounding, the same numbers for any block size and
// thread count; estimators::hutchinson over the operator's own layers takes it, with the estimate
// of the Hz path to rounding, and keeps the Hz path for any other segments.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <omp.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/core/estimators/probes.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/nn/hvp.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>

#include "hvp_nets.hpp"

using namespace sparseact;
using namespace sparseact::nn;
using hvp_nets::block;
using hvp_nets::random_matrix;
using hvp_nets::test_batch;

namespace {

struct QuadCase {
  std::string name;
  MlpConfig config;
  LossKind loss;
  Eigen::Index batch;
  bool exact = true;  ///< false where a GEMM's depth exceeds OpenBLAS's k-block (test_nn_hvp_block.cpp)
  /// The same for the Hz path, whose parameter-gradient GEMMs have depth B: false where B lies
  /// between GEMM_Q and 2·GEMM_Q (e.g. 513), where OpenBLAS's serial and threaded drivers cut k
  /// differently. The quadratic forms have no GEMM of depth B.
  bool hz_exact = true;
};

std::vector<QuadCase> cases() {
  using A = ActivationKind;
  std::vector<QuadCase> cs;
  const auto add_case = [&](const hvp_nets::NetCase& n) {
    cs.push_back({n.name, n.config, n.loss, n.batch, n.config.d <= 256, n.config.d <= 256 && n.batch != 513});
  };
  const auto add = [&](std::string name, Eigen::Index d_in, Eigen::Index d, std::vector<BlockConfig> blocks, LossKind loss, Eigen::Index B) {
    add_case({std::move(name), MlpConfig{.d_in = d_in, .d = d, .d_out = 3, .blocks = std::move(blocks)}, loss, B});
  };
  for (const hvp_nets::NetCase& n : hvp_nets::common_nets()) add_case(n);
  add("no blocks, MSE", 3, 5, {}, LossKind::mse, 5);
  // stacked θ-products (m·B·k ≥ 4·10⁶ per probe), as in the benchmark's network
  add("LN-MLP 40-64-128 ReLU, CE, batch 513 (stacked GEMMs)", 40, 64, {block(A::relu, true, true, true, false, true, 128)},
      LossKind::cross_entropy, 513);
  // two passes per block of 3 probes (kStackColumns = 4096)
  add("batch 1501: several passes per block, zeroth bias, CE", 3, 4, {block(A::gelu, true, true, true, true, true, 5)},
      LossKind::cross_entropy, 1501);
  return cs;
}

/// The quadratic forms (L × k) through quadratic_forms_block in blocks of `bs` columns.
Eigen::MatrixXd quad_blocked(const HessianOperator& op, const Eigen::MatrixXd& Z, Eigen::Index bs) {
  const Eigen::Index L = static_cast<Eigen::Index>(op.segments().size());
  Eigen::MatrixXd Q(L, Z.cols());
  for (Eigen::Index j = 0; j < Z.cols(); j += bs)
    op.quadratic_forms_block(Z.col(j).data(), std::min(bs, Z.cols() - j), Q.col(j).data());
  return Q;
}

/// The operator without its quadratic forms: estimators::hutchinson's Hz path.
struct HzOnly {
  const HessianOperator& op;
  Eigen::Index rows() const { return op.rows(); }
  Eigen::Index cols() const { return op.cols(); }
  void perform_op(const double* x, double* y) const { op.perform_op(x, y); }
  void perform_op_block(const double* x, double* y, Eigen::Index n) const { op.perform_op_block(x, y, n); }
  std::vector<ops::Segment> segments() const { return op.segments(); }
};

double rel_diff(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

}  // namespace

static_assert(estimators::detail::has_quadratic_forms<HessianOperator>);
static_assert(!estimators::detail::has_quadratic_forms<HzOnly>);

TEST_CASE("quadratic forms: z_lᵀ(Hz)_l per probe and layer, as the Hz path: bit-identical for any thread count, within 1e-12 across block sizes",
          "[nn][hvp]") {
  const int before = omp_get_max_threads();
  const int blas_before = blas_threads();
  for (const QuadCase& cs : cases()) {
    INFO(cs.name);
    const Mlp net = make_mlp(cs.config);
    const Eigen::VectorXd theta = init_params(net, 71, 1) + random_matrix(net.num_params, 1, 0.3, 71, 2).col(0);
    const Batch b = test_batch(cs.config, cs.batch, 72);
    const HessianOperator op(net, theta, b, cs.loss);
    const std::vector<ops::Segment> segs = op.segments();
    const Eigen::Index k = 8, L = static_cast<Eigen::Index>(segs.size());
    Eigen::MatrixXd Z;
    estimators::rademacher_columns(Z, net.num_params, 0, k, 73, 0);

    // the reference: Hz by perform_op_block, then the per-layer dot products
    omp_set_num_threads(1);
    Eigen::MatrixXd HZ(net.num_params, k);
    op.perform_op_block(Z.data(), HZ.data(), k);
    Eigen::MatrixXd Qref(L, k);
    for (Eigen::Index j = 0; j < k; ++j)
      for (Eigen::Index l = 0; l < L; ++l) {
        const ops::Segment& s = segs[static_cast<std::size_t>(l)];
        Qref(l, j) = Z.col(j).segment(s.offset, s.size).dot(HZ.col(j).segment(s.offset, s.size));
      }
    const Eigen::MatrixXd Q1 = quad_blocked(op, Z, 1);
    double worst = 0.0;
    for (Eigen::Index j = 0; j < k; ++j)
      for (Eigen::Index l = 0; l < L; ++l) worst = std::max(worst, rel_diff(Q1(l, j), Qref(l, j)));
    INFO("worst relative difference to the Hz path " << worst);
    CHECK(worst <= 1e-12);
    CHECK(Qref.cwiseAbs().minCoeff() > 0.0);  // no layer trivially zero

    // A block of probes stacks them into wider GEMMs: another block size is other GEMM shapes, whose
    // rounding differs with OpenBLAS's kernel, so blocks agree to a bound (1e-12, printed with the
    // worst seen). The same block on any thread count issues the same GEMMs: the same bits.
    std::map<Eigen::Index, Eigen::MatrixXd> serial;  // block -> Q on one thread
    double worst_blocks = 0.0;
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      for (Eigen::Index bs : {1, 3, 8}) {
        INFO("threads " << threads << ", block " << bs);
        const Eigen::MatrixXd Q = quad_blocked(op, Z, bs);
        if (threads == 1) serial[bs] = Q;
        else if (cs.exact) CHECK(Q == serial[bs]);
        double w = 0.0;
        for (Eigen::Index j = 0; j < k; ++j)
          for (Eigen::Index l = 0; l < L; ++l) w = std::max(w, rel_diff(Q(l, j), Q1(l, j)));
        worst_blocks = std::max(worst_blocks, w);
        INFO("worst relative difference to block 1: " << w << ", bound 1e-12");
        CHECK(w <= 1e-12);
        // the Hz path on the same operator (shared workspaces) is unchanged by the quadratic passes
        Eigen::MatrixXd HZ2(net.num_params, k);
        op.perform_op_block(Z.data(), HZ2.data(), k);
        if (cs.hz_exact) CHECK(HZ2 == HZ);
        CHECK((HZ2 - HZ).cwiseAbs().maxCoeff() <= 1e-12 * HZ.cwiseAbs().maxCoeff());
      }
    }
    omp_set_num_threads(before);
    CHECK(blas_threads() == blas_before);
    WARN(cs.name << ": worst relative difference between block sizes " << worst_blocks << " (bound 1e-12)");
  }
}

TEST_CASE("quadratic forms: estimators::hutchinson over the operator's layers equals the Hz path's estimate",
          "[nn][hvp]") {
  for (const QuadCase& cs : cases()) {
    INFO(cs.name);
    const Mlp net = make_mlp(cs.config);
    const Eigen::VectorXd theta = init_params(net, 81, 1) + random_matrix(net.num_params, 1, 0.3, 81, 2).col(0);
    const Batch b = test_batch(cs.config, cs.batch, 82);
    const HessianOperator op(net, theta, b, cs.loss);
    const HzOnly hz{op};
    estimators::TraceOptions opt{.seed = 83, .stream = 1, .batch = 3};
    opt.stop.min_samples = 7;
    opt.stop.max_samples = 7;  // a fixed budget: both paths see the same probes
    const auto segs = op.segments();
    const estimators::TraceEstimate q = estimators::hutchinson(op, segs, opt);
    const estimators::TraceEstimate h = estimators::hutchinson(hz, segs, opt);
    CHECK(q.probes == h.probes);
    CHECK(q.matvecs == h.matvecs);
    CHECK(rel_diff(q.estimate, h.estimate) <= 1e-12);
    CHECK(rel_diff(q.std_error, h.std_error) <= 1e-10);  // a spread: relative rounding grows by cancellation
    REQUIRE(q.segments.size() == h.segments.size());
    for (std::size_t l = 0; l < q.segments.size(); ++l) {
      INFO(q.segments[l].name);
      CHECK(q.segments[l].name == h.segments[l].name);
      CHECK(rel_diff(q.segments[l].estimate, h.segments[l].estimate) <= 1e-12);
    }
    // under the stopping rule too (the same probes, the same stop)
    estimators::TraceOptions rule{.seed = 84, .stream = 2, .batch = 4};
    rule.stop.rel_tol = 0.05;
    rule.stop.max_samples = 60;
    const estimators::TraceEstimate qr = estimators::hutchinson(op, segs, rule);
    const estimators::TraceEstimate hr = estimators::hutchinson(hz, segs, rule);
    CHECK(qr.probes == hr.probes);
    CHECK(rel_diff(qr.estimate, hr.estimate) <= 1e-12);

    // other segments than the operator's own, or none: the Hz path, bit for bit
    const std::vector<ops::Segment> halves{{0, net.num_params / 2, "a"}, {net.num_params / 2, net.num_params - net.num_params / 2, "b"}};
    const estimators::TraceEstimate oq = estimators::hutchinson(op, halves, opt);
    const estimators::TraceEstimate oh = estimators::hutchinson(hz, halves, opt);
    CHECK(oq.estimate == oh.estimate);
    CHECK(oq.segments[0].estimate == oh.segments[0].estimate);
    CHECK(estimators::hutchinson(op, opt).estimate == estimators::hutchinson(hz, opt).estimate);
  }
}
