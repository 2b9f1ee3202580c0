// flatness/theorem7: §8.5's weight-decayed second moments (Appendix D) against the sum
// Σ_t r^{T−t} X_t X_tᵀ formed directly, their layer average, and the bT the bound uses.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Dense>

#include <sparseact/core/rng.hpp>
#include <sparseact/flatness/theorem7.hpp>

using namespace sparseact;
using namespace sparseact::flatness;

TEST_CASE("decayed moment equals Σ_t r^{T−t} X_t X_tᵀ formed directly", "[flatness][theorem7]") {
  const Eigen::Index p = 7, b = 5;
  const double r = 1.0 - 0.05 * 0.3;  // η_r = 0.05, w = 0.3
  const std::vector<long> steps{3, 5, 10, 11, 20};
  std::vector<Eigen::MatrixXd> Xs;
  DecayedMoment acc(p, r), scaled(p, r);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Eigen::MatrixXd X(p, b);
    fill_random(X.data(), static_cast<std::size_t>(X.size()), Distribution::normal, 1.0, 4, i);
    X.row(0) *= 3.0;  // anisotropic, so a/p < 1
    Xs.push_back(X);
    acc.add(steps[i], X);
    scaled.add(steps[i], X, 4.0);  // η = 2x: weight 2²
  }
  const long T = steps.back();
  Eigen::MatrixXd direct = Eigen::MatrixXd::Zero(p, p);
  for (std::size_t i = 0; i < steps.size(); ++i) direct += std::pow(r, static_cast<double>(T - steps[i])) * Xs[i] * Xs[i].transpose();
  CHECK(acc.last_step() == T);
  CHECK((acc.S() - direct).norm() <= 1e-12 * direct.norm());
  CHECK((acc.S() - acc.S().transpose()).norm() == 0.0);  // both triangles filled
  CHECK((scaled.S() - 4.0 * direct).norm() <= 1e-12 * direct.norm());
  // a/p and β/p do not see the scale of S: the decayed sum and its multiple read alike.
  const Anisotropy a = anisotropy(acc.S());
  const Anisotropy a2 = anisotropy(scaled.S());
  CHECK_THAT(a.a_over_p, Catch::Matchers::WithinRel(a2.a_over_p, 1e-12));
  CHECK_THAT(a.a_over_p, Catch::Matchers::WithinRel(anisotropy(direct).a_over_p, 1e-12));
  CHECK(a.a_over_p < 1.0);
  // No decay (w = 0): the plain sum.
  DecayedMoment plain(p, 1.0);
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(p, p);
  for (std::size_t i = 0; i < steps.size(); ++i) plain.add(steps[i], Xs[i]), sum += Xs[i] * Xs[i].transpose();
  CHECK((plain.S() - sum).norm() <= 1e-12 * sum.norm());
  CHECK_THROWS(plain.add(steps.back() - 1, Xs[0]));           // steps go forward
  CHECK_THROWS(plain.add(steps.back() + 1, Xs[0].topRows(3)));  // p rows
}

TEST_CASE("layer average of a/p and β/p, and bT = b·min(T_ref, window)", "[flatness][theorem7]") {
  Anisotropy l1, l2;
  l1.a = 2.0, l1.a_over_p = 0.25, l1.beta = 1.0, l1.beta_over_p = 0.5;
  l2.a = 4.0, l2.a_over_p = 0.75, l2.beta = 3.0, l2.beta_over_p = 0.25;
  const Anisotropy m = layer_average({l1, l2});
  CHECK(m.a == 3.0);
  CHECK(m.a_over_p == 0.5);
  CHECK(m.beta == 2.0);
  CHECK(m.beta_over_p == 0.375);
  CHECK_THROWS(layer_average({}));
  // §4.6 with App. E's length: the window (161,172 steps at w = 0.1) caps T_ref = 187,500.
  CHECK(accumulated_vectors(32, 187500, effective_window(1e-3, 1e-3, 0.1)) == 32.0 * 161172);
  CHECK(accumulated_vectors(32, 187500, effective_window(1e-3, 1e-3, 0.0)) == 32.0 * 187500);  // no decay: no window
  CHECK_THROWS(accumulated_vectors(0, 10, 10));
}
