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
