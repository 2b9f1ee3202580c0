#pragma once
// Element-wise activation functions σ of the MLP blocks (paper 001 §3.1, eq. (4), §6), with their
// first and second derivatives, as needed by backprop (σ') and by exact Hessian-vector products
// (σ'').
//
//   ReLU(x)          = max(0, x)
//   GELU(x)          = x Φ(x),  Φ the standard normal CDF (the exact erf form, not the tanh one)
//   Squared-ReLU(x)  = max(0, x)²                                    (So et al. 2021)
//   J-SquaredReLU(x) = 0                       x < 0                 // paper 001, eq. (4)
//                      ½((x + 1)² − 1)         x ≥ 0
//   Weird-J-SquaredReLU(x) = −½((x + w_half − 1)² − 1)   x ≤ −w_half   // paper 001, §6
//                            0                           −w_half < x < w_half
//                            ½((x − w_half + 1)² − 1)    x ≥ w_half
//
// Shifts (§6): every activation is used as σ(x − Δx) + Δy; (Δx, Δy) = (0, 0) is the plain one. The
// paper shifts only Weird-J-SquaredReLU, by (Δx, Δy) ∈ {±1.6}², with w_half = 1.5.
//
// Conventions at kinks (the derivatives there are one-sided; we pick the side the definition's case
// split puts the point in, and say so):
//   ReLU'(0) = 0, ReLU''(x) = 0 everywhere.
//   Squared-ReLU'(0) = 0, Squared-ReLU''(0) = 0 (2 for x > 0).
//   J-SquaredReLU: eq. (4) puts x = 0 in the branch x ≥ 0, so J'(0) = 1 and J''(0) = 1 — the
//     paper's "½ calibrates the derivative at x = 0 to 1". J' jumps 0 → 1 at 0.
//   Weird-J-SquaredReLU: x = ±w_half belong to the outer branches, so W'(±w_half) = 1,
//     W''(−w_half) = −1, W''(w_half) = +1; W'' = 0 on the open flat area. W is odd, increasing,
//     continuous, with W' jumping 0 → 1 at ±w_half.
// The second derivatives are those of the pieces: the Dirac masses of σ'' at jumps of σ' are
// dropped, as every autodiff framework does; exact Hessians agree with finite differences away
// from kinks.
#include <string>

#include <Eigen/Core>

namespace sparseact::nn {

enum class ActivationKind { relu, gelu, squared_relu, j_squared_relu, weird_j_squared_relu };

struct Activation {
  ActivationKind kind = ActivationKind::relu;
  double w_half = 1.5;  ///< half width of Weird-J-SquaredReLU's flat area (§6); > 0
  double dx = 0.0;      ///< horizontal shift Δx: σ(x − Δx) + Δy
  double dy = 0.0;      ///< vertical shift Δy
};

double activation_value(const Activation& act, double x);
double activation_derivative(const Activation& act, double x);
double activation_second_derivative(const Activation& act, double x);

/// Element-wise on a matrix of pre-activations P: any of the outputs may be null.
/// A = σ(P), D1 = σ'(P), D2 = σ''(P), each resized to P's shape.
void apply_activation(const Activation& act, const Eigen::MatrixXd& P, Eigen::MatrixXd* A, Eigen::MatrixXd* D1,
                      Eigen::MatrixXd* D2);

/// True where x (after the shift Δx) sits on a kink, i.e. where σ' jumps or σ'' does.
bool at_kink(const Activation& act, double x, double tol = 0.0);

/// "relu" | "gelu" | "squared_relu" | "j_squared_relu" | "weird_j_squared_relu"
ActivationKind parse_activation(const std::string& name);
const char* to_string(ActivationKind kind) noexcept;

}  // namespace sparseact::nn
