// nn/hvp's stacked block product: a block of probes as one R-pass over P·B columns gives, per probe,
// exactly (==) the numbers of the one-vector product, for any block size and thread count (the
// GEMMs go to dgemm whatever the width and every sum over features or samples runs in a fixed
// order: hvp.hpp), and those numbers are H v (differences of exact gradients).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <omp.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/nn/backprop.hpp>
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

struct BlockCase {
  std::string name;
  MlpConfig config;
  LossKind loss;
  Eigen::Index batch;
  /// false where a GEMM's depth exceeds OpenBLAS's k-block (GEMM_Q): its serial and threaded
  /// drivers split such a k differently, so the bits depend on OpenBLAS's thread count (the
  /// gradient of backprop.hpp's too); per probe equal to rounding (≤ 1e-12 relative) there.
  bool exact = true;
};

std::vector<BlockCase> cases() {
  using A = ActivationKind;
  std::vector<BlockCase> cs;
  const auto add_case = [&](const hvp_nets::NetCase& n) { cs.push_back({n.name, n.config, n.loss, n.batch, n.config.d <= 256}); };
  const auto add = [&](std::string name, Eigen::Index d_in, Eigen::Index d, std::vector<BlockConfig> blocks, LossKind loss, Eigen::Index B) {
    add_case({std::move(name), MlpConfig{.d_in = d_in, .d = d, .d_out = 3, .blocks = std::move(blocks)}, loss, B});
  };
  for (const hvp_nets::NetCase& n : hvp_nets::common_nets()) add_case(n);
  add("no blocks, CE", 3, 5, {}, LossKind::cross_entropy, 5);
  // the benchmark's kind of network at shapes where θ's products are stacked (m·B·k ≥ 4·10⁶ per
  // probe: one dgemm of width P·B, OpenBLAS's blocked kernels); GELU rather than the benchmark's
  // ReLU so that the differences of gradients along v cross no kink
  add("LN-MLP 40-64-128 GELU, CE, batch 512 (stacked GEMMs)", 40, 64, {block(A::gelu, true, true, true, false, true, 128)},
      LossKind::cross_entropy, 512);
  // a batch so wide that a block of 3 probes takes two passes (kStackColumns = 4096: 2 probes per pass)
  add("batch 1500: several passes per block, CE", 3, 4, {block(A::gelu, true, true, true, true, true, 5)},
      LossKind::cross_entropy, 1500);
  // products small enough for OpenBLAS's small-matrix kernels one probe at a time: not stacked
  add("d = 400, narrow K (small-matrix kernels), MSE", 3, 400, {block(A::squared_relu, true, true, true, false, true, 2)},
      LossKind::mse, 100);
  return cs;
}

/// H Z through perform_op_block in blocks of `bs` columns (as estimators::hutchinson calls it).
Eigen::MatrixXd blocked(const HessianOperator& op, const Eigen::MatrixXd& Z, Eigen::Index bs) {
  Eigen::MatrixXd Y(Z.rows(), Z.cols());
  for (Eigen::Index j = 0; j < Z.cols(); j += bs)
    op.perform_op_block(Z.col(j).data(), Y.col(j).data(), std::min(bs, Z.cols() - j));
  return Y;
}

}  // namespace

