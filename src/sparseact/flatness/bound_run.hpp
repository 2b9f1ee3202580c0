#pragma once
// Paper 001 §4.3–4.4 (flatness_bounds' work item): one training run of a residual MLP with LayerNorm (affine
// off, Theorem 3) on images, AdamW on the weights, and at every checkpoint tr(H) by Hutchinson's estimator with
// every bound of Lemmas 4–5, Theorems 2–3 and Corollary 1 on fixed training samples, plus the three right-hand
// sides of the bound identities (Lemma 5 summed, eq. (5), eq. (6)), each from its own formula.
//
//   const Record r = bound_run({.activation = nn::ActivationKind::relu, .d = 32, .n = 128, .blocks = 2}, data, eval);
//   get_checkpoints(r, "cp");   // flatness/records.hpp
#include <cstdint>

#include <sparseact/core/record.hpp>
#include <sparseact/nn/activation.hpp>
#include <sparseact/nn/data.hpp>

namespace sparseact::flatness {

struct BoundRunConfig {
  nn::ActivationKind activation = nn::ActivationKind::relu;
  bool algorithm1 = false;  ///< DB-MLP: zeroth biases and Algorithm 1's hook with `c`
  double c = 0.1;
  int d = 32, n = 128, blocks = 2;  ///< hidden features, block width (K is n × d), blocks
  double lr = 1e-3, wd = 0.0;       ///< AdamW, weight decay on the weights only
  int batch = 64;
  long steps = 1500, every = 300;   ///< training steps; a checkpoint at step 0 and every `every` steps
  int max_probes = 60;              ///< Hutchinson probes per checkpoint at most (10 at least, batches of 10)
  double rel_tol = 0.05;            ///< stop probing once the 95 % half-width ≤ rel_tol · tr(H)
  std::uint64_t seed = 1;
  std::uint64_t stream = 0;         ///< init from stream_id(1, stream), batches stream_id(2, ·), probes stream_id(3, ·)
};

/// Trains and measures: the record holds the checkpoints under "cp" (put_checkpoints), "identities.lemma5",
/// "identities.theorem2", "identities.corollary1" (one value per checkpoint), "parameters" and "data" (the data
/// set's description).
Record bound_run(const BoundRunConfig& cfg, const nn::Dataset& data, const nn::Batch& eval);

}  // namespace sparseact::flatness
