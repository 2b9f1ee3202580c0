// Paper 004's transformer pieces (nn/attention, nn/moe_ffn): causal multi-head attention, RMSNorm and the dense and
// top-2 MoE feed-forward layers, each backward pass against central finite differences of ⟨G, forward⟩ in θ and in
// the inputs; causality by perturbing a later token; top-2 routing by hand (ties to the lowest index).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <tuple>

#include <omp.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/attention.hpp>
#include <sparseact/nn/moe_ffn.hpp>

using namespace sparseact;
using namespace sparseact::nn;

namespace {

Eigen::MatrixXd gaussian(Eigen::Index r, Eigen::Index c, std::uint64_t stream, double scale = 1) {
  Rng rng(17, stream);
  Eigen::MatrixXd M(r, c);
  for (auto& v : M.reshaped()) v = scale * rng.normal();
  return M;
}

/// Central differences of f at v, entry by entry, against `analytic`.
void check_gradient(Eigen::VectorXd v, const std::function<double(const Eigen::VectorXd&)>& f, const Eigen::VectorXd& analytic, double tol = 1e-6) {
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    const double keep = v(i);
    v(i) = keep + h;
    const double up = f(v);
    v(i) = keep - h;
    const double down = f(v);
    v(i) = keep;
    CHECK(analytic(i) == Approx((up - down) / (2 * h)).margin(tol));
  }
}

}  // namespace

TEST_CASE("attention: gradients in θ and X equal finite differences, for 1 and 2 heads", "[nn][attention]") {
  for (int heads : {1, 2}) {
    const AttentionShape s{4, heads};
    const Eigen::MatrixXd X = gaussian(4, 5, 1), G = gaussian(4, 5, 2);
    const Eigen::VectorXd theta = gaussian(s.parameter_count(), 1, 3, 0.5).col(0);
    AttentionCache c;
    attention_forward(s, theta.data(), X, c);
    Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
    const Eigen::MatrixXd dX = attention_backward(s, theta.data(), c, G, grad.data());
    const auto value = [&](const Eigen::VectorXd& t, const Eigen::MatrixXd& x) {
      AttentionCache tmp;
      return (attention_forward(s, t.data(), x, tmp).array() * G.array()).sum();
    };
    check_gradient(theta, [&](const Eigen::VectorXd& t) { return value(t, X); }, grad);
    check_gradient(X.reshaped(), [&](const Eigen::VectorXd& x) { return value(theta, x.reshaped(4, 5)); }, dX.reshaped());
  }
  const Eigen::VectorXd zeros = Eigen::VectorXd::Zero(64);
  AttentionCache unused;
  CHECK_THROWS(attention_forward({4, 3}, zeros.data(), Eigen::MatrixXd::Zero(4, 2), unused));  // 3 heads do not divide d = 4
}

