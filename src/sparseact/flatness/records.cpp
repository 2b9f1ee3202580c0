#include <sparseact/flatness/records.hpp>

#include <cstddef>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace sparseact::flatness {
namespace {



// Every double field of BlockStats, by name (zeroth_bias, a bool, travels separately).
const std::pair<const char*, double BlockStats::*> kBlockFields[] = {
    {"activation_density", &BlockStats::activation_density}, {"gradient_density", &BlockStats::gradient_density},
    {"flat_fraction", &BlockStats::flat_fraction},           {"zero_fraction", &BlockStats::zero_fraction},
    {"eta_sq", &BlockStats::eta_sq},                         {"x_sq", &BlockStats::x_sq},
    {"x_eta", &BlockStats::x_eta},                           {"eta_KKt_eta", &BlockStats::eta_KKt_eta},
    {"grad_x_sq", &BlockStats::grad_x_sq},                   {"gV_alpha", &BlockStats::gV_alpha},
    {"gV_sq", &BlockStats::gV_sq},                           {"trace_KKt", &BlockStats::trace_KKt},
    {"trace_M", &BlockStats::trace_M},                       {"gK_sq_active", &BlockStats::gK_sq_active},
    {"active_count", &BlockStats::active_count},             {"zeroth_bias_norm", &BlockStats::zeroth_bias_norm},
    {"ln_scale_min", &BlockStats::ln_scale_min}};

const std::pair<const char*, double BoundTerms::*> kBoundFields[] = {
    {"lemma4", &BoundTerms::lemma4},         {"lemma5", &BoundTerms::lemma5},     {"theorem2", &BoundTerms::theorem2},
    {"corollary1", &BoundTerms::corollary1}, {"theorem3", &BoundTerms::theorem3}, {"theorem3_relu", &BoundTerms::theorem3_relu}};

std::size_t count(double v, const std::string& what) {
  if (!(v >= 0) || v != static_cast<double>(static_cast<std::size_t>(v))) throw std::runtime_error("record: bad count for " + what);
  return static_cast<std::size_t>(v);
}

/// The row lengths of a ragged list, checked against the total its arrays hold.
std::vector<std::size_t> sizes_of(const Record& r, const std::string& key, std::size_t total) {
  std::vector<std::size_t> out;
  std::size_t sum = 0;
  for (double v : r.arr(key + ".sizes")) sum += out.emplace_back(count(v, key + ".sizes"));
  if (sum != total) throw std::runtime_error(fmt::format("record: {}.sizes add up to {}, its arrays hold {}", key, sum, total));
  return out;
}

std::vector<double> sized(const Record& r, const std::string& key, std::size_t n) {
  const std::vector<double>& v = r.arr(key);
  if (v.size() != n) throw std::runtime_error(fmt::format("record: {} holds {} values, expected {}", key, v.size(), n));
  return v;
}

}  // namespace

void put_blocks(Record& record, const std::string& key, const std::vector<std::vector<BlockStats>>& rows) {
  std::vector<double> sizes, zeroth;
  for (const auto& row : rows) {
    sizes.push_back(static_cast<double>(row.size()));
    for (const BlockStats& b : row) zeroth.push_back(b.zeroth_bias ? 1.0 : 0.0);
  }
  for (const auto& [name, field] : kBlockFields) {
    std::vector<double> v;
    for (const auto& row : rows)
      for (const BlockStats& b : row) v.push_back(b.*field);
    record.set(key + "." + name, std::move(v));
  }
  record.set(key + ".zeroth_bias", std::move(zeroth));
  record.set(key + ".sizes", std::move(sizes));
}

std::vector<std::vector<BlockStats>> get_blocks(const Record& record, const std::string& key) {
  const std::vector<double>& zeroth = record.arr(key + ".zeroth_bias");
  const std::vector<std::size_t> sizes = sizes_of(record, key, zeroth.size());
  std::vector<std::vector<BlockStats>> rows;
  for (std::size_t n : sizes) rows.emplace_back(n);
  for (const auto& [name, field] : kBlockFields) {
    const std::vector<double> v = sized(record, key + "." + name, zeroth.size());
    std::size_t k = 0;
    for (auto& row : rows)
      for (BlockStats& b : row) b.*field = v[k++];
  }
  std::size_t k = 0;
  for (auto& row : rows)
    for (BlockStats& b : row) b.zeroth_bias = zeroth[k++] != 0.0;
  return rows;
}

