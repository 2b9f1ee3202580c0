#pragma once
// Paper 002 §5.2.1, Figure 4: the grid of masked-MLP training runs (model × width N × 1 − p_k × seed) and
// its readings per seed — final or last-epochs test accuracy, final training loss against the constant
// predictor's — that comet_train's checks, tables and figures are made of.
//
// A run's curves travel as a Record (the sweep's work-item result: test_acc, train_loss, test_acc_all_on
// per epoch, on_gpu), so a grid read back from checkpoints is the grid that ran.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <sparseact/core/record.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/routing/mask_policy.hpp>

namespace sparseact::routing {

struct GridRun {
  Policy model;
  int width;
  double sparsity;  ///< 1 − p_k; 0 for the standard model
  int seed;
  int epochs;       ///< the grid's epochs, or small_epochs for standard_beats_comet_small's runs
};

/// The epochs of standard_beats_comet_small's runs (standard and COMET at the smallest width, 1 − p_k =
/// 0.9): small_epochs where the grid has both models and 0.9 and small_epochs > epochs, else epochs (the
/// grid's own runs are read).
int small_comparison_epochs(const std::vector<Policy>& models, const std::vector<double>& sparsities, int epochs, int small_epochs);

/// Figure 4's grid in sweep order: per width, seed and model one run per 1 − p_k (the standard model one,
/// at 0), each of `epochs`; then, where small_comparison_epochs differs from `epochs`, per seed the
/// standard and COMET runs at the smallest width and 0.9 of that many epochs.
std::vector<GridRun> figure4_runs(const std::vector<double>& widths, const std::vector<double>& sparsities,
                                  const std::vector<Policy>& models, int seeds, int epochs, int small_epochs);

/// A run's sweep key ("model=comet width=500 sparsity=0.5 seed=2", " epochs=E" added where E differs from
/// the grid's `epochs`: checkpoints of other lengths never match) and its relative cost (epochs × weights).
std::string sweep_key(const GridRun& run, int epochs);
double sweep_cost(const GridRun& run);

/// A run's sweep record: its per-epoch curves and whether it trained on the GPU.
Record to_record(const TrainRun& run);

/// The finished grid: runs[i] produced records[i] (a record without test_acc stands for an item not run).
struct GridResults {
  std::vector<GridRun> runs;
  std::vector<Record> records;

  /// Per seed, model m's test accuracy at (w, 1 − p_k, epochs) averaged over its last `last` epochs (1:
  /// the final epoch's), in seed order; the standard model matches any 1 − p_k.
  std::vector<double> accuracy(Policy m, int w, double sp, int epochs, std::size_t last = 1) const;
  /// Per seed, model m's final training loss at (w, 1 − p_k, epochs) against `constant_loss`.
  TrainedRecord trained(Policy m, int w, double sp, int epochs, double constant_loss) const;
  /// One row per run and epoch: model code, width, sparsity, seed, epochs, epoch, test_acc, train_loss,
  /// test_acc_all_on (NaN where the policy has none).
  Table curves() const;
  /// Per width, model and 1 − p_k of the `epochs` grid: final and last-`last` test accuracy means over seeds.
  json final_accuracy(const std::vector<double>& widths, const std::vector<Policy>& models,
                      const std::vector<double>& sparsities, int epochs, std::size_t last) const;
  /// The same cells' final training losses (TrainedRecord::to_json with model, width, sparsity, epochs),
  /// then those of `extra` cells (model, 1 − p_k) at width `extra_width` and `extra_epochs`.
  json training_losses(const std::vector<double>& widths, const std::vector<Policy>& models,
                       const std::vector<double>& sparsities, int epochs, double constant_loss,
                       const std::vector<std::pair<Policy, double>>& extra = {}, int extra_width = 0,
                       int extra_epochs = 0) const;
  /// The runs' count on the GPU.
  std::size_t on_gpu() const;
};

/// A comparison among `models` (name, record) whose any model did not train in some seed is not evidence
/// (DESIGN.md): writes every model's losses to check.detail["final_train_loss"] and, where one did not
/// train, makes the check inconclusive (not_evidence_untrained) naming each such model. Returns the check.
Check& require_trained(Check& check, const std::vector<std::pair<std::string, TrainedRecord>>& models);

}  // namespace sparseact::routing
