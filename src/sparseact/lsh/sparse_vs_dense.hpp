#pragma once
// Paper 000 §5 (Figures 2–4, 7, Table 1) and Appendix D: dense and data-dependent sparse models
// trained on the same data at equal activated units, and the paired verdict "model a beats model b".
//
// Models (lsh/dsm.hpp, lsh/lsh_model.hpp), all with a fixed random bottom layer and a trainable top
// layer, codes as in the analysis's tables (ModelKind):
//   dense(t)           g(x) = A σ(Bx + c), t units, all activated
//   DSM Top-K(T, K)    g(x) = (A ∘ TopK(Bx + c)) σ(Bx + c): width T, K activated units
//   random hash(T, K)  the same with a mask chosen by a hash of x alone (App. D.1)
//   LSH(s, m)          s hyperplane tables of m bits, a trainable constant per bucket: s activated units
// Each model's top layer trains with RMSProp from A = 0 (lsh/train.hpp); where asked, the exact
// least-squares optimum of the same convex problem is the reference for how far RMSProp got.
//
// "a beats b" on paired repetitions r = 1..S (same data, test set and minibatch order):
// δ_r = MSE_b,r − MSE_a,r, a beats b when mean(δ) > t_{0.95, S−1} · sd(δ)/√S (one-sided paired t-test
// at 5%). With S = 1 the spread is that of the test set: δ > z_{0.95} · se, se the standard error of the
// per-point differences of squared errors.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/lsh/dsm.hpp>
#include <sparseact/lsh/targets.hpp>
#include <sparseact/lsh/train.hpp>

namespace sparseact::lsh {

/// The four models of §5; the values are the codes of the analysis's tables.
enum class ModelKind : int { dense = 0, dsm_top_k = 1, random_hash = 2, lsh = 3 };
/// "dense", "DSM Top-K", "random hash", "LSH".
const char* to_string(ModelKind kind) noexcept;
/// The names of the analysis's code table: "dense", "dsm_top_k", "random_hash", "lsh".
const char* to_code(ModelKind kind) noexcept;

/// One model: K activated units of total width T; for LSH, s = K tables of m = bits bits, T = s·2^m.
struct ModelSpec {
  ModelKind kind = ModelKind::dense;
  int K = 0, T = 0, bits = 0;
};

/// Inputs uniform on [−1, 1]^d and the target's values, one training and one test set per repetition.
struct Dataset {
  Eigen::Index d = 0;
  std::vector<Eigen::MatrixXd> X_train, X_test;
  std::vector<Eigen::VectorXd> y_train, y_test;
  double test_variance = 0;  ///< variance of y on the first test set (the MSE of the best constant)
};

/// `reps` repetitions r, each from the streams stream_id(stream_id(stream, r), 0) (training) and 1 (test).
Dataset make_dataset(const Target& f, int reps, Eigen::Index n_train, Eigen::Index n_test, std::uint64_t seed,
                     std::uint64_t stream);

/// The targets of §5 and App. D, target ti from the stream stream_id(1, ti): the degree-`degree` random
/// polynomial with Σ|coef| = 1 (App. D.1) and the random hypercube function (§5.1), both on [−1, 1]^d,
/// then p(Ax) on [−1, 1]^low_d with intrinsic dimension low_k (App. D.2), left out when low_d = 0.
std::vector<std::unique_ptr<Target>> comparison_targets(Eigen::Index d, int degree, Eigen::Index low_d, Eigen::Index low_k,
                                                        std::uint64_t seed);

/// The targets' datasets, each made once per process from its own stream (make_dataset with
/// stream_id(2, ti)) when a job first asks for it: work items on any thread or rank read the same data
/// and nothing is sent. Thread-safe; a dataset whose making throws is tried again by the next call.
class DatasetCache {
 public:
  DatasetCache(std::vector<std::unique_ptr<Target>> targets, int reps, Eigen::Index n_train, Eigen::Index n_test,
               std::uint64_t seed);
  std::size_t size() const noexcept { return targets_.size(); }
  const Target& target(std::size_t ti) const { return *targets_.at(ti); }
  const Dataset& dataset(std::size_t ti) const;

