#include <sparseact/spectral/spectrum.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

#include <cblas.h>
#include <lapacke.h>
#include <fmt/format.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/estimators/lanczos.hpp>
#include <sparseact/core/ops/gram.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/cuda/gram_eigen.hpp>

// The two stages of LAPACK's dsytrd_2stage, exported by every LAPACK since 3.7 but absent from
// lapack.h (gfortran ABI: the lengths of character arguments follow as size_t).
extern "C" {
void dsytrd_sy2sb_(const char* uplo, const lapack_int* n, const lapack_int* kd, double* A, const lapack_int* lda, double* AB,
                   const lapack_int* ldab, double* tau, double* work, const lapack_int* lwork, lapack_int* info, std::size_t);
void dsytrd_sb2st_(const char* stage1, const char* vect, const char* uplo, const lapack_int* n, const lapack_int* kd, double* AB,
                   const lapack_int* ldab, double* D, double* E, double* hous, const lapack_int* lhous, double* work,
                   const lapack_int* lwork, lapack_int* info, std::size_t, std::size_t, std::size_t);
lapack_int ilaenv2stage_(const lapack_int* ispec, const char* name, const char* opts, const lapack_int* n1, const lapack_int* n2,
                         const lapack_int* n3, const lapack_int* n4, std::size_t, std::size_t);
}

namespace sparseact::spectral {

namespace {

void check_info(const char* routine, lapack_int info) {
  if (info != 0) throw std::runtime_error(fmt::format("LAPACK {} failed (info = {})", routine, info));
}

/// Workspace size from a LAPACK query's work[0].
lapack_int query_size(double w) { return std::max<lapack_int>(1, static_cast<lapack_int>(w)); }

/// dsyevd_2stage('N', 'L') step by step, so that each stage runs on the threads it can use: the
/// dense → band reduction (dsytrd_sy2sb) is level-3 BLAS and scales with BLAS's threads; the bulge
/// chasing (dsytrd_sb2st) is a long sequence of reflections of width kd whose BLAS calls, threaded,
/// only pay hand-offs (m = 2048 on 2-core EPYC / OpenBLAS 0.3.21: 0.105 s serial, 0.295 s on two
/// threads, which made dsyevd_2stage slower on two threads than on one), so it runs serial; dsterf
/// is serial in any case. Same calls, arguments and band width kd as LAPACK's own driver, so with
/// serial BLAS the eigenvalues are dsyevd_2stage's bit for bit (tests/test_spectrum_speed_paths.cpp).
Eigen::VectorXd two_stage_eigenvalues(Eigen::MatrixXd& A, lapack_int kd_wanted = 0, TwoStageSeconds* seconds = nullptr) {
  using clock = std::chrono::steady_clock;
  const auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  auto t0 = clock::now();
  const auto m = static_cast<lapack_int>(A.rows());
  Eigen::VectorXd w(m);
  // dsyevd_2stage scales a matrix whose largest entry is near under- or overflow into
  // [√(safmin/ε), √(ε/safmin)] and scales the eigenvalues back.
  const double smlnum = LAPACKE_dlamch('S') / LAPACKE_dlamch('P');
  const double rmin = std::sqrt(smlnum), rmax = std::sqrt(1 / smlnum);
  const double anrm = LAPACKE_dlansy(LAPACK_COL_MAJOR, 'M', 'L', m, A.data(), m);  // −5 when LAPACKE finds a NaN
  if (!std::isfinite(anrm) || anrm < 0) throw std::invalid_argument("symmetric_eigenvalues: the matrix has NaN or infinite entries");
  double sigma = 1;
  if (anrm > 0 && anrm < rmin) sigma = rmin / anrm;
  else if (anrm > rmax) sigma = rmax / anrm;
  if (sigma != 1) check_info("dlascl", LAPACKE_dlascl(LAPACK_COL_MAJOR, 'L', 0, 0, 1.0, sigma, m, m, A.data(), m));

  const lapack_int one = 1, none = -1, query = -1;
  const lapack_int kd = kd_wanted > 0 ? std::min<lapack_int>(kd_wanted, std::max<lapack_int>(1, m - 1))
                                       : ilaenv2stage_(&one, "DSYTRD_2STAGE", "N", &m, &none, &none, &none, 13, 1);
  const lapack_int ldab = kd + 1;
  Eigen::VectorXd AB(static_cast<Eigen::Index>(ldab) * m), tau(std::max<lapack_int>(1, m - kd)), E(std::max<lapack_int>(1, m - 1));
  lapack_int info = 0;
  double size = 0;
  dsytrd_sy2sb_("L", &m, &kd, A.data(), &m, AB.data(), &ldab, tau.data(), &size, &query, &info, 1);
  check_info("dsytrd_sy2sb", info);
  const lapack_int lwork = query_size(size);
  Eigen::VectorXd work(lwork);
  dsytrd_sy2sb_("L", &m, &kd, A.data(), &m, AB.data(), &ldab, tau.data(), work.data(), &lwork, &info, 1);
  check_info("dsytrd_sy2sb", info);
  if (seconds) seconds->kd = kd, seconds->band = since(t0), t0 = clock::now();
  {
    const ScopedBlasThreads serial(1);
    double hous_size = 0, work_size = 0;
    dsytrd_sb2st_("Y", "N", "L", &m, &kd, AB.data(), &ldab, w.data(), E.data(), &hous_size, &query, &work_size, &query, &info, 1, 1, 1);
    check_info("dsytrd_sb2st", info);
    const lapack_int lhous = query_size(hous_size), lwork2 = query_size(work_size);
    Eigen::VectorXd hous(lhous), work2(lwork2);
    dsytrd_sb2st_("Y", "N", "L", &m, &kd, AB.data(), &ldab, w.data(), E.data(), hous.data(), &lhous, work2.data(), &lwork2, &info, 1, 1, 1);
    check_info("dsytrd_sb2st", info);
  }
  if (seconds) seconds->tridiagonal = since(t0), t0 = clock::now();
  check_info("dsterf", LAPACKE_dsterf(m, w.data(), E.data()));
  if (sigma != 1) w *= 1 / sigma;  // dscal by 1/σ, as the driver does
  if (seconds) seconds->dsterf = since(t0);
  return w;
}

}  // namespace

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
  if (solver == EigenSolver::two_stage) return two_stage_eigenvalues(A);
  // Eigenvalues only: dsyevd scales A if its norm is extreme, reduces it to tridiagonal form and
  // finishes with dsterf. LAPACKE queries and allocates the workspace itself (a few µs).
  check_info("dsyevd", LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'L', m, A.data(), m, w.data()));
  return w;
}

