#pragma once
// The LSH learner of paper 000 Theorem 4.1 (proof in App. A.1): a Euclidean LSH routes each input
// to a bucket, and the bucket holds one constant, f̂ = f at its training points. For an L-Lipschitz f
// and buckets of diameter δ on Γ, every prediction from a non-empty bucket is within L·δ of f.
// A test point whose bucket no training point reached takes the value of its approximate nearest
// training neighbour's bucket, the neighbour found through the LSH itself (the proof's fallback):
// first the buckets whose codes differ from the point's in one hash by ±1, then coarser copies of
// the same hash. Because h_i = ⌊(a_iᵀx + b_i)/ε⌋ is an integer, ⌊(h_i − m_i)/2^ℓ⌋ =
// ⌊(a_iᵀx + b_i − m_i ε)/(2^ℓ ε)⌋ is the same LSH at width 2^ℓ ε (offsets shifted by the smallest
// training code m_i, so that the training codes end in one coarse bucket): level ℓ groups the
// training points by those coarse codes, and the query takes the nearest training point in the
// finest non-empty coarse bucket. Only when no level
// has one is the nearest neighbour found exhaustively (counted, so the report says how often).
//
// Width: Lemma 4.2 (with ERRATA 000) gives ‖x₁ − x₂‖ ≤ ε_LSH √K / σ_min(A U) for x₁, x₂ ∈ Γ in one
// bucket, A the K × d hash directions and U the basis of Γ; `width_for_error` picks ε_LSH so that
// this diameter times L is a given share of the target error ε.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/lsh/bucket_table.hpp>
#include <sparseact/lsh/hash.hpp>

namespace sparseact::lsh {

/// The training points grouped by the codes ⌊h/2^ℓ⌋ of one coarser width.
struct CoarseLevel {
  int shift = 1;  ///< ℓ: width 2^ℓ ε
  BucketTable table{1};
  std::vector<std::vector<Eigen::Index>> members;
};

struct LshLearner {
  EuclideanLsh lsh;
  BucketTable table{1};
  Eigen::VectorXd value;                          ///< the constant of each bucket (mean of f over its training points)
  std::vector<std::vector<Eigen::Index>> members;  ///< training points of each bucket
  Eigen::MatrixXd X;                              ///< training inputs (d × N), for the nearest-neighbour fallback
  std::vector<Eigen::Index> bucket_of;            ///< fine bucket of each training point
  std::vector<CoarseLevel> levels;                ///< ℓ = 1, 2, … until one coarse bucket holds every point
  Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1> code_min;  ///< m_i: smallest training code of each hash
  Eigen::Index buckets() const { return static_cast<Eigen::Index>(table.size()); }
};

/// Fits the table: one constant per non-empty bucket.
LshLearner fit_lsh_learner(EuclideanLsh lsh, const Eigen::MatrixXd& X, const Eigen::VectorXd& y);

struct LshPrediction {
  Eigen::VectorXd y;
  Eigen::Index direct = 0;    ///< test points whose own bucket was non-empty
  Eigen::Index probed = 0;    ///< answered through a neighbouring bucket (±1 in one hash)
  Eigen::Index coarse = 0;    ///< answered through a coarser level
  Eigen::Index exhaustive = 0;  ///< no level had a training point: exact nearest neighbour
};

LshPrediction predict(const LshLearner& learner, const Eigen::MatrixXd& X);

/// ε_LSH with L · ε_LSH √K / σ_min(A U) = share · ε: buckets on Γ then have diameter ≤ share·ε/L.
double width_for_error(double eps, double L, double sigma_min_AU, Eigen::Index K, double share = 0.5);

/// σ_min(A U) for directions A (K × d) and an orthonormal basis U (d × k).
double sigma_min_projected(const Eigen::MatrixXd& A, const Eigen::MatrixXd& U);

/// The sample size of Theorem 4.1 without its constant: k (L√d/ε)^k log(L√d/ε).
double theorem41_samples(Eigen::Index d, Eigen::Index k, double L, double eps);
/// The table size of Theorem 4.1 without its constant (ERRATA 000): (L√d/ε)^k.
double theorem41_table_size(Eigen::Index d, Eigen::Index k, double L, double eps);

}  // namespace sparseact::lsh
