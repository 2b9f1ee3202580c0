// The large-width law of COMET's masks against closed forms at special ρ and p_k, Monte Carlo,
// 2-D quadrature of the truncated moment, and k-WTA on a wide random layer.
#include <catch2/catch.hpp>

#include <cmath>

#include <boost/math/quadrature/gauss_kronrod.hpp>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/nn/plain_mlp.hpp>
#include <sparseact/routing/comet.hpp>
#include <sparseact/routing/kwta.hpp>
#include <sparseact/routing/overlap_law.hpp>

using namespace sparseact;
using namespace sparseact::routing;

TEST_CASE("Expected overlap at ρ = 0, 1, −1 and p_k = 1/2 in closed form", "[routing][overlap_law]") {
  for (double pk : {0.05, 0.1, 0.25, 0.5, 0.75}) {
    CHECK(expected_overlap(0.0, pk) == Approx(pk).epsilon(1e-12));  // independent masks
    CHECK(expected_overlap(1.0, pk) == Approx(1.0).epsilon(1e-12));
  }
  CHECK(expected_overlap(-1.0, 0.25) == Approx(0.0).margin(1e-15));
  for (double rho : {-0.8, -0.3, 0.2, 0.6, 0.95}) CHECK(expected_overlap(rho, 0.5) == Approx(1 - std::acos(rho) / M_PI).epsilon(1e-12));
  CHECK(expected_overlap(0.3, 1.0) == 1.0);
  CHECK_THROWS_AS(expected_overlap(1.2, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(expected_overlap(0.2, 0.0), std::invalid_argument);
}

TEST_CASE("P(Z > t, Z′ > t) and the overlap against Monte Carlo", "[routing][overlap_law]") {
  Rng rng(17, 3);
  const long n = 400000;
  for (double rho : {-0.5, 0.3, 0.9})
    for (double pk : {0.1, 0.25}) {
      const double t = stats::normal_quantile(1 - pk), s = std::sqrt(1 - rho * rho);
      long both = 0;
      for (long i = 0; i < n; ++i) {
        const double z = rng.normal(), z2 = rho * z + s * rng.normal();
        both += z > t && z2 > t;
      }
      const stats::Interval ci = stats::wilson_interval(both, n, 1e-4);
      INFO("ρ = " << rho << ", p_k = " << pk);
      CHECK(bivariate_upper_tail(t, rho) >= ci.lo);
      CHECK(bivariate_upper_tail(t, rho) <= ci.hi);
    }
}

TEST_CASE("The truncated cross moment equals 2-D quadrature; ρ = 0 gives φ(t)²", "[routing][overlap_law]") {
  using boost::math::quadrature::gauss_kronrod;
  for (double rho : {-0.6, 0.0, 0.4, 0.85})
    for (double t : {-0.5, 0.0, 0.67, 1.28}) {
      const double s = std::sqrt(1 - rho * rho);
      const auto density = [&](double z, double w) {
        return std::exp(-(z * z - 2 * rho * z * w + w * w) / (2 * s * s)) / (2 * M_PI * s);
      };
      const double quad = gauss_kronrod<double, 61>::integrate(
          [&](double z) { return gauss_kronrod<double, 61>::integrate([&](double w) { return z * w * density(z, w); }, t, t + 14, 8, 1e-13); },
          t, t + 14, 8, 1e-13);
      INFO("ρ = " << rho << ", t = " << t);
      CHECK(truncated_cross_moment(t, rho) == Approx(quad).epsilon(1e-9).margin(1e-12));
    }
  for (double t : {-0.3, 0.5, 1.6}) CHECK(truncated_cross_moment(t, 0.0) == Approx(std::pow(stats::normal_pdf(t), 2)).epsilon(1e-12));
  CHECK(next_routing_cosine(1.0, 0.25) == Approx(1.0).epsilon(1e-12));
  CHECK(next_routing_cosine(0.4, 1.0) == 0.4);
}

TEST_CASE("The law predicts k-WTA's overlap on a wide random layer (N = 4096)", "[routing][overlap_law]") {
  const int N = 4096, d = 256;
  Rng rng(8, 8);
  for (double rho : {0.3, 0.8})
    for (double pk : {0.1, 0.5}) {
      // Two inputs at cosine ρ, a fresh U(−d^{−1/2}, d^{−1/2}) layer per draw; the mean overlap of 5 draws.
      double overlap = 0;
      const int k = active_units(pk, N);
      for (int draw = 0; draw < 5; ++draw) {
        Eigen::VectorXd u(d), w(d);
        for (int i = 0; i < d; ++i) u(i) = rng.normal(), w(i) = rng.normal();
        u.normalize();
        w = (w - w.dot(u) * u).normalized();
        const Eigen::VectorXd z = u, z2 = rho * u + std::sqrt(1 - rho * rho) * w;
        Eigen::MatrixXd V(N, d);
        for (Eigen::Index i = 0; i < V.size(); ++i) V.data()[i] = rng.uniform(-1 / std::sqrt(double(d)), 1 / std::sqrt(double(d)));
        const Eigen::VectorXd m = kwta(V * z, k), m2 = kwta(V * z2, k);
        overlap += m.dot(m2) / k / 5;
      }
      INFO("ρ = " << rho << ", p_k = " << pk << ": measured " << overlap << ", law " << expected_overlap(rho, pk));
      CHECK(std::abs(overlap - expected_overlap(rho, pk)) <= 0.03);
    }
}

TEST_CASE("The arc-cosine kernels: κ₁ and κ₀ at ρ = 0, 1 and against Monte Carlo", "[routing][overlap_law]") {
  CHECK(relu_cosine(1.0) == Approx(1.0).epsilon(1e-15));
  CHECK(relu_cosine(0.0) == Approx(1 / M_PI).epsilon(1e-15));  // E[ReLU(Z)]² / E[ReLU(Z)²] = (1/(2π)) / (1/2)
  CHECK(relu_derivative_cosine(0.0) == Approx(0.5).epsilon(1e-15));
  Rng rng(3, 9);
  const double rho = 0.6, s = std::sqrt(1 - rho * rho);
  stats::RunningMean cross, sq;
  for (int i = 0; i < 200000; ++i) {
    const double a = rng.normal(), b = rho * a + s * rng.normal();
    cross.push(std::max(a, 0.0) * std::max(b, 0.0)), sq.push(std::max(a, 0.0) * std::max(a, 0.0));
  }
  CHECK(std::abs(cross.mean() / sq.mean() - relu_cosine(rho)) < 0.01);
}

TEST_CASE("The COMET law follows 2048-wide COMET MLPs through three hidden layers", "[routing][overlap_law]") {
  const int N = 2048, d = 256, depth = 3, nets = 12;
  const double pk = 0.25, rho0 = 0.7;
  Rng rng(5, 5);
  Eigen::VectorXd u(d), w(d);
  for (int i = 0; i < d; ++i) u(i) = rng.normal(), w(i) = rng.normal();
  u.normalize();
  w = (w - w.dot(u) * u).normalized();
  Eigen::MatrixXd X(d, 2);
  X.col(0) = u, X.col(1) = rho0 * u + std::sqrt(1 - rho0 * rho0) * w;
  std::vector<int> widths = {d};
  for (int l = 0; l < depth; ++l) widths.push_back(N);
  widths.push_back(10);
  // Per layer, the measured overlap and activation cosine of each net; backbone without biases
  // (eq. (7)), ReLU, weights independent of the router's.
  std::vector<stats::RunningMean> overlap(depth), act(depth);
  for (int k = 0; k < nets; ++k) {
    const auto masks = comet_masks(make_comet_router(widths, pk, 2, 100 + k), X);
    const nn::PlainMlp net{widths, nn::PlainActivation::relu, false};
    const nn::PlainForward fwd = nn::plain_forward(net, nn::init_plain_mlp(net, 2, 200 + k), X, masks);
    for (int l = 0; l < depth; ++l) {
      const Eigen::VectorXd m = masks[std::size_t(l)].col(0), m2 = masks[std::size_t(l)].col(1);
      overlap[l].push(m.dot(m2) / m.sum());
      const Eigen::VectorXd x = fwd.x[std::size_t(l) + 1].col(0), x2 = fwd.x[std::size_t(l) + 1].col(1);
      act[l].push(x.dot(x2) / (x.norm() * x2.norm()));
    }
  }
  // Within the 99.9% normal interval of the mean over nets, widened by 0.01 for the finite-width bias
  // (O(1/k), k = 512 here).
  const std::vector<LayerLaw> law = comet_law(rho0, pk, depth);
  const double z = stats::normal_quantile(0.9995);
  for (int l = 0; l < depth; ++l) {
    INFO("layer " << l + 1 << ": overlap " << overlap[l].mean() << " ± " << overlap[l].std_error() << " (law " << law[std::size_t(l)].overlap
                  << "), activation cosine " << act[l].mean() << " ± " << act[l].std_error() << " (law " << law[std::size_t(l)].act_cos << ")");
    CHECK(std::abs(overlap[l].mean() - law[std::size_t(l)].overlap) <= z * overlap[l].std_error() + 0.01);
    CHECK(std::abs(act[l].mean() - law[std::size_t(l)].act_cos) <= z * act[l].std_error() + 0.01);
  }
}
