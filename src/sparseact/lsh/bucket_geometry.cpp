#include <sparseact/lsh/bucket_geometry.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/SVD>

#include <sparseact/core/parallel.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::lsh {

// ---- Polytope clipping -----------------------------------------------------------------------------

namespace {

double tolerance(double c) { return 1e-12 * (1.0 + std::abs(c)); }

/// A row n·p ≤ c that no vertex can violate, decided without visiting them: |n·p| ≤ ‖n‖₁ ‖p‖_∞, so
/// ‖n‖₁ · max_v ‖v‖_∞ ≤ c (1 − 1e-9) puts every computed n·v below c by far more than rounding, and
/// the vertex-by-vertex test would skip the row too (the same polytope, bit for bit). For a small
/// cell most rows are faces of the cube far away: at d = 128, 256 rows per bucket.
bool surely_redundant(double n_l1, double c, double max_abs_coord) { return c > 0 && n_l1 * max_abs_coord <= c * (1 - 1e-9); }

template <class Points>
double max_abs_coordinate(const Points& pts) {
  double m = 0;
  for (const auto& p : pts) m = std::max(m, p.cwiseAbs().maxCoeff());
  return m;
}

template <int K>
using Pt = Eigen::Matrix<double, K, 1>;

/// Sutherland–Hodgman: the part of the closed polygon (or a 3-d face) with n·p ≤ c. Points in the
/// plane (within tolerance) are kept; `cut` collects the points on the plane.
template <int K>
std::vector<Pt<K>> clip(const std::vector<Pt<K>>& poly, const Pt<K>& n, double c, std::vector<Pt<K>>* cut) {
  std::vector<Pt<K>> out;
  const double tol = tolerance(c);
  const std::size_t m = poly.size();
  for (std::size_t i = 0; i < m; ++i) {
    const Pt<K>& p = poly[i];
    const Pt<K>& q = poly[(i + 1) % m];
    const double dp = n.dot(p) - c, dq = n.dot(q) - c;
    if (dp <= tol) {
      out.push_back(p);
      if (cut && dp >= -tol) cut->push_back(p);
    }
    if ((dp < -tol && dq > tol) || (dp > tol && dq < -tol)) {
      const Pt<K> x = p + (q - p) * (dp / (dp - dq));
      out.push_back(x);
      if (cut) cut->push_back(x);
    }
  }
  return out;
}

Eigen::MatrixXd to_matrix_2(const std::vector<Pt<2>>& pts) {
  Eigen::MatrixXd V(2, static_cast<Eigen::Index>(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) V.col(static_cast<Eigen::Index>(i)) = pts[i];
  return V;
}

Eigen::MatrixXd vertices_2(const Polytope& P, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  std::vector<Pt<2>> poly{{lo(0), lo(1)}, {hi(0), lo(1)}, {hi(0), hi(1)}, {lo(0), hi(1)}};  // counter-clockwise
  double reach = max_abs_coordinate(poly);
  for (Eigen::Index r = 0; r < P.N.rows() && !poly.empty(); ++r) {
    const Pt<2> n = P.N.row(r).transpose();
    if (surely_redundant(n.lpNorm<1>(), P.c(r), reach)) continue;
    bool redundant = true;  // every vertex inside: nothing to clip (most faces of P, for a small cell)
    for (const auto& p : poly) redundant = redundant && n.dot(p) - P.c(r) <= tolerance(P.c(r));
    if (redundant) continue;
    poly = clip<2>(poly, P.N.row(r).transpose(), P.c(r), nullptr);
    if (poly.size() < 3) poly.clear();  // a point or a segment: no interior
    reach = max_abs_coordinate(poly);
  }
  return to_matrix_2(poly);
}

Eigen::MatrixXd vertices_3(const Polytope& P, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  using P3 = Pt<3>;
  std::vector<std::vector<P3>> faces;
  {
    const P3 v[8] = {{lo(0), lo(1), lo(2)}, {hi(0), lo(1), lo(2)}, {hi(0), hi(1), lo(2)}, {lo(0), hi(1), lo(2)},
                     {lo(0), lo(1), hi(2)}, {hi(0), lo(1), hi(2)}, {hi(0), hi(1), hi(2)}, {lo(0), hi(1), hi(2)}};
    const int f[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {2, 3, 7, 6}, {1, 2, 6, 5}, {0, 4, 7, 3}};
    for (const auto& face : f) faces.push_back({v[face[0]], v[face[1]], v[face[2]], v[face[3]]});
  }
  const auto reach_of = [&] {
    double m = 0;
    for (const auto& face : faces) m = std::max(m, max_abs_coordinate(face));
    return m;
  };
  double reach = reach_of();
  for (Eigen::Index r = 0; r < P.N.rows() && !faces.empty(); ++r) {
    const P3 n = P.N.row(r).transpose();
    const double c = P.c(r);
    if (surely_redundant(n.lpNorm<1>(), c, reach)) continue;
    bool redundant = true;  // every vertex inside: nothing to clip
    for (const auto& face : faces)
      for (const auto& p : face) redundant = redundant && n.dot(p) - c <= tolerance(c);
    if (redundant) continue;
    std::vector<std::vector<P3>> next;
    std::vector<P3> cut;
    for (const auto& face : faces) {
      auto clipped = clip<3>(face, n, c, &cut);
      if (clipped.size() >= 3) next.push_back(std::move(clipped));
    }
    // The cap: the distinct cut points, ordered by angle around their centroid in the plane.
    std::vector<P3> cap;
    const double merge = 1e-12 * (1.0 + (hi - lo).cwiseAbs().maxCoeff());
    for (const auto& p : cut) {
      bool seen = false;
      for (const auto& q : cap) seen = seen || (p - q).norm() <= merge;
      if (!seen) cap.push_back(p);
    }
    if (cap.size() >= 3 && !next.empty()) {
      P3 centre = P3::Zero();
      for (const auto& p : cap) centre += p;
      centre /= static_cast<double>(cap.size());
      const P3 nu = n.normalized();
      P3 e1 = (std::abs(nu(0)) < 0.9 ? P3::UnitX() : P3::UnitY()).cross(nu).normalized();
      const P3 e2 = nu.cross(e1);
      // Each point's angle once (the comparator evaluated them O(m log m) times), the same order.
      std::vector<std::pair<double, P3>> by_angle;
      for (const auto& p : cap) by_angle.emplace_back(std::atan2((p - centre).dot(e2), (p - centre).dot(e1)), p);
      std::sort(by_angle.begin(), by_angle.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 0; i < cap.size(); ++i) cap[i] = by_angle[i].second;
      next.push_back(std::move(cap));
    }
    faces = std::move(next);
    if (faces.size() < 4) faces.clear();  // fewer than four faces bound no volume
    reach = reach_of();
  }
  std::vector<P3> verts;
  for (const auto& face : faces)
    for (const auto& p : face) verts.push_back(p);
  Eigen::MatrixXd V(3, static_cast<Eigen::Index>(verts.size()));
  for (std::size_t i = 0; i < verts.size(); ++i) V.col(static_cast<Eigen::Index>(i)) = verts[i];
  return V;
}

}  // namespace

Eigen::MatrixXd polytope_vertices(const Polytope& P, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  const Eigen::Index k = lo.size();
  if (hi.size() != k || P.N.cols() != k || P.c.size() != P.N.rows())
    throw std::invalid_argument("polytope_vertices: dimensions of N, c and the box disagree");
  if (k == 1) {
    double a = lo(0), b = hi(0);
    for (Eigen::Index r = 0; r < P.N.rows(); ++r) {
      const double n = P.N(r, 0), c = P.c(r);
      if (n > 0) b = std::min(b, c / n);
      else if (n < 0) a = std::max(a, c / n);
      else if (c < 0) return Eigen::MatrixXd(1, 0);
    }
    if (!(b > a)) return Eigen::MatrixXd(1, 0);
    Eigen::MatrixXd V(1, 2);
    V << a, b;
    return V;
  }
  if (k == 2) return vertices_2(P, lo, hi);
  if (k == 3) return vertices_3(P, lo, hi);
  throw std::invalid_argument("polytope_vertices: exact bucket geometry is implemented for k ≤ 3");
}

double max_pairwise_distance(const Eigen::MatrixXd& points) {
  double best = 0;
  for (Eigen::Index i = 0; i < points.cols(); ++i)
    for (Eigen::Index j = i + 1; j < points.cols(); ++j) best = std::max(best, (points.col(i) - points.col(j)).squaredNorm());
  return std::sqrt(best);
}

BucketGeometry::BucketGeometry(const Subspace& S, const EuclideanLsh& lsh)
    : U_(S.U), AU_(lsh.a * S.U), b_(lsh.b), eps_(lsh.eps), lo_(S.y_lo), hi_(S.y_hi) {
  if (lsh.dims() != S.d()) throw std::invalid_argument("BucketGeometry: the LSH and the subspace live in different dimensions");
  for (Eigen::Index j = 0; j < lo_.size(); ++j) {  // the clipping box must contain P: widen the LP box by a hair
    const double pad = 1e-9 * (1.0 + std::max(std::abs(lo_(j)), std::abs(hi_(j))));
    lo_(j) -= pad;
    hi_(j) += pad;
  }
}

Polytope BucketGeometry::cell(const std::int32_t* code) const {
  const Eigen::Index K = AU_.rows(), k = AU_.cols(), d = U_.rows();
  Polytope P{Eigen::MatrixXd(2 * K + 2 * d, k), Eigen::VectorXd(2 * K + 2 * d)};
  for (Eigen::Index i = 0; i < K; ++i) {
    const double h = code[i];
    P.N.row(2 * i) = AU_.row(i);  //  ã_iᵀ y ≤ ε (h_i + 1) − b_i
    P.c(2 * i) = eps_ * (h + 1.0) - b_(i);
    P.N.row(2 * i + 1) = -AU_.row(i);  // −ã_iᵀ y ≤ b_i − ε h_i
    P.c(2 * i + 1) = b_(i) - eps_ * h;
  }
  for (Eigen::Index r = 0; r < d; ++r) {  // −1 ≤ (U y)_r ≤ 1
    P.N.row(2 * K + 2 * r) = U_.row(r);
    P.c(2 * K + 2 * r) = 1.0;
    P.N.row(2 * K + 2 * r + 1) = -U_.row(r);
    P.c(2 * K + 2 * r + 1) = 1.0;
  }
  return P;
}

Eigen::MatrixXd BucketGeometry::vertices(const std::int32_t* code) const { return polytope_vertices(cell(code), lo_, hi_); }

// ---- Diameters of the hit buckets ------------------------------------------------------------------

namespace {

/// The sample indices of each bucket, contiguous (counting sort by bucket id): bucket b owns
/// order[start[b] … start[b + 1]).
void group_by_bucket(const BucketAssignment& asg, std::vector<std::size_t>& start, std::vector<Eigen::Index>& order) {
  const std::size_t B = asg.buckets(), N = asg.bucket.size();
  start.assign(B + 1, 0);
  for (std::size_t b = 0; b < B; ++b) start[b + 1] = start[b] + static_cast<std::size_t>(asg.counts[b]);
  order.resize(N);
  std::vector<std::size_t> fill(start.begin(), start.end() - 1);
  for (std::size_t n = 0; n < N; ++n) order[fill[static_cast<std::size_t>(asg.bucket[n])]++] = static_cast<Eigen::Index>(n);
}

}  // namespace

std::vector<double> sampled_bucket_diameters(const Eigen::MatrixXd& Y, const BucketAssignment& asg) {
  if (static_cast<std::size_t>(Y.cols()) != asg.bucket.size())
    throw std::invalid_argument("sampled_bucket_diameters: Y has a different number of points than the bucket assignment");
  std::vector<std::size_t> start;
  std::vector<Eigen::Index> order;
  group_by_bucket(asg, start, order);
  const std::size_t B = asg.buckets();
  const std::size_t k = static_cast<std::size_t>(Y.rows());
  std::vector<double> diam(B, 0.0);
  // An allocation can throw: parallel_for carries it out of the parallel region.
  parallel_for(std::size_t{0}, B, [&](std::size_t b) {
    // Max pairwise distance, O(n_b²) on a contiguous copy (buckets are small); for k = 1, max − min.
    const std::size_t nb = start[b + 1] - start[b];
    std::vector<double> pts(nb * k);
    for (std::size_t i = 0; i < nb; ++i)
      for (std::size_t j = 0; j < k; ++j) pts[i * k + j] = Y(static_cast<Eigen::Index>(j), order[start[b] + i]);
    double best = 0;
    if (k == 1) {
      const auto [mn, mx] = std::minmax_element(pts.begin(), pts.end());
      best = nb > 0 ? *mx - *mn : 0.0;
    } else {
      for (std::size_t i = 0; i < nb; ++i)
        for (std::size_t j = i + 1; j < nb; ++j) {
          double s = 0;
          for (std::size_t q = 0; q < k; ++q) s += (pts[i * k + q] - pts[j * k + q]) * (pts[i * k + q] - pts[j * k + q]);
          best = std::max(best, s);
        }
      best = std::sqrt(best);
    }
    diam[b] = best;
  }, {.dynamic = true, .chunk = 16});
  return diam;
}

std::vector<double> exact_bucket_diameters(const BucketGeometry& geometry, const BucketAssignment& asg) {
  if (geometry.AU().cols() > 3) throw std::invalid_argument("exact_bucket_diameters: exact bucket geometry is implemented for k ≤ 3");
  const std::size_t B = asg.buckets();
  std::vector<double> diam(B, 0.0);
  // polytope_vertices throws on inconsistent input: parallel_for carries it out of the parallel region.
  parallel_for(std::size_t{0}, B, [&](std::size_t b) { diam[b] = geometry.diameter(asg.table.code(static_cast<std::int64_t>(b))); },
               {.dynamic = true, .chunk = 16});
  return diam;
}

// ---- The arrangement bound --------------------------------------------------------------------------------

double hyperplanes_meeting_box(const Subspace& S, const EuclideanLsh& lsh, const BucketGeometry& geometry) {
  const Eigen::VectorXd reach = S.y_lo.cwiseAbs().cwiseMax(S.y_hi.cwiseAbs());
  double planes = 0;
  for (Eigen::Index i = 0; i < lsh.hashes(); ++i) {
    const double r = geometry.AU().row(i).cwiseAbs().dot(reach);
    planes += std::floor((r + lsh.b(i)) / lsh.eps) - std::floor((-r + lsh.b(i)) / lsh.eps);
  }
  return planes;
}

double log_arrangement_cells(double n, int k) {
  if (!(n >= 0) || k < 0) throw std::invalid_argument("log_arrangement_cells: needs n ≥ 0 hyperplanes and dimension k ≥ 0");
  double total = 0, term = 1;  // term = binom(n, j)
  for (int j = 0; j <= k; ++j) {
    if (j > 0) term *= (n - j + 1) / j;
    if (term <= 0) break;
    total += term;
  }
  return std::log(total);
}

// ---- One trial ---------------------------------------------------------------------------------------------

BucketTrial bucket_trial(Eigen::Index d, Eigen::Index k, Eigen::Index K, double eps, Eigen::Index samples, std::uint64_t seed,
                         std::uint64_t stream, Device device) {
  BucketTrial t;
  const Subspace S = random_subspace(d, k, seed, stream_id(stream, 0));
  const EuclideanLsh h = make_euclidean_lsh(d, K, eps, seed, stream_id(stream, 1));
  SampleStats stats;
  const Eigen::MatrixXd X = sample_uniform(S, samples, seed, stream_id(stream, 2), &stats);
  t.sampling_method = stats.method;
  t.acceptance = stats.acceptance;
  const BucketAssignment asg = assign_buckets(hash(h, X, device));
  t.buckets = static_cast<long>(asg.buckets());
  t.fingerprint_collisions = asg.table.fingerprint_collisions();
  for (auto c : asg.counts) t.singletons += (c == 1);

  const BucketGeometry geo(S, h);
  t.sigma_min = Eigen::JacobiSVD<Eigen::MatrixXd>(geo.AU()).singularValues().minCoeff();
  t.bound = eps * std::sqrt(static_cast<double>(K)) / t.sigma_min;
  t.log_arrangement = log_arrangement_cells(hyperplanes_meeting_box(S, h, geo), static_cast<int>(k));

  const std::vector<double> sampled = sampled_bucket_diameters(S.U.transpose() * X, asg);  // y = Uᵀx on Γ
  t.diam_sampled = sampled.empty() ? 0.0 : *std::max_element(sampled.begin(), sampled.end());
  if (k <= 3) {
    const std::vector<double> exact = exact_bucket_diameters(geo, asg);
    t.diam_exact = 0;
    for (std::size_t b = 0; b < exact.size(); ++b) {
      t.diam_exact = std::max(t.diam_exact, exact[b]);
      t.exact_minus_sampled = std::min(t.exact_minus_sampled, exact[b] - sampled[b]);
    }
  }
  return t;
}

}  // namespace sparseact::lsh
