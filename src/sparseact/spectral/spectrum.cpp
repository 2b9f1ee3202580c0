#include <sparseact/spectral/spectrum.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <cblas.h>
#include <lapacke.h>
#include <fmt/format.h>

#include <sparseact/core/estimators/lanczos.hpp>
#include <sparseact/core/ops/gram.hpp>
#include <sparseact/cuda/gram_eigen.hpp>

namespace sparseact::spectral {

Eigen::VectorXd Spectrum::all_eigenvalues() const {
  Eigen::VectorXd all = Eigen::VectorXd::Zero(n);
  all.tail(rank) = nonzero();
  return all;
}

double zero_fraction_limit(Eigen::Index n, Eigen::Index d) {
  if (n < 1 || d < 1) throw std::invalid_argument("zero_fraction_limit: need n, d ≥ 1");
  return static_cast<double>(std::max<Eigen::Index>(n - d, 0)) / static_cast<double>(n);
}

Spectrum spectrum_from_gram(Eigen::Index n, Eigen::Index d, Eigen::VectorXd gram_eigenvalues) {
  if (gram_eigenvalues.size() != std::min(n, d))
    throw std::invalid_argument(fmt::format("spectrum_from_gram: {} eigenvalues for a {}x{} matrix", gram_eigenvalues.size(), n, d));
  Spectrum s;
  s.n = n;
  s.d = d;
  std::sort(gram_eigenvalues.data(), gram_eigenvalues.data() + gram_eigenvalues.size());
  s.gram = std::move(gram_eigenvalues);
  const double top = s.gram.size() ? std::max(0.0, s.gram(s.gram.size() - 1)) : 0.0;
  // The eigensolver's absolute error is O(ε λ_max) per eigenvalue; a zero of K Kᵀ computes as
  // such noise, so anything below max(n, d) ε λ_max is a zero (the convention of numpy's matrix_rank).
  s.rank_tol = static_cast<double>(std::max(n, d)) * std::numeric_limits<double>::epsilon() * top;
  s.rank = static_cast<Eigen::Index>((s.gram.array() > s.rank_tol).count());
  if (s.rank == 0) throw std::invalid_argument("spectrum: K is zero (no nonzero eigenvalue)");
  return s;
}

Eigen::MatrixXd small_gram_lower(const Eigen::MatrixXd& K) {
  const auto n = static_cast<int>(K.rows()), d = static_cast<int>(K.cols());
  const bool tall = n >= d;  // Gram of the columns (KᵀK) when K is tall
  const int m = tall ? d : n, k = tall ? n : d;
  Eigen::MatrixXd G(m, m);
  // Column-major K: KᵀK is syrk('T') with k = n; K Kᵀ is syrk('N') with k = d.
  cblas_dsyrk(CblasColMajor, CblasLower, tall ? CblasTrans : CblasNoTrans, m, k, 1.0, K.data(), n, 0.0, G.data(), m);
  return G;
}

Eigen::MatrixXd small_gram(const Eigen::MatrixXd& K) {
  Eigen::MatrixXd G = small_gram_lower(K);
  G.triangularView<Eigen::StrictlyUpper>() = G.transpose();
  return G;
}

Eigen::VectorXd symmetric_eigenvalues(Eigen::MatrixXd A, EigenSolver solver) {
  if (A.rows() != A.cols()) throw std::invalid_argument("symmetric_eigenvalues: matrix is not square");
  const auto m = static_cast<lapack_int>(A.rows());
  Eigen::VectorXd w(m);
  if (m == 0) return w;
  if (solver == EigenSolver::automatic) solver = m >= two_stage_from ? EigenSolver::two_stage : EigenSolver::one_stage;
  // Eigenvalues only: both drivers scale A if its norm is extreme, reduce it to tridiagonal form
  // and finish with dsterf. LAPACKE queries and allocates the workspace itself (a few µs).
  const lapack_int info = solver == EigenSolver::two_stage ? LAPACKE_dsyevd_2stage(LAPACK_COL_MAJOR, 'N', 'L', m, A.data(), m, w.data())
                                                           : LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'L', m, A.data(), m, w.data());
  if (info != 0)
    throw std::runtime_error(fmt::format("LAPACK {} failed (info = {})", solver == EigenSolver::two_stage ? "dsyevd_2stage" : "dsyevd", info));
  return w;
}

Spectrum kkt_spectrum(const Eigen::MatrixXd& K, EigenSolver solver) {
  if (K.size() == 0) throw std::invalid_argument("kkt_spectrum: K is empty");
  Eigen::MatrixXd G = small_gram_lower(K);
  // The Gram diagonal holds Σ K_ij² over each column (row) of K: a NaN or ±∞ entry of K makes its
  // diagonal entry NaN or +∞ whatever the summation order (the terms are ≥ 0), so a finite
  // diagonal certifies a finite K without another pass over the n·d entries. A non-finite diagonal
  // may also be overflow of a finite K: only then is K itself read.
  if (!G.diagonal().allFinite() && !K.allFinite()) throw std::invalid_argument("kkt_spectrum: K has non-finite entries");
  return spectrum_from_gram(K.rows(), K.cols(), symmetric_eigenvalues(std::move(G), solver));
}

std::vector<Spectrum> kkt_spectra(const std::vector<Eigen::MatrixXd>& Ks, Device device) {
  std::vector<Spectrum> out;
  if (device == Device::cuda) {
    auto eigs = cuda::gram_eigenvalues(Ks);
    for (std::size_t i = 0; i < Ks.size(); ++i) out.push_back(spectrum_from_gram(Ks[i].rows(), Ks[i].cols(), std::move(eigs[i])));
  } else {
    for (const auto& K : Ks) out.push_back(kkt_spectrum(K));
  }
  return out;
}

Eigen::VectorXd kkt_eigenvalues_direct(const Eigen::MatrixXd& K) {
  Eigen::MatrixXd KKt = K * K.transpose();
  return symmetric_eigenvalues(std::move(KKt));
}

ExtremeEigenvalues kkt_extreme_eigenvalues(const Eigen::MatrixXd& K, int nev, double tol) {
  const ops::SmallGramOp<Eigen::MatrixXd> op(K);
  ExtremeEigenvalues e;
  e.largest = estimators::lanczos_eigenvalues(op, nev, true, tol, &e.iterations);
  e.smallest = estimators::lanczos_eigenvalues(op, nev, false, tol, &e.iterations);
  return e;
}

}  // namespace sparseact::spectral
