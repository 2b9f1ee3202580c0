// Paper 002's plain masked MLP (eqs. (1)–(2), (7)–(8)): the forward pass by hand, gradients against
// central finite differences with the masks held constant, and masked units receiving no gradient.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/plain_mlp.hpp>
#include <sparseact/routing/comet.hpp>

using namespace sparseact;
using namespace sparseact::nn;

namespace {
double loss(const PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y,
            const std::vector<Eigen::MatrixXd>& masks) {
  return 0.5 * (plain_forward(net, theta, X, masks).a.back() - Y).squaredNorm();
}
}  // namespace

TEST_CASE("Plain MLP forward pass by hand, with a mask on the hidden layer", "[nn][plain_mlp]") {
  const PlainMlp net{{2, 2, 1}, PlainActivation::relu, true};
  REQUIRE(parameter_count(net) == 4 + 2 + 2 + 1);
  Eigen::VectorXd theta(9);
  theta << 1, -1, 2, 1,  // W_1 column-major: [[1, 2], [−1, 1]]
      0.5, -0.5,         // b_1
      3, -2,             // W_2
      0.25;              // b_2
  const Eigen::Vector2d x(1, 2);
  // a_1 = (1 + 4 + 0.5, −1 + 2 − 0.5) = (5.5, 0.5); x_1 = relu(a_1) = (5.5, 0.5); a_2 = 16.5 − 1 + 0.25.
  CHECK(plain_forward(net, theta, x).a.back()(0) == Approx(15.75));
  // Mask out unit 1: x_1 = (0, 0.5) → a_2 = −1 + 0.25.
  const std::vector<Eigen::MatrixXd> m = {Eigen::Vector2d(0, 1)};
  CHECK(plain_forward(net, theta, x, m).a.back()(0) == Approx(-0.75));
}

TEST_CASE("Plain MLP gradients equal central finite differences, masks held constant", "[nn][plain_mlp]") {
  for (PlainActivation f : {PlainActivation::tanh, PlainActivation::identity})
    for (bool biases : {true, false}) {
      const PlainMlp net{{3, 6, 5, 2}, f, biases};
      const Eigen::VectorXd theta = init_plain_mlp(net, 9, 1);
      Eigen::MatrixXd X(3, 4), Y(2, 4);
      Rng rng(2, 3);
      for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = rng.normal();
      for (Eigen::Index i = 0; i < Y.size(); ++i) Y.data()[i] = rng.normal();
      const auto masks = routing::comet_masks(routing::make_comet_router(net.widths, 0.5, 4, 5), X);
      const PlainForward fwd = plain_forward(net, theta, X, masks);
      const Eigen::VectorXd g = plain_gradient(net, theta, fwd, fwd.a.back() - Y, masks);
      const double h = 1e-6;
      for (Eigen::Index p = 0; p < theta.size(); ++p) {
        Eigen::VectorXd up = theta, down = theta;
        up(p) += h, down(p) -= h;
        const double fd = (loss(net, up, X, Y, masks) - loss(net, down, X, Y, masks)) / (2 * h);
        INFO("parameter " << p << ", biases " << biases);
        CHECK(g(p) == Approx(fd).epsilon(1e-6).margin(1e-8));
      }
    }
}

TEST_CASE("A unit masked for every input gets no gradient in its incoming weights", "[nn][plain_mlp]") {
  const PlainMlp net{{4, 5, 3}, PlainActivation::relu, true};
  const Eigen::VectorXd theta = init_plain_mlp(net, 1, 2);
  Eigen::MatrixXd X(4, 6);
  Rng rng(7, 7);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = rng.normal();
  Eigen::MatrixXd m = Eigen::MatrixXd::Ones(5, 6);
  m.row(2).setZero();
  const std::vector<Eigen::MatrixXd> masks = {m};
  const PlainForward fwd = plain_forward(net, theta, X, masks);
  const Eigen::VectorXd g = plain_gradient(net, theta, fwd, Eigen::MatrixXd::Ones(3, 6), masks);
  const Eigen::Map<const Eigen::MatrixXd> gW1(g.data(), 5, 4);
  CHECK(gW1.row(2).norm() == 0.0);
  CHECK(g(20 + 2) == 0.0);  // b_1 of unit 2
  CHECK(gW1.norm() > 0.0);
  CHECK_THROWS_AS(plain_forward(net, theta, Eigen::MatrixXd::Zero(3, 2)), std::invalid_argument);
  CHECK_THROWS_AS(plain_forward(net, theta, X, {Eigen::MatrixXd::Ones(4, 6)}), std::invalid_argument);
  CHECK(parse_plain_activation("tanh") == PlainActivation::tanh);
  CHECK_THROWS_AS(parse_plain_activation("gelu"), std::invalid_argument);
}

TEST_CASE("Plain MLP Jacobian equals finite differences, and the NTK's eq. (11) blocks sum to J Jᵀ", "[nn][plain_mlp][ntk]") {
  for (bool biases : {true, false}) {
    const PlainMlp net{{3, 7, 6, 2}, PlainActivation::tanh, biases};
    const Eigen::VectorXd theta = init_plain_mlp(net, 4, 4);
    Eigen::MatrixXd X(3, 3);
    Rng rng(6, 1);
    for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = rng.normal();
    const auto masks = routing::comet_masks(routing::make_comet_router(net.widths, 0.5, 1, 2), X);
    const PlainForward fwd = plain_forward(net, theta, X, masks);
    const Eigen::MatrixXd J0 = plain_jacobian(net, theta, fwd, 0, masks), J2 = plain_jacobian(net, theta, fwd, 2, masks);
    const double h = 1e-6;
    for (Eigen::Index p = 0; p < theta.size(); ++p) {
      Eigen::VectorXd up = theta, down = theta;
      up(p) += h, down(p) -= h;
      const Eigen::VectorXd fd = (plain_forward(net, up, X, masks).a.back().col(0) - plain_forward(net, down, X, masks).a.back().col(0)) / (2 * h);
      INFO("parameter " << p);
      CHECK((J0.col(p) - fd).norm() <= 1e-7 * std::max(1.0, fd.norm()));
    }
    // Eq. (10) from the explicit Jacobians against eq. (11)'s blocks, to rounding.
    std::vector<Eigen::MatrixXd> blocks;
    const Eigen::MatrixXd K = plain_ntk(net, theta, fwd, 0, 2, masks, &blocks);
    const Eigen::MatrixXd direct = J0 * J2.transpose();
    CHECK((K - direct).norm() <= 1e-12 * direct.norm());
    REQUIRE(blocks.size() == 3);
    // The W_ℓ block alone: the Jacobian's columns of W_ℓ.
    Eigen::Index at = 0;
    for (std::size_t l = 1; l <= 3; ++l) {
      const Eigen::Index n = Eigen::Index(net.widths[l]) * net.widths[l - 1];
      const Eigen::MatrixXd Wblock = J0.middleCols(at, n) * J2.middleCols(at, n).transpose();
      CHECK((blocks[l - 1] - Wblock).norm() <= 1e-12 * std::max(1e-300, Wblock.norm()));
      at += n + (biases ? net.widths[l] : 0);
    }
  }
}
