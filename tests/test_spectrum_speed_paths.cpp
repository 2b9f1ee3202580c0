// The spectral topic's fast paths (issue 15) against the paths they replace: the two-stage
// eigensolver against dsyevd and against squared singular values from Eigen's JacobiSVD, the
// lower-triangle Gram against the mirrored one, the shared Cholesky factor and the shared ReLU
// readout against the one-call forms, and the symmetric Tracy–Widom kernel against evaluating every
// entry.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Dense>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/special_functions/airy.hpp>

#include <lapacke.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/spectral/init.hpp>
#include <sparseact/spectral/projection_bound.hpp>
#include <sparseact/spectral/spectrum.hpp>
#include <sparseact/spectral/tracy_widom.hpp>

using namespace sparseact;
using namespace sparseact::spectral;

namespace {

/// max_i |a_i − b_i| / |b_i|.
double max_rel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  REQUIRE(a.size() == b.size());
  return ((a - b).cwiseAbs().array() / b.cwiseAbs().array()).maxCoeff();
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::equal(a.data(), a.data() + a.size(), b.data(), [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; });
}

/// F₁(s) with every kernel entry evaluated (tracy_widom.cpp before the symmetric kernel).
double tw1_cdf_full_kernel(double s) {
  const double L = std::max(2.0, 14.0 - s);
  using gauss = boost::math::quadrature::gauss<double, 60>;
  std::vector<double> t, w;
  for (std::size_t i = 0; i < gauss::abscissa().size(); ++i) {
    t.push_back(gauss::abscissa()[i]);
    w.push_back(gauss::weights()[i]);
    if (gauss::abscissa()[i] != 0) t.push_back(-gauss::abscissa()[i]), w.push_back(gauss::weights()[i]);
  }
  const auto m = static_cast<Eigen::Index>(t.size());
  Eigen::VectorXd x(m), sw(m);
  for (Eigen::Index i = 0; i < m; ++i) x(i) = 0.5 * L * (t[i] + 1.0), sw(i) = std::sqrt(0.5 * L * w[i]);
  Eigen::MatrixXd A(m, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = 0; i < m; ++i) A(i, j) = (i == j) - sw(i) * boost::math::airy_ai(x(i) + x(j) + s) * sw(j);
  return std::clamp(A.partialPivLu().determinant(), 0.0, 1.0);
}

}  // namespace

TEST_CASE("two-stage eigenvalues equal dsyevd's within 1e-12 relative, and JacobiSVD's squared singular values",
          "[spectral][speed_paths]") {
  // Small: both solvers against an independent method (one-sided Jacobi SVD of K itself, no Gram).
  for (auto [n, d] : {std::pair{160, 40}, std::pair{40, 160}, std::pair{300, 100}}) {
    const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::normal, 11);
    const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(K).singularValues().reverse();  // ascending
    const Eigen::VectorXd svd2 = sv.cwiseAbs2();
    const Spectrum one = kkt_spectrum(K, EigenSolver::one_stage), two = kkt_spectrum(K, EigenSolver::two_stage);
    CHECK(max_rel(one.gram, svd2) < 1e-12);
    CHECK(max_rel(two.gram, svd2) < 1e-12);
    CHECK(max_rel(two.gram, one.gram) < 1e-12);
    CHECK(one.rank == two.rank);
  }
  // At a size where `automatic` picks the two-stage solver (m ≥ two_stage_from): against the
  // one-stage path that kkt_spectrum used before.
  const Eigen::MatrixXd K = init_weights(3 * two_stage_from, two_stage_from, Init::xavier, Distribution::normal, 12);
  const Spectrum before = kkt_spectrum(K, EigenSolver::one_stage), now = kkt_spectrum(K);
  CHECK(max_rel(now.gram, before.gram) < 1e-12);
  CHECK(now.rank == before.rank);
  CHECK(now.rank_tol == Approx(before.rank_tol).epsilon(1e-12));
  // Below the threshold `automatic` is dsyevd itself: the same bits.
  const Eigen::MatrixXd Ks = init_weights(400, 120, Init::xavier, Distribution::normal, 13);
  CHECK(same_bits(kkt_spectrum(Ks).gram, kkt_spectrum(Ks, EigenSolver::one_stage).gram));
}

TEST_CASE("the staged two-stage solver is LAPACK's dsyevd_2stage bit for bit with serial BLAS, scaling included",
          "[spectral][speed_paths]") {
  // symmetric_eigenvalues(two_stage) calls dsyevd_2stage's steps itself so that the bulge chasing
  // runs serial; with BLAS serial throughout, nothing else may differ from the driver.
  const ScopedBlasThreads serial(1);
  const Eigen::MatrixXd K = init_weights(700, 300, Init::xavier, Distribution::normal, 21);
  const Eigen::MatrixXd G = small_gram(K);
  // 1e-170 and 1e170 take the driver's scaling branches (entries below √(safmin/ε) or above its inverse).
  for (double scale : {1.0, 1e-170, 1e170}) {
    Eigen::MatrixXd A = G * scale, B = A;
    Eigen::VectorXd lapack(A.rows());
    REQUIRE(LAPACKE_dsyevd_2stage(LAPACK_COL_MAJOR, 'N', 'L', static_cast<lapack_int>(B.rows()), B.data(),
                                  static_cast<lapack_int>(B.rows()), lapack.data()) == 0);
    const Eigen::VectorXd ours = symmetric_eigenvalues(A, EigenSolver::two_stage);
    CHECK(same_bits(ours, lapack));
    CHECK(ours.maxCoeff() > 0);
  }
  // A NaN or ∞ in the lower triangle is refused (LAPACK's driver returned info = −5 for a NaN).
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Eigen::MatrixXd B = G;
    B(5, 2) = bad;
    CHECK_THROWS_AS(symmetric_eigenvalues(B, EigenSolver::two_stage), std::invalid_argument);
  }
  // A 1×1 and a tridiagonal-already matrix (kd ≥ m − 1) go through the same steps.
  Eigen::MatrixXd one(1, 1);
  one << 3.5;
  CHECK(symmetric_eigenvalues(one, EigenSolver::two_stage)(0) == 3.5);
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(5, 5);
  for (int i = 0; i < 5; ++i) T(i, i) = 2;
  for (int i = 0; i < 4; ++i) T(i + 1, i) = -1;  // lower triangle only is read
  const Eigen::VectorXd t = symmetric_eigenvalues(T, EigenSolver::two_stage);
  for (int k = 1; k <= 5; ++k) CHECK(t(k - 1) == Approx(2 - 2 * std::cos(k * M_PI / 6)).epsilon(1e-14));
}