namespace {

/// The GPU's CPU twin (core/twin.hpp): the run's smallest K is solved again on the CPU once the work is
/// done; every eigenvalue of its Gram matrix must lie within 1e-10 · λ_max of the GPU's.
void offer_twin(const std::vector<Eigen::MatrixXd>& Ks, const std::vector<Spectrum>& gpu) {
  const auto cost = [](const Eigen::MatrixXd& K) {  // ~ the Gram product and the eigensolve
    const double lo = double(std::min(K.rows(), K.cols())), hi = double(std::max(K.rows(), K.cols()));
    return lo * lo * (hi + lo);
  };
  std::size_t t = 0;
  for (std::size_t i = 1; i < Ks.size(); ++i)
    if (cost(Ks[i]) < cost(Ks[t])) t = i;
  constexpr const char* path = "spectral.kkt_spectra";
  if (!twin::wants(path, cost(Ks[t]))) return;
  twin::offer(path, cost(Ks[t]), [K = Ks[t], g = gpu[t].gram, t, batch = Ks.size()] {
    const Spectrum cpu = kkt_spectrum(K);
    const double scale = std::max(std::abs(cpu.lambda_max()), std::numeric_limits<double>::min());
    const double error = g.size() == cpu.gram.size() ? twin::max_abs_difference(g.data(), cpu.gram.data(), std::size_t(cpu.gram.size())) / scale
                                                     : std::numeric_limits<double>::infinity();
    return twin::Agreement{.path = path,
                           .slice = fmt::format("the run's smallest matrix ({} × {}, matrix {} of a batch of {}): all {} eigenvalues of its "
                                                "Gram matrix, max |Δλ| / λ_max",
                                                K.rows(), K.cols(), t, batch, cpu.gram.size()),
                           .rule = twin::Rule::relative,
                           .error = error,
                           .tolerance = 1e-10};
  });
}

}  // namespace

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
    if (!Ks.empty()) offer_twin(Ks, out);
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

Eigen::VectorXd two_stage_eigenvalues_timed(Eigen::MatrixXd A, int kd, TwoStageSeconds& seconds) {
  if (A.rows() != A.cols() || A.rows() < 2) throw std::invalid_argument("two_stage_eigenvalues_timed: need a square matrix of order ≥ 2");
  if (kd < 0) throw std::invalid_argument("two_stage_eigenvalues_timed: kd must be ≥ 0 (0: LAPACK's choice)");
  return two_stage_eigenvalues(A, static_cast<lapack_int>(kd), &seconds);
}

}  // namespace sparseact::spectral
