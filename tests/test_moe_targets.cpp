// Paper 003's regression targets (moe/targets): Ackley and Rastrigin at hand-computed points, and the
// Davies–Harte fGn's covariance against γ(k) within Monte-Carlo confidence intervals.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/core/stats.hpp>
#include <sparseact/moe/targets.hpp>

using namespace sparseact;
using namespace sparseact::moe;

TEST_CASE("Ackley (37) and Rastrigin (38) at hand points", "[moe][targets]") {
  CHECK(ackley(Eigen::Vector2d(0, 0)) == Approx(0.0).margin(1e-14));  // the global minimum
  CHECK(rastrigin(Eigen::Vector3d(0, 0, 0)) == 0.0);
  // x = (1, 1): mean x² = 1, mean cos 2π = 1 → 20 + e − 20e^{−0.2} − e.
  CHECK(ackley(Eigen::Vector2d(1, 1)) == Approx(20 - 20 * std::exp(-0.2)).epsilon(1e-14));
  // x = (0.5, −0.5): Σx² = 0.5, cos π = −1 twice → 0.5 + 10(2 + 2) = 40.5.
  CHECK(rastrigin(Eigen::Vector2d(0.5, -0.5)) == Approx(40.5).epsilon(1e-14));
  CHECK(fgn_covariance(0, 0.3) == Approx(1.0).epsilon(1e-15));
  CHECK(fgn_covariance(3, 0.5) == Approx(0.0).margin(1e-15));  // Brownian increments are independent
}

TEST_CASE("Davies–Harte increments have the fGn covariance ½(|k+1|^{2H} − 2|k|^{2H} + |k−1|^{2H})", "[moe][targets]") {
  for (double H : {0.2, 0.5, 0.8}) {
    CAPTURE(H);
    const long N = 32;
    const int samples = 3000;
    for (long lag : {0L, 1L, 2L, 7L}) {
      stats::RunningMean m;
      for (int s = 0; s < samples; ++s) {
        const Eigen::VectorXd X = fgn_davies_harte(N, H, 11, std::uint64_t(s));
        m.push(X(3) * X(3 + lag));
      }
      CAPTURE(lag, m.mean());
      CHECK(m.interval(1e-4).contains(fgn_covariance(lag, H)));  // 99.99% Student-t interval over independent paths
    }
  }
  const Eigen::VectorXd B = fbm_path(64, 0.7, 1, 2);
  CHECK(B.size() == 65);
  CHECK(B(0) == 0.0);
  CHECK_THROWS_AS(fgn_davies_harte(8, 1.0, 1, 1), std::invalid_argument);
}
