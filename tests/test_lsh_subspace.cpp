// Inputs on a k-subspace (paper 000 §4): Haar basis, the LP bounding box of P = {y : −1 ≤ U y ≤ 1},
// uniform samples on Γ (a goodness-of-fit test on a known polytope). The bucket polytopes of Lemma
// 4.2 are tested in test_lsh_bucket_geometry.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <omp.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/lsh/subspace.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {

/// Pearson's chi-square for equiprobable bins passes at level 10⁻³: X² below the (1 − 10⁻³)-quantile
/// of χ²_{bins − 1}, i.e. p > 10⁻³.
bool chi_square_passes(const std::vector<long>& counts) {
  long n = 0;
  for (long c : counts) n += c;
  const double e = static_cast<double>(n) / counts.size();
  double x2 = 0;
  for (long c : counts) x2 += (c - e) * (c - e) / e;
  return x2 < sparseact::stats::chi_squared_quantile(1 - 1e-3, counts.size() - 1.0);
}

}  // namespace

TEST_CASE("random_subspace: orthonormal, deterministic, with a tight LP box", "[lsh]") {
  const Subspace S = random_subspace(12, 3, 7, 2);
  CHECK((S.U.transpose() * S.U - Eigen::MatrixXd::Identity(3, 3)).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(random_subspace(12, 3, 7, 2).U == S.U);
  CHECK_FALSE(random_subspace(12, 3, 7, 3).U.isApprox(S.U));
  const BoundingBox box = bounding_box(S.U);
  for (Eigen::Index j = 0; j < 3; ++j) {
    CHECK(box.lo(j) == Approx(S.y_lo(j)));
    CHECK(box.lo(j) < 0);
    CHECK(box.hi(j) == Approx(-box.lo(j)).epsilon(1e-9));  // P is symmetric
    // The optimal points lie in P and achieve the bounds: the box is tight.
    for (int s = 0; s < 2; ++s) {
      const Eigen::VectorXd w = box.witnesses.col(2 * j + s);
      CHECK((S.U * w).cwiseAbs().maxCoeff() <= 1 + 1e-9);
      CHECK(w(j) == Approx(s == 0 ? box.lo(j) : box.hi(j)).epsilon(1e-12));
    }
  }
}

TEST_CASE("bounding box in known cases: a coordinate axis and the diagonal", "[lsh]") {
  Eigen::MatrixXd e1 = Eigen::MatrixXd::Zero(5, 1);
  e1(0) = 1;
  const Subspace A = subspace_from_basis(e1);
  CHECK(A.y_lo(0) == Approx(-1));
  CHECK(A.y_hi(0) == Approx(1));
  const Subspace D = subspace_from_basis(Eigen::MatrixXd::Ones(9, 1));
  CHECK(D.y_lo(0) == Approx(-3));  // |y| ≤ √d along (1, …, 1)/√d
  CHECK(D.y_hi(0) == Approx(3));
  CHECK_THROWS(subspace_from_basis(Eigen::MatrixXd::Ones(4, 2)));  // rank 1
}

TEST_CASE("sample_uniform: points in the cube and in span(U), any thread count", "[lsh][reproducible]") {
  const Subspace S = random_subspace(20, 3, 1);
  SampleStats st;
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const Eigen::MatrixXd X1 = sample_uniform(S, 9000, 5, 0, &st);
  omp_set_num_threads(2);
  const Eigen::MatrixXd X2 = sample_uniform(S, 9000, 5, 0);
  omp_set_num_threads(before);
  CHECK(X1 == X2);
  CHECK(X1.cwiseAbs().maxCoeff() <= 1.0);
  CHECK((X1 - S.U * (S.U.transpose() * X1)).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(st.method.rfind("rejection", 0) == 0);
  CHECK((st.acceptance > 0 && st.acceptance <= 1));
  const Eigen::MatrixXd C = sample_cube(4, 1000, 3);
  CHECK(C.cwiseAbs().maxCoeff() <= 1.0);
  CHECK(std::abs(C.mean()) < 0.05);
}

TEST_CASE("sample_uniform is uniform: the hexagon x + y + z = 0 in [−1, 1]³ and a random 3-polytope", "[lsh]") {
  // Gauge test, exact for any P star-shaped about 0: g(x) = ‖x‖_∞ satisfies P[g ≤ t] = vol(tP)/vol(P) = t^k,
  // so g^k is U[0, 1]. Angular test on the regular hexagon: its 12 sectors of 30° starting at a vertex are
  // congruent (the hexagon's 12 symmetries), so equiprobable.
  Eigen::MatrixXd basis(3, 2);
  basis << 1, 0, -1, 1, 0, -1;  // spans the plane x + y + z = 0
  const Subspace H = subspace_from_basis(basis);
  const Eigen::Index N = 60000;
  const Eigen::MatrixXd X = sample_uniform(H, N, 2024);
  std::vector<long> radial(20, 0), sectors(12, 0);
  const Eigen::Vector2d v = H.U.transpose() * Eigen::Vector3d(1, -1, 0);  // a vertex of the hexagon
  const double theta0 = std::atan2(v(1), v(0));
  for (Eigen::Index n = 0; n < N; ++n) {
    const double g = X.col(n).cwiseAbs().maxCoeff();
    radial[std::min<long>(19, static_cast<long>(g * g * 20))]++;
    const Eigen::Vector2d y = H.U.transpose() * X.col(n);
    double a = std::atan2(y(1), y(0)) - theta0;
    a = std::fmod(a + 4 * M_PI, 2 * M_PI);
    sectors[std::min<long>(11, static_cast<long>(a / (M_PI / 6)))]++;
  }
  CHECK(chi_square_passes(radial));
  CHECK(chi_square_passes(sectors));
  // The hexagon's circumradius is √2: samples reach close to it.
  CHECK(X.colwise().norm().maxCoeff() <= std::sqrt(2.0) + 1e-12);
  CHECK(X.colwise().norm().maxCoeff() > 1.38);

  const Subspace R = random_subspace(6, 3, 77);
  const Eigen::MatrixXd Z = sample_uniform(R, N, 2025);
  std::vector<long> bins(20, 0);
  for (Eigen::Index n = 0; n < N; ++n) bins[std::min<long>(19, static_cast<long>(std::pow(Z.col(n).cwiseAbs().maxCoeff(), 3) * 20))]++;
  CHECK(chi_square_passes(bins));
}
