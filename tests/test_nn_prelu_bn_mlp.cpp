// The classification expert of paper 003 App. D.3.1 (nn/prelu_bn_mlp): Linear → BatchNorm1d → PReLU. Counts by
// hand; every gradient (A, b, BatchNorm's weight and bias, γ per neuron and shared) against central finite
// differences, through the batch statistics in training mode and with the running ones in eval mode; the
// running-statistics update by hand (unbiased variance); eval mode by hand; agreement with torch in float64
// when /usr/bin/python3 has torch.
#include <catch2/catch.hpp>

#include "python_ref.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/prelu_bn_mlp.hpp>

using namespace sparseact;
using namespace sparseact::nn;
namespace fs = std::filesystem;

namespace {

Eigen::MatrixXd normal_matrix(Eigen::Index r, Eigen::Index c, std::uint64_t stream) {
  Rng rng(7, stream);
  Eigen::MatrixXd M(r, c);
  for (auto& v : M.reshaped()) v = rng.normal();
  return M;
}

/// θ from the initialiser with BatchNorm weights, biases and γ moved off their initial values, so every
/// parameter's gradient is generic.
Eigen::VectorXd generic_theta(const PreluBnMlp& net) {
  Eigen::VectorXd theta = init_prelu_bn_mlp(net, 2, 3, 0.3);
  const Eigen::MatrixXd noise = normal_matrix(theta.size(), 1, 11);
  return theta + 0.2 * noise.col(0);
}

double objective(const PreluBnMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X, const Eigen::MatrixXd& G, BnMode mode,
                 const BnRunning& running) {
  return (prelu_bn_forward(net, theta, X, mode, running).out.array() * G.array()).sum();
}

void check_gradient(const PreluBnMlp& net, BnMode mode, const BnRunning& running) {
  const Eigen::VectorXd theta = generic_theta(net);
  const Eigen::MatrixXd X = normal_matrix(net.widths.front(), 6, 1), G = normal_matrix(net.widths.back(), 6, 2);
  const Eigen::VectorXd grad = prelu_bn_gradient(net, theta, prelu_bn_forward(net, theta, X, mode, running), G);
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < theta.size(); ++i) {
    Eigen::VectorXd tp = theta, tm = theta;
    tp(i) += h, tm(i) -= h;
    const double fd = (objective(net, tp, X, G, mode, running) - objective(net, tm, X, G, mode, running)) / (2 * h);
    CAPTURE(i);
    CHECK(grad(i) == Approx(fd).margin(1e-7).epsilon(1e-6));
  }
}


/// A Python list of a matrix's entries in column-major order.
std::string py_list(const Eigen::MatrixXd& M) {
  std::string s = "[";
  for (double v : M.reshaped()) s += fmt::format("{:.17g},", v);
  return s + "]";
}

}  // namespace

TEST_CASE("PReLU-BatchNorm MLP: parameter counts and the initial BatchNorm and γ values", "[nn][prelu_bn]") {
  // A⁰ (3·2), b⁰ (3), s⁰ (3), t⁰ (3), γ⁰ (3 or 1), A¹ (1·3), b¹ (1)
  CHECK(parameter_count(PreluBnMlp{{2, 3, 1}}) == 6 + 3 + 3 + 3 + 3 + 3 + 1);
  CHECK(parameter_count(PreluBnMlp{{2, 3, 1}, true}) == 6 + 3 + 3 + 3 + 1 + 3 + 1);
  const PreluBnMlp net{{2, 3, 1}};
  const Eigen::VectorXd theta = init_prelu_bn_mlp(net, 1, 2);
  CHECK(theta.segment(9, 3) == Eigen::VectorXd::Ones(3));   // BatchNorm1d weight
  CHECK(theta.segment(12, 3) == Eigen::VectorXd::Zero(3));  // BatchNorm1d bias
  CHECK(theta.segment(15, 3) == Eigen::VectorXd::Constant(3, 0.25));
  CHECK((theta.head(9).array().abs() <= 1 / std::sqrt(2.0)).all());
  CHECK_THROWS_AS(parameter_count(PreluBnMlp{{2, 0, 1}}), std::invalid_argument);
  CHECK_THROWS_AS(parameter_count(PreluBnMlp{{2, 3, 1}, false, 0.0}), std::invalid_argument);
}

