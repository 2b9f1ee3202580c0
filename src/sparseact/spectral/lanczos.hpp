#pragma once
// Extreme eigenvalues of a symmetric operator by Spectra's implicitly restarted Lanczos
// (SymEigsSolver): for K Kᵀ at sizes where even the smaller Gram matrix is too large to form.
// The operator is any Spectra MatOp (rows(), cols(), perform_op).
#include <stdexcept>
#include <string>

#include <Eigen/Core>
#include <Spectra/SymEigsSolver.h>

#include <sparseact/spectral/gram_operator.hpp>

namespace sparseact::spectral {

struct ExtremeEigenvalues {
  Eigen::VectorXd largest;   ///< descending
  Eigen::VectorXd smallest;  ///< ascending
  Eigen::Index iterations = 0;
};

/// The `nev` largest (or smallest) eigenvalues of a symmetric operator, to relative tolerance `tol`.
template <class Op>
Eigen::VectorXd lanczos_eigenvalues(Op& op, int nev, bool largest, double tol = 1e-10, Eigen::Index* iterations = nullptr) {
  const auto m = op.rows();
  if (nev < 1 || nev >= m) throw std::invalid_argument("lanczos_eigenvalues: need 1 <= nev < size of the operator");
  const int ncv = static_cast<int>(std::min<Eigen::Index>(m, std::max(2 * nev + 1, 20)));
  Spectra::SymEigsSolver<Op> solver(op, nev, ncv);
  solver.init();
  solver.compute(largest ? Spectra::SortRule::LargestAlge : Spectra::SortRule::SmallestAlge, 5000, tol,
                 largest ? Spectra::SortRule::LargestAlge : Spectra::SortRule::SmallestAlge);
  if (solver.info() != Spectra::CompInfo::Successful)
    throw std::runtime_error("Lanczos (Spectra SymEigsSolver) did not converge");
  if (iterations) *iterations += solver.num_iterations();
  return solver.eigenvalues();
}

/// Largest and smallest eigenvalues of the smaller Gram matrix of K (the extreme nonzero
/// eigenvalues of K Kᵀ when K has full rank), without forming either Gram matrix.
inline ExtremeEigenvalues kkt_extreme_eigenvalues(const Eigen::MatrixXd& K, int nev = 1, double tol = 1e-10) {
  SmallGramOp<Eigen::MatrixXd> op(K);
  ExtremeEigenvalues e;
  e.largest = lanczos_eigenvalues(op, nev, true, tol, &e.iterations);
  e.smallest = lanczos_eigenvalues(op, nev, false, tol, &e.iterations);
  return e;
}

}  // namespace sparseact::spectral
