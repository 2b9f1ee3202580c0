#pragma once
// The §5.1.1 experiment of paper 002 (Figure 2 and the NTK discussion of eqs. (9)–(11)) as reusable
// pieces: its input pairs, its random COMET networks, and one pair's measurements averaged over nets.
// The analyses comet_overlap and comet_ntk make one work item per pair from these.
//
// Streams: input i from Rng(seed, stream_id(kInputStream, i)); net n's router from
// stream_id(stream_id(kNetStream, n), 1) and its backbone from stream_id(stream_id(kNetStream, n), 2),
// so every p_k sees the same weights (§5.1.1) and a pair's nets do not depend on the other pairs.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>
#include <sparseact/core/record.hpp>
#include <sparseact/nn/plain_mlp.hpp>
#include <sparseact/routing/comet.hpp>
#include <sparseact/routing/overlap_law.hpp>

namespace sparseact::routing {

inline constexpr std::uint64_t kInputStream = 0x002'0001, kNetStream = 0x002'0002;

/// §5.1.1's inputs: 2P vectors of length d (as columns; columns 2i and 2i+1 are pair i), entries
/// N(μ, 25) with μ drawn per input uniformly from {0, …, 100} (ERRATA 002: per input, std 5).
Eigen::MatrixXd paper002_pair_inputs(int pairs, int dim, std::uint64_t seed);

struct CometNetSpec {
  std::vector<int> widths;  ///< N_0, N_1 … N_{L−1} (hidden), N_L
  nn::PlainActivation f = nn::PlainActivation::relu;
  bool biases = false;  ///< eq. (7): §5.1.1 runs without
  TieRule rule = TieRule::strict;
};

/// A COMET MLP at initialisation: the fixed router (its k are for p_k = 1; masks are computed per p_k)
/// and the backbone's θ.
struct CometNet {
  CometRouter router;
  nn::PlainMlp backbone;
  Eigen::VectorXd theta;
};
CometNet make_comet_net(const CometNetSpec& spec, std::uint64_t seed, std::uint64_t net);

/// One pair through several nets, averaged over the nets at each p_k (Figure 2 plots these means).
/// Undefined cosines (a zero activation vector) are left out of a mean and counted.
struct PairMeans {
  std::vector<double> pks;
  double input_cos = 0;
  std::vector<double> mask_cos, act_cos;             ///< per p_k, concatenated layers
  std::vector<std::vector<double>> overlap, act_layer;  ///< [p_k][hidden layer]
  std::vector<double> ntk_cos;                       ///< per p_k (empty unless measured)
  std::vector<std::vector<double>> ntk_block;        ///< [p_k][ℓ = 1 … L]
  double undefined = 0;                              ///< cosines left out of the means
};

/// Masks and activations (pair_similarity) and, when `with_ntk`, the NTK cosines (pair_ntk) of the pair
/// (N_0 × 2) through every net of `nets`. Device::cuda computes masks and activations on the GPU
/// (comet_forward_batch; the NTK stays on the CPU): the same masks, cosines to rounding.
PairMeans measure_pair(const Eigen::MatrixXd& pair, const std::vector<const CometNet*>& nets, const std::vector<double>& pks,
                       bool with_ntk, Device device = Device::cpu);

/// The nets of a pair: fresh ones (net ids pair·nets + j, built in the call) or, with `shared` > 0, the same
/// `shared` nets for every pair, built once per process on first use (thread-safe).
class NetSource {
 public:
  NetSource(CometNetSpec spec, std::uint64_t seed, int shared);
  PairMeans measure(const Eigen::MatrixXd& pair, std::size_t pair_index, int nets, const std::vector<double>& pks, bool with_ntk,
                    Device device = Device::cpu);
  const CometNetSpec& spec() const { return spec_; }

 private:
  CometNetSpec spec_;
  std::uint64_t seed_;
  std::vector<CometNet> shared_;
  std::unique_ptr<std::once_flag[]> built_;
};

/// As a sweep record and back (bit-exact).
Record to_record(const PairMeans& m);
PairMeans pair_means_from(const Record& r);

/// ν = Σ (1 − out_cos) / Σ (1 − input_cos) over the pairs `idx` whose input cosine is ≥ `min_input_cos`
/// (§5.1.1's "sharper when sparser": how fast the output similarity falls as inputs move apart near
/// cos = 1). NaN output cosines are skipped; NaN when no pair qualifies or the denominator is 0.
double narrowness(const std::vector<double>& input_cos, const std::vector<double>& out_cos, const std::vector<std::size_t>& idx,
                  double min_input_cos = 0.9);

/// measured − predicted over pairs: the mean and its 95% Student-t interval (NaN pairs skipped), with
/// the finite-width allowance the law's comparison grants. holds(): the widened interval contains 0.
struct LawGap {
  double mean = 0, half_width = 0, allowance = 0;
  std::size_t n = 0;
  double excess() const { return std::abs(mean) - half_width; }  ///< ≤ allowance when it holds
  bool holds() const { return excess() <= allowance; }
};
LawGap law_gap(const std::vector<double>& measured, const std::vector<double>& predicted, double allowance);

/// The pairs' measurements beside the law's per-pair predictions (comet_network_law at each pair's input
/// cosine; absent for tanh).
enum class Quantity { mask_cos, act_cos, overlap, act_layer, ntk_cos, ntk_block };

struct PairStudy {
  std::vector<PairMeans> pairs;
  CometNetSpec spec;
  std::vector<double> pks;
  std::vector<std::vector<NetworkLaw>> law;  ///< [pair][p_k], empty without a law

  PairStudy(std::vector<PairMeans> measured, CometNetSpec net_spec);
  bool has_law() const { return !law.empty(); }
  std::vector<double> input_cos() const;
  /// Per pair at p_k index p; `layer` ∈ 0 … for the per-layer quantities (ignored otherwise).
  std::vector<double> measured(Quantity q, std::size_t p, std::size_t layer = 0) const;
  std::vector<double> predicted(Quantity q, std::size_t p, std::size_t layer = 0) const;
  /// Hidden layers (overlap, act_layer) or NTK blocks ℓ = 1 … L (ntk_block).
  std::size_t layers(Quantity q) const;
  double undefined() const;
};

/// ν of a quantity (act_cos or ntk_cos) at p_k index p over all pairs.
double narrowness_at(const PairStudy& s, Quantity q, std::size_t p);

/// ν(p_a) − ν(p_b) with its 95% percentile-bootstrap interval over pairs; nullopt when either p_k is not in
/// the study, or too few pairs have an input cosine ≥ 0.9 for ν (or its resamples) to exist.
struct Estimate {
  double estimate = 0, lo = 0, hi = 0;
};
std::optional<Estimate> narrowness_difference(const PairStudy& s, Quantity q, double p_a, double p_b, int resamples, std::uint64_t seed);

/// One (p_k, layer) comparison with the law: layer 0 is the concatenation (mask_cos, act_cos,
/// ntk_cos), otherwise the layer's per-layer quantity. Allowance max(floor, scale/k_ℓ), k_ℓ the kept
/// units of that layer (the smallest k for a concatenation or an NTK block).
struct LawComparison {
  double p_k = 0;
  std::size_t layer = 0;
  int k = 0;
  double measured_mean = 0, predicted_mean = 0;
  LawGap gap;
};
std::vector<LawComparison> compare_with_law(const PairStudy& s, Quantity whole, Quantity per_layer, double floor, double scale);

}  // namespace sparseact::routing
