// Spectral topic against independent ground truth: closed-form moments of the Marchenko–Pastur
// law, known Tracy–Widom constants, Gram vs direct eigenvalues, Lanczos vs dense, explicit SVD
// projections, and the Tracy–Widom interval's coverage in simulation.
#include <catch2/catch.hpp>

#include <cmath>
#include <omp.h>

#include <Eigen/Dense>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>

#include <sparseact/core/rng.hpp>
#include <sparseact/spectral/esd.hpp>
#include <sparseact/spectral/init.hpp>
#include <sparseact/spectral/marchenko_pastur.hpp>
#include <sparseact/spectral/projection_bound.hpp>
#include <sparseact/spectral/spectrum.hpp>
#include <sparseact/spectral/tracy_widom.hpp>

using namespace sparseact;
using namespace sparseact::spectral;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
// ∫ g(x) f(x) dx over the continuous part by tanh-sinh, which handles the √ endpoints directly: a
// different rule and variable than the library's Gauss–Kronrod in θ.
template <class G>
double integrate_density(const MarchenkoPastur& law, G g) {
  boost::math::quadrature::tanh_sinh<double> ts;
  return ts.integrate([&](double x) { return g(x) * law.density(x); }, law.a(), law.b());
}
}  // namespace

TEST_CASE("Marchenko–Pastur law: mass, mean 1 and variance c in the paper's normalization", "[spectral][mp]") {
  for (double c : {0.1, 0.25, 0.5, 0.9, 1.5, 4.0, 10.0}) {
    CAPTURE(c);
    const MarchenkoPastur law(c);
    const double continuous = integrate_density(law, [](double) { return 1.0; });
    CHECK_THAT(law.atom() + continuous, WithinAbs(1.0, 1e-9));
    CHECK_THAT(law.atom(), WithinAbs(c > 1 ? 1 - 1 / c : 0.0, 1e-15));
    // Moments of the full law (the atom at 0 contributes nothing to k ≥ 1).
    const double mean = integrate_density(law, [](double x) { return x; });
    const double second = integrate_density(law, [](double x) { return x * x; });
    CHECK_THAT(mean, WithinAbs(1.0, 1e-9));
    CHECK_THAT(second - mean * mean, WithinAbs(c, 1e-9));
    CHECK_THAT(law.mean(), WithinAbs(1.0, 1e-12));
    CHECK_THAT(law.variance(), WithinAbs(c, 1e-12));
    // Narayana closed form vs quadrature for higher moments: E λ³ = 1 + 3c + c².
    const double third = integrate_density(law, [](double x) { return x * x * x; });
    CHECK_THAT(third, WithinRel(1 + 3 * c + c * c, 1e-9));
    CHECK_THAT(law.moment(3), WithinRel(1 + 3 * c + c * c, 1e-12));
    CHECK_THAT(integrate_density(law, [](double x) { return std::pow(x, 4); }), WithinRel(law.moment(4), 1e-9));
    CHECK_THAT(law.a(), WithinAbs((1 - std::sqrt(c)) * (1 - std::sqrt(c)), 1e-14));
    CHECK_THAT(law.b(), WithinAbs((1 + std::sqrt(c)) * (1 + std::sqrt(c)), 1e-14));
  }
}

