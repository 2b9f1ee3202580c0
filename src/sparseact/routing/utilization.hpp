#pragma once
// Expert utilisation under COMET's fixed routing (paper 002 §5.1.2, Figure 3): how often each hidden
// neuron is kept by the router's masks over a data set, and the "dead" neurons no input keeps. Since the
// router never trains, a neuron dead at initialisation stays dead; the paper's counts are 7.6e-4 % of
// neurons over 1000 random 4-layer nets, and fewer than 2 % of the nets with any.
//
// The masks depend on the router alone (eqs. (4)–(6)), so the backbone is never run here.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>
#include <sparseact/core/record.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/plot/figure.hpp>
#include <sparseact/routing/comet.hpp>

namespace sparseact::routing {

/// §5.1.2's random net: N_ℓ uniform on {lo … hi} for the `hidden` masked layers, 1 − p_k ~ U(lo_s, hi_s),
/// from Rng(seed, stream_id(kUtilizationStream, net)); the router's weights from the stream after it.
inline constexpr std::uint64_t kUtilizationStream = 0x002'0512;
struct RandomNetDraw {
  std::vector<int> widths;  ///< N_0, N_1 … N_hidden (the masked layers; the unmasked output is irrelevant)
  double p_k = 1;
};
RandomNetDraw draw_random_net(int input_dim, int hidden, int width_lo, int width_hi, double sparsity_lo, double sparsity_hi,
                              std::uint64_t seed, std::uint64_t net);
CometRouter random_net_router(const RandomNetDraw& draw, std::uint64_t seed, std::uint64_t net, TieRule rule = TieRule::strict);
/// A net's routing cost relative to others: the router's weights, Σ_ℓ N_ℓ N_{ℓ−1}.
double routing_cost(const RandomNetDraw& draw);

/// Per hidden layer, per neuron: how many inputs of each group keep it (group g of input j = group[j]).
struct KeepCounts {
  std::vector<Eigen::MatrixXi> counts;  ///< layer ℓ: N_ℓ × groups
};
/// Routes the columns of X through the router at p_k, `batch` inputs at a time, and counts the kept units
/// (the masks on the GPU with Device::cuda: the same masks, comet_masks_gpu).
KeepCounts keep_counts(const CometRouter& router, double p_k, const Eigen::MatrixXd& X, const std::vector<int>& group, int groups,
                       Eigen::Index batch = 2048, Device device = Device::cpu);

/// One net's utilisation summary: neurons no input keeps (dead), those no input of the "seen" groups
/// keeps (dead_seen), and of those the ones an "unseen" input keeps (woken).
struct Utilization {
  std::vector<int> widths, k;
  double p_k = 1;
  long neurons = 0, dead = 0, dead_seen = 0, woken = 0;
  std::vector<std::vector<double>> fraction;  ///< per layer, per neuron: kept fraction of all inputs
};
/// Groups 0 … seen_groups − 1 are "seen", the rest "unseen".
Utilization summarize(const KeepCounts& c, const std::vector<long>& group_sizes, int seen_groups, double p_k, const std::vector<int>& widths);

Record to_record(const Utilization& u, bool with_fractions);
Utilization utilization_from(const Record& r);
/// The ensemble's nets as a table "nets": net, w1–w3, p_k, k1–k3, dead, dead_seen, woken (3 masked layers).
Table nets_table(const std::vector<Utilization>& nets);
/// Figure 3: per masked layer, the fraction of inputs that keep each neuron, sorted, with p_k marked
/// (the net's u.fraction must be recorded: to_record(u, true)).
plot::Figure figure3(const Utilization& u, const std::string& name);

/// §5.1.2's ensemble of nets, pooled: the dead, dead-on-seen and woken neurons over all nets, the nets with
/// any dead neuron, and 1 − p_k of the nets with and without one (the "mostly the sparsest" comparison).
struct Ensemble {
  long nets = 0, neurons = 0, dead = 0, dead_seen = 0, woken = 0, nets_with_dead = 0, largest_cluster = 0;
  std::vector<double> dead_by_net, neurons_by_net;    ///< per net, in order
  std::vector<double> sparsity_dead, sparsity_alive;  ///< 1 − p_k of the nets with a dead neuron, and without
  double dead_percent() const { return 100.0 * double(dead) / double(neurons); }
  double nets_with_dead_percent() const { return 100.0 * double(nets_with_dead) / double(nets); }
};
Ensemble pool(const std::vector<Utilization>& nets);

/// The pooled dead percentage's percentile interval at level 1 − alpha, resampled by net: dead neurons
/// come in clusters (a net with a tiny k_ℓ loses many at once), so each draw pools the dead and total
/// neurons of the nets it selects, never treating neurons as independent. Streams from
/// stream_id(kUtilizationStream, 0xB007), so the 95 % and 90 % intervals share their resamples.
stats::Interval dead_percent_interval(const Ensemble& e, int resamples, std::uint64_t seed, double alpha);

/// Preprocessing of 784-pixel images (§5.1.2 leaves it unstated): raw [0, 1] pixels, centred by the
/// training split's per-pixel mean, or standardised per pixel (constant pixels map to 0).
enum class Preprocess { standardize, center, raw };
Preprocess parse_preprocess(const std::string& name);
const char* to_string(Preprocess p) noexcept;
/// Applies `p` with the statistics of `train` (pixels × images) to X in place.
void preprocess(Eigen::MatrixXd& X, const Eigen::MatrixXd& train, Preprocess p);

}  // namespace sparseact::routing
