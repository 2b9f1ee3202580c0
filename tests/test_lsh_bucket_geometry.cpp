// Bucket geometry of a Euclidean LSH on a k-subspace (paper 000 Lemma 4.2, lsh/bucket_geometry):
// exact bucket polytopes and their diameters, the diameters of the samples in each bucket, the
// arrangement bound (Buck 1943) against known cell counts, and one whole trial.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include <omp.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/bucket_geometry.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {
double binom(int n, int j) {
  double r = 1;
  for (int i = 1; i <= j; ++i) r = r * (n - j + i) / i;
  return r;
}
}  // namespace

TEST_CASE("log_arrangement_cells: the cell counts of hyperplanes in general position", "[lsh]") {
  for (int n = 0; n <= 12; ++n) {
    INFO("n = " << n);
    // n points cut a line into n + 1 pieces; n lines in general position cut the plane into
    // 1 + n + C(n, 2); n planes in general position cut R³ into 1 + n + C(n, 2) + C(n, 3).
    CHECK(std::exp(log_arrangement_cells(n, 1)) == Approx(n + 1.0).epsilon(1e-13));
    CHECK(std::exp(log_arrangement_cells(n, 2)) == Approx(1 + n + binom(n, 2)).epsilon(1e-13));
    CHECK(std::exp(log_arrangement_cells(n, 3)) == Approx(1 + n + binom(n, 2) + binom(n, 3)).epsilon(1e-13));
    // n ≤ k hyperplanes in general position: every sign pattern is a cell, 2^n.
    if (n <= 5) CHECK(std::exp(log_arrangement_cells(n, 5)) == Approx(std::pow(2.0, n)).epsilon(1e-13));
  }
  CHECK(log_arrangement_cells(0, 0) == 0.0);  // no hyperplane: one cell
  CHECK_THROWS_AS(log_arrangement_cells(-1, 2), std::invalid_argument);
}

TEST_CASE("log_arrangement_cells: four lines in the plane make the 11 cells a fine grid finds", "[lsh]") {
  // x = 0, y = 0, x + y = 2, x − y = 1: no two parallel, no three through one point; every vertex
  // lies in [0, 2] × [−1, 2] and the smallest cell (a triangle of area 1/4) is wider than the grid step.
  const double lines[4][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 2}, {1, -1, 1}};  // a x + b y = c
  std::vector<int> seen(16, 0);
  for (int i = 0; i <= 600; ++i)
    for (int j = 0; j <= 600; ++j) {
      const double x = -6 + 0.02 * i + 1e-4, y = -6 + 0.02 * j + 2e-4;
      int code = 0;
      for (int l = 0; l < 4; ++l) code |= (lines[l][0] * x + lines[l][1] * y > lines[l][2]) << l;
      seen[code] = 1;
    }
  int cells = 0;
  for (int s : seen) cells += s;
  CHECK(cells == 11);
  CHECK(std::exp(log_arrangement_cells(4, 2)) == Approx(cells).epsilon(1e-14));
}

