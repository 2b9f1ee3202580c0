#pragma once
// Inputs on a k-dimensional subspace (paper 000 §4): Γ = {U y : U y ∈ [−1, 1]^d}, U ∈ R^{d×k}
// with orthonormal columns. U is an isometry, so the uniform law on Γ is the image of the uniform
// law on the polytope P = {y ∈ R^k : −1 ≤ U y ≤ 1}; sampling draws y uniformly on P (not on a
// y-box) and maps it through U.
#include <cstdint>
#include <string>

#include <Eigen/Core>

#include <sparseact/lsh/hash.hpp>

namespace sparseact::lsh {

struct Subspace {
  Eigen::MatrixXd U;       ///< d × k, orthonormal columns
  Eigen::VectorXd y_lo, y_hi;  ///< bounding box of P (each coordinate's min and max over P, by linear programming)
  Eigen::Index d() const { return U.rows(); }
  Eigen::Index k() const { return U.cols(); }
};

/// A random k-dimensional subspace of R^d (Haar: QR of a Gaussian d × k matrix), with its box.
Subspace random_subspace(Eigen::Index d, Eigen::Index k, std::uint64_t seed, std::uint64_t stream = 0);
/// The subspace spanned by the given columns (orthonormalised), with its box.
Subspace subspace_from_basis(const Eigen::MatrixXd& basis);

struct SampleStats {
  std::string method;     ///< "rejection from the bounding box of P" or "hit-and-run" (if acceptance is too low)
  double acceptance = 1;  ///< fraction of box proposals inside P
};

/// N points uniform on Γ as the columns of a d × N matrix; deterministic for (seed, stream), any thread count.
Eigen::MatrixXd sample_uniform(const Subspace& S, Eigen::Index N, std::uint64_t seed, std::uint64_t stream = 0,
                               SampleStats* stats = nullptr);

/// The bounding box of P = {y : −1 ≤ U y ≤ 1} by 2k linear programs (GLPK simplex): lo(j) = min y_j,
/// hi(j) = max y_j over P, and the optimal points (argmin in column 2j, argmax in column 2j + 1), which
/// lie in P and achieve the bounds. P is bounded because U has full column rank.
struct BoundingBox {
  Eigen::VectorXd lo, hi;
  Eigen::MatrixXd witnesses;  ///< k × 2k
};
BoundingBox bounding_box(const Eigen::MatrixXd& U);

/// N points uniform on the cube [−1, 1]^d (the §5 / App. D.1 inputs), d × N.
Eigen::MatrixXd sample_cube(Eigen::Index d, Eigen::Index N, std::uint64_t seed, std::uint64_t stream = 0);

}  // namespace sparseact::lsh

namespace sparseact::lsh {

// ---- Buckets of a Euclidean LSH restricted to Γ, exactly (paper 000, Lemma 4.2) ------------------
//
// In the coordinates y of Γ (x = U y), bucket h of a Euclidean LSH with directions a_i and offsets b_i
// is the polytope
//     { y : ε h_i ≤ ã_iᵀ y + b_i ≤ ε (h_i + 1) for i ∈ [K],  −1 ≤ U y ≤ 1 },   ã_i = Uᵀ a_i,
// (its closure: the upper side is strict in the hash, which does not change the diameter). U is an
// isometry, so diameters in y are diameters on Γ. AU = A U ∈ R^{K×k} holds the projected directions
// of the proof of Lemma 4.2 (its "A").

/// Halfspaces {y : N y ≤ c}.
struct Polytope {
  Eigen::MatrixXd N;
  Eigen::VectorXd c;
};

/// Vertices (columns, k × V) of the bounded polytope {N y ≤ c} ∩ [lo, hi] for k = 1, 2 or 3: the box is
/// clipped by one halfspace at a time (an interval; Sutherland–Hodgman for a polygon; for a polyhedron
/// each face polygon is clipped and the cut is closed by a cap face). Empty: zero columns. Throws
/// std::invalid_argument for k > 3.
Eigen::MatrixXd polytope_vertices(const Polytope& P, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi);

/// max_{i<j} ‖p_i − p_j‖ over the columns (0 for fewer than two), O(n²).
double max_pairwise_distance(const Eigen::MatrixXd& points);

/// The LSH's buckets on Γ as polytopes in y.
class BucketGeometry {
 public:
  BucketGeometry(const Subspace& S, const EuclideanLsh& lsh);
  const Eigen::MatrixXd& AU() const noexcept { return AU_; }
  /// The bucket polytope of `code` (K int32s): 2K slab halfspaces, then the 2d faces of P.
  Polytope cell(const std::int32_t* code) const;
  /// Its vertices (k ≤ 3), clipped from the bounding box of P.
  Eigen::MatrixXd vertices(const std::int32_t* code) const;
  /// Its exact diameter, the largest vertex distance (k ≤ 3); 0 for an empty cell.
  double diameter(const std::int32_t* code) const { return max_pairwise_distance(vertices(code)); }

 private:
  Eigen::MatrixXd U_;
  Eigen::MatrixXd AU_;
  Eigen::VectorXd b_;
  double eps_;
  Eigen::VectorXd lo_, hi_;
};

}  // namespace sparseact::lsh
