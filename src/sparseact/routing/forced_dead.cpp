#include <sparseact/routing/forced_dead.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace sparseact::routing {

std::size_t forcing_layer(const RandomNetDraw& draw) {
  // draw.widths = N_0 (input), N_1 … N_h (masked): layer ℓ forces when k_ℓ = 1 and ℓ < h.
  for (std::size_t l = 1; l + 1 < draw.widths.size(); ++l)
    if (active_units(draw.p_k, draw.widths[l]) == 1) return l;
  return 0;
}

namespace {
/// Units of {0 … n−1} left out of every set in `covered` (a 0/1 marker).
long count_uncovered(const std::vector<char>& covered) { return long(std::count(covered.begin(), covered.end(), char(0))); }
}  // namespace

long forced_dead(const CometRouter& router, const RandomNetDraw& draw) {
  const std::size_t l = forcing_layer(draw);
  if (l == 0) return 0;
  if (router.V.size() < l + 1 || router.widths.size() < draw.widths.size() ||
      !std::equal(draw.widths.begin(), draw.widths.end(), router.widths.begin()))
    throw std::invalid_argument("forced_dead: the router's widths are not the draw's");
  const Eigen::MatrixXd& V = router.V[l];  // V_{ℓ+1}: N_{ℓ+1} × N_ℓ (router.V[0] is V_1)
  const int n = int(V.rows()), k = active_units(draw.p_k, n);
  if (2 * k >= n) return 0;  // one column's top and bottom sets already cover the layer
  std::vector<char> covered(std::size_t(n), 0);
  std::vector<int> order(static_cast<std::size_t>(n));
  for (Eigen::Index j = 0; j < V.cols(); ++j) {
    // c > 0: the top-k of column j; c < 0: its bottom-k. Entries are continuous, so ties have probability 0.
    std::iota(order.begin(), order.end(), 0);
    const auto by_value = [&](int a, int b) { return V(a, j) > V(b, j); };
    std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), by_value);
    for (int i = 0; i < k; ++i) covered[std::size_t(order[std::size_t(i)])] = 1;
    std::nth_element(order.begin(), order.begin() + (n - k), order.end(), by_value);
    for (int i = n - k; i < n; ++i) covered[std::size_t(order[std::size_t(i)])] = 1;
  }
  return count_uncovered(covered);
}

double forced_dead_expected(const RandomNetDraw& draw) {
  const std::size_t l = forcing_layer(draw);
  if (l == 0) return 0;
  const double n = draw.widths[l + 1], k = active_units(draw.p_k, draw.widths[l + 1]);
  if (2 * k >= n) return 0;
  return n * std::pow(1 - 2 * k / n, double(draw.widths[l]));
}

long forced_dead_sampled(const RandomNetDraw& draw, Rng& rng) {
  const std::size_t l = forcing_layer(draw);
  if (l == 0) return 0;
  const int n = draw.widths[l + 1], k = active_units(draw.p_k, n);
  if (2 * k >= n) return 0;
  std::vector<char> covered(std::size_t(n), 0);
  std::vector<int> pool(static_cast<std::size_t>(n));
  for (int column = 0; column < draw.widths[l]; ++column) {
    // A uniform 2k-subset by a partial Fisher–Yates shuffle: its first k the top set, the rest the bottom one.
    std::iota(pool.begin(), pool.end(), 0);
    for (int i = 0; i < 2 * k; ++i) {
      const std::size_t pick = std::size_t(i) + std::size_t(rng.below(std::uint64_t(n - i)));
      std::swap(pool[std::size_t(i)], pool[pick]);
      covered[std::size_t(pool[std::size_t(i)])] = 1;
    }
  }
  return count_uncovered(covered);
}

std::vector<ProtocolReading> protocol_readings() {
  return {{"2_layers", "2 masked layers (784–N₁–N₂–10), N_ℓ drawn per layer", 2, false},
          {"3_layers", "3 masked layers (784–N₁–N₂–N₃–10, as Figure 3), N_ℓ drawn per layer", 3, false},
          {"4_layers", "4 masked layers (784–N₁–…–N₄–10), N_ℓ drawn per layer", 4, false},
          {"3_layers_one_width", "3 masked layers with one width N per net", 3, true}};
}

namespace {
void check_protocol(const ProtocolReading& reading, const ProtocolRanges& ranges) {
  if (reading.masked_layers < 1 || ranges.nets < 1 || ranges.width_lo < 1 || ranges.width_hi < ranges.width_lo ||
      !(ranges.sparsity_lo >= 0 && ranges.sparsity_lo < ranges.sparsity_hi && ranges.sparsity_hi <= 1))
    throw std::invalid_argument(fmt::format("protocol_ensemble: bad reading or ranges ({} layers, {} nets, N on [{}, {}], 1 − p_k on [{}, {}))",
                                            reading.masked_layers, ranges.nets, ranges.width_lo, ranges.width_hi, ranges.sparsity_lo,
                                            ranges.sparsity_hi));
}
}  // namespace

ProtocolEnsemble protocol_ensemble(const ProtocolReading& reading, const ProtocolRanges& ranges, std::uint64_t seed,
                                   std::uint64_t reading_index, std::uint64_t index) {
  check_protocol(reading, ranges);
  Rng rng(seed, stream_id(stream_id(kForcedDeadStream, reading_index), index));
  const auto width = [&] { return ranges.width_lo + int(rng.below(std::uint64_t(ranges.width_hi - ranges.width_lo + 1))); };
  ProtocolEnsemble e;
  RandomNetDraw d;
  for (int net = 0; net < ranges.nets; ++net) {
    d.widths.assign(1, 784);
    const int one = width();
    for (int l = 0; l < reading.masked_layers; ++l) d.widths.push_back(reading.one_width ? one : (l == 0 ? one : width()));
    d.p_k = 1 - rng.uniform(ranges.sparsity_lo, ranges.sparsity_hi);
    for (std::size_t l = 1; l < d.widths.size(); ++l) e.neurons += d.widths[l];
    if (forcing_layer(d) == 0) continue;
    ++e.forcing_nets;
    e.forced_dead += forced_dead_sampled(d, rng);
  }
  return e;
}

ProtocolTally protocol_tally(const ProtocolReading& reading, const ProtocolRanges& ranges, double share, long ensembles,
                             std::uint64_t seed, std::uint64_t reading_index) {
  if (ensembles < 1 || !(share >= 0)) throw std::invalid_argument("protocol_tally: need ensembles ≥ 1 and a share ≥ 0");
  check_protocol(reading, ranges);  // before the parallel loop, which must not throw
  long below = 0, neurons = 0, forced = 0, forcing = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : below, neurons, forced, forcing)
  for (long i = 0; i < ensembles; ++i) {
    const ProtocolEnsemble e = protocol_ensemble(reading, ranges, seed, reading_index, std::uint64_t(i));
    below += double(e.forced_dead) < share * double(e.neurons);
    neurons += e.neurons, forced += e.forced_dead, forcing += e.forcing_nets;
  }
  const double m = double(ensembles);
  return {ensembles, below, double(neurons) / m, double(forced) / m, double(forcing) / m};
}

}  // namespace sparseact::routing