TEST_CASE("hyperplanes_meeting_box on a line: the count and, in R¹, the buckets exactly", "[lsh]") {
  // Γ = the first axis of R², P = [−1, 1]; one hash with a = (2, 5), b = 0.3, ε = 0.5: the cuts
  // 2y + 0.3 = 0.5 m with y ∈ [−1, 1] are m = −3 … 4, eight of them, so nine buckets.
  Eigen::MatrixXd basis(2, 1);
  basis << 1, 0;
  const Subspace S = subspace_from_basis(basis);
  EuclideanLsh h;
  h.a.resize(1, 2);
  h.a << 2, 5;
  h.b.resize(1);
  h.b << 0.3;
  h.eps = 0.5;
  const BucketGeometry geo(S, h);
  const double n = hyperplanes_meeting_box(S, h, geo);
  CHECK(n == 8);
  // Dense samples of Γ hit every bucket; in R¹ the arrangement bound n + 1 is an equality.
  const Eigen::MatrixXd X = sample_uniform(S, 20000, 5);
  const BucketAssignment asg = assign_buckets(hash(h, X));
  CHECK(asg.buckets() == 9);
  CHECK(std::exp(log_arrangement_cells(n, 1)) == Approx(9.0).epsilon(1e-14));
  // Interior buckets are intervals of length ε/|ã| = 0.25: exact diameters, and samples just below.
  const std::vector<double> exact = exact_bucket_diameters(geo, asg);
  const std::vector<double> sampled = sampled_bucket_diameters(S.U.transpose() * X, asg);
  int interior = 0;
  double total = 0;
  for (std::size_t b = 0; b < exact.size(); ++b) {
    total += exact[b];
    CHECK(sampled[b] <= exact[b] + 1e-12);
    CHECK(sampled[b] > exact[b] - 0.01);
    if (std::abs(exact[b] - 0.25) < 1e-7) ++interior;  // the box is padded by 1e-9 (BucketGeometry)
  }
  CHECK(interior == 7);
  CHECK(total == Approx(2.0).epsilon(1e-8));  // the nine pieces tile [−1, 1]
}

TEST_CASE("sampled_bucket_diameters of a known point set", "[lsh]") {
  // Buckets by first appearance: {0, 2, 5} → 0, {1} → 1, {3, 4} → 2.
  CodeMatrix codes(1, 6);
  codes << 7, 9, 7, -1, -1, 7;
  const BucketAssignment asg = assign_buckets(codes);
  Eigen::MatrixXd Y(2, 6);
  Y << 0, 10, 3, -1, 2, 1,  //
      0, 10, 4, 0, 0, 1;
  const std::vector<double> d = sampled_bucket_diameters(Y, asg);
  REQUIRE(d.size() == 3);
  CHECK(d[0] == 5.0);  // (0, 0)–(3, 4)
  CHECK(d[1] == 0.0);  // one point
  CHECK(d[2] == 3.0);  // (−1, 0)–(2, 0)
  // k = 1: max − min.
  const Eigen::MatrixXd line = Y.topRows(1);
  const std::vector<double> d1 = sampled_bucket_diameters(line, asg);
  CHECK(d1 == std::vector<double>{3.0, 0.0, 3.0});
  // The same as max_pairwise_distance of each group.
  Eigen::MatrixXd g0(2, 3);
  g0 << Y.col(0), Y.col(2), Y.col(5);
  CHECK(max_pairwise_distance(g0) == d[0]);
  CHECK_THROWS_AS(sampled_bucket_diameters(Y.leftCols(5), asg), std::invalid_argument);
}