void put_sparsity_log(Record& record, const std::string& key, const SparsityLog& log) {
  record.set(key + ".steps", std::vector<double>(log.steps.begin(), log.steps.end()));
  put_blocks(record, key + ".blocks", log.blocks);
}

SparsityLog get_sparsity_log(const Record& record, const std::string& key) {
  SparsityLog log;
  for (double t : record.arr(key + ".steps")) log.steps.push_back(static_cast<long>(t));
  log.blocks = get_blocks(record, key + ".blocks");
  if (log.blocks.size() != log.steps.size()) throw std::runtime_error("record: " + key + " has as many steps as block rows");
  return log;
}

void put_checkpoints(Record& record, const std::string& key, const std::vector<Checkpoint>& cps) {
  std::vector<double> step, loss, accuracy, grad_sq, estimate, std_error, half_width, probes, matvecs, converged, exact_part, variance;
  std::vector<double> lg_sizes, lg, hist_sizes, h_probes, h_estimate, h_std_error, h_half_width, seg_sizes, s_estimate, s_std_error, s_half_width;
  std::vector<std::vector<BlockStats>> blocks;
  std::vector<std::vector<double>> bounds(std::size(kBoundFields));
  for (const Checkpoint& cp : cps) {
    step.push_back(static_cast<double>(cp.step));
    loss.push_back(cp.stats.loss), accuracy.push_back(cp.stats.accuracy), grad_sq.push_back(cp.stats.grad_sq);
    blocks.push_back(cp.stats.blocks);
    lg_sizes.push_back(static_cast<double>(cp.stats.layer_grad_sq.size()));
    lg.insert(lg.end(), cp.stats.layer_grad_sq.begin(), cp.stats.layer_grad_sq.end());
    for (std::size_t j = 0; j < bounds.size(); ++j) bounds[j].push_back(cp.bounds.*kBoundFields[j].second);
    const estimators::TraceEstimate& t = cp.traces;
    estimate.push_back(t.estimate), std_error.push_back(t.std_error), half_width.push_back(t.half_width);
    probes.push_back(static_cast<double>(t.probes)), matvecs.push_back(static_cast<double>(t.matvecs));
    converged.push_back(t.converged ? 1.0 : 0.0), exact_part.push_back(t.exact_part), variance.push_back(t.sample_variance);
    hist_sizes.push_back(static_cast<double>(t.history.size()));
    for (const auto& h : t.history)
      h_probes.push_back(static_cast<double>(h.probes)), h_estimate.push_back(h.estimate), h_std_error.push_back(h.std_error), h_half_width.push_back(h.half_width);
    seg_sizes.push_back(static_cast<double>(t.segments.size()));
    for (const auto& s : t.segments) {
      record.set(fmt::format("{}.segments.name.{}", key, s_estimate.size()), s.name);
      s_estimate.push_back(s.estimate), s_std_error.push_back(s.std_error), s_half_width.push_back(s.half_width);
    }
  }
  record.set(key + ".step", std::move(step)).set(key + ".loss", std::move(loss)).set(key + ".accuracy", std::move(accuracy));
  record.set(key + ".grad_sq", std::move(grad_sq));
  put_blocks(record, key + ".blocks", blocks);
  record.set(key + ".layer_grad_sq.sizes", std::move(lg_sizes)).set(key + ".layer_grad_sq", std::move(lg));
  for (std::size_t j = 0; j < bounds.size(); ++j) record.set(key + ".bounds." + kBoundFields[j].first, std::move(bounds[j]));
  record.set(key + ".trace.estimate", std::move(estimate)).set(key + ".trace.std_error", std::move(std_error));
  record.set(key + ".trace.half_width", std::move(half_width)).set(key + ".trace.probes", std::move(probes));
  record.set(key + ".trace.matvecs", std::move(matvecs)).set(key + ".trace.converged", std::move(converged));
  record.set(key + ".trace.exact_part", std::move(exact_part)).set(key + ".trace.sample_variance", std::move(variance));
  record.set(key + ".history.sizes", std::move(hist_sizes)).set(key + ".history.probes", std::move(h_probes));
  record.set(key + ".history.estimate", std::move(h_estimate)).set(key + ".history.std_error", std::move(h_std_error));
  record.set(key + ".history.half_width", std::move(h_half_width));
  record.set(key + ".segments.sizes", std::move(seg_sizes)).set(key + ".segments.estimate", std::move(s_estimate));
  record.set(key + ".segments.std_error", std::move(s_std_error)).set(key + ".segments.half_width", std::move(s_half_width));
}