TEST_CASE("PReLU-BatchNorm MLP gradients equal central finite differences in training mode", "[nn][prelu_bn]") {
  for (const bool shared : {false, true}) {
    CAPTURE(shared);
    const PreluBnMlp net{{3, 5, 4, 2}, shared};
    check_gradient(net, BnMode::train, init_bn_running(net));  // through μ and v of the batch
  }
}

TEST_CASE("PReLU-BatchNorm MLP gradients equal central finite differences in eval mode", "[nn][prelu_bn]") {
  const PreluBnMlp net{{3, 5, 4, 2}};
  BnRunning running = init_bn_running(net);
  running.mean[0] = normal_matrix(5, 1, 3).col(0), running.var[0] = normal_matrix(5, 1, 4).col(0).array().abs() + 0.5;
  running.mean[1] = normal_matrix(4, 1, 5).col(0), running.var[1] = normal_matrix(4, 1, 6).col(0).array().abs() + 0.5;
  check_gradient(net, BnMode::eval, running);
}

TEST_CASE("BatchNorm's running statistics move by torch's rule, with the unbiased batch variance", "[nn][prelu_bn]") {
  const PreluBnMlp net{{2, 3, 2, 1}};
  const Eigen::VectorXd theta = generic_theta(net);
  const Eigen::MatrixXd X = normal_matrix(2, 5, 8);
  BnRunning running = init_bn_running(net);
  const PreluBnForward f = prelu_bn_forward(net, theta, X, BnMode::train, running);
  update_bn_running(net, f, running);
  // Layer 0 by hand: z = A X + b, m = 0.9·0 + 0.1·mean(z), r = 0.9·1 + 0.1·Σ(z − z̄)²/(B − 1).
  const Eigen::Map<const Eigen::MatrixXd> A(theta.data(), 3, 2);
  const Eigen::MatrixXd z = (A * X).colwise() + theta.segment(6, 3);
  for (Eigen::Index i = 0; i < 3; ++i) {
    double mean = 0, ss = 0;
    for (Eigen::Index c = 0; c < 5; ++c) mean += z(i, c) / 5;
    for (Eigen::Index c = 0; c < 5; ++c) ss += (z(i, c) - mean) * (z(i, c) - mean);
    CHECK(running.mean[0](i) == Approx(0.1 * mean).epsilon(1e-13));
    CHECK(running.var[0](i) == Approx(0.9 + 0.1 * ss / 4).epsilon(1e-13));
    CHECK(f.var[0](i) == Approx(ss / 5).epsilon(1e-13));  // the forward pass normalised with the biased one
  }
  CHECK(running.batches == 1);
  update_bn_running(net, f, running);  // a second identical batch: m = 0.19 μ
  CHECK(running.mean[1](0) == Approx(0.19 * f.mean[1](0)).epsilon(1e-13));
  CHECK_THROWS_AS(prelu_bn_forward(net, theta, X.leftCols(1), BnMode::train, running), std::invalid_argument);  // torch refuses B = 1
}

TEST_CASE("Eval mode normalises with the running statistics, column by column", "[nn][prelu_bn]") {
  const PreluBnMlp net{{1, 2, 1}, true};
  // A⁰ = (1, −1)ᵀ, b⁰ = (0, 0.5), s = (2, 1), t = (0.1, 0), γ = 0.5, A¹ = (1, 3), b¹ = 0.25
  Eigen::VectorXd theta(parameter_count(net));
  theta << 1, -1, 0, 0.5, 2, 1, 0.1, 0, 0.5, 1, 3, 0.25;
  BnRunning running = init_bn_running(net);
  running.mean[0] << 1, -2;
  running.var[0] << 4, 0.25;
  const Eigen::MatrixXd X = (Eigen::MatrixXd(1, 2) << 2, -3).finished();
  const Eigen::MatrixXd out = prelu_bn_forward(net, theta, X, BnMode::eval, running).out;
  const auto by_hand = [&](double x) {
    const double u0 = 2 * (x - 1) / std::sqrt(4 + 1e-5) + 0.1, u1 = (-x + 0.5 + 2) / std::sqrt(0.25 + 1e-5);
    const auto prelu = [](double u) { return u < 0 ? 0.5 * u : u; };
    return prelu(u0) + 3 * prelu(u1) + 0.25;
  };
  CHECK(out(0, 0) == Approx(by_hand(2)).epsilon(1e-14));
  CHECK(out(0, 1) == Approx(by_hand(-3)).epsilon(1e-14));
  CHECK(prelu_bn_forward(net, theta, X.rightCols(1), BnMode::eval, running).out(0, 0) == out(0, 1));  // no batch coupling

  PreluBnModel model(net);
  model.running() = running;
  model.forward(theta, X);  // training mode: the running statistics move
  CHECK(model.running().batches == 1);
  model.eval();
  const BnRunning before = model.running();
  CHECK(model.forward(theta, X) == prelu_bn_forward(net, theta, X, BnMode::eval, before).out);
  CHECK(model.running().batches == 1);
  CHECK(model.predict(theta, X) == model.forward(theta, X));
}

