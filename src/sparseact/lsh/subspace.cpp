#include <sparseact/lsh/subspace.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <Eigen/Dense>
#include <fmt/format.h>

#include <sparseact/core/lp.hpp>
#include <sparseact/core/parallel.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::lsh {

namespace {

// Sub-streams of a sampling stream: block b uses stream_id(stream, b); the pilot that estimates the
// acceptance rate uses a stream no block reaches.
constexpr std::uint64_t pilot_stream = ~std::uint64_t{0};
constexpr Eigen::Index block_points = 2048;      // accepted points per block
constexpr Eigen::Index pilot_proposals = 1 << 16;
constexpr double min_acceptance = 1e-4;          // below it, rejection is too slow: hit-and-run

/// Thin Q of a d × k matrix of full column rank, columns signed so diag(R) > 0 (then Q of a Gaussian
/// matrix is Haar-distributed on the Stiefel manifold; Mezzadri 2007).
Eigen::MatrixXd orthonormal_columns(const Eigen::MatrixXd& M) {
  const Eigen::Index d = M.rows(), k = M.cols();
  if (k < 1 || k > d) throw std::invalid_argument("subspace: need 1 ≤ k ≤ d");
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(M);
  Eigen::MatrixXd Q = qr.householderQ() * Eigen::MatrixXd::Identity(d, k);
  const Eigen::MatrixXd R = qr.matrixQR().topRows(k).triangularView<Eigen::Upper>();
  const double scale = M.cwiseAbs().maxCoeff();
  for (Eigen::Index j = 0; j < k; ++j) {
    if (!(std::abs(R(j, j)) > 1e-12 * std::max(scale, 1e-300) * static_cast<double>(d)))
      throw std::invalid_argument("subspace: the basis does not have full column rank");
    if (R(j, j) < 0) Q.col(j) = -Q.col(j);
  }
  return Q;
}

Subspace with_box(Eigen::MatrixXd U) {
  Subspace S;
  const BoundingBox box = bounding_box(U);
  S.U = std::move(U);
  S.y_lo = box.lo;
  S.y_hi = box.hi;
  return S;
}

/// y ∈ P, i.e. ‖U y‖_∞ ≤ 1.
bool inside(const Eigen::MatrixXd& U, const Eigen::VectorXd& y) { return (U * y).cwiseAbs().maxCoeff() <= 1.0; }

}  // namespace

BoundingBox bounding_box(const Eigen::MatrixXd& U) {
  const Eigen::Index d = U.rows(), k = U.cols();
  if (k < 1 || d < k) throw std::invalid_argument("bounding_box: U must be d × k with 1 ≤ k ≤ d");
  lp::Problem P;
  P.add_variables(k, -lp::inf, lp::inf);  // y free
  P.add_constraints(U, -1.0, 1.0);        // −1 ≤ (U y)_i ≤ 1
  // No presolve: each of the 2k LPs starts from the previous one's optimal basis.
  lp::SolveOptions options;
  options.presolve = false;
  BoundingBox box{Eigen::VectorXd(k), Eigen::VectorXd(k), Eigen::MatrixXd(k, 2 * k)};
  for (Eigen::Index j = 0; j < k; ++j) {
    for (int sense = 0; sense < 2; ++sense) {  // 0: min y_j, 1: max y_j
      P.set_objective(Eigen::VectorXd::Unit(k, j), sense == 0 ? lp::Sense::minimize : lp::Sense::maximize);
      const lp::Solution s = P.solve(options);
      if (!s.optimal())
        throw std::runtime_error(fmt::format("bounding_box: the LP is {} (U not of full rank?)", lp::to_string(s.status)));
      box.witnesses.col(2 * j + sense) = s.x;
      (sense == 0 ? box.lo : box.hi)(j) = s.objective;
    }
  }
  return box;
}

Subspace random_subspace(Eigen::Index d, Eigen::Index k, std::uint64_t seed, std::uint64_t stream) {
  if (k < 1 || k > d) throw std::invalid_argument("random_subspace: need 1 ≤ k ≤ d");
  Eigen::MatrixXd G(d, k);  // Gaussian d × k; its column span is a Haar-random k-subspace
  fill_random(G.data(), static_cast<std::size_t>(G.size()), Distribution::normal, 1.0, seed, stream);
  return with_box(orthonormal_columns(G));
}

Subspace subspace_from_basis(const Eigen::MatrixXd& basis) { return with_box(orthonormal_columns(basis)); }