 private:
  std::vector<std::unique_ptr<Target>> targets_;
  int reps_;
  Eigen::Index n_train_, n_test_;
  std::uint64_t seed_;
  std::unique_ptr<std::mutex[]> locks_;                  // one per target: making one blocks only its users
  std::unique_ptr<std::unique_ptr<const Dataset>[]> data_;  // null until made
};

/// How every model is built and trained.
struct TrainingSetup {
  TopLayerTraining training;  ///< App. D.1's RMSProp, batch and epochs (lsh/train.hpp)
  BottomLayer bottom;       ///< of the dense, DSM and random-hash models
  double lsh_offset = 1.0;  ///< hyperplane offsets U[−r, r] of the LSH model
};

/// What one trained model measured.
struct Outcome {
  double test_mse = 0, train_mse = 0;
  double ls_test_mse = std::numeric_limits<double>::quiet_NaN(), ls_train_mse = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> test_history;  ///< test MSE after each epoch
  Eigen::VectorXd sq_err;            ///< squared error per test point (the S = 1 spread)
};

/// Builds the model of `spec` on R^d from (seed, stream), trains its top layer on repetition `rep` of
/// `data` (minibatch order from stream_id(stream, 99)) and tests it; with `least_squares_reference`
/// also the exact optimum's train and test MSE. Throws std::invalid_argument on inconsistent sizes.
Outcome train_and_test(const ModelSpec& spec, const Dataset& data, int rep, const TrainingSetup& setup,
                       bool least_squares_reference, std::uint64_t seed, std::uint64_t stream);

/// One training run of the comparison.
struct Job {
  int target = 0;  ///< index into the datasets
  int rep = 0;     ///< repetition (paired across models)
  int group = 0;   ///< 0: the sweep over K, 1: Table 1
  ModelSpec model;
  bool least_squares_reference = false;
  /// A rough relative cost, for scheduling the heaviest jobs first: T + 4K (dense, DSM, random hash),
  /// K·(m + 4) (LSH: s = K tables of m hyperplanes).
  double cost() const;
};

/// The stream of a job's model and minibatches: a function of (target, rep, kind, T, K, bits), so the
/// dense and DSM models of a Table-1 row share nothing but the data.
std::uint64_t job_stream(const Job& job);

/// The jobs of §5 and App. D. Sweep (group 0), for each target, repetition < seeds and K in `units`:
/// dense(K) (least-squares reference at rep 0, K ≤ 512); DSM(T, K) for each T in `widths` above K
/// (reference at rep 0, T ≤ 1024, K ≤ 256); unless the target is in `dsm_only` (App. D.2 compares DSM
/// and dense only), random hash(max T, K) when max T > K and LSH(s = K, m) for each m in `bits`.
/// Table 1 (group 1), on `table1_target`, repetition < table1_seeds and K in `table1_units`: dense(K),
/// DSM(2K, K) and DSM(4K, K) (reference at rep 0, width ≤ 512). `widths` ascending.
std::vector<Job> comparison_jobs(int targets, const std::vector<int>& dsm_only, int seeds, const std::vector<int>& units,
                                 const std::vector<int>& widths, const std::vector<int>& bits, int table1_target,
                                 int table1_seeds, const std::vector<int>& table1_units);

/// One job as a work item: train_and_test on its target's cached dataset with its own stream job_stream.
Outcome run_job(const Job& job, const DatasetCache& data, const TrainingSetup& setup, std::uint64_t seed);

/// A job's readable coordinates, e.g. "group=0,target=poly,model=dsm_top_k,K=8,T=64,bits=0,rep=1".
std::string job_key(const Job& job, const std::vector<std::string>& target_names);

/// Runs every job, heaviest first, one job per thread (each trains sequentially), through parallel_for:
/// the outcomes do not depend on the thread count, and an exception of a job comes out of the call.
/// `done` (optional) is called once per finished job, one call at a time.
std::vector<Outcome> run_jobs(const std::vector<Job>& jobs, const std::vector<Dataset>& data, const TrainingSetup& setup,
                              std::uint64_t seed, const std::function<void()>& done = {});

/// Indices of the jobs of (group, target, kind, K, T, bits) ordered by repetition; T = 0 matches any T.
std::vector<std::size_t> find_jobs(const std::vector<Job>& jobs, int group, int target, ModelKind kind, int K, int T, int bits);

/// Mean and sample standard deviation of the test MSE over the given jobs.
struct MseSummary {
  double mean = 0, sd = 0;
};
MseSummary test_mse_summary(const std::vector<Outcome>& outcomes, const std::vector<std::size_t>& ids);

/// "a beats b" (the header's rule) on the runs ia of a and ib of b, paired by position.
struct PairedVerdict {
  bool beats = false;
  double mean_a = 0, mean_b = 0;  ///< mean test MSE of every run of a, of b
  double mean_diff = 0;           ///< mean of MSE_b − MSE_a over the pairs (S = 1: over the test set)
  double margin = 0;              ///< t_{0.95, S−1}·sd/√S, or z_{0.95}·se for S = 1
  std::size_t pairs = 0;          ///< S
};
/// Throws std::invalid_argument when either list is empty.
PairedVerdict paired_verdict(const std::vector<Outcome>& outcomes, const std::vector<std::size_t>& ia,
                             const std::vector<std::size_t>& ib);

/// The trained jobs (outcomes by job index) and the questions the checks and figures ask of them.
struct ComparisonRuns {
  std::vector<Job> jobs;
  std::vector<Outcome> outcomes;
  std::vector<std::size_t> find(int group, int target, ModelKind kind, int K, int T, int bits) const {
    return find_jobs(jobs, group, target, kind, K, T, bits);
  }
  MseSummary mse(const std::vector<std::size_t>& ids) const { return test_mse_summary(outcomes, ids); }
  PairedVerdict beats(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) const {
    return paired_verdict(outcomes, a, b);
  }
};

/// Whether a verdict will read the job's per-point squared errors: only with one repetition in its
/// group (S = 1; group 0 has `seeds`, group 1 `table1_seeds`). Otherwise a work item need not send them
/// (2^14 doubles a job at --scale paper).
bool needs_per_point_errors(const Job& job, int seeds, int table1_seeds) noexcept;

}  // namespace sparseact::lsh
