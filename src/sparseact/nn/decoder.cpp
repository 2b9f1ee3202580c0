#include <sparseact/nn/decoder.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/train.hpp>

namespace sparseact::nn {

namespace {

using CMap = Eigen::Map<const Eigen::MatrixXd>;
using Map = Eigen::Map<Eigen::MatrixXd>;

/// Where each part of θ starts.
struct Layout {
  Eigen::Index E, P, blocks, block, final_gain, W_out, end;
  Eigen::Index g1(int l) const { return blocks + l * block; }
  Eigen::Index attn(int l, Eigen::Index d) const { return g1(l) + d; }
  Eigen::Index g2(int l, Eigen::Index d, Eigen::Index attn_size) const { return attn(l, d) + attn_size; }
  Eigen::Index ffn(int l, Eigen::Index d, Eigen::Index attn_size) const { return g2(l, d, attn_size) + d; }
};

Layout layout(const DecoderShape& s) {
  if (s.vocab < 1 || s.d < 1 || s.layers < 0 || s.max_len < 1 || s.heads < 1 || s.d % s.heads != 0 || s.inner < 1 || s.experts < 1 || s.top < 1)
    throw std::invalid_argument("decoder: need vocab, d, max_len, inner, experts, top ≥ 1, layers ≥ 0 and heads dividing d");
  Layout o;
  const Eigen::Index d = s.d;
  o.E = 0, o.P = d * s.vocab, o.blocks = o.P + d * s.max_len, o.block = s.block_size();
  o.final_gain = o.blocks + s.layers * o.block, o.W_out = o.final_gain + d, o.end = o.W_out + Eigen::Index(s.vocab) * d;
  return o;
}

}  // namespace

Eigen::Index DecoderShape::parameter_count() const { return layout(*this).end; }

Eigen::VectorXd init_decoder(const DecoderShape& s, std::uint64_t seed, std::uint64_t stream) {
  const Layout o = layout(s);
  const Eigen::Index d = s.d, A = s.attention().parameter_count(), F = s.ffn().parameter_count();
  Eigen::VectorXd theta(o.end);
  const auto normal = [&](Eigen::Index at, Eigen::Index count, std::uint64_t part) {
    Rng rng(seed, stream_id(stream, part));
    for (Eigen::Index i = 0; i < count; ++i) theta(at + i) = 0.02 * rng.normal();
  };
  normal(o.E, d * s.vocab, 0);
  normal(o.P, d * s.max_len, 1);
  for (int l = 0; l < s.layers; ++l) {
    theta.segment(o.g1(l), d).setOnes();
    normal(o.attn(l, d), A, 10 + 3 * std::uint64_t(l));
    theta.segment(o.g2(l, d, A), d).setOnes();
    normal(o.ffn(l, d, A), F, 11 + 3 * std::uint64_t(l));
  }
  theta.segment(o.final_gain, d).setOnes();
  normal(o.W_out, Eigen::Index(s.vocab) * d, 2);
  return theta;
}

DecoderModel::DecoderModel(DecoderShape s) : s_(s) { layout(s_); }

const Eigen::MatrixXd& DecoderModel::forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& tokens) {
  const Layout o = layout(s_);
  if (theta.size() != o.end) throw std::invalid_argument("decoder: θ has the wrong size");
  const Eigen::Index T = tokens.rows(), B = tokens.cols(), d = s_.d, A = s_.attention().parameter_count();
  if (T < 1 || T > s_.max_len) throw std::invalid_argument("decoder: sequences must have 1 … max_len tokens");
  const CMap E(theta.data() + o.E, d, s_.vocab), P(theta.data() + o.P, d, s_.max_len), W_out(theta.data() + o.W_out, s_.vocab, d);
  T_ = T, B_ = B;
  tokens_.clear();
  Eigen::MatrixXd H(d, T * B);
  for (Eigen::Index b = 0; b < B; ++b)
    for (Eigen::Index t = 0; t < T; ++t) {
      const double id = tokens(t, b);
      if (!(id >= 0 && id < s_.vocab && id == std::floor(id))) throw std::invalid_argument("decoder: token id out of range [0, vocab)");
      tokens_.push_back(int(id));
      H.col(b * T + t) = E.col(Eigen::Index(id)) + P.col(t);
    }
  blocks_.assign(std::size_t(s_.layers), Block{});
  for (int l = 0; l < s_.layers; ++l) {
    Block& k = blocks_[std::size_t(l)];
    const Eigen::MatrixXd N1 = rmsnorm_forward(theta.data() + o.g1(l), H, k.n1);
    H += attention_forward(s_.attention(), theta.data() + o.attn(l, d), N1, k.attn, T);
    H += ffn_forward(s_.ffn(), theta.data() + o.ffn(l, d, A), rmsnorm_forward(theta.data() + o.g2(l, d, A), H, k.n2), k.ffn);
  }
  Z_ = rmsnorm_forward(theta.data() + o.final_gain, H, final_norm_);
  logits_ = W_out * Z_;
  return logits_;
}

