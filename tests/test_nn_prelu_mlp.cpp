// The trainable-PReLU MLP of paper 003 eqs. (1)–(2) (nn/prelu_mlp): forward by hand, every gradient
// (γ included, per neuron and shared) against central finite differences, parameter counts as built.
#include <catch2/catch.hpp>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/prelu_mlp.hpp>

using namespace sparseact;
using namespace sparseact::nn;

TEST_CASE("PReLU MLP: counts, a forward pass by hand", "[nn][prelu]") {
  CHECK(parameter_count(PreluMlp{{2, 3, 1}}) == 3 * 2 + 3 + 3 + 1 * 3 + 1);
  CHECK(parameter_count(PreluMlp{{2, 3, 1}, true}) == 3 * 2 + 3 + 1 + 1 * 3 + 1);
  const PreluMlp net{{1, 2, 1}};
  REQUIRE(parameter_count(net) == 9);  // A⁰ (2), b⁰ (2), γ⁰ (2), A¹ (2), b¹ (1)
  Eigen::VectorXd t(9);
  t << 1, -1, 0, 0, 0.5, 0.1, 2, 3, 0.25;
  const PreluForward f = prelu_forward(net, t, Eigen::MatrixXd::Constant(1, 1, 2.0));
  // z = (2, −2), x = (2, −0.2), f = 2·2 + 3·(−0.2) + 0.25 = 3.65
  CHECK(f.z.back()(0, 0) == Approx(3.65).epsilon(1e-15));
}

TEST_CASE("PReLU MLP gradients equal central finite differences, per-neuron and shared γ", "[nn][prelu]") {
  for (const bool shared : {false, true}) {
    CAPTURE(shared);
    const PreluMlp net{{3, 5, 4, 2}, shared};
    const Eigen::VectorXd theta = init_prelu_mlp(net, 2, 3, 0.3);
    Rng rng(4, 4);
    Eigen::MatrixXd X(3, 6), G(2, 6);
    for (auto& v : X.reshaped()) v = rng.normal();
    for (auto& v : G.reshaped()) v = rng.normal();
    const Eigen::VectorXd grad = prelu_gradient(net, theta, prelu_forward(net, theta, X), G);
    const double h = 1e-6;
    for (Eigen::Index i = 0; i < theta.size(); ++i) {
      Eigen::VectorXd tp = theta, tm = theta;
      tp(i) += h, tm(i) -= h;
      const double fd = ((prelu_forward(net, tp, X).z.back().array() * G.array()).sum() - (prelu_forward(net, tm, X).z.back().array() * G.array()).sum()) / (2 * h);
      CHECK(grad(i) == Approx(fd).margin(1e-7));
    }
  }
}
