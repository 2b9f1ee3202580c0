// nn/mlp, loss, backprop, hvp: gradients against central differences of the loss, Hessian-vector
// products against differences of gradients and against the full Hessian, for many architectures.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <omp.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/hvp.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>

using namespace sparseact;
using namespace sparseact::nn;

namespace {

struct Case {
  std::string name;
  MlpConfig config;
  LossKind loss;
};

BlockConfig block(ActivationKind act, bool ln, bool affine, bool bias, bool zb, bool res, Eigen::Index n = 6,
                  double eps = 1e-5) {
  BlockConfig b;
  b.n = n;
  b.activation.kind = act;
  b.layernorm = ln;
  b.ln_affine = affine;
  b.ln_bias = bias;
  b.ln_eps = eps;
  b.zeroth_bias = zb;
  b.residual = res;
  return b;
}

std::vector<Case> cases() {
  using A = ActivationKind;
  std::vector<Case> cs;
  auto add = [&](std::string name, std::vector<BlockConfig> blocks, LossKind loss) {
    MlpConfig c;
    c.d_in = 3;
    c.d = 5;
    c.d_out = 3;
    c.blocks = std::move(blocks);
    cs.push_back({std::move(name), c, loss});
  };
  add("DB-MLP J-SquaredReLU, LN affine+bias, residual, CE",
      {block(A::j_squared_relu, true, true, true, true, true), block(A::j_squared_relu, true, true, true, true, true)},
      LossKind::cross_entropy);
  add("plain ReLU MLP, no LN, no residual, MSE",
      {block(A::relu, false, false, false, false, false), block(A::relu, false, false, false, false, false)},
      LossKind::mse);
  add("GELU, LN bias only, eps = 0, residual, CE",
      {block(A::gelu, true, false, true, false, true, 6, 0.0), block(A::gelu, true, false, true, false, true, 4, 0.0)},
      LossKind::cross_entropy);
  add("Squared-ReLU, LN affine no bias, zeroth bias, no residual, MSE",
      {block(A::squared_relu, true, true, false, true, false), block(A::squared_relu, true, true, false, true, false)},
      LossKind::mse);
  add("LN without affine (Theorem 3), ReLU, residual, CE",
      {block(A::relu, true, false, false, false, true), block(A::gelu, true, false, false, true, true)},
      LossKind::cross_entropy);
  {
    BlockConfig w = block(A::weird_j_squared_relu, true, true, true, true, true, 7);
    w.activation.w_half = 1.5;
    w.activation.dx = 1.6;
    w.activation.dy = -1.6;
    BlockConfig w2 = w;
    w2.activation.dx = -1.6;
    w2.activation.dy = 1.6;
    add("shifted Weird-J-SquaredReLU DB-MLP, CE", {w, w2}, LossKind::cross_entropy);
    add("shifted Weird-J-SquaredReLU DB-MLP, MSE", {w}, LossKind::mse);
  }
  add("mixed three blocks, MSE",
      {block(A::gelu, true, true, true, false, true, 3), block(A::j_squared_relu, false, false, false, true, true, 8),
       block(A::squared_relu, true, true, true, true, false, 4, 1e-3)},
      LossKind::mse);
  add("no blocks (two Linear layers), CE", {}, LossKind::cross_entropy);
  {
    // §8.5's tiny pure MLP: single hidden Linear + ReLU per block, LN without affine, skip connections
    BlockConfig s = block(A::relu, true, false, false, false, true, 5);
    s.value_layer = false;
    BlockConfig t = block(A::gelu, true, true, true, true, true, 5);
    t.value_layer = false;
    add("single hidden Linear layers (paper 001 §8.5), CE", {s, t, s}, LossKind::cross_entropy);
  }
  return cs;
}

Eigen::VectorXd random_vector(Eigen::Index n, double sd, std::uint64_t seed, std::uint64_t stream) {
  Eigen::VectorXd v(n);
  fill_random(v.data(), static_cast<std::size_t>(n), Distribution::normal, sd, seed, stream);
  return v;
}

// Standard init, then every parameter (biases, γ, β, zeroth biases included) moved off its init
// value so that every term of the derivatives is exercised.
Eigen::VectorXd test_params(const Mlp& net, std::uint64_t seed) {
  Eigen::VectorXd theta = init_params(net, seed, 1);
  theta += random_vector(net.num_params, 0.4, seed, 2);
  return theta;
}

Batch test_batch(const MlpConfig& c, Eigen::Index B, std::uint64_t seed) {
  Batch b;
  b.x.resize(c.d_in, B);
  fill_random(b.x.data(), static_cast<std::size_t>(b.x.size()), Distribution::normal, 1.5, seed, 3);
  b.y.resize(c.d_out, B);
  fill_random(b.y.data(), static_cast<std::size_t>(b.y.size()), Distribution::normal, 1.0, seed, 4);
  for (Eigen::Index s = 0; s < B; ++s) b.labels.push_back(static_cast<int>((s * 7 + 1) % c.d_out));
  return b;
}

Eigen::VectorXd fd_gradient(const Mlp& net, const Eigen::VectorXd& theta, const Batch& b, LossKind k, double h) {
  Eigen::VectorXd g(theta.size()), t = theta;
  for (Eigen::Index i = 0; i < theta.size(); ++i) {
    t(i) = theta(i) + h;
    const double lp = loss(net, t, b, k);
    t(i) = theta(i) - h;
    const double lm = loss(net, t, b, k);
    t(i) = theta(i);
    g(i) = (lp - lm) / (2 * h);
  }
  return g;
}

double rel_err(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return (a - b).norm() / b.norm(); }

}  // namespace