TEST_CASE("Marchenko–Pastur CDF and quantiles agree with the density", "[spectral][mp]") {
  for (double c : {0.25, 4.0}) {
    const MarchenkoPastur law(c, 2.5);  // with a scale σ²
    CHECK(law.cdf(-1) == 0.0);
    CHECK_THAT(law.cdf(law.b() + 1), WithinAbs(1.0, 1e-15));
    CHECK_THAT(law.cdf(law.a() * 0.5 + 1e-300), WithinAbs(law.atom(), 1e-15));
    for (double x : {0.2, 0.5, 0.8}) {
      const double at = law.a() + x * (law.b() - law.a());
      boost::math::quadrature::tanh_sinh<double> ts;
      const double direct = law.atom() + ts.integrate([&](double t) { return law.density(t); }, law.a(), at);
      CHECK_THAT(law.cdf(at), WithinAbs(direct, 1e-10));
      CHECK_THAT(law.quantile(law.cdf(at)), WithinRel(at, 1e-9));
    }
    CHECK(law.quantile(law.atom() * 0.5) == (c > 1 ? 0.0 : law.a()));
  }
  CHECK_THROWS_AS(MarchenkoPastur(0.0), std::invalid_argument);
  CHECK_THROWS_AS(MarchenkoPastur(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(MarchenkoPastur(1.0).quantile(1.5), std::invalid_argument);
}

TEST_CASE("Paper 001's numbers: n = 3072, d = 768 gives the bound 9 and zero fraction 3/4", "[spectral][paper]") {
  const double c = 3072.0 / 768.0;
  CHECK_THAT(ratio_limit(c), WithinAbs(9.0, 1e-12));
  CHECK_THAT(ratio_limit(1 / c), WithinAbs(9.0, 1e-12));  // c ↔ 1/c (ERRATA 001, Theorem 1)
  CHECK_THAT(MarchenkoPastur(c).atom(), WithinAbs(0.75, 1e-15));
  CHECK(std::isinf(ratio_limit(1.0)));
}

TEST_CASE("Tracy–Widom F1 reproduces its known mean and variance", "[spectral][tw]") {
  // Bornemann (2010): E TW₁ = −1.2065335745820, Var TW₁ = 1.6077810345810.
  using gk = boost::math::quadrature::gauss_kronrod<double, 61>;
  auto tail = [](double s) { return s > 0 ? 1 - tracy_widom1_cdf(s) : -tracy_widom1_cdf(s); };
  const double mean = gk::integrate(tail, -12.0, 0.0, 8, 1e-12) + gk::integrate(tail, 0.0, 10.0, 8, 1e-12);
  auto tail2 = [&](double s) { return 2 * s * tail(s); };
  const double second = gk::integrate(tail2, -12.0, 0.0, 8, 1e-12) + gk::integrate(tail2, 0.0, 10.0, 8, 1e-12);
  CHECK_THAT(mean, WithinAbs(-1.2065335745820, 1e-8));
  CHECK_THAT(second - mean * mean, WithinAbs(1.6077810345810, 1e-7));
  CHECK_THAT(tracy_widom1_cdf(tracy_widom1_quantile(0.95)), WithinAbs(0.95, 1e-12));
  CHECK_THAT(tracy_widom1_quantile(0.95), WithinAbs(0.9793, 5e-4));  // Johnstone (2001), Table 1
  CHECK_THAT(tracy_widom1_quantile(0.01), WithinAbs(-3.8954, 5e-4));
}

TEST_CASE("Initializers have the variances their schemes state", "[spectral][init]") {
  const Eigen::Index n = 600, d = 300;
  for (Init init : {Init::xavier, Init::kaiming}) {
    for (Distribution dist : {Distribution::normal, Distribution::uniform}) {
      CAPTURE(to_string(init), to_string(dist));
      const Eigen::MatrixXd K = init_weights(n, d, init, dist, 7);
      const double v = init_variance(init, n, d);
      CHECK_THAT(v, WithinRel(init == Init::xavier ? 2.0 / (n + d) : 2.0 / d, 1e-15));
      const double N = static_cast<double>(K.size());
      const double mean = K.mean();
      const double var = (K.array() - mean).square().sum() / (N - 1);
      const double kurt = dist == Distribution::normal ? 3.0 : 1.8;  // E x⁴/σ⁴
      CHECK(std::abs(mean) < 5 * std::sqrt(v / N));
      CHECK(std::abs(var - v) < 5 * v * std::sqrt((kurt - 1) / N));  // 5 standard errors of the sample variance
      if (dist == Distribution::uniform) CHECK(K.cwiseAbs().maxCoeff() <= std::sqrt(3 * v));
    }
  }
}

TEST_CASE("Random streams do not depend on the thread count", "[spectral][rng]") {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Eigen::MatrixXd K1 = init_weights(1000, 300, Init::kaiming, Distribution::normal, 42, 3);
  omp_set_num_threads(2);
  const Eigen::MatrixXd K2 = init_weights(1000, 300, Init::kaiming, Distribution::normal, 42, 3);
  omp_set_num_threads(saved);
  CHECK(K1 == K2);
  CHECK(K1 != init_weights(1000, 300, Init::kaiming, Distribution::normal, 42, 4));  // another stream
  CHECK(K1 != init_weights(1000, 300, Init::kaiming, Distribution::normal, 43, 3));  // another seed
  Rng a(5, 1), b(5, 1);
  for (int i = 0; i < 100; ++i) REQUIRE(a.next_u64() == b.next_u64());
}

TEST_CASE("Gram eigenvalues equal the nonzero eigenvalues of K Kᵀ computed directly", "[spectral][gram]") {
  for (auto [n, d] : {std::pair{300, 80}, std::pair{80, 300}, std::pair{150, 150}}) {
    CAPTURE(n, d);
    const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::uniform, 11);
    const Spectrum s = kkt_spectrum(K);
    const Eigen::VectorXd direct = kkt_eigenvalues_direct(K);  // all n, ascending
    const Eigen::Index zeros = std::max(n - d, 0);
    REQUIRE(s.zeros() == zeros);
    CHECK_THAT(s.zero_fraction(), WithinAbs(double(zeros) / n, 1e-15));
    if (zeros > 0) CHECK(direct.head(zeros).cwiseAbs().maxCoeff() <= 1e-12 * direct(n - 1));
    CHECK((direct.tail(s.rank) - s.nonzero()).cwiseAbs().maxCoeff() <= 1e-10 * s.lambda_max());
    const Eigen::VectorXd all = s.all_eigenvalues();
    CHECK(all.size() == n);
  }
}

TEST_CASE("A rank-deficient K has the zero count of its rank", "[spectral][gram]") {
  const Eigen::MatrixXd A = init_weights(200, 7, Init::xavier, Distribution::normal, 1, 1);
  const Eigen::MatrixXd B = init_weights(7, 50, Init::xavier, Distribution::normal, 1, 2);
  const Spectrum s = kkt_spectrum(A * B);  // 200×50 of rank 7
  CHECK(s.rank == 7);
  CHECK(s.zeros() == 193);
}

TEST_CASE("Lanczos extreme eigenvalues match the dense solver", "[spectral][lanczos]") {
  for (auto [n, d] : {std::pair{1200, 300}, std::pair{200, 500}}) {
    const Eigen::MatrixXd K = init_weights(n, d, Init::kaiming, Distribution::normal, 3);
    const Spectrum s = kkt_spectrum(K);
    const ExtremeEigenvalues e = kkt_extreme_eigenvalues(K, 2);
    CHECK_THAT(e.largest(0), WithinRel(s.lambda_max(), 1e-9));
    CHECK_THAT(e.largest(1), WithinRel(s.gram(s.gram.size() - 2), 1e-9));
    CHECK_THAT(e.smallest(0), WithinRel(s.lambda_min_nonzero(), 1e-9));
    CHECK_THAT(e.smallest(1), WithinRel(s.gram(1), 1e-9));
  }
}

TEST_CASE("KS distance: quantile points are close, the wrong law is far", "[spectral][ks]") {
  const MarchenkoPastur law(4.0);
  const int N = 4000;
  Eigen::VectorXd x(N);
  for (int i = 0; i < N; ++i) x(i) = law.quantile((i + 0.5) / N);  // zeros for the atom
  CHECK(ks_distance(x, law) <= 0.5 / N + 1e-9);
  CHECK(ks_distance(x, MarchenkoPastur(2.0)) > 0.2);
  // A real draw at n = 2000 is within a few hundredths (Götze–Tikhomirov rate).
  const Eigen::MatrixXd K = init_weights(2000, 500, Init::xavier, Distribution::normal, 9);
  const Spectrum s = kkt_spectrum(K);
  const double ks = ks_distance(s.all_eigenvalues(), MarchenkoPastur(4.0, init_variance(Init::xavier, 2000, 500) * 500));
  CHECK(ks < 0.01);
}

TEST_CASE("Theorem 6 terms equal those from an explicit SVD projection", "[spectral][thm6]") {
  for (auto [n, d] : {std::pair{120, 40}, std::pair{40, 120}}) {
    const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::normal, 5);
    const Eigen::MatrixXd eta = sample_eta(K, EtaSource::relu_gradient, 25, 5, 9);
    const ProjectionTerms t = projection_terms(K, eta);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(K, Eigen::ComputeThinU);
    const Eigen::MatrixXd U = svd.matrixU();  // n × min(n, d)
    const Eigen::MatrixXd KKt = K * K.transpose();
    const Spectrum s = kkt_spectrum(K);
    for (Eigen::Index j = 0; j < eta.cols(); ++j) {
      const Eigen::VectorXd e = eta.col(j);
      CHECK_THAT(t.quadratic(j), WithinRel(e.dot(KKt * e), 1e-10));
      CHECK_THAT(t.projected(j), WithinRel((U.transpose() * e).squaredNorm(), 1e-9));
      CHECK(t.quadratic(j) >= s.lambda_min_nonzero() * t.projected(j) * (1 - 1e-10));
    }
  }
  // The ReLU effective gradients are masked: about half of each column is zero.
  const Eigen::MatrixXd K = init_weights(400, 100, Init::xavier, Distribution::normal, 5);
  const Eigen::MatrixXd eta = sample_eta(K, EtaSource::relu_gradient, 50, 5, 9);
  const double zero_share = (eta.array() == 0).cast<double>().mean();
  CHECK(zero_share > 0.4);
  CHECK(zero_share < 0.6);
}