std::vector<Checkpoint> get_checkpoints(const Record& record, const std::string& key) {
  const std::vector<double>& step = record.arr(key + ".step");
  const std::size_t n = step.size();
  const std::vector<double> loss = sized(record, key + ".loss", n), accuracy = sized(record, key + ".accuracy", n);
  const std::vector<double> grad_sq = sized(record, key + ".grad_sq", n);
  const std::vector<std::vector<BlockStats>> blocks = get_blocks(record, key + ".blocks");
  if (blocks.size() != n) throw std::runtime_error("record: " + key + " has as many block rows as checkpoints");
  const std::vector<double>& lg = record.arr(key + ".layer_grad_sq");
  const std::vector<std::size_t> lg_sizes = sizes_of(record, key + ".layer_grad_sq", lg.size());
  const std::vector<double>& h_estimate = record.arr(key + ".history.estimate");
  const std::vector<std::size_t> hist_sizes = sizes_of(record, key + ".history", h_estimate.size());
  const std::vector<double> h_probes = sized(record, key + ".history.probes", h_estimate.size());
  const std::vector<double> h_std_error = sized(record, key + ".history.std_error", h_estimate.size());
  const std::vector<double> h_half_width = sized(record, key + ".history.half_width", h_estimate.size());
  const std::vector<double>& s_estimate = record.arr(key + ".segments.estimate");
  const std::vector<std::size_t> seg_sizes = sizes_of(record, key + ".segments", s_estimate.size());
  const std::vector<double> s_std_error = sized(record, key + ".segments.std_error", s_estimate.size());
  const std::vector<double> s_half_width = sized(record, key + ".segments.half_width", s_estimate.size());
  if (lg_sizes.size() != n || hist_sizes.size() != n || seg_sizes.size() != n) throw std::runtime_error("record: " + key + " lists differ in length");
  std::vector<std::vector<double>> bounds;
  for (const auto& [name, field] : kBoundFields) bounds.push_back(sized(record, key + ".bounds." + name, n));
  const std::vector<double> estimate = sized(record, key + ".trace.estimate", n), std_error = sized(record, key + ".trace.std_error", n);
  const std::vector<double> half_width = sized(record, key + ".trace.half_width", n), probes = sized(record, key + ".trace.probes", n);
  const std::vector<double> matvecs = sized(record, key + ".trace.matvecs", n), converged = sized(record, key + ".trace.converged", n);
  const std::vector<double> exact_part = sized(record, key + ".trace.exact_part", n), variance = sized(record, key + ".trace.sample_variance", n);

  std::vector<Checkpoint> out(n);
  std::size_t l0 = 0, h0 = 0, s0 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Checkpoint& cp = out[i];
    cp.step = static_cast<long>(step[i]);
    cp.stats.loss = loss[i], cp.stats.accuracy = accuracy[i], cp.stats.grad_sq = grad_sq[i];
    cp.stats.blocks = blocks[i];
    cp.stats.layer_grad_sq.assign(lg.begin() + static_cast<std::ptrdiff_t>(l0), lg.begin() + static_cast<std::ptrdiff_t>(l0 + lg_sizes[i]));
    l0 += lg_sizes[i];
    for (std::size_t j = 0; j < bounds.size(); ++j) cp.bounds.*kBoundFields[j].second = bounds[j][i];
    estimators::TraceEstimate& t = cp.traces;
    t.estimate = estimate[i], t.std_error = std_error[i], t.half_width = half_width[i];
    t.probes = static_cast<Eigen::Index>(probes[i]), t.matvecs = static_cast<Eigen::Index>(matvecs[i]);
    t.converged = converged[i] != 0.0, t.exact_part = exact_part[i], t.sample_variance = variance[i];
    for (std::size_t k = 0; k < hist_sizes[i]; ++k, ++h0)
      t.history.push_back({static_cast<Eigen::Index>(h_probes[h0]), h_estimate[h0], h_std_error[h0], h_half_width[h0]});
    for (std::size_t k = 0; k < seg_sizes[i]; ++k, ++s0)
      t.segments.push_back({record.str(fmt::format("{}.segments.name.{}", key, s0)), s_estimate[s0], s_std_error[s0], s_half_width[s0]});
  }
  return out;
}

}  // namespace sparseact::flatness