TEST_CASE("stacked block HVPs: per probe identical for block sizes 1, 3, 8 and 1 or 2 threads, equal to H v", "[nn][hvp]") {
  const int before = omp_get_max_threads();
  const int blas_before = blas_threads();
  for (const BlockCase& cs : cases()) {
    INFO(cs.name);
    const Mlp net = make_mlp(cs.config);
    Eigen::VectorXd theta = init_params(net, 51, 1);
    theta += random_matrix(net.num_params, 1, 0.3, 51, 2).col(0);
    const Batch b = test_batch(cs.config, cs.batch, 52);
    const HessianOperator op(net, theta, b, cs.loss);
    const Eigen::Index k = 8;
    const Eigen::MatrixXd Z = random_matrix(net.num_params, k, 1.0, 53, 0);

    // the reference: one vector at a time, serial
    omp_set_num_threads(1);
    Eigen::MatrixXd Y1(net.num_params, k);
    for (Eigen::Index j = 0; j < k; ++j) op.perform_op(Z.col(j).data(), Y1.col(j).data());
    // equal up to rounding: ‖ΔY‖_∞ / ‖Y1‖_∞ per column (0 where cs.exact)
    auto rel = [&](const Eigen::MatrixXd& Y) {
      double worst = 0.0;
      for (Eigen::Index j = 0; j < Y.cols(); ++j)
        worst = std::max(worst, (Y.col(j) - Y1.col(j)).cwiseAbs().maxCoeff() / Y1.col(j).cwiseAbs().maxCoeff());
      return worst;
    };
    for (Eigen::Index j = 0; j < 2; ++j) {
      const Eigen::VectorXd hv = hessian_vector_product(net, theta, b, cs.loss, Z.col(j));
      if (cs.exact) CHECK(hv == Y1.col(j));
      CHECK((hv - Y1.col(j)).cwiseAbs().maxCoeff() <= 1e-12 * Y1.col(j).cwiseAbs().maxCoeff());
    }

    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      for (Eigen::Index bs : {1, 3, 8}) {
        INFO("threads " << threads << ", block " << bs);
        const Eigen::MatrixXd Y = blocked(op, Z, bs);
        if (cs.exact) CHECK(Y == Y1);
        CHECK(rel(Y) <= 1e-12);
      }
    }
    omp_set_num_threads(before);
    CHECK(blas_threads() == blas_before);  // the serial BLAS of the parallel block is restored

    // H v against central differences of exact gradients along v (probe 0 and 5)
    for (Eigen::Index j : {Eigen::Index(0), Eigen::Index(5)}) {
      const double h = 1e-5;
      Eigen::VectorXd gp, gm;
      loss_and_gradient(net, theta + h * Z.col(j), b, cs.loss, gp);
      loss_and_gradient(net, theta - h * Z.col(j), b, cs.loss, gm);
      const Eigen::VectorXd fd = (gp - gm) / (2 * h);
      CHECK(Y1.col(j).norm() > 1e-6);
      CHECK((Y1.col(j) - fd).norm() <= 1e-5 * fd.norm());
    }
  }
}

TEST_CASE("stacked block HVPs: the operator's workspaces serve concurrent callers and any block width", "[nn][hvp]") {
  const BlockCase cs = cases()[0];
  const Mlp net = make_mlp(cs.config);
  const Eigen::VectorXd theta = init_params(net, 61, 1) + random_matrix(net.num_params, 1, 0.3, 61, 2).col(0);
  const Batch b = test_batch(cs.config, cs.batch, 62);
  const HessianOperator op(net, theta, b, cs.loss);
  const Eigen::MatrixXd Z = random_matrix(net.num_params, 12, 1.0, 63, 0);
  Eigen::MatrixXd Y1(net.num_params, Z.cols());
  for (Eigen::Index j = 0; j < Z.cols(); ++j) op.perform_op(Z.col(j).data(), Y1.col(j).data());
  // single products from an outer parallel loop (as nn::hessian used to call them), then blocks of
  // growing and shrinking width on the same operator, then a copy of it
  Eigen::MatrixXd Y(Z.rows(), Z.cols());
#pragma omp parallel for schedule(dynamic, 1) num_threads(2)
  for (Eigen::Index j = 0; j < Z.cols(); ++j) op.perform_op(Z.col(j).data(), Y.col(j).data());
  CHECK(Y == Y1);
  for (Eigen::Index bs : {2, 12, 5, 1}) CHECK(blocked(op, Z, bs) == Y1);
  const HessianOperator copy = op;
  CHECK(blocked(copy, Z, 4) == Y1);
}