TEST_CASE("bucket_trial: Lemma 4.2's always-true bounds, reproducible for any thread count", "[lsh][reproducible]") {
  for (int k : {1, 2, 3}) {
    INFO("k = " << k);
    const BucketTrial t = bucket_trial(12, k, 4 * k, 1.0, 3000, 7, 11);
    CHECK(t.buckets > 1);
    CHECK(t.buckets <= 3000);
    // x₁, x₂ in one bucket ⇒ ‖x₁ − x₂‖ ≤ ε√K/σ_min(AU); samples lie in their polytope.
    CHECK(t.sigma_min > 0);
    CHECK(t.bound == Approx(std::sqrt(4.0 * k) / t.sigma_min).epsilon(1e-14));
    CHECK(t.diam_sampled <= t.bound * (1 + 1e-9));
    CHECK(t.diam_exact <= t.bound * (1 + 1e-9));
    CHECK(t.exact_minus_sampled >= -1e-9);
    CHECK(t.diam_exact >= t.diam_sampled - 1e-9);
    // Buckets hit ≤ cells of the arrangement.
    CHECK(std::log(double(t.buckets)) <= t.log_arrangement + 1e-12);
    CHECK(t.fingerprint_collisions == 0);
    CHECK(t.singletons <= t.buckets);
    CHECK_FALSE(t.sampling_method.empty());
  }
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const BucketTrial one = bucket_trial(10, 2, 8, 0.7, 2000, 3, 4);
  omp_set_num_threads(2);
  const BucketTrial two = bucket_trial(10, 2, 8, 0.7, 2000, 3, 4);
  omp_set_num_threads(before);
  CHECK(one.buckets == two.buckets);
  CHECK(one.diam_sampled == two.diam_sampled);
  CHECK(one.diam_exact == two.diam_exact);
  CHECK(one.exact_minus_sampled == two.exact_minus_sampled);
  CHECK(one.log_arrangement == two.log_arrangement);
  // k > 3: no exact geometry.
  const BucketTrial four = bucket_trial(8, 4, 8, 2.0, 500, 1, 2);
  CHECK(std::isnan(four.diam_exact));
  CHECK(std::isinf(four.exact_minus_sampled));
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

TEST_CASE("polytope_vertices: faces far away change nothing, faces just touching are still cut", "[lsh]") {
  // polytope_vertices skips a row that ‖n‖₁ · max ‖v‖_∞ ≤ c(1 − 1e-9) shows no vertex can cross
  // without visiting the vertices. Far rows (the cube's faces seen from a small bucket) must leave the
  // vertices bit for bit those without them; rows within a hair of that bound must still cut.
  for (int k : {2, 3}) {
    const Eigen::VectorXd lo = Eigen::VectorXd::Constant(k, -1), hi = Eigen::VectorXd::Constant(k, 1);
    Rng rng(41, static_cast<std::uint64_t>(k));
    Polytope cell{Eigen::MatrixXd(2 * k, k), Eigen::VectorXd(2 * k)};  // a slanted slab per axis
    for (int r = 0; r < 2 * k; ++r) {
      for (int j = 0; j < k; ++j) cell.N(r, j) = (j == r / 2 ? 1.0 : 0.3 * rng.uniform(-1, 1)) * (r % 2 ? -1 : 1);
      cell.c(r) = 0.4;
    }
    const Eigen::MatrixXd base = polytope_vertices(cell, lo, hi);
    REQUIRE(base.cols() > 0);
    Polytope far = cell;  // + 200 rows at distance ≥ 2 from the origin (‖n‖₁ · 1 ≤ c/2)
    far.N.conservativeResize(2 * k + 200, k);
    far.c.conservativeResize(2 * k + 200);
    for (int r = 2 * k; r < 2 * k + 200; ++r) {
      for (int j = 0; j < k; ++j) far.N(r, j) = rng.uniform(-1, 1);
      far.c(r) = 2 * far.N.row(r).lpNorm<1>() * base.cwiseAbs().maxCoeff();
    }
    const Eigen::MatrixXd with_far = polytope_vertices(far, lo, hi);
    CHECK(with_far.cols() == base.cols());
    CHECK((with_far.array() == base.array()).all());
    // A face at the bound's edge: n = (1, 1, …), c just below ‖n‖₁ · max|v| so that the corner with
    // every coordinate at max|v| would violate it, though not any vertex of this cell may; the cut
    // must be decided by the vertices themselves, as without the shortcut.
    const double reach = base.cwiseAbs().maxCoeff();
    Polytope edge = cell;
    edge.N.conservativeResize(2 * k + 1, k);
    edge.c.conservativeResize(2 * k + 1);
    edge.N.row(2 * k).setOnes();
    edge.c(2 * k) = 0.5 * k * reach;  // cuts the cell's corner in the all-positive orthant
    const Eigen::MatrixXd cut = polytope_vertices(edge, lo, hi);
    const double max_sum = (Eigen::RowVectorXd::Ones(k) * cut).maxCoeff();
    CHECK(max_sum <= edge.c(2 * k) * (1 + 1e-12));
    CHECK((Eigen::RowVectorXd::Ones(k) * base).maxCoeff() > edge.c(2 * k));  // the face did cut
  }
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
