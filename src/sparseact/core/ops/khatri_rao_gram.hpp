#pragma once
// The Gram matrix J Jᵀ of a Jacobian whose rows are Kronecker products, as an operator (core/ops/apply.hpp).
// A layered network's output a_L(x_i) ∈ R^P depends on W_ℓ through ∂a_{L,p}/∂W_ℓ = S_ℓ(i)[p, :] ⊗ x_{ℓ−1}(i)
// (S_ℓ = ∂a_L/∂a_ℓ, paper 002 eq. (11)), so the empirical NTK Gram over M inputs,
//
//   K[(i, p), (j, q)] = Σ_ℓ ⟨x_{ℓ−1}(i), x_{ℓ−1}(j)⟩ ⟨S_ℓ(i)[p, :], S_ℓ(j)[q, :]⟩,     (MP × MP)
//
// is a sum over layers of Hadamard products of two Grams (G_ℓ ⊗ 1_{P×P}) ∘ (R_ℓ R_ℓᵀ), R_ℓ stacking the
// S_ℓ(i). Its product with v costs O(Σ_ℓ M P N_ℓ + M² N_ℓ) and never forms J (M P × Σ N_ℓ N_{ℓ−1}):
//
//   u_j = S_ℓ(j)ᵀ v_j  (N_ℓ),   Y = U G_ℓ,   (K v)_i += S_ℓ(i) y_i.
//
// A bias b_ℓ adds ⟨S_ℓ(i)[p, :], S_ℓ(j)[q, :]⟩: a factor with x ≡ 1 (G = 1 1ᵀ).
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

namespace sparseact::ops {

/// One factor: S (M·P × N, the rows of input i at i·P … i·P + P − 1) and X (n × M, the inputs x(i)
/// whose Gram weights it). Empty X means x ≡ 1 (a bias).
struct KroneckerRows {
  Eigen::MatrixXd S;
  Eigen::MatrixXd X;
};

class KhatriRaoGramOp {
 public:
  using Scalar = double;

  /// P outputs per input; every factor's S has M·P rows. Throws std::invalid_argument on shapes that disagree.
  KhatriRaoGramOp(std::vector<KroneckerRows> factors, Eigen::Index outputs) : f_(std::move(factors)), P_(outputs) {
    if (f_.empty() || P_ < 1) throw std::invalid_argument("KhatriRaoGramOp: need a factor and at least one output");
    M_ = f_.front().S.rows() / P_;
    for (const KroneckerRows& f : f_) {
      if (f.S.rows() != M_ * P_ || (f.X.size() > 0 && f.X.cols() != M_))
        throw std::invalid_argument("KhatriRaoGramOp: factors disagree on the number of inputs");
      G_.push_back(f.X.size() > 0 ? Eigen::MatrixXd(f.X.transpose() * f.X) : Eigen::MatrixXd::Ones(M_, M_));
    }
  }

  Eigen::Index rows() const { return M_ * P_; }
  Eigen::Index cols() const { return rows(); }
  Eigen::Index inputs() const { return M_; }

  void perform_op(const double* x_in, double* y_out) const { perform_op_block(x_in, y_out, 1); }

  /// Y = K X for ncols columns.
  void perform_op_block(const double* x_in, double* y_out, Eigen::Index ncols) const {
    const Eigen::Map<const Eigen::MatrixXd> X(x_in, rows(), ncols);
    Eigen::Map<Eigen::MatrixXd> Y(y_out, rows(), ncols);
    Y.setZero();
    for (std::size_t l = 0; l < f_.size(); ++l) {
      const Eigen::MatrixXd& S = f_[l].S;
      const Eigen::Index N = S.cols();
      for (Eigen::Index c = 0; c < ncols; ++c) {
        Eigen::MatrixXd U(N, M_);
        for (Eigen::Index j = 0; j < M_; ++j) U.col(j).noalias() = S.middleRows(j * P_, P_).transpose() * X.col(c).segment(j * P_, P_);
        const Eigen::MatrixXd Z = U * G_[l];
        for (Eigen::Index i = 0; i < M_; ++i) Y.col(c).segment(i * P_, P_).noalias() += S.middleRows(i * P_, P_) * Z.col(i);
      }
    }
  }

  /// tr K = Σ_ℓ Σ_i G_ℓ(i, i) ‖S_ℓ(i)‖²_F, exactly.
  double trace() const {
    double t = 0;
    for (std::size_t l = 0; l < f_.size(); ++l)
      for (Eigen::Index i = 0; i < M_; ++i) t += G_[l](i, i) * f_[l].S.middleRows(i * P_, P_).squaredNorm();
    return t;
  }

  /// K as a dense MP × MP matrix (for small M·P and tests): Σ_ℓ (G_ℓ ⊗ 1) ∘ R_ℓ R_ℓᵀ.
  Eigen::MatrixXd dense() const {
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(rows(), rows());
    for (std::size_t l = 0; l < f_.size(); ++l) {
      const Eigen::MatrixXd RR = f_[l].S * f_[l].S.transpose();
      for (Eigen::Index i = 0; i < M_; ++i)
        for (Eigen::Index j = 0; j < M_; ++j) K.block(i * P_, j * P_, P_, P_) += G_[l](i, j) * RR.block(i * P_, j * P_, P_, P_);
    }
    return K;
  }

 private:
  std::vector<KroneckerRows> f_;
  Eigen::Index P_ = 1, M_ = 0;
  std::vector<Eigen::MatrixXd> G_;
};

}  // namespace sparseact::ops
