#pragma once
// Shattering by MLPs NN_{J,W:n,1} and MoMLPs NP_{J,W,L:n,1} in any dimension n and depth J (paper 003, eq. (2),
// Definition 3.2), by search: a lower bound on the growth function and the VC dimension, every "yes" carried by
// a certificate that moe/certificate's exact verifier confirms.
//
// Expert search. With the hidden layers fixed, the labels 1[cᵀh(x) + d > 0] are an LP in the output layer
// (c, d): s_i(cᵀh(x_i) + d) ≥ 1. So we draw a bank of hidden stacks and try the LP on each. Random restarts of
// every parameter miss realisable labelings (on R the kinks must fall between data points), so each unit of
// the first layer is seeded to cut between two data points: a_w random Gaussian, b_w = −a_wᵀ(x_i + x_j)/2
// for a random pair; deeper layers likewise between two points' hidden features. γ: 0 (ReLU) or drawn from
// {−1, −½, 0, ¼, ½, 1} (PReLU, per neuron).
//
// MoMLP search. A labeling is realised iff some Voronoi partition of the points has every cell's sub-labeling
// realised by an expert (memoised per (cell, sub-labeling)). Partitions come from sampled distinct prototypes
// (data points jittered, and uniform in the points' bounding box), routed by eq. (5); the prototypes certify
// the partition.
//
// What this gives: realised counts Π̂(m) ≤ Π(m) and vc_found ≤ VC, so "vc_found ≤ Theorem 4.2's bound" is a
// check that can fail, "vc_found = the closed form" is not claimed (on R with J = 1, moe/shatter_search decides
// exactly).
#include <cstdint>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include <sparseact/moe/certificate.hpp>

namespace sparseact::moe {

struct NetSearchSpec {
  bool relu = false;  ///< γ = 0 throughout (else PReLU, γ per neuron)
  int J = 1;          ///< hidden layers of each expert
  int W = 1;          ///< width of each hidden layer
  int L = 1;          ///< experts (1: a plain MLP)
  int stacks = 64;    ///< hidden stacks tried per (cell, sub-labeling)
  int partitions = 64;  ///< prototype draws (L > 1)
};

/// An expert (eq. (2) layers, as NetCertificate::experts[0]) realising `labels` on the columns of X, or nullopt.
/// Deterministic in (seed, stream).
std::optional<std::vector<RationalLayer>> search_expert(const NetSearchSpec& s, const Eigen::MatrixXd& X, const std::vector<int>& labels,
                                                        std::uint64_t seed, std::uint64_t stream);

struct NetGrowth {
  std::vector<long> realized;  ///< Π̂(m) on the first m columns, m = 1 … m_max (lower bounds)
  int vc_found = 0;            ///< largest m with Π̂(m) = 2^m
  CertificateSet certificates; ///< every labeling of the first vc_found points, verified
};
/// Throws std::invalid_argument unless 1 ≤ m_max ≤ min(X.cols(), 14) and J, W, L ≥ 1.
NetGrowth net_growth(const NetSearchSpec& s, const Eigen::MatrixXd& X, int m_max, std::uint64_t seed);
CertificateClass class_of(const NetSearchSpec& s);

}  // namespace sparseact::moe