TEST_CASE("The Tracy–Widom interval covers simulated ratios at its nominal level", "[spectral][tw]") {
  // 300 draws of a 400×100 Gaussian K: the 90% interval should miss about 30 of them. The test allows
  // up to 55 misses (binomial(300, 0.1) exceeds 45 with probability < 0.5%; finite-size slack on top).
  const int n = 400, d = 100, draws = 300;
  const RatioInterval iv = wishart_ratio_interval(n, d, 0.10);
  int misses = 0;
  double mean_ratio = 0;
  for (int t = 0; t < draws; ++t) {
    const Spectrum s = kkt_spectrum(init_weights(n, d, Init::xavier, Distribution::normal, 77, t));
    misses += (s.ratio() < iv.lo || s.ratio() > iv.hi);
    mean_ratio += s.ratio() / draws;
  }
  CHECK(misses <= 55);
  CHECK(iv.lo < ratio_limit(4.0));
  CHECK_THAT(mean_ratio, WithinRel(iv.at_mean, 0.02));
  CHECK(mean_ratio < ratio_limit(4.0));  // ERRATA 001: the ratio approaches 9 from below
}

TEST_CASE("The ratio at the TW means alone equals the interval's, bit for bit", "[spectral][tracy_widom]") {
  for (auto [N, P] : {std::pair{256.0, 1024.0}, std::pair{2048.0, 256.0}, std::pair{768.0, 3072.0}})
    CHECK(sparseact::spectral::wishart_ratio_at_mean(N, P) == sparseact::spectral::wishart_ratio_interval(N, P, 0.01).at_mean);
}
