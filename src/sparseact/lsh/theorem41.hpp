#pragma once
// Paper 000 Theorem 4.1 measured: the LSH learner (lsh/lsh_learner.hpp) learns an L-Lipschitz f on a
// k-dimensional subspace Γ of [−1, 1]^d to uniform error ε with N* = O(k (L√d/ε)^k log(L√d/ε))
// samples, a table of O((L√d/ε)^k) buckets (ERRATA 000) and a forward pass of O(dk log(L√d/ε)); and
// eq. (1): a dense model of equal error costs Ω(d (2√d/(Cε))^k) per input.
//
// learn_on_subspace: a Haar Γ, one Euclidean LSH with K = C·k hashes whose width ε_LSH Lemma 4.2 sets
// so that buckets on Γ are ≤ ε/(2L) wide (width_for_error with σ_min(AU) of the draw; the other half
// of ε is left to the nearest-neighbour fallback), trained on N = factor · N* uniform points of Γ
// (N* without its constant) and tested on uniform points of Γ: the largest and mean-squared error,
// the table size and the forward-pass time. One set of directions and offsets serves every ε (offsets
// scaled with the width), so table sizes across ε compare one arrangement at different scales; they are
// counted on one fixed sample for every ε, so a small ε can only be undercounted more than a large one
// (the fitted growth rate errs low, never high).
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/subspace.hpp>
#include <sparseact/lsh/targets.hpp>

namespace sparseact::lsh {

struct LearningSetup {
  int C = 4;                         ///< hashes per subspace dimension: K = C·k (Lemma 4.2)
  Eigen::Index test_points = 4000;   ///< uniform test points of Γ
  double max_samples = 2e5;          ///< configurations needing more training points are skipped
};

/// One trained learner.
struct LearnerRun {
  double eps = 0, eps_lsh = 0, factor = 0;
  Eigen::Index samples = 0, buckets = 0;  ///< N and the learner's non-empty buckets
  double table_order = 0;                 ///< (L√d/ε)^k, Theorem 4.1's table without its constant
  double sup_error = 0;                   ///< max over the test points of |f̂ − f|: a lower estimate of the sup norm
  double mse = 0;
  double probed_share = 0, coarse_share = 0, exhaustive_share = 0;  ///< test points answered by the fallbacks
  double seconds_per_point = 0;           ///< forward pass, best of 3
};

struct SubspaceLearning {
  Eigen::Index d = 0, k = 0, K = 0;
  double L = 0, sigma_min = 0;  ///< the target's Lipschitz bound; σ_min(AU) of the draw
  std::vector<LearnerRun> runs;
  std::vector<double> inv_eps, buckets;  ///< per ε: 1/ε and the non-empty buckets on the counting sample
  Eigen::Index count_points = 0;         ///< size of the counting sample: min(max_samples, 4 N*(last ε)), at least 1000
  int skipped = 0;                       ///< (ε, factor) pairs above max_samples
};

/// Streams of stream_id(stream, ·): 1 Γ, 2 the LSH, 3 the test points, 5 the counting sample, and
/// stream_id(stream_id(stream, 4 + ε index), factor index) the training points. `eps_done` (optional) is
/// called after each ε. Throws std::invalid_argument when k exceeds the target's dimension.
SubspaceLearning learn_on_subspace(const Target& f, Eigen::Index k, const std::vector<double>& epss, const std::vector<double>& factors,
                                   const LearningSetup& setup, std::uint64_t seed, std::uint64_t stream,
                                   const std::function<void()>& eps_done = {});

/// What the (ε, factor) runs of one (target, k) share, rebuilt from its streams by every process that
/// runs one of them (lsh_learn's work items): Γ, the LSH directions at unit width, the test points and
/// the counting sample (sized for the last ε of the list).
struct SubspaceContext {
  Eigen::Index d = 0, k = 0, K = 0;
  double L = 0, sigma_min = 0;
  Subspace S;
  EuclideanLsh unit;
  Eigen::MatrixXd Xtest, Xcount;
  Eigen::VectorXd ytest;
};
SubspaceContext subspace_context(const Target& f, Eigen::Index k, double last_eps, const LearningSetup& setup, std::uint64_t seed,
                                 std::uint64_t stream);
/// The LSH of width for ε (Lemma 4.2 with the draw's σ_min).
EuclideanLsh lsh_for_error(const SubspaceContext& c, double eps);
/// One trained learner at (ε of index ei, factor of index fi); nothing when it needs more than
/// setup.max_samples points (skipped).
std::optional<LearnerRun> learner_run(const Target& f, const SubspaceContext& c, double eps, std::size_t ei, double factor,
                                      std::size_t fi, const LearningSetup& setup, std::uint64_t seed, std::uint64_t stream);
/// Non-empty buckets of the width-ε LSH on the counting sample.
double table_count(const SubspaceContext& c, double eps);

/// The table's growth: the log–log slope of the non-empty buckets against 1/ε, which Theorem 4.1 bounds
/// by k, allowing 3 standard errors of the fit (SE = 0 with two values of ε).
struct TableGrowth {
  double slope = 0, se = 0;
  double bound = 0;        ///< k + 3·SE
  bool saturated = false;  ///< most counting points sit alone in a bucket at the smallest ε: the count measures the sample
};
/// Needs at least two values of ε (throws std::invalid_argument otherwise).
TableGrowth table_growth(const SubspaceLearning& s);

/// Eq. (1) on its hardest instances: a member of Theorem 4.3's bump family (L = 1, bumps of radius ε on a
/// k = 1 dimensional diagonal subspace of R^d, random signs) learned by the LSH learner (K = C hashes) at
/// N = N*, and the narrowest dense random-ReLU-feature model (least-squares top layer on 8000 points,
/// width doubling from 8 up to 512) whose test MSE is as small. Cost = multiply–adds of one forward pass:
/// 2dK + K for the hash, 2dt + 3t for a width-t dense model.
struct EqualErrorComparison {
  double eps = 0;
  Eigen::Index K = 0, dense_width = 0;
  double lsh_mse = 0, lsh_seconds_per_point = 0, lsh_flops = 0;
  double dense_mse = 0, dense_seconds_per_point = 0, dense_flops = 0;
  bool reached = false;  ///< the dense model reached the LSH learner's MSE within width 512
};
/// Streams stream_id(300 + j, index) for j = 0..5: signs, LSH, training, test, dense training, dense features.
/// `timed` = false leaves the two forward-pass times at 0 (lsh_learn times them on rank 0 after its sweep,
/// where no other item runs beside them).
EqualErrorComparison dense_at_equal_error(Eigen::Index d, int C, double eps, Eigen::Index test_points, std::uint64_t seed,
                                          std::uint64_t index, bool timed = true);

}  // namespace sparseact::lsh
