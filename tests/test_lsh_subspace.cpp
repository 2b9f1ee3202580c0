// Inputs on a k-subspace (paper 000 §4): Haar basis, the LP bounding box of P = {y : −1 ≤ U y ≤ 1},
// uniform samples on Γ (a goodness-of-fit test on a known polytope), and the exact bucket polytopes
// used for Lemma 4.2.
#include <catch2/catch.hpp>

#include <cmath>
#include <omp.h>

#include <boost/math/distributions/chi_squared.hpp>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/bucket_table.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/subspace.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {

/// p-value of Pearson's chi-square for equiprobable bins.
double chi_square_p(const std::vector<long>& counts) {
  long n = 0;
  for (long c : counts) n += c;
  const double e = static_cast<double>(n) / counts.size();
  double x2 = 0;
  for (long c : counts) x2 += (c - e) * (c - e) / e;
  return boost::math::cdf(boost::math::complement(boost::math::chi_squared(counts.size() - 1.0), x2));
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
  CHECK(chi_square_p(radial) > 1e-3);
  CHECK(chi_square_p(sectors) > 1e-3);
  // The hexagon's circumradius is √2: samples reach close to it.
  CHECK(X.colwise().norm().maxCoeff() <= std::sqrt(2.0) + 1e-12);
  CHECK(X.colwise().norm().maxCoeff() > 1.38);

  const Subspace R = random_subspace(6, 3, 77);
  const Eigen::MatrixXd Z = sample_uniform(R, N, 2025);
  std::vector<long> bins(20, 0);
  for (Eigen::Index n = 0; n < N; ++n) bins[std::min<long>(19, static_cast<long>(std::pow(Z.col(n).cwiseAbs().maxCoeff(), 3) * 20))]++;
  CHECK(chi_square_p(bins) > 1e-3);
}

TEST_CASE("polytope_vertices: known clipped boxes in 1, 2 and 3 dimensions", "[lsh]") {
  Polytope P{Eigen::MatrixXd(1, 1), Eigen::VectorXd(1)};
  P.N << 2;
  P.c << 1;  // y ≤ 0.5
  CHECK(max_pairwise_distance(polytope_vertices(P, Eigen::VectorXd::Constant(1, -1), Eigen::VectorXd::Constant(1, 1))) == Approx(1.5));
  Polytope T{Eigen::MatrixXd(1, 2), Eigen::VectorXd(1)};
  T.N << 1, 1;
  T.c << 1;  // the unit square cut by x + y ≤ 1: a right triangle
  const Eigen::MatrixXd V2 = polytope_vertices(T, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2));
  CHECK(V2.cols() == 3);
  CHECK(max_pairwise_distance(V2) == Approx(std::sqrt(2.0)));
  Polytope S{Eigen::MatrixXd(1, 3), Eigen::VectorXd(1)};
  S.N << 1, 1, 1;
  S.c << 1;  // the unit cube cut by x + y + z ≤ 1: the corner simplex
  CHECK(max_pairwise_distance(polytope_vertices(S, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Ones(3))) == Approx(std::sqrt(2.0)));
  Polytope B{Eigen::MatrixXd(2, 3), Eigen::VectorXd(2)};
  B.N << 1, 0, 0, 0, 0, -1;
  B.c << 0.5, -0.25;  // x ≤ 0.5, z ≥ 0.25: a 0.5 × 1 × 0.75 box
  CHECK(max_pairwise_distance(polytope_vertices(B, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Ones(3))) ==
        Approx(std::sqrt(0.25 + 1 + 0.5625)));
  Polytope E{Eigen::MatrixXd(1, 2), Eigen::VectorXd(1)};
  E.N << 1, 0;
  E.c << -2;  // empty
  CHECK(polytope_vertices(E, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Ones(2)).cols() == 0);
}

TEST_CASE("Exact bucket diameters (k = 2, 3) dominate and match densely sampled ones", "[lsh]") {
  for (int k : {2, 3}) {
    const Subspace S = random_subspace(10, k, 31 + k);
    const EuclideanLsh h = make_euclidean_lsh(10, 4 * k, 2.0, 32 + k);
    const Eigen::MatrixXd X = sample_uniform(S, 60000, 33);
    const BucketAssignment asg = assign_buckets(hash(h, X));
    const BucketGeometry geo(S, h);
    const Eigen::MatrixXd Y = S.U.transpose() * X;
    std::vector<std::vector<Eigen::Index>> members(asg.buckets());
    for (Eigen::Index n = 0; n < X.cols(); ++n) members[static_cast<std::size_t>(asg.bucket[static_cast<std::size_t>(n)])].push_back(n);
    double worst_rel_gap = 0, worst_corner = 0;
    int dense = 0;
    Rng rng(99, static_cast<std::uint64_t>(k));
    for (std::size_t b = 0; b < members.size(); ++b) {
      Eigen::MatrixXd pts(k, static_cast<Eigen::Index>(members[b].size()));
      for (std::size_t i = 0; i < members[b].size(); ++i) pts.col(static_cast<Eigen::Index>(i)) = Y.col(members[b][i]);
      const auto* code = asg.table.code(static_cast<std::int64_t>(b));
      const Eigen::MatrixXd V = geo.vertices(code);
      const double exact = max_pairwise_distance(V), sampled = max_pairwise_distance(pts);
      CHECK(exact >= sampled - 1e-12);
      // Samples and vertices lie in the bucket polytope.
      const Polytope cell = geo.cell(code);
      CHECK(((cell.N * pts).colwise() - cell.c).maxCoeff() <= 1e-9);
      CHECK(((cell.N * V).colwise() - cell.c).maxCoeff() <= 1e-9);
      if (members[b].size() < 1000) continue;
      ++dense;
      worst_rel_gap = std::max(worst_rel_gap, (exact - sampled) / exact);
      // Dense sampling of this one cell (rejection from the vertices' box): every vertex is a genuine
      // corner, approached by samples; so the polytope is the hull of the vertices and its diameter exact.
      const Eigen::VectorXd lo = V.rowwise().minCoeff(), hi = V.rowwise().maxCoeff();
      Eigen::VectorXd y(k);
      Eigen::VectorXd nearest = Eigen::VectorXd::Constant(V.cols(), INFINITY);
      for (int t = 0; t < 40000; ++t) {
        for (int j = 0; j < k; ++j) y(j) = rng.uniform(lo(j), hi(j));
        if (((cell.N * y) - cell.c).maxCoeff() > 0) continue;
        for (Eigen::Index v = 0; v < V.cols(); ++v) nearest(v) = std::min(nearest(v), (V.col(v) - y).norm());
      }
      worst_corner = std::max(worst_corner, nearest.maxCoeff() / exact);
    }
    INFO("k = " << k << ", buckets " << asg.buckets() << ", dense " << dense << ", worst relative gap " << worst_rel_gap
                << ", farthest corner " << worst_corner);
    CHECK(dense >= 3);
    CHECK(worst_rel_gap < (k == 2 ? 0.1 : 0.25));     // O(n²) sample diameters of ≥ 1000 points: close, below
    CHECK(worst_corner < (k == 2 ? 0.02 : 0.08));     // dense samples reach every vertex
  }
}
