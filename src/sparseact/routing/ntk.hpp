#pragma once
// The empirical NTK of a masked plain MLP (paper 002 §5.1.1, eqs. (9)–(11)): the Gram over M inputs as
// a matrix-free operator, and the two identities the paper builds on, checked numerically.
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/ops/khatri_rao_gram.hpp>
#include <sparseact/nn/plain_mlp.hpp>

namespace sparseact::routing {

/// The N_L M × N_L M Gram K[(i, p), (j, q)] = ∂a_{L,p}(x_i)/∂θ · ∂a_{L,q}(x_j)/∂θ over the columns of X0,
/// masks held constant (eq. (10)), as Σ_ℓ of eq. (11)'s W_ℓ blocks (and the bias blocks when the net has
/// biases). `masks`: m_1 … m_{L−1} for the columns of X0, or empty.
ops::KhatriRaoGramOp ntk_gram(const nn::PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0,
                              const std::vector<Eigen::MatrixXd>& masks = {});

/// Eq. (11) against eq. (10): per layer ℓ = 1 … L, the relative Frobenius error of the W_ℓ block
/// ⟨x_{ℓ−1}(i), x_{ℓ−1}(j)⟩ S_ℓ(i) S_ℓ(j)ᵀ against the same block summed from explicit Jacobian columns, and
/// of the form as printed, with a_{ℓ−1} (pre-activations; x_0 at ℓ = 1) in place of x_{ℓ−1} (ERRATA 002).
struct Eq11Errors {
  std::vector<double> with_x, printed;
};
Eq11Errors eq11_errors(const nn::PlainMlp& net, const Eigen::VectorXd& theta, const nn::PlainForward& fwd, Eigen::Index i,
                       Eigen::Index j, const std::vector<Eigen::MatrixXd>& masks = {});

/// Eq. (9) with a real GD step: θ′ = θ − α ∇_θ ½‖a_L(x_train) − y‖², Δa_L^test = a_L(x_test; θ′) − a_L(x_test; θ),
/// and the relative error ‖Δa_L^test/α + K(x_test, x_train) g‖ / ‖K(x_test, x_train) g‖, g = a_L(x_train) − y
/// (the minus sign of a descent step; ERRATA 002). Masks fixed (column 0: train, 1: test). Eq. (9) is a
/// limit: it holds to O(α) only while no kept ReLU unit changes sign in the step (a kink adds an error of
/// order one), so each step says whether one did. The error is NaN when K(x_test, x_train) g = 0.
/// printed_error is the same against eq. (9) as printed, without the minus sign: ‖Δa_L^test/α − K g‖ / ‖K g‖,
/// which tends to 2 (ERRATA 002).
struct Eq9Step {
  double alpha = 0, relative_error = 0;
  bool kink = false;
  double printed_error = 0;
};
std::vector<Eq9Step> eq9_steps(const nn::PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& train_test,
                               const std::vector<Eigen::MatrixXd>& masks, const Eigen::VectorXd& y, const std::vector<double>& alphas);

}  // namespace sparseact::routing