TEST_CASE("parameter layout: contiguous tensors and layers, named views", "[nn]") {
  MlpConfig c;
  c.d_in = 3;
  c.d = 5;
  c.d_out = 2;
  c.blocks = {block(ActivationKind::relu, true, true, true, true, true, 6)};
  const Mlp net = make_mlp(c);
  // input 5·3+5, block 5+5+5+6·5+6+5·6+5, output 2·5+2
  CHECK(net.num_params == 20 + 86 + 12);
  REQUIRE(net.layers.size() == 3);
  Eigen::Index offset = 0;
  for (const ParamInfo& p : net.params) {
    CHECK(p.offset == offset);
    offset += p.size();
  }
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const LayerInfo& L = net.layers[l];
    Eigen::Index sum = 0;
    for (int i = L.first_param; i < L.first_param + L.num_params; ++i) {
      CHECK(net.params[static_cast<std::size_t>(i)].layer == static_cast<int>(l));
      sum += net.params[static_cast<std::size_t>(i)].size();
    }
    CHECK(sum == L.size);
  }
  CHECK(net.layers[1].offset == 20);
  const int K = find_param(net, "block1.K");
  REQUIRE(K == net.blocks[0].K);
  Eigen::VectorXd theta = init_params(net, 3);
  param_view(net, theta, K)(2, 4) = 7.0;  // column-major: offset + 4·6 + 2
  CHECK(theta(net.params[static_cast<std::size_t>(K)].offset + 4 * 6 + 2) == 7.0);
  CHECK(param_view(net, theta, net.blocks[0].gamma).isOnes());
  CHECK(param_view(net, theta, net.blocks[0].d).isZero());
  CHECK_THROWS(make_mlp(MlpConfig{0, 5, 2, {}}));
}

TEST_CASE("gradients match central differences of the loss", "[nn]") {
  for (const Case& cs : cases()) {
    INFO(cs.name);
    const Mlp net = make_mlp(cs.config);
    const Eigen::VectorXd theta = test_params(net, 11);
    const Batch b = test_batch(cs.config, 7, 12);
    Eigen::VectorXd g;
    const double L = loss_and_gradient(net, theta, b, cs.loss, g);
    CHECK(L == Approx(loss(net, theta, b, cs.loss)).epsilon(1e-14));
    const Eigen::VectorXd gfd = fd_gradient(net, theta, b, cs.loss, 1e-5);
    CHECK(g.norm() > 1e-3);
    CHECK(rel_err(g, gfd) <= 1e-6);
    // each layer's gradient too
    for (const LayerInfo& l : net.layers)
      CHECK(rel_err(g.segment(l.offset, l.size), gfd.segment(l.offset, l.size)) <= 1e-6);
  }
}

TEST_CASE("per-sample gradients: mean is the batch gradient, each is a batch-of-one gradient", "[nn]") {
  for (const Case& cs : cases()) {
    INFO(cs.name);
    const Mlp net = make_mlp(cs.config);
    const Eigen::VectorXd theta = test_params(net, 21);
    const Batch b = test_batch(cs.config, 5, 22);
    Eigen::VectorXd g;
    Eigen::MatrixXd G;
    loss_and_gradient(net, theta, b, cs.loss, g, &G);
    REQUIRE(G.cols() == 5);
    CHECK(rel_err(G.rowwise().mean(), g) <= 1e-12);
    for (Eigen::Index s = 0; s < 5; ++s) {
      Batch one;
      one.x = b.x.col(s);
      one.y = b.y.col(s);
      one.labels = {b.labels[static_cast<std::size_t>(s)]};
      Eigen::VectorXd gs;
      loss_and_gradient(net, theta, one, cs.loss, gs);
      CHECK(rel_err(G.col(s), gs) <= 1e-12);
    }
  }
}

