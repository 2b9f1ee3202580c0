#include <sparseact/routing/train_grid.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sparseact/core/stats.hpp>

namespace sparseact::routing {

namespace {

template <class T>
bool contains(const std::vector<T>& v, const T& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool matches(const GridRun& r, Policy m, int w, double sp, int epochs) {
  return r.model == m && r.width == w && (m == Policy::standard || r.sparsity == sp) && r.epochs == epochs;
}

}  // namespace

int small_comparison_epochs(const std::vector<Policy>& models, const std::vector<double>& sparsities, int epochs, int small_epochs) {
  const bool has_small = contains(models, Policy::standard) && contains(models, Policy::comet) && contains(sparsities, 0.9);
  return has_small && small_epochs > epochs ? small_epochs : epochs;
}

std::vector<GridRun> figure4_runs(const std::vector<double>& widths, const std::vector<double>& sparsities,
                                  const std::vector<Policy>& models, int seeds, int epochs, int small_epochs) {
  std::vector<GridRun> runs;
  for (double w : widths)
    for (int s = 0; s < seeds; ++s)
      for (Policy m : models) {
        if (m == Policy::standard) { runs.push_back({m, int(w), 0.0, s, epochs}); continue; }
        for (double sp : sparsities) runs.push_back({m, int(w), sp, s, epochs});
      }
  // Same θ_0, router and data order as the grid's runs of that seed: only the length differs.
  const int small = small_comparison_epochs(models, sparsities, epochs, small_epochs);
  if (small != epochs)
    for (int s = 0; s < seeds; ++s) {
      runs.push_back({Policy::standard, int(widths.front()), 0.0, s, small});
      runs.push_back({Policy::comet, int(widths.front()), 0.9, s, small});
    }
  return runs;
}

std::string sweep_key(const GridRun& run, int epochs) {
  const std::string key = fmt::format("model={} width={} sparsity={:g} seed={}", to_string(run.model), run.width, run.sparsity, run.seed);
  return run.epochs == epochs ? key : fmt::format("{} epochs={}", key, run.epochs);
}

double sweep_cost(const GridRun& run) {
  return double(run.epochs) * run.width * (784 + 2.0 * run.width) * (run.model == Policy::smaller ? 1 - run.sparsity : 1.0);
}

Record to_record(const TrainRun& run) {
  return Record().set("test_acc", run.test_acc).set("train_loss", run.train_loss).set("test_acc_all_on", run.test_acc_all_on)
      .set("on_gpu", run.device == Device::cuda ? 1.0 : 0.0);
}

std::vector<double> GridResults::accuracy(Policy m, int w, double sp, int epochs, std::size_t last) const {
  std::vector<double> v;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (matches(runs[i], m, w, sp, epochs) && !records[i].arr("test_acc").empty()) {
      const auto& acc = records[i].arr("test_acc");
      stats::RunningMean mean;
      for (std::size_t e = acc.size() - std::min(last, acc.size()); e < acc.size(); ++e) mean.push(acc[e]);
      v.push_back(mean.mean());
    }
  return v;
}

TrainedRecord GridResults::trained(Policy m, int w, double sp, int epochs, double constant_loss) const {
  TrainedRecord rec{{}, constant_loss};
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (matches(runs[i], m, w, sp, epochs) && !records[i].arr("train_loss").empty())
      rec.final_train_loss.push_back(records[i].arr("train_loss").back());
  return rec;
}

Table GridResults::curves() const {
  Table t{"curves", {"model", "width", "sparsity", "seed", "epochs", "epoch", "test_acc", "train_loss", "test_acc_all_on"}, {}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& acc = records[i].arr("test_acc");
    const auto& loss = records[i].arr("train_loss");
    const auto& all_on = records[i].arr("test_acc_all_on");
    const GridRun& r = runs[i];
    for (std::size_t e = 0; e < acc.size(); ++e)
      t.add_row({double(r.model), double(r.width), r.sparsity, double(r.seed), double(r.epochs), double(e + 1), acc[e], loss[e],
                 all_on.empty() ? std::nan("") : all_on[e]});
  }
  return t;
}

json GridResults::final_accuracy(const std::vector<double>& widths, const std::vector<Policy>& models,
                                 const std::vector<double>& sparsities, int epochs, std::size_t last) const {
  json finals = json::array();
  for (double w : widths)
    for (Policy m : models)
      for (double sp : m == Policy::standard ? std::vector<double>{0.0} : sparsities) {
        const std::vector<double> f = accuracy(m, int(w), sp, epochs);
        stats::RunningMean mean, last_mean;
        for (double v : f) mean.push(v);
        for (double v : accuracy(m, int(w), sp, epochs, last)) last_mean.push(v);
        finals.push_back({{"model", to_string(m)}, {"width", w}, {"sparsity", sp}, {"final_test_acc_mean", mean.mean()},
                          {"last_epochs_test_acc_mean", last_mean.mean()}, {"last_epochs", last}, {"seeds", f.size()}});
      }
  return finals;
}

json GridResults::training_losses(const std::vector<double>& widths, const std::vector<Policy>& models,
                                  const std::vector<double>& sparsities, int epochs, double constant_loss,
                                  const std::vector<std::pair<Policy, double>>& extra, int extra_width, int extra_epochs) const {
  json losses = json::array();
  const auto add = [&](Policy m, double w, double sp, int ep) {
    json l = trained(m, int(w), sp, ep, constant_loss).to_json();
    l["model"] = to_string(m), l["width"] = w, l["sparsity"] = sp, l["epochs"] = ep;
    losses.push_back(std::move(l));
  };
  for (double w : widths)
    for (Policy m : models)
      for (double sp : m == Policy::standard ? std::vector<double>{0.0} : sparsities) add(m, w, sp, epochs);
  for (const auto& [m, sp] : extra) add(m, extra_width, sp, extra_epochs);
  return losses;
}

std::size_t GridResults::on_gpu() const {
  std::size_t n = 0;
  for (const Record& rec : records) n += rec.num("on_gpu") == 1.0;
  return n;
}

Check& require_trained(Check& check, const std::vector<std::pair<std::string, TrainedRecord>>& models) {
  json losses = json::object();
  std::string reason;
  for (const auto& [name, rec] : models) {
    losses[name] = rec.to_json();
    if (rec.not_trained() > 0)
      reason += fmt::format("{} did not train in {} of {} seeds (final training loss {:.4f}, constant predictor's {:.4f}; within 1 % "
                            "of it means chance). ",
                            name, rec.not_trained(), rec.final_train_loss.size(), fmt::join(rec.final_train_loss, ", "), rec.constant_loss);
  }
  check.detail["final_train_loss"] = losses;
  if (!reason.empty()) not_evidence_untrained(check, reason + "A comparison with a model that did not train is inconclusive (DESIGN.md).");
  return check;
}

}  // namespace sparseact::routing