Eigen::MatrixXd sample_uniform(const Subspace& S, Eigen::Index N, std::uint64_t seed, std::uint64_t stream, SampleStats* stats) {
  const Eigen::Index d = S.d(), k = S.k();
  if (N < 0) throw std::invalid_argument("sample_uniform: N < 0");
  if (S.y_lo.size() != k || S.y_hi.size() != k) throw std::invalid_argument("sample_uniform: the subspace has no bounding box");
  // The LP box is tight up to the simplex's rounding: widen it by a hair so that it surely contains P.
  // Rejection stays exactly uniform on P for any box ⊇ P (only the acceptance rate changes).
  Eigen::VectorXd lo(k), hi(k);
  for (Eigen::Index j = 0; j < k; ++j) {
    const double pad = 1e-9 * (1.0 + std::max(std::abs(S.y_lo(j)), std::abs(S.y_hi(j))));
    lo(j) = S.y_lo(j) - pad;
    hi(j) = S.y_hi(j) + pad;
  }
  auto propose = [&](Rng& rng, Eigen::VectorXd& y) {
    for (Eigen::Index j = 0; j < k; ++j) y(j) = rng.uniform(lo(j), hi(j));
  };

  // Pilot: the acceptance rate vol(P)/vol(box) decides the method.
  double pilot_rate;
  {
    Rng rng(seed, stream_id(stream, pilot_stream));
    Eigen::VectorXd y(k);
    Eigen::Index hits = 0;
    Eigen::Index t = 0;
    for (; t < pilot_proposals && hits < 256; ++t) {  // enough hits to tell the rate from 1e-4
      propose(rng, y);
      hits += inside(S.U, y);
    }
    pilot_rate = static_cast<double>(hits) / static_cast<double>(t);
  }
  const bool rejection = pilot_rate >= min_acceptance;

  Eigen::MatrixXd Y(k, N);
  const Eigen::Index blocks = (N + block_points - 1) / block_points;
  // Per-block counts, summed after the loop; the blocks allocate, so parallel_for carries a failure out
  // of the parallel region.
  std::vector<long long> block_proposals(static_cast<std::size_t>(blocks), 0), block_accepted(static_cast<std::size_t>(blocks), 0);
  parallel_for(Eigen::Index{0}, blocks, [&](Eigen::Index b) {
    long long& proposals = block_proposals[static_cast<std::size_t>(b)];
    long long& accepted = block_accepted[static_cast<std::size_t>(b)];
    Rng rng(seed, stream_id(stream, static_cast<std::uint64_t>(b)));
    const Eigen::Index begin = b * block_points, end = std::min(N, begin + block_points);
    Eigen::VectorXd y(k);
    if (rejection) {
      // Exactly uniform: proposals uniform on the box, kept when in P.
      for (Eigen::Index n = begin; n < end;) {
        propose(rng, y);
        ++proposals;
        if (inside(S.U, y)) {
          Y.col(n++) = y;
          ++accepted;
        }
      }
    } else {
      // Hit-and-run (Smith 1984) from the centre y = 0 ∈ P (P is symmetric): a uniform direction v, the
      // chord {y + t v} ∩ P from the 2d constraints, t uniform on it. Its law converges to the uniform
      // one; burn-in and thinning below, per block (one chain per block, so any thread count agrees).
      y.setZero();
      const Eigen::Index burn = 1000 + 100 * k * k, thin = 10 * k;
      Eigen::VectorXd v(k);
      auto step = [&] {
        for (Eigen::Index j = 0; j < k; ++j) v(j) = rng.normal();
        v.normalize();
        const Eigen::VectorXd Uy = S.U * y, Uv = S.U * v;
        double tlo = -INFINITY, thi = INFINITY;
        for (Eigen::Index i = 0; i < d; ++i) {
          if (Uv(i) == 0) continue;
          const double t1 = (-1.0 - Uy(i)) / Uv(i), t2 = (1.0 - Uy(i)) / Uv(i);
          tlo = std::max(tlo, std::min(t1, t2));
          thi = std::min(thi, std::max(t1, t2));
        }
        if (thi > tlo) y += rng.uniform(tlo, thi) * v;
      };
      for (Eigen::Index s = 0; s < burn; ++s) step();
      for (Eigen::Index n = begin; n < end; ++n) {
        for (Eigen::Index s = 0; s < thin; ++s) step();
        Y.col(n) = y;
      }
      proposals += end - begin;
      accepted += end - begin;
    }
  }, {.dynamic = true});
  long long proposals = 0, accepted = 0;
  for (Eigen::Index b = 0; b < blocks; ++b)
    proposals += block_proposals[static_cast<std::size_t>(b)], accepted += block_accepted[static_cast<std::size_t>(b)];
  if (stats) {
    stats->method = rejection ? "rejection from the bounding box of P (exactly uniform)"
                              : "hit-and-run in P (approximately uniform; box acceptance below 1e-4)";
    stats->acceptance = rejection ? (proposals > 0 ? static_cast<double>(accepted) / static_cast<double>(proposals) : pilot_rate)
                                  : pilot_rate;
  }
  return S.U * Y;
}

Eigen::MatrixXd sample_cube(Eigen::Index d, Eigen::Index N, std::uint64_t seed, std::uint64_t stream) {
  if (d < 1 || N < 0) throw std::invalid_argument("sample_cube: need d ≥ 1, N ≥ 0");
  Eigen::MatrixXd X(d, N);
  // Uniform on [−√3 sd, √3 sd] with sd = 1/√3 is U[−1, 1].
  fill_random(X.data(), static_cast<std::size_t>(X.size()), Distribution::uniform, 1.0 / std::sqrt(3.0), seed, stream);
  return X.cwiseMax(-1.0).cwiseMin(1.0);  // guard against rounding of √3·(1/√3)
}

}  // namespace sparseact::lsh
