#pragma once
// (I − QQᵀ) A (I − QQᵀ) as an operator, Q with orthonormal columns: A with the range of Q projected
// out on both sides. Hutch++ (Meyer, Musco, Musco & Woodruff 2021) estimates the trace of this
// deflated operator by Hutchinson after taking tr(QᵀAQ) exactly.
#include <Eigen/Core>

#include <sparseact/core/ops/apply.hpp>

namespace sparseact::ops {

/// Keeps references to `op` and `Q`, which must outlive it.
template <class Op>
class DeflatedOp {
 public:
  DeflatedOp(const Op& op, const Eigen::MatrixXd& Q) : op_(op), Q_(Q) {}
  Eigen::Index rows() const { return Q_.rows(); }
  Eigen::Index cols() const { return Q_.rows(); }

  /// Y = (I − QQᵀ) A (I − QQᵀ) X: one block product with A.
  void perform_op_block(const double* x, double* y, Eigen::Index ncols) const {
    Eigen::Map<const Eigen::MatrixXd> X(x, rows(), ncols);
    Eigen::Map<Eigen::MatrixXd> Yout(y, rows(), ncols);
    const Eigen::MatrixXd W = X - Q_ * (Q_.transpose() * X);
    Eigen::MatrixXd AW;
    apply(op_, W, AW);
    Yout = AW - Q_ * (Q_.transpose() * AW);
  }
  void perform_op(const double* x, double* y) const { perform_op_block(x, y, 1); }

 private:
  const Op& op_;
  const Eigen::MatrixXd& Q_;
};

}  // namespace sparseact::ops
