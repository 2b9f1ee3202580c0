#pragma once
// The spectrum of K Kᵀ for K ∈ R^{n×d} (paper 001 Theorems 5 and 6) without forming the n×n
// matrix: the nonzero eigenvalues of K Kᵀ are those of the smaller Gram matrix (KᵀK when n > d),
// and K Kᵀ has n − rank(K) zero eigenvalues. The Gram matrix is one BLAS syrk, its eigenvalues
// one LAPACK dsyevd (through LAPACKE).
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>

namespace sparseact::spectral {

struct Spectrum {
  Eigen::Index n = 0, d = 0;  ///< K is n×d; K Kᵀ is n×n
  Eigen::VectorXd gram;       ///< all min(n, d) eigenvalues of the smaller Gram matrix, ascending
  double rank_tol = 0;        ///< eigenvalues ≤ rank_tol count as zero
  Eigen::Index rank = 0;      ///< numerical rank of K

  /// Number of zero eigenvalues of K Kᵀ: n − rank.
  Eigen::Index zeros() const { return n - rank; }
  /// Fraction of zero eigenvalues of K Kᵀ (Theorem 5: 1 − d/n when n > d).
  double zero_fraction() const { return static_cast<double>(zeros()) / static_cast<double>(n); }
  /// The nonzero eigenvalues of K Kᵀ, ascending.
  Eigen::VectorXd nonzero() const { return gram.tail(rank); }
  double lambda_max() const { return gram(gram.size() - 1); }
  /// Smallest nonzero eigenvalue λ_min⁺ (λ_d when n > d, λ_n when d > n).
  double lambda_min_nonzero() const { return gram(gram.size() - rank); }
  /// λ_max / λ_min⁺ (Theorem 5).
  double ratio() const { return lambda_max() / lambda_min_nonzero(); }
  /// All n eigenvalues of K Kᵀ, ascending, with the zeros set to exactly 0.
  Eigen::VectorXd all_eigenvalues() const;
};

/// Theorem 5's zero fraction of K Kᵀ for K ∈ R^{n×d}: (n − d)/n when n > d, else 0 (the atom
/// 1 − 1/c of Marchenko–Pastur with c = n/d, as one division of integers).
double zero_fraction_limit(Eigen::Index n, Eigen::Index d);

/// Spectrum from the eigenvalues of the smaller Gram matrix, however they were computed (CPU or
/// GPU); decides the rank with the threshold max(n, d) · ε · λ_max.
Spectrum spectrum_from_gram(Eigen::Index n, Eigen::Index d, Eigen::VectorXd gram_eigenvalues);

/// Smaller Gram matrix: KᵀK (d×d) when n ≥ d, else K Kᵀ (n×n). Both triangles filled.
Eigen::MatrixXd small_gram(const Eigen::MatrixXd& K);

/// Spectrum of K Kᵀ on the CPU (syrk + dsyevd).
Spectrum kkt_spectrum(const Eigen::MatrixXd& K);

/// Spectra of a batch of same-shape matrices on `device`: the GPU computes the Gram matrices and
/// their eigenvalues (cuBLAS syrk + cuSOLVER syevd), the CPU the same with BLAS/LAPACK.
std::vector<Spectrum> kkt_spectra(const std::vector<Eigen::MatrixXd>& Ks, Device device);

/// All n eigenvalues of K Kᵀ from the n×n matrix itself, ascending: slow, for tests ("Gram vs direct").
Eigen::VectorXd kkt_eigenvalues_direct(const Eigen::MatrixXd& K);

/// Eigenvalues (ascending) of a symmetric matrix by LAPACK dsyevd; only the lower triangle is read.
Eigen::VectorXd symmetric_eigenvalues(Eigen::MatrixXd A);

struct ExtremeEigenvalues {
  Eigen::VectorXd largest;   ///< descending
  Eigen::VectorXd smallest;  ///< ascending
  Eigen::Index iterations = 0;
};

/// The `nev` largest and smallest eigenvalues of the smaller Gram matrix of K (the extreme nonzero
/// eigenvalues of K Kᵀ when K has full rank), without forming either Gram matrix: Spectra's
/// restarted Lanczos (core/estimators/lanczos.hpp) on ops::SmallGramOp, for sizes where even the
/// smaller Gram matrix is too large to form. Relative tolerance `tol`.
ExtremeEigenvalues kkt_extreme_eigenvalues(const Eigen::MatrixXd& K, int nev = 1, double tol = 1e-10);

}  // namespace sparseact::spectral
