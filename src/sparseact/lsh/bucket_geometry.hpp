#pragma once
// Buckets of a Euclidean LSH restricted to a k-subspace Γ (paper 000, Lemma 4.2): their exact
// polytopes and diameters, the diameters of the samples that fall in them, and the arrangement
// bound on how many of them meet Γ.
//
// Lemma 4.2: K = C·k hashes of width ε partition Γ = (k-subspace) ∩ [−1, 1]^d into buckets such that,
// with probability ≥ 0.9, (1) every bucket's part of Γ has diameter ≤ ε/c and (2) at most
// (2√d/ε)^{O(k)} buckets meet Γ. The proof: x₁, x₂ in one bucket ⇒ ‖A(x₁ − x₂)‖_∞ ≤ ε ⇒
// ‖A(x₁ − x₂)‖₂ ≤ ε√K (ERRATA 000: √K, not √k), so ‖x₁ − x₂‖ ≤ ε√K/σ_min(A U).
//
// In the coordinates y of Γ (x = U y), bucket h is the polytope
//     { y : ε h_i ≤ ã_iᵀ y + b_i ≤ ε (h_i + 1) for i ∈ [K],  −1 ≤ U y ≤ 1 },   ã_i = Uᵀ a_i,
// (its closure: the upper side is strict in the hash, which does not change the diameter). U is an
// isometry, so diameters in y are diameters on Γ. AU = A U ∈ R^{K×k} holds the projected directions
// of the proof (its "A").
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>
#include <sparseact/lsh/bucket_table.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/subspace.hpp>

namespace sparseact::lsh {

// ---- Exact bucket polytopes ---------------------------------------------------------------------

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

// ---- Diameters of the hit buckets ------------------------------------------------------------------

/// Per bucket b of `asg`, the diameter of its sample points: max_{i<j} ‖y_i − y_j‖ over the columns of
/// Y (k × N, coordinates on Γ) that `asg` puts in b; 0 for a single point. A lower bound on the
/// bucket's diameter, exact in the limit of dense samples. O(Σ_b n_b²), buckets in parallel.
std::vector<double> sampled_bucket_diameters(const Eigen::MatrixXd& Y, const BucketAssignment& asg);

/// Per bucket b of `asg`, the exact diameter of its polytope on Γ (k ≤ 3; throws otherwise).
std::vector<double> exact_bucket_diameters(const BucketGeometry& geometry, const BucketAssignment& asg);

// ---- The arrangement bound on the number of buckets --------------------------------------------------

/// The number of LSH hyperplanes ã_iᵀ y + b_i = ε m (i ∈ [K], m ∈ Z) that meet the bounding box of
/// P = {y : −1 ≤ U y ≤ 1}: on the box, ã_iᵀ y ranges within ±r_i, r_i = Σ_j |ã_ij| max(|lo_j|, |hi_j|),
/// so hash i contributes ⌊(r_i + b_i)/ε⌋ − ⌊(−r_i + b_i)/ε⌋ of them.
double hyperplanes_meeting_box(const Subspace& S, const EuclideanLsh& lsh, const BucketGeometry& geometry);

/// log Σ_{j=0}^{k} binom(n, j): the most cells that n hyperplanes cut R^k into (Buck 1943; equality
/// in general position), so a bound on the buckets meeting Γ when n hyperplanes cross P.
double log_arrangement_cells(double n, int k);

// ---- One trial of Lemma 4.2 -------------------------------------------------------------------------

/// One draw of (Γ, LSH) and `samples` uniform points on Γ, measured as Lemma 4.2 states it.
struct BucketTrial {
  double sigma_min = 0;                   ///< σ_min(A U)
  double bound = 0;                       ///< ε√K / σ_min(A U): the always-true diameter bound
  double diam_sampled = 0;                ///< max over hit buckets of their samples' diameter
  double diam_exact = std::numeric_limits<double>::quiet_NaN();  ///< max over hit buckets of the polytope diameter (k ≤ 3)
  double exact_minus_sampled = std::numeric_limits<double>::infinity();  ///< min over hit buckets of exact − sampled (k ≤ 3; ≥ 0 up to rounding)
  long buckets = 0;                       ///< buckets hit by the samples
  long singletons = 0;                    ///< buckets hit by exactly one sample
  double log_arrangement = 0;             ///< log of the arrangement bound on the buckets meeting Γ
  double acceptance = 1;                  ///< of the sampler (SampleStats)
  std::string sampling_method;            ///< of the sampler (SampleStats)
  std::size_t fingerprint_collisions = 0; ///< of the bucket table (reported, never merged)
};

/// A Haar k-subspace of R^d (stream_id(stream, 0)), a Euclidean LSH with K hashes of width ε
/// (stream_id(stream, 1)) and `samples` uniform points on Γ (stream_id(stream, 2)), hashed on `device`.
/// Deterministic for (seed, stream), any thread count.
BucketTrial bucket_trial(Eigen::Index d, Eigen::Index k, Eigen::Index K, double eps, Eigen::Index samples, std::uint64_t seed,
                         std::uint64_t stream, Device device = Device::cpu);

}  // namespace sparseact::lsh
