#pragma once
// Paper 003 §6.1 and App. D (Table 4): regression of a 1D fBm path, Ackley and Rastrigin in 2D and 3D by a
// MoMLP (Algorithm 2), its baseline (one MLP of width w√K, App. D.3.2) and the MLP of width w (the same
// active parameters as one expert; our addition).
//
// Data (§6.1, "Evaluation protocol"): the s^n vertices of the regular grid of [0, 1] (n = 1) or [−1, 1]^n;
// s = 10,000 / 150 / 30 for n = 1 / 2 / 3 (L320). Each run draws a fresh 80/20 train/test split, shared by
// every model of that run. The fBm target is one path B(k/(s − 1)) of Hurst index H per (seed, H): the
// function is fixed, runs vary the split and the initialisation (the paper states neither H nor this).
#include <cstdint>
#include <string>
#include <vector>

#include <sparseact/core/record.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/moe/momlp.hpp>
#include <sparseact/nn/data.hpp>

namespace sparseact::moe {

enum class Target { fbm = 0, ackley2 = 1, ackley3 = 2, rastrigin2 = 3, rastrigin3 = 4 };
const char* to_string(Target t) noexcept;
/// "fbm,ackley2" → targets; throws InputError naming the choices otherwise.
std::vector<Target> parse_targets(const std::string& text);
int dimension(Target t) noexcept;

/// The s^n grid points (columns) and their targets (1 × s^n).
nn::Dataset grid_dataset(Target t, int s, double hurst, std::uint64_t seed);

struct Split {
  nn::Dataset train, test;
};
/// A uniformly random 80/20 split (Fisher–Yates from Rng(seed, stream)); the test part is the last 20 %.
Split split_80_20(const nn::Dataset& data, std::uint64_t seed, std::uint64_t stream);

enum class Model { momlp = 0, baseline = 1, equal_active = 2 };
const char* to_string(Model m) noexcept;

struct RegressionRun {
  Model model = Model::momlp;
  int K = 4;           ///< MoMLP: experts; baseline: its width is w√K
  MomlpSettings momlp; ///< width w, layers, epochs, batch, lr, σ (the baselines use the same)
  /// Train on (y − μ)/s with μ, s the training targets' mean and standard deviation, and answer μ + s·f(x); the
  /// MSEs stay in the target's own units. The paper states no preprocessing. Without it Adam's per-parameter
  /// step (lr 1e-4) caps how fast a narrow net's output can move: Rastrigin's mean (≈ 20 in 2D) is out of a
  /// w = 32 net's reach in our step budget, where the paper's w = 1000 sums 1000 such steps.
  bool standardize_targets = true;
};

struct RegressionResult {
  double test_mse = 0, train_mse = 0;
  double parameters = 0;         ///< all experts' (and prototypes'), or the single MLP's
  double active_parameters = 0;  ///< loaded for one forward pass: one expert (+ the prototypes), or the MLP
  std::vector<Eigen::Index> cell_sizes;
};

/// Trains one model on `split.train` and measures its MSE on both parts. The baselines train for
/// stage1_epochs + epochs epochs, the MoMLP's two stages together, so every model sees the data equally often.
/// With run.standardize_targets every model trains on standardised targets (one μ, s per split, shared by all).
RegressionResult run_regression(const RegressionRun& run, const Split& split, std::uint64_t seed, std::uint64_t stream);

// --- momlp_regression's study: one trained model per item ----------------------------------------------

/// One trained model: a target (and the fBm's Hurst index), a run (its split), a model and its K.
struct StudyItem {
  Target target;
  double hurst;
  int run;
  Model model;
  int K;
};
/// Table 4 with a K sweep, in sweep order: per target and run, the MoMLP at every K of `ks`, then the baseline
/// and the width-w MLP at `K`; then, where fBm is a target, per Hurst index of `hursts` other than `hurst`, per
/// run the MoMLP and the baseline at `K`.
std::vector<StudyItem> study_items(const std::vector<Target>& targets, int runs, const std::vector<double>& ks, int K, double hurst,
                                   const std::vector<double>& hursts);
/// "target=fbm hurst=0.5 run=0 model=momlp K=4".
std::string sweep_key(const StudyItem& item);
/// A result as the item's record: test_mse, train_mse, parameters, active_parameters, cells (the cells' sizes).
Record to_record(const RegressionResult& result);
/// The test MSEs of the items matching (target, hurst, model, K), in run order.
std::vector<double> test_mses(const std::vector<StudyItem>& items, const std::vector<Record>& records, Target t, double hurst, Model m, int K);
/// One row per item, the table "runs": target, hurst, run, model, K, test_mse, train_mse, parameters,
/// active_parameters, min_cell (NaN without cells).
Table runs_table(const std::vector<StudyItem>& items, const std::vector<Record>& records);


}  // namespace sparseact::moe