void DecoderModel::backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& dlogits, Eigen::VectorXd& grad) {
  const Layout o = layout(s_);
  const Eigen::Index d = s_.d, A = s_.attention().parameter_count(), T = T_;
  const CMap W_out(theta.data() + o.W_out, s_.vocab, d);
  grad = Eigen::VectorXd::Zero(o.end);
  Map dE(grad.data() + o.E, d, s_.vocab), dP(grad.data() + o.P, d, s_.max_len), dW_out(grad.data() + o.W_out, s_.vocab, d);
  dW_out += dlogits * Z_.transpose();
  Eigen::MatrixXd dH = rmsnorm_backward(theta.data() + o.final_gain, final_norm_, W_out.transpose() * dlogits, grad.data() + o.final_gain);
  for (int l = s_.layers - 1; l >= 0; --l) {
    const Block& k = blocks_[std::size_t(l)];
    dH += rmsnorm_backward(theta.data() + o.g2(l, d, A), k.n2, ffn_backward(s_.ffn(), theta.data() + o.ffn(l, d, A), k.ffn, dH, grad.data() + o.ffn(l, d, A)),
                           grad.data() + o.g2(l, d, A));
    const Eigen::MatrixXd dN1 = attention_backward(s_.attention(), theta.data() + o.attn(l, d), k.attn, dH, grad.data() + o.attn(l, d));
    dH += rmsnorm_backward(theta.data() + o.g1(l), k.n1, dN1, grad.data() + o.g1(l));
  }
  for (Eigen::Index j = 0; j < dH.cols(); ++j) dE.col(tokens_[std::size_t(j)]) += dH.col(j), dP.col(j % T) += dH.col(j);
}

std::vector<std::vector<int>> DecoderModel::expert_load() const {
  std::vector<std::vector<int>> load;
  for (const Block& k : blocks_) load.push_back(k.ffn.load);
  return load;
}

std::vector<int> greedy_decode(const DecoderShape& s, const Eigen::VectorXd& theta, std::vector<int> prompt, int stop, int max_new) {
  if (prompt.empty()) throw std::invalid_argument("greedy_decode: empty prompt");
  DecoderModel model(s);
  std::vector<int> added;
  while (int(added.size()) < max_new && int(prompt.size()) < s.max_len) {
    Eigen::MatrixXd tokens(Eigen::Index(prompt.size()), 1);
    for (std::size_t t = 0; t < prompt.size(); ++t) tokens(Eigen::Index(t), 0) = prompt[t];
    const Eigen::MatrixXd& logits = model.forward(theta, tokens);
    Eigen::Index next = 0;
    logits.col(logits.cols() - 1).maxCoeff(&next);  // Eigen returns the first maximum: ties to the lowest id
    prompt.push_back(int(next)), added.push_back(int(next));
    if (int(next) == stop) break;
  }
  return added;
}

double train_decoder(const DecoderShape& s, Eigen::VectorXd& theta, const Dataset& data, const DecoderTraining& t, std::uint64_t seed,
                     std::uint64_t batch_stream) {
  DecoderModel model(s);
  AdamW adam;
  adam.lr = t.lr, adam.weight_decay = 0.1;
  const Eigen::Index batch = std::min<Eigen::Index>(t.batch, data.size());
  BatchStream batches(data, batch, seed, batch_stream);
  const long steps = std::max<long>(2, long(t.epochs) * (data.size() / batch));
  return train(model, theta, adam, linear_decay_schedule(t.lr, steps / 5, steps), batches, {.steps = steps, .loss = LossKind::token_cross_entropy});
}

}  // namespace sparseact::nn
