#pragma once
// The top-k eigenvalues (and eigenvectors) of a symmetric operator by Spectra's implicitly restarted
// Lanczos (SymEigsSolver, through estimators/lanczos.hpp), e.g. the sharpest directions of a network's
// loss surface, H_θ u = λ u, from Hessian-vector products alone (nn::HessianOperator): what
// PyHessian and hessian-eigenthings report next to the trace and the spectral density. Each
// restart costs up to ncv products; the Krylov basis is ncv vectors, not the whole matrix.
#include <Eigen/Core>

#include <sparseact/core/estimators/lanczos.hpp>

namespace sparseact::estimators {

struct TopEigenOptions {
  bool by_magnitude = false;         ///< largest |λ| (PyHessian's power iteration) instead of largest λ
  double tol = 1e-10;                ///< Spectra's relative tolerance on each Ritz value
  bool vectors = false;              ///< also return the eigenvectors
  Eigen::Index ncv = 0;              ///< Krylov dimension; ≤ 0: min(n, max(2k + 1, 20))
  Eigen::Index max_iterations = 5000;
};

struct TopEigen {
  Eigen::VectorXd values;   ///< k eigenvalues, largest first (by value, or by magnitude)
  Eigen::MatrixXd vectors;  ///< n×k unit eigenvectors, when asked
  Eigen::Index iterations = 0;  ///< Spectra's restarts
  Eigen::Index matvecs = 0;     ///< products with the operator
};

/// The k largest eigenvalues of a symmetric operator (1 ≤ k < rows()); throws std::runtime_error when
/// Spectra does not converge within max_iterations restarts.
template <class Op>
TopEigen top_eigenvalues(const Op& op, Eigen::Index k, const TopEigenOptions& opt = {}) {
  const SpectraEigen e =
      detail::spectra_eigs(op, k, opt.by_magnitude ? Spectra::SortRule::LargestMagn : Spectra::SortRule::LargestAlge,
                           opt.tol, opt.vectors, opt.ncv, opt.max_iterations);
  return {e.values, e.vectors, e.iterations, e.matvecs};
}

}  // namespace sparseact::estimators
