#pragma once
// K-means prototypes (paper 003 §6.2: "we set the prototypes as centroids obtained through the standard
// K-means clustering"): Lloyd's iterations from k-means++ seeding (Arthur & Vassilvitskii, 2007).
//
//   seeding   c_1 uniform among the points; c_k drawn with probability ∝ D(x)², D(x) the distance from x
//             to the nearest centroid chosen so far; all draws from Rng(seed, stream_id(stream, 0))
//   assign    a(x) = argmin_k ‖x − c_k‖², lowest k on ties (eq. (5)'s rule)
//   update    c_k = the mean of its points; an empty cluster is re-seeded at the point farthest from its
//             centroid (largest ‖x − c_{a(x)}‖², lowest index on ties; distinct points when several are empty)
//   stop      after max_iter updates, or once Σ_k ‖c_k^{new} − c_k^{old}‖² ≤ tol · mean_i Var(X_{i·})
//             (scikit-learn's relative tolerance), or when no assignment changes.
//
// The inertia Σ_x ‖x − c_{a(x)}‖² after each assignment never increases (the mean minimises a cluster's
// squared error; an empty cluster's new centre adds nothing before the next assignment). Distances are
// summed coordinate by coordinate for each point alone, so the result is the same for any thread count.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace sparseact::moe {

struct KMeansOptions {
  int max_iter = 100;  ///< Lloyd updates at most
  double tol = 1e-4;   ///< relative to the mean per-coordinate variance of the points
};

struct KMeans {
  Eigen::MatrixXd centroids;             ///< n × K, the prototypes p_1 … p_K as columns
  std::vector<Eigen::Index> assignment;  ///< a(x_i) for each point, by the final centroids
  double inertia = 0;                    ///< Σ_i ‖x_i − c_{a(x_i)}‖² by the final centroids
  std::vector<double> inertia_history;   ///< the inertia after each assignment step
  int iterations = 0;                    ///< Lloyd updates made
  bool converged = false;                ///< stopped by tol or unchanged assignments, not by max_iter
  int reseeded = 0;                      ///< empty clusters re-seeded, over all iterations
};

/// K-means of the columns of X (n × N). Throws std::invalid_argument unless 1 ≤ K ≤ N, X is finite,
/// max_iter ≥ 1 and tol ≥ 0.
KMeans kmeans(const Eigen::MatrixXd& X, int K, std::uint64_t seed, std::uint64_t stream, const KMeansOptions& options = {});

}  // namespace sparseact::moe
