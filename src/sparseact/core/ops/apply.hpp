#pragma once
// The operator concept (docs/DESIGN.md, Operators and estimators): anything with rows(), cols() and
// perform_op(const double* x, double* y), y = A x — Spectra's MatOp (Spectra/MatOp/DenseSymMatProd.h).
// An operator may also offer
//     perform_op_block(const double* X, double* Y, Eigen::Index ncols),
// X and Y column-major rows()×ncols, Y = A X: a batch of vectors in one call (nn::HessianOperator runs
// the columns in parallel; a dense matrix does one GEMM). ops::apply uses it when present and falls
// back to column-by-column products otherwise, so an estimator is written once for both kinds.
#include <type_traits>
#include <utility>

#include <Eigen/Core>

namespace sparseact::ops {

/// True when Op has perform_op_block(const double*, double*, Eigen::Index) const.
template <class Op, class = void>
struct has_block_op : std::false_type {};
template <class Op>
struct has_block_op<Op, std::void_t<decltype(std::declval<const Op&>().perform_op_block(
                            std::declval<const double*>(), std::declval<double*>(), Eigen::Index{}))>>
    : std::true_type {};

/// Y = A X (Y is resized to rows() × X.cols()), through perform_op_block when the operator has it.
template <class Op>
void apply(const Op& op, const Eigen::MatrixXd& X, Eigen::MatrixXd& Y) {
  Y.resize(op.rows(), X.cols());
  if constexpr (has_block_op<Op>::value) {
    op.perform_op_block(X.data(), Y.data(), X.cols());
  } else {
    for (Eigen::Index j = 0; j < X.cols(); ++j) op.perform_op(X.col(j).data(), Y.col(j).data());
  }
}

}  // namespace sparseact::ops
