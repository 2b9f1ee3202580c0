#pragma once
// What paper 002 §5.1.1 measures of one COMET network and a pair of inputs (Figure 2, eqs. (9)–(11)):
// the cosine of their masks and of their masked backbone activations, per hidden layer and over the
// concatenations (m_1, …, m_{L−1}) and (x_1, …, x_{L−1}), and the cosine of their empirical NTK, block by
// block (the W_ℓ blocks of eq. (11)) and in trace. One call serves a list of p_k with the same weights.
//
// The cosine of two 0/1 masks is their overlap |m ∩ m′| / √(|m| |m′|) (= |m ∩ m′| / k with exactly k
// winners each). A cosine with a zero vector is undefined: NaN, and the caller decides (a narrow, very
// sparse ReLU layer can switch every kept unit off).
#include <vector>

#include <Eigen/Core>

#include <sparseact/nn/plain_mlp.hpp>
#include <sparseact/routing/comet.hpp>

namespace sparseact::routing {

/// ⟨a, b⟩ / (‖a‖ ‖b‖); NaN when either is zero.
double cosine(const Eigen::Ref<const Eigen::VectorXd>& a, const Eigen::Ref<const Eigen::VectorXd>& b);

struct PairSimilarity {
  double p_k = 1;
  double mask_cos = 0, act_cos = 0;                ///< over the concatenated hidden layers
  std::vector<double> layer_overlap, layer_act_cos;  ///< per hidden layer ℓ = 1 … L−1
};

/// The cosines of columns i and j given masks m_1 … m_{L−1} and hidden activations x_1 … x_{L−1}.
PairSimilarity similarity_of(const std::vector<Eigen::MatrixXd>& masks, const std::vector<Eigen::MatrixXd>& hidden, Eigen::Index i,
                             Eigen::Index j);

/// The two columns of `pair` (N_0 × 2) through `router` and the masked backbone (net, θ) at every p_k.
std::vector<PairSimilarity> pair_similarity(const CometRouter& router, const nn::PlainMlp& net, const Eigen::VectorXd& theta,
                                            const Eigen::MatrixXd& pair, const std::vector<double>& pks);

struct PairNtk {
  double p_k = 1;
  /// tr K(x, x′) / √(tr K(x, x) tr K(x′, x′)), K the N_L × N_L NTK of eq. (10) (W and b blocks).
  double ntk_cos = 0;
  /// The same for each W_ℓ block of eq. (11), ℓ = 1 … L: ⟨x_{ℓ−1}, x′_{ℓ−1}⟩ ⟨S_ℓ, S′_ℓ⟩_F over the norms.
  std::vector<double> block_cos;
};

/// The trace-normalised NTK of the pair at every p_k (masks from `router`, held constant).
std::vector<PairNtk> pair_ntk(const CometRouter& router, const nn::PlainMlp& net, const Eigen::VectorXd& theta,
                              const Eigen::MatrixXd& pair, const std::vector<double>& pks);

}  // namespace sparseact::routing
