#pragma once
// Dead neurons that §5.1.2's protocol forces before any image is seen (paper 002 §4, eqs. (4)–(6)).
//
// With the identity router activation g (eq. (6)), a masked layer ℓ that keeps k_ℓ = 1 unit passes on
// z_ℓ = c·e_j, c ≠ 0 the winning score. The next layer's scores are c·V_{ℓ+1}[:, j] (eq. (4)), so its
// mask is the top-k_{ℓ+1} set of column j when c > 0 and the bottom-k_{ℓ+1} set when c < 0, whatever the
// input. Over any data set, layer ℓ+1 keeps only units of these 2·N_ℓ sets; every other unit is dead:
//
//   D_net ≥ #{ i ≤ N_{ℓ+1} : i in no top- or bottom-k_{ℓ+1} set of a column of V_{ℓ+1} }.
//
// V's entries are i.i.d. and continuous, so each column's (top, bottom) pair is a uniform pair of
// disjoint k-subsets of {1 … N_{ℓ+1}}, independent across columns, and
//
//   E D_net = N_{ℓ+1} · (1 − 2 k_{ℓ+1} / N_{ℓ+1})^{N_ℓ}      (0 when 2 k_{ℓ+1} ≥ N_{ℓ+1}).
//
// The bound counts both signs of c and all N_ℓ possible winners, and ignores the layers after ℓ+1 (whose
// masks are fixed too) and layer ℓ's own never-winning units: it only understates the dead count, for
// every data set. ℓ is the first k = 1 layer that has a masked layer after it.
//
// §5.1.2's "4-layer" is read several ways (ERRATA 002): 2, 3 or 4 masked layers, and one width N per net
// or one per layer. protocol_ensemble draws one ensemble of 1000 such nets without a router for the
// nets it need not route: the forced count of a net depends on its draw only through N_ℓ, N_{ℓ+1} and
// k_{ℓ+1}, and its law is the subset law above (forced_dead_sampled).
#include <cstdint>
#include <string>
#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/routing/comet.hpp>
#include <sparseact/routing/utilization.hpp>

namespace sparseact::routing {

/// The first masked layer ℓ (1-based index into draw.widths) that keeps k_ℓ = max(1, round(p_k N_ℓ)) = 1
/// and has a masked layer after it; 0 when the net has none.
std::size_t forcing_layer(const RandomNetDraw& draw);

/// D_net from the drawn router itself: the units of layer ℓ+1 in no top- or bottom-k_{ℓ+1} set of a column
/// of V_{ℓ+1} (0 when the net has no forcing layer). router.widths[1 …] must be the draw's masked layers.
long forced_dead(const CometRouter& router, const RandomNetDraw& draw);

/// E D_net in closed form, N_{ℓ+1} (1 − 2 k_{ℓ+1}/N_{ℓ+1})^{N_ℓ} (0 without a forcing layer).
double forced_dead_expected(const RandomNetDraw& draw);

/// One draw of D_net from its law: N_ℓ independent uniform pairs of disjoint k_{ℓ+1}-subsets.
long forced_dead_sampled(const RandomNetDraw& draw, Rng& rng);

/// A reading of §5.1.2's "1000 randomly initialized 4-layer COMET MLPs with N_ℓ ~ U(100, 1000) and
/// 1 − p_k ~ U(0.05, 1)".
struct ProtocolReading {
  std::string id;        ///< "3_layers", "3_layers_one_width", …
  std::string text;      ///< "3 masked layers (784–N₁–N₂–N₃–10), N_ℓ drawn per layer"
  int masked_layers = 3;
  bool one_width = false;  ///< one N per net for all its layers
};
/// §5.1.2's readings: 2, 3 and 4 masked layers with a width per layer, and 3 with one width per net.
std::vector<ProtocolReading> protocol_readings();

struct ProtocolRanges {
  int nets = 1000, width_lo = 100, width_hi = 1000;
  double sparsity_lo = 0.05, sparsity_hi = 1.0;  ///< 1 − p_k ~ U(lo, hi)
};

/// One ensemble under a reading: its neurons T = Σ N_ℓ, the dead count its k = 1 layers force (Σ D_net,
/// each drawn from its law) and the nets that have a forcing layer.
struct ProtocolEnsemble {
  long neurons = 0, forced_dead = 0;
  int forcing_nets = 0;
};
/// Ensemble `index` from Rng(seed, stream_id(stream_id(kForcedDeadStream, reading), index)): the same
/// numbers for any thread count.
inline constexpr std::uint64_t kForcedDeadStream = 0x002'0512'd;
ProtocolEnsemble protocol_ensemble(const ProtocolReading& reading, const ProtocolRanges& ranges, std::uint64_t seed,
                                   std::uint64_t reading_index, std::uint64_t index);

/// `ensembles` ensembles under a reading (indices 0 …, in parallel; integer sums, so the same for any
/// thread count): how many force a dead share Σ D / T below `share`, and the means.
struct ProtocolTally {
  long ensembles = 0, below = 0;
  double mean_neurons = 0, mean_forced_dead = 0, mean_forcing_nets = 0;
};
ProtocolTally protocol_tally(const ProtocolReading& reading, const ProtocolRanges& ranges, double share, long ensembles,
                             std::uint64_t seed, std::uint64_t reading_index);

}  // namespace sparseact::routing