TEST_CASE("lower-triangle Gram, finite check on its diagonal, and the spectrum from a shared Gram", "[spectral][speed_paths]") {
  for (auto [n, d] : {std::pair{90, 30}, std::pair{30, 90}}) {
    const Eigen::MatrixXd K = init_weights(n, d, Init::kaiming, Distribution::uniform, 3);
    const Eigen::MatrixXd full = small_gram(K), lower = small_gram_lower(K);
    const Eigen::MatrixXd full_lower = full.triangularView<Eigen::Lower>(), lower_lower = lower.triangularView<Eigen::Lower>();
    CHECK(same_bits(full_lower, lower_lower));
    // What mp_spectrum's trial 0 computes from the Gram it shares with Theorem 6: kkt_spectrum's bits.
    const Spectrum shared = spectrum_from_gram(n, d, symmetric_eigenvalues(small_gram_lower(K)));
    const Spectrum direct = kkt_spectrum(K);
    CHECK(same_bits(shared.gram, direct.gram));
    CHECK(shared.rank == direct.rank);
    // A NaN or ∞ anywhere in K is still refused.
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()}) {
      Eigen::MatrixXd Kb = K;
      Kb(n / 2, d / 3) = bad;
      CHECK_THROWS_AS(kkt_spectrum(Kb), std::invalid_argument);
    }
  }
}

TEST_CASE("shared Cholesky factor and shared ReLU readout give the one-call numbers bit for bit", "[spectral][speed_paths]") {
  const Eigen::Index n = 240, d = 60, samples = 17;
  const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::normal, 21);
  const Eigen::MatrixXd V = relu_readout(n, d, 21, 5);
  int asked = 0;
  const Eigen::MatrixXd eta = sample_eta(K, EtaSource::relu_gradient, samples, 21, 5);
  const Eigen::MatrixXd eta_shared = sample_eta(K, EtaSource::relu_gradient, samples, 21, 5, [&]() -> const Eigen::MatrixXd& {
    ++asked;
    return V;
  });
  CHECK(asked == 1);
  CHECK(same_bits(eta, eta_shared));
  CHECK(same_bits(sample_eta(K, EtaSource::gaussian, samples, 21, 4),
                  sample_eta(K, EtaSource::gaussian, samples, 21, 4, [&]() -> const Eigen::MatrixXd& { return V; })));

  const ColumnSpace P = column_space(n, d, small_gram_lower(K));
  REQUIRE(P.full_rank);
  const ProjectionTerms one = projection_terms(K, eta), shared = projection_terms(K, P, eta);
  const Eigen::MatrixXd eta2 = sample_eta(K, EtaSource::gaussian, samples, 21, 4);
  const ProjectionTerms one2 = projection_terms(K, eta2), shared2 = projection_terms(K, P, eta2);
  CHECK(same_bits(one.quadratic, shared.quadratic));
  CHECK(same_bits(one.projected, shared.projected));
  CHECK(same_bits(one.norm2, shared.norm2));
  CHECK(same_bits(one2.projected, shared2.projected));

  // A K whose Gram has an exact zero pivot (a zero column): the factor says so instead of throwing;
  // using it throws as before. (A numerically rank-deficient K can still factor; mp_spectrum decides
  // with the spectrum's rank, as before.)
  Eigen::MatrixXd Kr = K;
  Kr.col(7).setZero();
  const ColumnSpace Pr = column_space(Kr);
  CHECK_FALSE(Pr.full_rank);
  CHECK_THROWS_AS(projection_terms(Kr, Pr, eta), std::runtime_error);
  CHECK_THROWS_AS(projection_terms(Kr, eta), std::runtime_error);
  // Wide K: P = I, nothing to factor.
  const Eigen::MatrixXd Kw = init_weights(30, 90, Init::xavier, Distribution::normal, 22);
  const Eigen::MatrixXd etaw = sample_eta(Kw, EtaSource::gaussian, 5, 22, 1);
  CHECK(same_bits(projection_terms(Kw, etaw).projected, projection_terms(Kw, column_space(Kw), etaw).norm2));
}

TEST_CASE("Tracy–Widom F1 from the symmetric kernel equals the full-kernel evaluation", "[spectral][speed_paths][tw]") {
  // The library's determinant goes through LAPACK (EIGEN_USE_LAPACKE), this one through Eigen's own
  // LU, so the two agree to rounding of the determinant, not bit for bit; the kernel matrices themselves
  // are the same bits by construction (same arguments, same product order).
  for (double s : {-6.0, -3.5, -1.2065, 0.0, 1.5, 4.0}) CHECK(std::abs(tracy_widom1_cdf(s) - tw1_cdf_full_kernel(s)) < 1e-14);
}