TEST_CASE("PReLU-BatchNorm MLP agrees with torch (Linear, BatchNorm1d, PReLU) in float64", "[nn][prelu_bn]") {
  if (!python_has_torch()) {
    WARN("/usr/bin/python3 has no torch: skipping the comparison with torch.nn");
    return;
  }
  for (const bool shared : {false, true}) {
    CAPTURE(shared);
    const PreluBnMlp net{{4, 5, 3, 2}, shared};
    const Eigen::VectorXd theta = generic_theta(net);
    const Eigen::MatrixXd X = normal_matrix(4, 6, 21), G = normal_matrix(2, 6, 22), X2 = normal_matrix(4, 3, 23);
    const std::string script = fmt::format(R"(
import torch, torch.nn as nn
torch.set_default_dtype(torch.float64)
widths, shared = [4, 5, 3, 2], {}
theta = torch.tensor({})
def matrix(v, r, c): return torch.tensor(v).reshape(c, r).t()   # column-major r x c
layers = []
for j in range(len(widths) - 2):
    layers += [nn.Linear(widths[j], widths[j + 1]), nn.BatchNorm1d(widths[j + 1]), nn.PReLU(1 if shared else widths[j + 1])]
layers.append(nn.Linear(widths[-2], widths[-1]))
net = nn.Sequential(*layers)
at = 0
def take(n):
    global at
    at += n
    return theta[at - n:at]
with torch.no_grad():
    for m in net:
        if isinstance(m, nn.Linear):
            m.weight.copy_(take(m.in_features * m.out_features).reshape(m.in_features, m.out_features).t()); m.bias.copy_(take(m.out_features))
        elif isinstance(m, nn.BatchNorm1d):
            m.weight.copy_(take(m.num_features)); m.bias.copy_(take(m.num_features))
        else:
            m.weight.copy_(take(m.weight.numel()))
X, G, X2 = matrix({}, 4, 6), matrix({}, 2, 6), matrix({}, 4, 3)
out = net(X.t())
(out * G.t()).sum().backward()
nums = out.reshape(-1).tolist()   # row-major of B x d_out = column-major of d_out x B
for m in net:
    if isinstance(m, nn.Linear): nums += m.weight.grad.t().reshape(-1).tolist() + m.bias.grad.tolist()
    elif isinstance(m, nn.BatchNorm1d): nums += m.weight.grad.tolist() + m.bias.grad.tolist()
    else: nums += m.weight.grad.tolist()
for m in net:
    if isinstance(m, nn.BatchNorm1d): nums += m.running_mean.tolist() + m.running_var.tolist()
net.eval()
nums += net(X2.t()).reshape(-1).tolist()
print(' '.join(repr(v) for v in nums))
)",
                                           shared ? "True" : "False", py_list(theta), py_list(X), py_list(G), py_list(X2));
    const std::vector<double> ref = run_python_numbers(script, "prelu_bn");
    REQUIRE(ref.size() == std::size_t(12 + theta.size() + 2 * (5 + 3) + 6));
    PreluBnModel model(net);
    const Eigen::MatrixXd out = model.forward(theta, X);
    Eigen::VectorXd grad;
    model.backward(theta, G, grad);
    std::size_t at = 0;
    for (double v : out.reshaped()) CHECK(v == Approx(ref[at++]).margin(1e-12));
    for (double v : grad) CHECK(v == Approx(ref[at++]).margin(1e-11));
    for (std::size_t j = 0; j < 2; ++j) {
      for (double v : model.running().mean[j]) CHECK(v == Approx(ref[at++]).margin(1e-13));
      for (double v : model.running().var[j]) CHECK(v == Approx(ref[at++]).margin(1e-13));
    }
    model.eval();
    for (double v : model.forward(theta, X2).reshaped()) CHECK(v == Approx(ref[at++]).margin(1e-12));
  }
}
