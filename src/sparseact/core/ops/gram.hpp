#pragma once
// K Kᵀ (or KᵀK) as an operator (core/ops/apply.hpp): y = K(Kᵀx) costs two matrix–vector products
// and never forms the n×n matrix (paper 001 Theorems 5–6: the nonzero eigenvalues of K Kᵀ are those
// of the smaller Gram matrix).
#include <Eigen/Core>

namespace sparseact::ops {

/// The smaller Gram matrix of K as an operator: KᵀK (d×d) when n ≥ d, else K Kᵀ (n×n). Its
/// eigenvalues are the nonzero eigenvalues of K Kᵀ (plus zeros when K is rank-deficient).
/// Keeps a reference to K, which must outlive it.
template <class Matrix = Eigen::MatrixXd>
class SmallGramOp {
 public:
  using Scalar = typename Matrix::Scalar;  // Spectra's MatOp asks for it

  explicit SmallGramOp(const Matrix& K) : K_(K), tall_(K.rows() >= K.cols()), tmp_(tall_ ? K.rows() : K.cols()) {}

  Eigen::Index rows() const { return tall_ ? K_.cols() : K_.rows(); }
  Eigen::Index cols() const { return rows(); }

  /// y = KᵀK x (tall) or K Kᵀ x (wide); x and y hold rows() entries. Not thread-safe (one scratch vector).
  void perform_op(const Scalar* x_in, Scalar* y_out) const {
    Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>> x(x_in, rows());
    Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>> y(y_out, rows());
    if (tall_) {
      tmp_.noalias() = K_ * x;
      y.noalias() = K_.transpose() * tmp_;
    } else {
      tmp_.noalias() = K_.transpose() * x;
      y.noalias() = K_ * tmp_;
    }
  }

  /// Y = KᵀK X (or K Kᵀ X) for ncols columns: two matrix–matrix products.
  void perform_op_block(const Scalar* x_in, Scalar* y_out, Eigen::Index ncols) const {
    using Block = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
    Eigen::Map<const Block> X(x_in, rows(), ncols);
    Eigen::Map<Block> Y(y_out, rows(), ncols);
    if (tall_) {
      const Block T = K_ * X;
      Y.noalias() = K_.transpose() * T;
    } else {
      const Block T = K_.transpose() * X;
      Y.noalias() = K_ * T;
    }
  }

 private:
  const Matrix& K_;
  bool tall_;
  mutable Eigen::Matrix<Scalar, Eigen::Dynamic, 1> tmp_;
};

}  // namespace sparseact::ops
