// nn/activation: values from the paper's definitions, derivatives against central differences.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <sparseact/nn/activation.hpp>

using namespace sparseact::nn;

namespace {

std::vector<Activation> all_activations() {
  std::vector<Activation> acts;
  for (auto k : {ActivationKind::relu, ActivationKind::gelu, ActivationKind::squared_relu,
                 ActivationKind::j_squared_relu, ActivationKind::weird_j_squared_relu})
    acts.push_back(Activation{k, 1.5, 0.0, 0.0});
  for (double dx : {-1.6, 1.6})
    for (double dy : {-1.6, 1.6}) acts.push_back(Activation{ActivationKind::weird_j_squared_relu, 1.5, dx, dy});
  acts.push_back(Activation{ActivationKind::weird_j_squared_relu, 0.3, 0.2, -0.1});
  return acts;
}

}  // namespace

TEST_CASE("activation values follow the paper's definitions", "[nn]") {
  const Activation relu{ActivationKind::relu}, sq{ActivationKind::squared_relu}, j{ActivationKind::j_squared_relu},
      gelu{ActivationKind::gelu};
  CHECK(activation_value(relu, -2.0) == 0.0);
  CHECK(activation_value(relu, 3.0) == 3.0);
  CHECK(activation_derivative(relu, 0.0) == 0.0);  // convention ReLU'(0) = 0
  CHECK(activation_value(sq, 3.0) == 9.0);
  // paper 001, eq. (4): ½((x+1)² − 1); derivative calibrated to 1 at 0
  CHECK(activation_value(j, 2.0) == Approx(0.5 * (9.0 - 1.0)));
  CHECK(activation_value(j, -0.5) == 0.0);
  CHECK(activation_value(j, 0.0) == 0.0);
  CHECK(activation_derivative(j, 0.0) == 1.0);
  CHECK(activation_derivative(j, -1e-12) == 0.0);
  CHECK(activation_value(gelu, 1.0) == Approx(0.8413447460685429).epsilon(1e-14));
  // §6: Weird-J-SquaredReLU, w_half = 1.5: flat on (−1.5, 1.5), odd, continuous, W'(±w_half) = 1
  const Activation w{ActivationKind::weird_j_squared_relu, 1.5, 0.0, 0.0};
  CHECK(activation_value(w, 1.0) == 0.0);
  CHECK(activation_value(w, -1.4) == 0.0);
  CHECK(activation_value(w, 1.5) == 0.0);
  CHECK(activation_value(w, -1.5) == 0.0);
  CHECK(activation_value(w, 2.5) == Approx(0.5 * (4.0 - 1.0)));
  CHECK(activation_value(w, -2.5) == Approx(-0.5 * (4.0 - 1.0)));
  CHECK(activation_derivative(w, 1.5) == 1.0);
  CHECK(activation_derivative(w, -1.5) == 1.0);
  CHECK(activation_second_derivative(w, -2.0) == -1.0);
  // shifted: W(x − Δx) + Δy; the flat area is [Δx − w_half, Δx + w_half] × {Δy}
  const Activation ws{ActivationKind::weird_j_squared_relu, 1.5, 1.6, -1.6};
  CHECK(activation_value(ws, 1.6 + 1.4) == -1.6);
  CHECK(activation_value(ws, 1.6 - 1.4) == -1.6);
  CHECK(activation_value(ws, 1.6 + 2.5) == Approx(0.5 * 3.0 - 1.6));
  CHECK(at_kink(ws, 3.1));
  CHECK(parse_activation("j_squared_relu") == ActivationKind::j_squared_relu);
  CHECK_THROWS(parse_activation("tanh"));
}

TEST_CASE("activation derivatives match central differences away from kinks", "[nn]") {
  const double h = 1e-6;
  for (const Activation& a : all_activations()) {
    INFO(to_string(a.kind) << " dx=" << a.dx << " dy=" << a.dy << " w_half=" << a.w_half);
    for (double x = -4.0; x <= 4.0; x += 0.0137) {
      if (at_kink(a, x, 2 * h)) continue;
      const double fd1 = (activation_value(a, x + h) - activation_value(a, x - h)) / (2 * h);
      const double fd2 = (activation_derivative(a, x + h) - activation_derivative(a, x - h)) / (2 * h);
      CHECK(activation_derivative(a, x) == Approx(fd1).margin(1e-8).epsilon(1e-7));
      CHECK(activation_second_derivative(a, x) == Approx(fd2).margin(1e-8).epsilon(1e-7));
    }
    // the batched form agrees with the scalar one
    Eigen::MatrixXd P(2, 3);
    P << -2.7, -0.3, 0.0, 0.4, 1.9, 3.3;
    Eigen::MatrixXd A, D1, D2;
    apply_activation(a, P, &A, &D1, &D2);
    for (Eigen::Index i = 0; i < P.size(); ++i) {
      CHECK(A.data()[i] == activation_value(a, P.data()[i]));
      CHECK(D1.data()[i] == activation_derivative(a, P.data()[i]));
      CHECK(D2.data()[i] == activation_second_derivative(a, P.data()[i]));
    }
  }
}
