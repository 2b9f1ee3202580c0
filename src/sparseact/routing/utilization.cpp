#include <sparseact/routing/utilization.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/routing/comet_batch.hpp>

namespace sparseact::routing {

RandomNetDraw draw_random_net(int input_dim, int hidden, int width_lo, int width_hi, double sparsity_lo, double sparsity_hi,
                              std::uint64_t seed, std::uint64_t net) {
  if (hidden < 1 || width_lo < 1 || width_hi < width_lo) throw std::invalid_argument("draw_random_net: bad width range");
  if (!(sparsity_lo >= 0 && sparsity_lo <= sparsity_hi && sparsity_hi <= 1)) throw std::invalid_argument("draw_random_net: 1 − p_k must lie in [0, 1]");
  Rng rng(seed, stream_id(stream_id(kUtilizationStream, net), 0));
  RandomNetDraw d;
  d.widths.push_back(input_dim);
  for (int l = 0; l < hidden; ++l) d.widths.push_back(width_lo + int(rng.below(std::uint64_t(width_hi - width_lo + 1))));
  d.p_k = 1 - rng.uniform(sparsity_lo, sparsity_hi);
  return d;
}

CometRouter random_net_router(const RandomNetDraw& draw, std::uint64_t seed, std::uint64_t net, TieRule rule) {
  std::vector<int> widths = draw.widths;
  widths.push_back(1);  // an output layer, so every drawn layer is a masked hidden layer
  return make_comet_router(widths, draw.p_k, seed, stream_id(stream_id(kUtilizationStream, net), 1), rule);
}

KeepCounts keep_counts(const CometRouter& router, double p_k, const Eigen::MatrixXd& X, const std::vector<int>& group, int groups,
                       Eigen::Index batch, Device device) {
  if (group.size() != std::size_t(X.cols())) throw std::invalid_argument("keep_counts: one group per input");
  KeepCounts c;
  for (std::size_t l = 1; l + 1 < router.widths.size(); ++l) c.counts.push_back(Eigen::MatrixXi::Zero(router.widths[l], groups));
  std::optional<CometGpuMasks> gpu;  // the router goes up once for every batch (issue 51)
  if (device == Device::cuda) gpu.emplace(router);
  for (Eigen::Index at = 0; at < X.cols(); at += batch) {
    const Eigen::Index n = std::min(batch, X.cols() - at);
    const std::vector<Eigen::MatrixXd> masks = gpu ? gpu->masks(X.middleCols(at, n), p_k)
                                                   : comet_masks(router, X.middleCols(at, n), std::vector<double>(std::size_t(n), p_k));
    for (std::size_t l = 0; l < masks.size(); ++l)
      for (Eigen::Index j = 0; j < n; ++j) c.counts[l].col(group[std::size_t(at + j)]) += masks[l].col(j).cast<int>();
  }
  return c;
}

Utilization summarize(const KeepCounts& c, const std::vector<long>& group_sizes, int seen_groups, double p_k, const std::vector<int>& widths) {
  Utilization u;
  u.widths = widths, u.p_k = p_k;
  long total = 0;
  for (long g : group_sizes) total += g;
  for (std::size_t l = 0; l < c.counts.size(); ++l) {
    const Eigen::MatrixXi& m = c.counts[l];
    u.k.push_back(active_units(p_k, int(m.rows())));
    std::vector<double> frac;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const long all = m.row(i).sum(), seen = m.row(i).head(seen_groups).sum();
      ++u.neurons;
      u.dead += all == 0;
      if (seen == 0) {
        ++u.dead_seen;
        u.woken += all > 0;
      }
      frac.push_back(total > 0 ? double(all) / double(total) : 0.0);
    }
    u.fraction.push_back(std::move(frac));
  }
  return u;
}

Record to_record(const Utilization& u, bool with_fractions) {
  Record r;
  r.set("widths", std::vector<double>(u.widths.begin(), u.widths.end())).set("k", std::vector<double>(u.k.begin(), u.k.end()));
  r.set("p_k", u.p_k).set("neurons", double(u.neurons)).set("dead", double(u.dead)).set("dead_seen", double(u.dead_seen)).set("woken", double(u.woken));
  if (with_fractions)
    for (std::size_t l = 0; l < u.fraction.size(); ++l) r.set("fraction" + std::to_string(l), u.fraction[l]);
  return r;
}

