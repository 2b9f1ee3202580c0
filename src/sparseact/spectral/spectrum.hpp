#pragma once
// The spectrum of K Kᵀ for K ∈ R^{n×d} (paper 001 Theorems 5 and 6) without forming the n×n
// matrix: the nonzero eigenvalues of K Kᵀ are those of the smaller Gram matrix (KᵀK when n > d),
// and K Kᵀ has n − rank(K) zero eigenvalues. The Gram matrix is one BLAS syrk (half the work of
// the GEMM numpy's K.T @ K would be without its syrk special case; only the lower triangle is
// written and read), its eigenvalues one LAPACK eigenvalue-only driver (through LAPACKE):
// dsyevd below two_stage_from, dsyevd_2stage from there on (see EigenSolver).
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

/// How the eigenvalues of a symmetric matrix are computed (eigenvalues only; both end in dsterf).
///  one_stage: dsyevd, i.e. dsytrd's direct tridiagonal reduction, half of whose flops are
///             memory-bound dsymv.
///  two_stage: dsyevd_2stage's steps: dense → band by level-3 BLAS (dsytrd_sy2sb, on BLAS's
///             threads), band → tridiagonal by bulge chasing (dsytrd_sb2st, always on one BLAS
///             thread: threaded, its small reflections cost 2.8× more at m = 2048), then dsterf.
///             Measured on 2-core EPYC / OpenBLAS 0.3.21 against dsyevd: one BLAS thread 1.0× at
///             m = 768, 1.36× at 1024, 1.57× at 1536, 1.6× at 2048; two threads 0.97× at 1024,
///             1.2× at 1536, 1.37× at 2048 (LAPACK's own dsyevd_2stage on two threads: 0.88×).
///             With serial BLAS its eigenvalues are dsyevd_2stage's bit for bit.
///  automatic: two_stage from m ≥ two_stage_from, one_stage below.
/// The two agree to a few ulps of λ_max (≤ 1e-13 relative per eigenvalue on Gram matrices of
/// condition ≤ 10; tests/test_spectrum_speed_paths.cpp pins 1e-12).
enum class EigenSolver { automatic, one_stage, two_stage };
inline constexpr Eigen::Index two_stage_from = 1024;

/// Theorem 5's zero fraction of K Kᵀ for K ∈ R^{n×d}: (n − d)/n when n > d, else 0 (the atom
/// 1 − 1/c of Marchenko–Pastur with c = n/d, as one division of integers).
double zero_fraction_limit(Eigen::Index n, Eigen::Index d);

/// Spectrum from the eigenvalues of the smaller Gram matrix, however they were computed (CPU or
/// GPU); decides the rank with the threshold max(n, d) · ε · λ_max.
Spectrum spectrum_from_gram(Eigen::Index n, Eigen::Index d, Eigen::VectorXd gram_eigenvalues);

/// Smaller Gram matrix: KᵀK (d×d) when n ≥ d, else K Kᵀ (n×n). Both triangles filled.
Eigen::MatrixXd small_gram(const Eigen::MatrixXd& K);

/// The same Gram matrix with only its lower triangle (diagonal included) written, bit for bit the
/// lower triangle of small_gram(K); the strict upper triangle is left unset. For consumers that read
/// the lower triangle only (symmetric_eigenvalues, Eigen::LLT): saves the mirror pass.
Eigen::MatrixXd small_gram_lower(const Eigen::MatrixXd& K);

/// Spectrum of K Kᵀ on the CPU (syrk + dsyevd or dsyevd_2stage by size, see EigenSolver).
Spectrum kkt_spectrum(const Eigen::MatrixXd& K, EigenSolver solver = EigenSolver::automatic);

/// Spectra of a batch of same-shape matrices on `device`: the GPU computes the Gram matrices and
/// their eigenvalues (cuBLAS syrk + cuSOLVER syevd), the CPU the same with BLAS/LAPACK.
std::vector<Spectrum> kkt_spectra(const std::vector<Eigen::MatrixXd>& Ks, Device device);

/// All n eigenvalues of K Kᵀ from the n×n matrix itself, ascending: slow, for tests ("Gram vs direct").
Eigen::VectorXd kkt_eigenvalues_direct(const Eigen::MatrixXd& K);

/// Eigenvalues (ascending) of a symmetric matrix by LAPACK (dsyevd or dsyevd_2stage, see
/// EigenSolver); only the lower triangle is read, and A is overwritten (pass it by move).
Eigen::VectorXd symmetric_eigenvalues(Eigen::MatrixXd A, EigenSolver solver = EigenSolver::automatic);

/// The stages of the two-stage solver, timed (benchmarks: where the time goes, bench/spectrum_stages).
struct TwoStageSeconds {
  int kd = 0;               ///< the band width used
  double band = 0;          ///< dense → band, dsytrd_sy2sb (level-3 BLAS, BLAS's threads)
  double tridiagonal = 0;   ///< band → tridiagonal, dsytrd_sb2st (bulge chasing, one thread)
  double dsterf = 0;        ///< the tridiagonal eigenvalues
};

/// symmetric_eigenvalues' two-stage path with its stages timed, at band width `kd` (0: LAPACK's ilaenv2stage, what
/// kkt_spectrum uses). Only the lower triangle of A is read. Another kd changes the rounding, not the eigenvalues
/// beyond it (≤ 1e-12 relative to λ_max on the tests' matrices).
Eigen::VectorXd two_stage_eigenvalues_timed(Eigen::MatrixXd A, int kd, TwoStageSeconds& seconds);

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
