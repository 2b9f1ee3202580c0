#pragma once
// K Kᵀ (or KᵀK) as an operator in Spectra's MatOp sense (DESIGN.md, Operators): y = K(Kᵀx) costs
// two matrix–vector products and never forms the n×n matrix.
#include <Eigen/Core>

namespace sparseact::spectral {

/// The smaller Gram matrix of K as an operator: KᵀK (d×d) when n ≥ d, else K Kᵀ (n×n). Its
/// eigenvalues are the nonzero eigenvalues of K Kᵀ (plus zeros when K is rank-deficient).
template <class Matrix = Eigen::MatrixXd>
class SmallGramOp {
 public:
  using Scalar = typename Matrix::Scalar;

  explicit SmallGramOp(const Matrix& K) : K_(K), tall_(K.rows() >= K.cols()), tmp_(tall_ ? K.rows() : K.cols()) {}

  Eigen::Index rows() const { return tall_ ? K_.cols() : K_.rows(); }
  Eigen::Index cols() const { return rows(); }

  /// y = KᵀK x (tall) or K Kᵀ x (wide); x and y hold rows() entries.
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

 private:
  const Matrix& K_;
  bool tall_;
  mutable Eigen::Matrix<Scalar, Eigen::Dynamic, 1> tmp_;
};

}  // namespace sparseact::spectral
