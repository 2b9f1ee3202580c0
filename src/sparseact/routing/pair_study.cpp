#include <sparseact/routing/pair_study.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/routing/comet_batch.hpp>
#include <sparseact/routing/similarity.hpp>

namespace sparseact::routing {

Eigen::MatrixXd paper002_pair_inputs(int pairs, int dim, std::uint64_t seed) {
  if (pairs < 1 || dim < 1) throw std::invalid_argument("paper002_pair_inputs: need at least one pair and one dimension");
  Eigen::MatrixXd X(dim, 2 * Eigen::Index(pairs));
  for (Eigen::Index i = 0; i < X.cols(); ++i) {
    Rng rng(seed, stream_id(kInputStream, std::uint64_t(i)));
    const double mu = double(rng.below(101));
    for (Eigen::Index r = 0; r < dim; ++r) X(r, i) = mu + 5.0 * rng.normal();
  }
  return X;
}

CometNet make_comet_net(const CometNetSpec& spec, std::uint64_t seed, std::uint64_t net) {
  const std::uint64_t s = stream_id(kNetStream, net);
  CometNet n;
  n.router = make_comet_router(spec.widths, 1.0, seed, stream_id(s, 1), spec.rule);
  n.backbone = {spec.widths, spec.f, spec.biases};
  n.theta = nn::init_plain_mlp(n.backbone, seed, stream_id(s, 2));
  return n;
}

namespace {

/// Running sums of a cosine over nets, skipping NaN.
struct Mean {
  double sum = 0;
  int n = 0;
  void add(double v, double* undefined) {
    if (std::isnan(v)) *undefined += 1;
    else sum += v, ++n;
  }
  double value() const { return n ? sum / n : std::nan(""); }
};

std::vector<double> flatten(const std::vector<std::vector<double>>& v) {
  std::vector<double> out;
  for (const auto& row : v) out.insert(out.end(), row.begin(), row.end());
  return out;
}

std::vector<std::vector<double>> unflatten(const std::vector<double>& v, std::size_t rows) {
  std::vector<std::vector<double>> out(rows);
  if (rows == 0) return out;
  const std::size_t cols = v.size() / rows;
  for (std::size_t r = 0; r < rows; ++r) out[r].assign(v.begin() + long(r * cols), v.begin() + long((r + 1) * cols));
  return out;
}

}  // namespace

PairMeans measure_pair(const Eigen::MatrixXd& pair, const std::vector<const CometNet*>& nets, const std::vector<double>& pks,
                       bool with_ntk, Device device) {
  if (nets.empty()) throw std::invalid_argument("measure_pair: no nets");
  const std::size_t P = pks.size(), H = nets.front()->backbone.widths.size() - 2, L = H + 1;
  std::vector<Mean> mask(P), act(P), ntk(P);
  std::vector<std::vector<Mean>> overlap(P, std::vector<Mean>(H)), act_layer(P, std::vector<Mean>(H)), block(P, std::vector<Mean>(L));
  PairMeans m;
  m.pks = pks;
  m.input_cos = cosine(pair.col(0), pair.col(1));
  std::vector<std::vector<PairSimilarity>> on_gpu;  // [net][p_k]
  if (device == Device::cuda) {
    on_gpu.assign(nets.size(), std::vector<PairSimilarity>(P));
    CometGpuBatch batch(nets);  // the weights go up once for every p_k (issue 51)
    for (std::size_t p = 0; p < P; ++p) {
      const std::vector<CometBatchForward> f = batch.forward(pair, pks[p]);
      for (std::size_t b = 0; b < nets.size(); ++b) {
        std::vector<Eigen::MatrixXd> masks, hidden;
        for (const SparseColumns& h : f[b].hidden) masks.push_back(h.mask()), hidden.push_back(h.dense());
        on_gpu[b][p] = similarity_of(masks, hidden, 0, 1);
      }
    }
  }
  for (std::size_t b = 0; b < nets.size(); ++b) {
    const CometNet* net = nets[b];
    const std::vector<PairSimilarity> s = device == Device::cuda ? on_gpu[b] : pair_similarity(net->router, net->backbone, net->theta, pair, pks);
    for (std::size_t p = 0; p < P; ++p) {
      mask[p].add(s[p].mask_cos, &m.undefined), act[p].add(s[p].act_cos, &m.undefined);
      for (std::size_t l = 0; l < H; ++l)
        overlap[p][l].add(s[p].layer_overlap[l], &m.undefined), act_layer[p][l].add(s[p].layer_act_cos[l], &m.undefined);
    }
    if (!with_ntk) continue;
    const std::vector<PairNtk> k = pair_ntk(net->router, net->backbone, net->theta, pair, pks);
    for (std::size_t p = 0; p < P; ++p) {
      ntk[p].add(k[p].ntk_cos, &m.undefined);
      for (std::size_t l = 0; l < L; ++l) block[p][l].add(k[p].block_cos[l], &m.undefined);
    }
  }
  for (std::size_t p = 0; p < P; ++p) {
    m.mask_cos.push_back(mask[p].value()), m.act_cos.push_back(act[p].value());
    m.overlap.emplace_back(), m.act_layer.emplace_back();
    for (std::size_t l = 0; l < H; ++l) m.overlap[p].push_back(overlap[p][l].value()), m.act_layer[p].push_back(act_layer[p][l].value());
    if (!with_ntk) continue;
    m.ntk_cos.push_back(ntk[p].value());
    m.ntk_block.emplace_back();
    for (std::size_t l = 0; l < L; ++l) m.ntk_block[p].push_back(block[p][l].value());
  }
  return m;
}

NetSource::NetSource(CometNetSpec spec, std::uint64_t seed, int shared)
    : spec_(std::move(spec)), seed_(seed), shared_(std::size_t(std::max(shared, 0))), built_(new std::once_flag[std::size_t(std::max(shared, 1))]) {}

PairMeans NetSource::measure(const Eigen::MatrixXd& pair, std::size_t pair_index, int nets, const std::vector<double>& pks, bool with_ntk,
                             Device device) {
  std::vector<CometNet> fresh;
  std::vector<const CometNet*> use;
  if (!shared_.empty()) {
    for (std::size_t j = 0; j < shared_.size(); ++j) {
      std::call_once(built_[j], [&] { shared_[j] = make_comet_net(spec_, seed_, j); });
      use.push_back(&shared_[j]);
    }
  } else {
    for (int j = 0; j < nets; ++j) fresh.push_back(make_comet_net(spec_, seed_, pair_index * std::size_t(nets) + std::size_t(j)));
    for (const CometNet& n : fresh) use.push_back(&n);
  }
  return measure_pair(pair, use, pks, with_ntk, device);
}

Record to_record(const PairMeans& m) {
  Record r;
  r.set("pks", m.pks).set("input_cos", m.input_cos).set("mask_cos", m.mask_cos).set("act_cos", m.act_cos);
  r.set("overlap", flatten(m.overlap)).set("act_layer", flatten(m.act_layer)).set("undefined", m.undefined);
  r.set("ntk_cos", m.ntk_cos).set("ntk_block", flatten(m.ntk_block));
  return r;
}

PairMeans pair_means_from(const Record& r) {
  PairMeans m;
  m.pks = r.arr("pks");
  const std::size_t P = m.pks.size();
  m.input_cos = r.num("input_cos"), m.undefined = r.num("undefined");
  m.mask_cos = r.arr("mask_cos"), m.act_cos = r.arr("act_cos"), m.ntk_cos = r.arr("ntk_cos");
  m.overlap = unflatten(r.arr("overlap"), P), m.act_layer = unflatten(r.arr("act_layer"), P);
  if (!m.ntk_cos.empty()) m.ntk_block = unflatten(r.arr("ntk_block"), P);
  return m;
}

PairStudy::PairStudy(std::vector<PairMeans> measured, CometNetSpec net_spec) : pairs(std::move(measured)), spec(std::move(net_spec)) {
  if (pairs.empty()) throw std::invalid_argument("PairStudy: no pairs");
  pks = pairs.front().pks;
  if (spec.f == nn::PlainActivation::tanh) return;
  for (const PairMeans& m : pairs) {
    law.emplace_back();
    for (double p : pks) law.back().push_back(comet_network_law(std::clamp(m.input_cos, -1.0, 1.0), p, spec.widths, spec.f));
  }
}

std::vector<double> PairStudy::input_cos() const {
  std::vector<double> v;
  for (const PairMeans& m : pairs) v.push_back(m.input_cos);
  return v;
}

std::size_t PairStudy::layers(Quantity q) const {
  const std::size_t L = spec.widths.size() - 1;
  return q == Quantity::ntk_block ? L : (q == Quantity::overlap || q == Quantity::act_layer) ? L - 1 : 1;
}

std::vector<double> PairStudy::measured(Quantity q, std::size_t p, std::size_t layer) const {
  std::vector<double> v;
  for (const PairMeans& m : pairs) switch (q) {
      case Quantity::mask_cos: v.push_back(m.mask_cos[p]); break;
      case Quantity::act_cos: v.push_back(m.act_cos[p]); break;
      case Quantity::overlap: v.push_back(m.overlap[p][layer]); break;
      case Quantity::act_layer: v.push_back(m.act_layer[p][layer]); break;
      case Quantity::ntk_cos: v.push_back(m.ntk_cos.at(p)); break;
      case Quantity::ntk_block: v.push_back(m.ntk_block.at(p)[layer]); break;
    }
  return v;
}

std::vector<double> PairStudy::predicted(Quantity q, std::size_t p, std::size_t layer) const {
  std::vector<double> v;
  for (const auto& per_pk : law) {
    const NetworkLaw& n = per_pk[p];
    switch (q) {
      case Quantity::mask_cos: v.push_back(n.mask_cos); break;
      case Quantity::act_cos: v.push_back(n.act_cos); break;
      case Quantity::overlap: v.push_back(n.layers[layer].overlap); break;
      case Quantity::act_layer: v.push_back(n.layers[layer].act_cos); break;
      case Quantity::ntk_cos: v.push_back(n.ntk_cos); break;
      case Quantity::ntk_block: v.push_back(n.ntk_block_cos[layer]); break;
    }
  }
  return v;
}

double PairStudy::undefined() const {
  double n = 0;
  for (const PairMeans& m : pairs) n += m.undefined;
  return n;
}

double narrowness_at(const PairStudy& s, Quantity q, std::size_t p) {
  std::vector<std::size_t> all(s.pairs.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return narrowness(s.input_cos(), s.measured(q, p), all);
}

std::optional<Estimate> narrowness_difference(const PairStudy& s, Quantity q, double p_a, double p_b, int resamples, std::uint64_t seed) {
  const auto index = [&](double p) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < s.pks.size(); ++i)
      if (std::abs(s.pks[i] - p) < 1e-12) return i;
    return std::nullopt;
  };
  const auto a = index(p_a), b = index(p_b);
  if (!a || !b) return std::nullopt;
  const std::vector<double> in = s.input_cos(), va = s.measured(q, *a), vb = s.measured(q, *b);
  const auto diff = [&](const std::vector<std::size_t>& idx) { return narrowness(in, va, idx) - narrowness(in, vb, idx); };
  std::vector<std::size_t> all(in.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  Estimate e;
  e.estimate = diff(all);
  if (std::isnan(e.estimate)) return std::nullopt;  // no pair with input cosine ≥ 0.9
  try {  // pairs resample together across p_k: the same pairs and nets gave both ν
    const stats::Interval ci = stats::bootstrap_interval(in.size(), diff, resamples, seed, stream_id(kInputStream, 0xB007));
    e.lo = ci.lo, e.hi = ci.hi;
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // too few qualifying pairs for resamples to carry any
  }
  return e;
}

std::vector<LawComparison> compare_with_law(const PairStudy& s, Quantity whole, Quantity per_layer, double floor, double scale) {
  std::vector<LawComparison> out;
  if (!s.has_law()) return out;
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    int n = 0;
    for (double x : v)
      if (!std::isnan(x)) sum += x, ++n;
    return n ? sum / n : std::nan("");
  };
  const std::size_t H = s.spec.widths.size() - 2;
  for (std::size_t p = 0; p < s.pks.size(); ++p) {
    std::vector<int> k;
    for (std::size_t l = 1; l <= H; ++l) k.push_back(active_units(s.pks[p], s.spec.widths[l]));
    const int k_min = k.empty() ? 1 : *std::min_element(k.begin(), k.end());
    for (std::size_t layer = 0; layer <= s.layers(per_layer); ++layer) {
      const Quantity q = layer == 0 ? whole : per_layer;
      const std::size_t at = layer == 0 ? 0 : layer - 1;
      // An NTK block ℓ spans the masks of layers ℓ … L−1; the output block has none.
      const int kl = layer == 0 || per_layer == Quantity::ntk_block ? k_min : k[at];
      LawComparison c;
      c.p_k = s.pks[p], c.layer = layer, c.k = kl;
      const std::vector<double> m = s.measured(q, p, at), pr = s.predicted(q, p, at);
      c.measured_mean = mean(m), c.predicted_mean = mean(pr);
      c.gap = law_gap(m, pr, std::max(floor, scale / kl));
      out.push_back(c);
    }
  }
  return out;
}

double narrowness(const std::vector<double>& input_cos, const std::vector<double>& out_cos, const std::vector<std::size_t>& idx,
                  double min_input_cos) {
  double num = 0, den = 0;
  for (std::size_t i : idx)
    if (input_cos[i] >= min_input_cos && !std::isnan(out_cos[i])) num += 1 - out_cos[i], den += 1 - input_cos[i];
  return den > 0 ? num / den : std::nan("");
}

LawGap law_gap(const std::vector<double>& measured, const std::vector<double>& predicted, double allowance) {
  if (measured.size() != predicted.size()) throw std::invalid_argument("law_gap: measured and predicted differ in length");
  stats::RunningMean gap;
  for (std::size_t i = 0; i < measured.size(); ++i)
    if (!std::isnan(measured[i]) && !std::isnan(predicted[i])) gap.push(measured[i] - predicted[i]);
  LawGap g;
  g.n = std::size_t(gap.count()), g.mean = gap.mean(), g.allowance = allowance;
  g.half_width = gap.count() >= 2 ? gap.half_width() : std::numeric_limits<double>::infinity();
  return g;
}

}  // namespace sparseact::routing