TEST_CASE("attention over B sequences at once equals B single-sequence passes, for 1 and 2 threads", "[nn][attention]") {
  // (d, H, T) small, and large enough (T·B·T·d ≥ 2¹⁸) for the per-sequence loop to run in parallel
  for (const auto& [d, heads, T] : {std::tuple<int, int, Eigen::Index>{8, 2, 6}, {32, 4, 48}}) {
    const AttentionShape s{d, heads};
    const Eigen::Index B = 40;
    const Eigen::VectorXd theta = gaussian(s.parameter_count(), 1, 9, 0.3).col(0);
    const Eigen::MatrixXd X = gaussian(d, T * B, 10), G = gaussian(d, T * B, 11);
    Eigen::MatrixXd Y_single(d, T * B), dX_single(d, T * B);
    Eigen::VectorXd grad_single = Eigen::VectorXd::Zero(theta.size());
    for (Eigen::Index b = 0; b < B; ++b) {
      AttentionCache c;
      Y_single.middleCols(b * T, T) = attention_forward(s, theta.data(), X.middleCols(b * T, T), c);
      dX_single.middleCols(b * T, T) = attention_backward(s, theta.data(), c, G.middleCols(b * T, T), grad_single.data());
    }
    Eigen::MatrixXd Y1, dX1;
    Eigen::VectorXd grad1;
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      AttentionCache c;
      const Eigen::MatrixXd Y = attention_forward(s, theta.data(), X, c, T);
      Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
      const Eigen::MatrixXd dX = attention_backward(s, theta.data(), c, G, grad.data());
      CAPTURE(d, threads);
      // the projections now run over all tokens at once: the same sums, another blocking
      CHECK((Y - Y_single).cwiseAbs().maxCoeff() <= 1e-13 * Y_single.cwiseAbs().maxCoeff());
      CHECK((dX - dX_single).cwiseAbs().maxCoeff() <= 1e-13 * dX_single.cwiseAbs().maxCoeff());
      CHECK((grad - grad_single).cwiseAbs().maxCoeff() <= 1e-12 * grad_single.cwiseAbs().maxCoeff());
      if (threads == 1) {
        Y1 = Y, dX1 = dX, grad1 = grad;
      } else {  // bit-identical for any thread count
        CHECK(Y == Y1);
        CHECK(dX == dX1);
        CHECK(grad == grad1);
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
  const Eigen::VectorXd zeros = Eigen::VectorXd::Zero(256);
  AttentionCache unused;
  CHECK_THROWS(attention_forward({8, 2}, zeros.data(), Eigen::MatrixXd::Zero(8, 10), unused, 4));  // 4 tokens per sequence do not divide 10
}

TEST_CASE("attention is causal, and with Q = K = 0 averages the values so far (paper 004, App. D.1.2)", "[nn][attention]") {
  const AttentionShape s{3, 1};
  Eigen::VectorXd theta = gaussian(s.parameter_count(), 1, 4).col(0);
  const Eigen::MatrixXd X = gaussian(3, 6, 5);
  AttentionCache c;
  const Eigen::MatrixXd Y = attention_forward(s, theta.data(), X, c);
  Eigen::MatrixXd X2 = X;
  X2.col(5) *= 3;  // the last token cannot move the earlier outputs
  const Eigen::MatrixXd Y2 = attention_forward(s, theta.data(), X2, c);
  CHECK((Y.leftCols(5) - Y2.leftCols(5)).cwiseAbs().maxCoeff() < 1e-14);
  // Q = K = 0, V = W_o = I: output i is the mean of x_0 … x_i
  theta.setZero();
  for (int i = 0; i < 3; ++i) theta(2 * 9 + i * 4) = 1, theta(3 * 9 + i * 4) = 1;
  const Eigen::MatrixXd A = attention_forward(s, theta.data(), X, c);
  for (Eigen::Index i = 0; i < 6; ++i) CHECK((A.col(i) - X.leftCols(i + 1).rowwise().mean()).norm() < 1e-14);
}

TEST_CASE("RMSNorm: unit root-mean-square output at g = 1, gradients equal finite differences", "[nn][attention]") {
  const Eigen::MatrixXd X = gaussian(5, 3, 6), G = gaussian(5, 3, 7);
  const Eigen::VectorXd g = gaussian(5, 1, 8).col(0), ones = Eigen::VectorXd::Ones(5);
  RmsNormCache c;
  const Eigen::MatrixXd Y1 = rmsnorm_forward(ones.data(), X, c);
  for (Eigen::Index t = 0; t < 3; ++t) CHECK(std::sqrt(Y1.col(t).squaredNorm() / 5) == Approx(1).epsilon(1e-5));
  rmsnorm_forward(g.data(), X, c);
  Eigen::VectorXd dg = Eigen::VectorXd::Zero(5);
  const Eigen::MatrixXd dX = rmsnorm_backward(g.data(), c, G, dg.data());
  const auto value = [&](const Eigen::VectorXd& gain, const Eigen::MatrixXd& x) {
    RmsNormCache tmp;
    return (rmsnorm_forward(gain.data(), x, tmp).array() * G.array()).sum();
  };
  check_gradient(g, [&](const Eigen::VectorXd& v) { return value(v, X); }, dg);
  check_gradient(X.reshaped(), [&](const Eigen::VectorXd& x) { return value(g, x.reshaped(5, 3)); }, dX.reshaped());
}

TEST_CASE("top-2 routing by hand: the two largest logits, ties to the lowest index", "[nn][moe_ffn]") {
  CHECK(top_experts((Eigen::VectorXd(4) << 0.1, 0.7, 0.3, 0.7).finished(), 2) == std::vector<int>{1, 3});
  CHECK(top_experts((Eigen::VectorXd(4) << 0.5, 0.5, 0.5, 0.2).finished(), 2) == std::vector<int>{0, 1});
  CHECK(top_experts((Eigen::VectorXd(3) << -1, 2, 0).finished(), 1) == std::vector<int>{1});
  const FfnShape dense{4, 4, 1}, moe{4, 4, 8, 2};
  CHECK(dense.parameter_count() == 2 * 16);
  CHECK(moe.parameter_count() == 8 * 4 + 8 * 32);
  CHECK(moe.active_count() == 8 * 4 + 2 * 32);
}

TEST_CASE("dense and top-2 MoE FFN: gradients equal finite differences; gates sum to 1", "[nn][moe_ffn]") {
  for (const FfnShape s : {FfnShape{4, 3, 1}, FfnShape{4, 3, 4, 2}, FfnShape{4, 3, 4, 1}}) {
    CAPTURE(s.experts, s.top);
    const Eigen::MatrixXd X = gaussian(4, 6, 9), G = gaussian(4, 6, 10);
    const Eigen::VectorXd theta = gaussian(s.parameter_count(), 1, 11).col(0);
    FfnCache c;
    ffn_forward(s, theta.data(), X, c);
    for (const auto& gates : c.gate) {
      double sum = 0;
      for (double v : gates) sum += v;
      CHECK(sum == Approx(1).epsilon(1e-14));
    }
    Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
    const Eigen::MatrixXd dX = ffn_backward(s, theta.data(), c, G, grad.data());
    const auto value = [&](const Eigen::VectorXd& t, const Eigen::MatrixXd& x) {
      FfnCache tmp;
      return (ffn_forward(s, t.data(), x, tmp).array() * G.array()).sum();
    };
    // Finite differences stay inside one routing and ReLU pattern at h = 1e-6 for these Gaussian draws.
    check_gradient(theta, [&](const Eigen::VectorXd& t) { return value(t, X); }, grad);
    check_gradient(X.reshaped(), [&](const Eigen::VectorXd& x) { return value(theta, x.reshaped(4, 6)); }, dX.reshaped());
  }
}
