#pragma once
// The decoder-only transformer of paper 004 §4 (dense or Mixture-of-Experts), trained by nn/train on next-token
// prediction with a loss mask (LossKind::token_cross_entropy) and decoded greedily.
//
//   H⁰ = E[:, tokens] + P[:, 0 … T−1]                         token and position embeddings (d × V, d × T_max)
//   for each of the L blocks:  H ← H + Attn(RMSNorm_g₁(H)),  H ← H + FFN(RMSNorm_g₂(H))     (pre-norm residual)
//   logits = W_out RMSNorm_g(H)                               W_out ∈ R^{V×d}
// FFN is nn/moe_ffn's layer: dense (K = 1) or K experts with top-2 token-choice routing; every expert's inner width
// is `inner` (§4.1 sets it to d). θ: E, P, then per block g₁, attention (W_q, W_k, W_v, W_o), g₂, FFN, then g, W_out.
// Counts as built: total; non-embedding (blocks and the final gain: E, P and W_out excluded, as the paper counts
// parameters); active (non-embedding with each FFN's router and top-2 experts only).
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/nn/attention.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/moe_ffn.hpp>

namespace sparseact::nn {

struct DecoderShape {
  int vocab = 2, d = 8, heads = 1, layers = 1, max_len = 16;
  int inner = 8, experts = 1, top = 2;  ///< each block's FFN
  FfnShape ffn() const { return {d, inner, experts, top}; }
  AttentionShape attention() const { return {d, heads}; }
  Eigen::Index block_size() const { return 2 * Eigen::Index(d) + attention().parameter_count() + ffn().parameter_count(); }
  Eigen::Index parameter_count() const;
  Eigen::Index non_embedding_count() const { return layers * block_size() + d; }
  Eigen::Index active_count() const { return layers * (2 * Eigen::Index(d) + attention().parameter_count() + ffn().active_count()) + d; }
};

/// Gains 1; every matrix N(0, 0.02²) (GPT-2's initialisation), from Rng(seed, stream_id(stream, part)).
Eigen::VectorXd init_decoder(const DecoderShape& s, std::uint64_t seed, std::uint64_t stream);

/// The decoder as an nn/train Model. Inputs: T × B token ids (as doubles), one sequence per column; output: the
/// logits V × (T·B), sequence after sequence. Every per-token layer (norms, FFN or MoE, unembedding) runs on all
/// T·B tokens at once, so each expert sees its tokens from the whole batch in one product; attention's projections
/// too, its T × T scores per sequence (in parallel). Deterministic, the same numbers for any thread count.
class DecoderModel {
 public:
  explicit DecoderModel(DecoderShape s);
  const DecoderShape& shape() const { return s_; }
  const Eigen::MatrixXd& forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& tokens);
  void backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& dlogits, Eigen::VectorXd& grad);
  /// Tokens per expert in the last forward pass, per block (the routers' load).
  std::vector<std::vector<int>> expert_load() const;

 private:
  struct Block {
    RmsNormCache n1, n2;
    AttentionCache attn;  ///< all B sequences
    FfnCache ffn;
  };
  DecoderShape s_;
  Eigen::Index T_ = 0, B_ = 0;
  std::vector<int> tokens_;  ///< T·B, sequence after sequence
  std::vector<Block> blocks_;
  RmsNormCache final_norm_;
  Eigen::MatrixXd Z_;  ///< RMSNorm_g(H^L), d × T·B
  Eigen::MatrixXd logits_;
};

/// Paper 004 §4.1's training recipe: AdamW (weight decay 0.1) at peak rate `lr`, warmup over the first 20% of the
/// steps then linear decay to 0, next-token cross-entropy with the dataset's −1 targets masked, `epochs` passes of
/// ⌊N/batch⌋ steps (at least 2 steps), batches from BatchStream(seed, batch_stream).
struct DecoderTraining {
  int epochs = 10;
  int batch = 16;
  double lr = 1e-3;
};
/// Trains θ (initialised by the caller) in place; returns the last step's loss.
double train_decoder(const DecoderShape& s, Eigen::VectorXd& theta, const Dataset& data, const DecoderTraining& t, std::uint64_t seed,
                     std::uint64_t batch_stream);

/// Greedy decoding: appends argmax tokens (ties to the lowest id) to `prompt` until `stop` is produced, `max_new`
/// tokens were added, or max_len is reached; returns the added tokens (`stop` included when produced).
std::vector<int> greedy_decode(const DecoderShape& s, const Eigen::VectorXd& theta, std::vector<int> prompt, int stop, int max_new);

}  // namespace sparseact::nn
