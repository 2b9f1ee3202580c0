#include <sparseact/nn/activation.hpp>

#include <cmath>
#include <stdexcept>

namespace sparseact::nn {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

struct Derivs {
  double f, d1, d2;
};

// The unshifted σ and its derivatives at t = x − Δx.
Derivs eval(const Activation& act, double t) {
  switch (act.kind) {
    case ActivationKind::relu:
      return t > 0.0 ? Derivs{t, 1.0, 0.0} : Derivs{0.0, 0.0, 0.0};
    case ActivationKind::gelu: {
      const double Phi = 0.5 * std::erfc(-t * kInvSqrt2);
      const double phi = kInvSqrt2Pi * std::exp(-0.5 * t * t);
      // (xΦ)' = Φ + xφ;  (xΦ)'' = 2φ + xφ' = φ(2 − x²)
      return {t * Phi, Phi + t * phi, phi * (2.0 - t * t)};
    }
    case ActivationKind::squared_relu:
      return t > 0.0 ? Derivs{t * t, 2.0 * t, 2.0} : Derivs{0.0, 0.0, 0.0};
    case ActivationKind::j_squared_relu:
      // paper 001, eq. (4): ½((x+1)² − 1) = x²/2 + x for x ≥ 0
      return t >= 0.0 ? Derivs{0.5 * ((t + 1.0) * (t + 1.0) - 1.0), t + 1.0, 1.0} : Derivs{0.0, 0.0, 0.0};
    case ActivationKind::weird_j_squared_relu: {
      const double w = act.w_half;  // paper 001, §6
      if (t >= w) {
        const double u = t - w + 1.0;
        return {0.5 * (u * u - 1.0), u, 1.0};
      }
      if (t <= -w) {
        const double u = t + w - 1.0;
        return {-0.5 * (u * u - 1.0), -u, -1.0};
      }
      return {0.0, 0.0, 0.0};
    }
  }
  throw std::invalid_argument("nn: unknown activation");
}

}  // namespace

double activation_value(const Activation& act, double x) { return eval(act, x - act.dx).f + act.dy; }
double activation_derivative(const Activation& act, double x) { return eval(act, x - act.dx).d1; }
double activation_second_derivative(const Activation& act, double x) { return eval(act, x - act.dx).d2; }

void apply_activation(const Activation& act, const Eigen::MatrixXd& P, Eigen::MatrixXd* A, Eigen::MatrixXd* D1,
                      Eigen::MatrixXd* D2) {
  if (act.kind == ActivationKind::weird_j_squared_relu && !(act.w_half > 0.0))
    throw std::invalid_argument("nn: Weird-J-SquaredReLU needs w_half > 0");
  if (A) A->resize(P.rows(), P.cols());
  if (D1) D1->resize(P.rows(), P.cols());
  if (D2) D2->resize(P.rows(), P.cols());
  const Eigen::Index n = P.size();
  for (Eigen::Index i = 0; i < n; ++i) {
    const Derivs r = eval(act, P.data()[i] - act.dx);
    if (A) A->data()[i] = r.f + act.dy;
    if (D1) D1->data()[i] = r.d1;
    if (D2) D2->data()[i] = r.d2;
  }
}

bool at_kink(const Activation& act, double x, double tol) {
  const double t = x - act.dx;
  switch (act.kind) {
    case ActivationKind::gelu:
      return false;
    case ActivationKind::relu:
    case ActivationKind::squared_relu:
    case ActivationKind::j_squared_relu:
      return std::abs(t) <= tol;
    case ActivationKind::weird_j_squared_relu:
      return std::abs(t - act.w_half) <= tol || std::abs(t + act.w_half) <= tol;
  }
  return false;
}

ActivationKind parse_activation(const std::string& name) {
  if (name == "relu") return ActivationKind::relu;
  if (name == "gelu") return ActivationKind::gelu;
  if (name == "squared_relu") return ActivationKind::squared_relu;
  if (name == "j_squared_relu") return ActivationKind::j_squared_relu;
  if (name == "weird_j_squared_relu") return ActivationKind::weird_j_squared_relu;
  throw std::invalid_argument("nn: unknown activation '" + name +
                              "' (relu|gelu|squared_relu|j_squared_relu|weird_j_squared_relu)");
}

const char* to_string(ActivationKind kind) noexcept {
  switch (kind) {
    case ActivationKind::relu: return "relu";
    case ActivationKind::gelu: return "gelu";
    case ActivationKind::squared_relu: return "squared_relu";
    case ActivationKind::j_squared_relu: return "j_squared_relu";
    case ActivationKind::weird_j_squared_relu: return "weird_j_squared_relu";
  }
  return "?";
}

}  // namespace sparseact::nn