TEST_CASE("Hessian-vector products match differences of gradients and the full Hessian", "[nn]") {
  for (const Case& cs : cases()) {
    INFO(cs.name);
    const Mlp net = make_mlp(cs.config);
    const Eigen::VectorXd theta = test_params(net, 31);
    const Batch b = test_batch(cs.config, 6, 32);
    const HessianOperator op(net, theta, b, cs.loss);
    for (std::uint64_t probe = 0; probe < 2; ++probe) {
      const Eigen::VectorXd v = random_vector(net.num_params, 1.0, 33, probe);
      const Eigen::VectorXd Hv = op.apply(v);
      const double h = 1e-5;
      Eigen::VectorXd gp, gm;
      loss_and_gradient(net, theta + h * v, b, cs.loss, gp);
      loss_and_gradient(net, theta - h * v, b, cs.loss, gm);
      const Eigen::VectorXd fd = (gp - gm) / (2 * h);
      CHECK(Hv.norm() > 1e-3);
      CHECK(rel_err(Hv, fd) <= 1e-5);
      CHECK(rel_err(hessian_vector_product(net, theta, b, cs.loss, v), Hv) <= 1e-14);
    }
    const Eigen::MatrixXd H = hessian(net, theta, b, cs.loss);
    const Eigen::MatrixXd Hfd = hessian_finite_difference(net, theta, b, cs.loss, 1e-5);
    CHECK(rel_err(H, Hfd) <= 1e-5);
    // symmetric (the R-operator does not symmetrise anything: this is a real check)
    CHECK((H - H.transpose()).norm() <= 1e-12 * H.norm());
    const Eigen::VectorXd v = random_vector(net.num_params, 1.0, 34, 0);
    CHECK(rel_err(H * v, op.apply(v)) <= 1e-12);
    // per-layer diagonal blocks: the trace splits over layers
    double tr = 0.0;
    for (const LayerInfo& l : net.layers) tr += H.block(l.offset, l.offset, l.size, l.size).trace();
    CHECK(tr == Approx(H.trace()).epsilon(1e-12));
  }
}

TEST_CASE("losses: values, gradients and second derivatives w.r.t. the outputs", "[nn]") {
  Batch b;
  b.labels = {0, 2};
  b.y = Eigen::MatrixXd::Ones(3, 2);
  b.x = Eigen::MatrixXd::Zero(1, 2);
  Eigen::MatrixXd F(3, 2);
  F << 1.0, -0.5, 0.0, 2.0, -1.0, 0.3;
  // CE by hand: sample 0 logits (1, 0, −1), label 0
  const double l0 = std::log(std::exp(1.0) + 1.0 + std::exp(-1.0)) - 1.0;
  const double l1 = std::log(std::exp(-0.5) + std::exp(2.0) + std::exp(0.3)) - 0.3;
  CHECK(loss_value(LossKind::cross_entropy, F, b) == Approx(0.5 * (l0 + l1)).epsilon(1e-14));
  CHECK(loss_value(LossKind::mse, F, b) == Approx((F.array() - 1.0).square().sum() / 6.0).epsilon(1e-14));
  for (LossKind k : {LossKind::cross_entropy, LossKind::mse}) {
    Eigen::MatrixXd dF;
    loss_value(k, F, b, &dF);
    Eigen::MatrixXd R(3, 2);
    R << 0.3, -1.0, 0.7, 0.2, -0.4, 0.9;
    const double h = 1e-6;
    Eigen::MatrixXd dp, dm;
    loss_value(k, F + h * R, b, &dp);
    loss_value(k, F - h * R, b, &dm);
    CHECK(rel_err(loss_hessian_product(k, F, R, b), (dp - dm) / (2 * h)) <= 1e-7);
    const double fd = (loss_value(k, F + h * R, b) - loss_value(k, F - h * R, b)) / (2 * h);
    CHECK((dF.array() * R.array()).sum() == Approx(fd).epsilon(1e-7));
  }
  b.labels = {0, 3};
  CHECK_THROWS(loss_value(LossKind::cross_entropy, F, b));
}

TEST_CASE("gradients and Hessians are the same for 1 and 2 OpenMP threads", "[nn][reproducible]") {
  const Case cs = cases()[0];
  const Mlp net = make_mlp(cs.config);
  const Batch b = test_batch(cs.config, 9, 42);
  const int before = omp_get_max_threads();
  Eigen::VectorXd theta[2], g[2];
  Eigen::MatrixXd G[2], H[2], Hfd[2];
  for (int t = 0; t < 2; ++t) {
    omp_set_num_threads(t + 1);
    theta[t] = test_params(net, 41);
    loss_and_gradient(net, theta[t], b, cs.loss, g[t], &G[t]);
    H[t] = hessian(net, theta[t], b, cs.loss);
    Hfd[t] = hessian_finite_difference(net, theta[t], b, cs.loss);
  }
  omp_set_num_threads(before);
  CHECK(theta[0] == theta[1]);
  CHECK(g[0] == g[1]);
  CHECK(G[0] == G[1]);
  CHECK(H[0] == H[1]);
  CHECK(Hfd[0] == Hfd[1]);
}