Utilization utilization_from(const Record& r) {
  Utilization u;
  for (double w : r.arr("widths")) u.widths.push_back(int(w));
  for (double k : r.arr("k")) u.k.push_back(int(k));
  u.p_k = r.num("p_k"), u.neurons = long(r.num("neurons")), u.dead = long(r.num("dead"));
  u.dead_seen = long(r.num("dead_seen")), u.woken = long(r.num("woken"));
  for (std::size_t l = 0; r.has("fraction" + std::to_string(l)); ++l) u.fraction.push_back(r.arr("fraction" + std::to_string(l)));
  return u;
}

Ensemble pool(const std::vector<Utilization>& nets) {
  Ensemble e;
  e.nets = long(nets.size());
  for (const Utilization& u : nets) {
    e.neurons += u.neurons, e.dead += u.dead, e.dead_seen += u.dead_seen, e.woken += u.woken, e.nets_with_dead += u.dead > 0;
    e.largest_cluster = std::max(e.largest_cluster, u.dead);
    e.dead_by_net.push_back(double(u.dead)), e.neurons_by_net.push_back(double(u.neurons));
    (u.dead > 0 ? e.sparsity_dead : e.sparsity_alive).push_back(1 - u.p_k);
  }
  return e;
}

stats::Interval dead_percent_interval(const Ensemble& e, int resamples, std::uint64_t seed, double alpha) {
  const auto pooled_percent = [&](const std::vector<std::size_t>& idx) {
    double d = 0, n = 0;
    for (std::size_t i : idx) d += e.dead_by_net[i], n += e.neurons_by_net[i];
    return n > 0 ? 100 * d / n : std::nan("");
  };
  return stats::bootstrap_interval(e.dead_by_net.size(), pooled_percent, resamples, seed, stream_id(kUtilizationStream, 0xB007), alpha);
}

Preprocess parse_preprocess(const std::string& name) {
  if (name == "standardize") return Preprocess::standardize;
  if (name == "center") return Preprocess::center;
  if (name == "raw") return Preprocess::raw;
  throw std::invalid_argument("preprocessing '" + name + "': use standardize, center or raw");
}

const char* to_string(Preprocess p) noexcept {
  switch (p) {
    case Preprocess::standardize: return "standardize";
    case Preprocess::center: return "center";
    case Preprocess::raw: return "raw";
  }
  return "?";
}

void preprocess(Eigen::MatrixXd& X, const Eigen::MatrixXd& train, Preprocess p) {
  if (p == Preprocess::raw) return;
  if (X.rows() != train.rows()) throw std::invalid_argument("preprocess: the images and the training split differ in size");
  const Eigen::VectorXd mean = train.rowwise().mean();
  X.colwise() -= mean;
  if (p == Preprocess::center) return;
  const Eigen::VectorXd sd = ((train.colwise() - mean).array().square().rowwise().mean()).sqrt().matrix();
  for (Eigen::Index i = 0; i < X.rows(); ++i) X.row(i) *= sd(i) > 0 ? 1.0 / sd(i) : 0.0;  // a constant pixel carries nothing
}

double routing_cost(const RandomNetDraw& draw) {
  double c = 0;
  for (std::size_t l = 1; l < draw.widths.size(); ++l) c += double(draw.widths[l]) * draw.widths[l - 1];
  return c;
}

Table nets_table(const std::vector<Utilization>& nets) {
  Table table{"nets", {"net", "w1", "w2", "w3", "pk", "k1", "k2", "k3", "dead", "dead_seen", "woken"}, {}};
  for (std::size_t i = 0; i < nets.size(); ++i) {
    const Utilization& u = nets[i];
    table.add_row({double(i), double(u.widths.at(1)), double(u.widths.at(2)), double(u.widths.at(3)), u.p_k, double(u.k.at(0)),
                   double(u.k.at(1)), double(u.k.at(2)), double(u.dead), double(u.dead_seen), double(u.woken)});
  }
  return table;
}

plot::Figure figure3(const Utilization& u, const std::string& name) {
  plot::Figure fig{.name = name,
                   .title = fmt::format("Figure 3: neuron utilisation, 784–500×3, p_k = {:g} ({} dead)", u.p_k, u.dead),
                   .xlabel = "neuron (sorted by utilisation)", .ylabel = "fraction of images that keep it"};
  for (std::size_t l = 0; l < u.fraction.size(); ++l) {
    std::vector<double> y = u.fraction[l], x(y.size());
    std::sort(y.begin(), y.end(), std::greater<>());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i);
    fig.series.push_back({.x = x, .y = y, .label = fmt::format("layer {}", l + 1)});
  }
  fig.lines.push_back({.at = u.p_k, .vertical = false, .label = "p_k"});
  return fig;
}

}  // namespace sparseact::routing
