#include <sparseact/flatness/layer_stats.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sparseact::flatness {
namespace {

constexpr double kValueTol = 1e-6;  // §6: activations within 1e-6 of Δy count as "not activated"

// Forward-only sparsity of one block's cache.
void sparsity(const nn::Activation& act, const nn::BlockCache& c, BlockStats& st) {
  const Eigen::Index N = c.pre.size();
  Eigen::Index active = 0, grad_nonzero = 0, flat = 0, zero = 0;
  const bool weird = act.kind == nn::ActivationKind::weird_j_squared_relu;
  for (Eigen::Index i = 0; i < N; ++i) {
    const double a = c.act.data()[i], g = c.d1.data()[i], p = c.pre.data()[i] - act.dx;
    const bool off = std::abs(a - act.dy) <= kValueTol;
    if (!off) ++active;
    if (std::abs(a) <= kValueTol) ++zero;
    if (g != 0.0) ++grad_nonzero;
    if (weird ? (off && std::abs(p) <= act.w_half) : g == 0.0) ++flat;
  }
  const double n = static_cast<double>(std::max<Eigen::Index>(N, 1));
  st.activation_density = static_cast<double>(active) / n;
  st.gradient_density = static_cast<double>(grad_nonzero) / n;
  st.flat_fraction = static_cast<double>(flat) / n;
  st.zero_fraction = static_cast<double>(zero) / n;
}

}  // namespace

std::vector<BlockStats> forward_sparsity(const nn::Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x) {
  nn::ForwardCache fwd;
  nn::forward(net, theta, x, fwd);
  std::vector<BlockStats> out(net.blocks.size());
  for (std::size_t l = 0; l < net.blocks.size(); ++l) sparsity(net.config.blocks[l].activation, fwd.blocks[l], out[l]);
  return out;
}

Eigen::MatrixXd per_sample_layer_grad_sq(const nn::Mlp& net, const Eigen::VectorXd& theta,
                                         const nn::ForwardCache& fwd, const nn::BackwardCache& bwd) {
  const Eigen::Index B = fwd.x.cols();
  const double B2 = static_cast<double>(B) * static_cast<double>(B);
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(net.layers.size()), B);
  auto sq = [](const Eigen::MatrixXd& m) -> Eigen::RowVectorXd { return m.colwise().squaredNorm(); };
  // Linear with bias: ‖a bᵀ‖² + ‖a‖² = ‖a‖²(‖b‖² + 1)
  const Eigen::RowVectorXd x_sq = sq(fwd.x), hL_sq = sq(fwd.h_last);
  out.row(0) = (sq(bwd.dh0).array() * (x_sq.array() + 1.0)).matrix();
  out.row(out.rows() - 1) = (sq(bwd.dlogits).array() * (hL_sq.array() + 1.0)).matrix();
  for (std::size_t l = 0; l < net.blocks.size(); ++l) {
    const nn::BlockParams& bp = net.blocks[l];
    const nn::BlockCache& c = fwd.blocks[l];
    const nn::BlockSignals& s = bwd.blocks[l];
    Eigen::ArrayXXd r = Eigen::ArrayXXd::Zero(1, B);
    const Eigen::RowVectorXd du_sq = sq(s.du);
    r += sq(s.dP).array() * (sq(c.k_in).array() + 1.0);              // K, b_K
    if (bp.V >= 0) r += sq(s.dz).array() * (sq(c.act).array() + 1.0);  // V, b_V
    if (bp.d >= 0) r += du_sq.array();                                 // d^l
    if (bp.beta >= 0) r += du_sq.array();                              // LN β
    if (bp.gamma >= 0) r += sq(s.du.cwiseProduct(c.xhat)).array();     // LN γ
    out.row(static_cast<Eigen::Index>(l) + 1) = r.matrix();
  }
  (void)theta;
  return out * B2;
}

FlatnessStats flatness_stats(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& batch,
                             nn::LossKind kind) {
  nn::ForwardCache fwd;
  nn::BackwardCache bwd;
  FlatnessStats st;
  nn::forward(net, theta, batch.x, fwd);
  st.loss = nn::backward(net, theta, fwd, batch, kind, st.batch_gradient, &bwd);
  const Eigen::Index B = batch.size();
  const double Bd = static_cast<double>(B);
  if (kind == nn::LossKind::cross_entropy) {
    Eigen::Index correct = 0;
    for (Eigen::Index s = 0; s < B; ++s) {
      Eigen::Index arg;
      fwd.logits.col(s).maxCoeff(&arg);
      if (arg == batch.labels[static_cast<std::size_t>(s)]) ++correct;
    }
    st.accuracy = static_cast<double>(correct) / Bd;
  }

  const Eigen::MatrixXd g = per_sample_layer_grad_sq(net, theta, fwd, bwd);
  st.layer_grad_sq.resize(net.layers.size());
  for (Eigen::Index l = 0; l < g.rows(); ++l) st.layer_grad_sq[static_cast<std::size_t>(l)] = g.row(l).mean();
  st.grad_sq = g.colwise().sum().mean();

  st.blocks.resize(net.blocks.size());
  for (std::size_t l = 0; l < net.blocks.size(); ++l) {
    const nn::BlockParams& bp = net.blocks[l];
    const nn::BlockCache& c = fwd.blocks[l];
    const nn::BlockSignals& s = bwd.blocks[l];
    BlockStats& b = st.blocks[l];
    sparsity(net.config.blocks[l].activation, c, b);
    // per-sample signals: B × the batch-mean ones
    const Eigen::ArrayXd eta_sq = (Bd * Bd) * s.dP.colwise().squaredNorm().transpose().array();
    const Eigen::ArrayXd x_sq = c.k_in.colwise().squaredNorm().transpose().array();
    const Eigen::ArrayXd gK_sq = (Bd * Bd) * s.dA.colwise().squaredNorm().transpose().array();
    const Eigen::ArrayXd gV_sq = (Bd * Bd) * s.dz.colwise().squaredNorm().transpose().array();
    const Eigen::ArrayXd a_sq = c.act.colwise().squaredNorm().transpose().array();
    b.eta_sq = eta_sq.mean();
    b.x_sq = x_sq.mean();
    b.x_eta = (x_sq * eta_sq).mean();
    b.trace_M = gK_sq.mean();
    b.gV_sq = gV_sq.mean();
    b.gV_alpha = bp.V >= 0 ? (gV_sq * a_sq).mean() : 0.0;
    b.grad_x_sq = (Bd * Bd) * s.du.colwise().squaredNorm().mean();  // ∇_x ℓ = Kᵀη through backprop
    const auto K = nn::param_view(net, theta, bp.K);
    b.trace_KKt = K.squaredNorm();
    {
      const Eigen::MatrixXd G = K * K.transpose();  // KKᵀ, n×n
      b.eta_KKt_eta = (Bd * Bd) * (s.dP.array() * (G * s.dP).array()).colwise().sum().mean();
    }
    // Lemma 3's factors, pooled over samples and neurons
    double sum_active = 0.0;
    Eigen::Index count = 0;
    for (Eigen::Index i = 0; i < c.d1.size(); ++i)
      if (c.d1.data()[i] != 0.0) {
        const double gk = Bd * s.dA.data()[i];
        sum_active += gk * gk;
        ++count;
      }
    b.active_count = static_cast<double>(count) / Bd;
    b.gK_sq_active = count > 0 ? sum_active / static_cast<double>(count) : 0.0;
    b.zeroth_bias = bp.d >= 0;
    if (bp.d >= 0) b.zeroth_bias_norm = nn::param_view(net, theta, bp.d).norm();
    if (bp.gamma >= 0) b.ln_scale_min = nn::param_view(net, theta, bp.gamma).minCoeff();
  }
  return st;
}

BoundTerms bound_terms(const nn::Mlp& net, const FlatnessStats& st) {
  BoundTerms t;
  t.lemma4 = st.grad_sq;
  const double d = static_cast<double>(net.config.d);
  bool all_relu = true;
  for (std::size_t l = 0; l < st.blocks.size(); ++l) {
    const BlockStats& b = st.blocks[l];
    const nn::BlockConfig& bc = net.config.blocks[l];
    const double first = b.zeroth_bias ? b.eta_KKt_eta : 0.0;  // "disappears" for vanilla MLPs
    t.lemma5 += (b.zeroth_bias ? b.grad_x_sq : 0.0) + b.x_eta + b.gV_alpha;
    t.theorem2 += first + b.x_eta + b.gV_alpha;
    t.corollary1 += first + b.x_eta + b.gV_alpha;
    double coeff;
    if (b.zeroth_bias) {
      const double r = std::max(0.0, std::sqrt(d) - b.zeroth_bias_norm);
      coeff = r * r;
    } else {
      coeff = d;
    }
    t.theorem3 += first + coeff * b.eta_sq + b.gV_alpha;
    t.theorem3_relu += first + coeff * b.gK_sq_active * b.active_count + b.gV_alpha;
    if (bc.activation.kind != nn::ActivationKind::relu) all_relu = false;
  }
  if (!all_relu) t.theorem3_relu = std::numeric_limits<double>::quiet_NaN();
  return t;
}

BoundIdentities bound_identities(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& samples, nn::LossKind kind) {
  BoundIdentities out;
  const Eigen::Index B = samples.size();
  if (B == 0) return out;
  const double Bd = static_cast<double>(B);
  // Theorem 2 and Corollary 1 from one pass over the batch: per-sample signals are B × the batch-mean ones.
  nn::ForwardCache fwd;
  nn::BackwardCache bwd;
  Eigen::VectorXd grad;
  nn::forward(net, theta, samples.x, fwd);
  nn::backward(net, theta, fwd, samples, kind, grad, &bwd);
  for (std::size_t l = 0; l < net.blocks.size(); ++l) {
    const nn::BlockParams& bp = net.blocks[l];
    const nn::BlockCache& c = fwd.blocks[l];
    const nn::BlockSignals& s = bwd.blocks[l];
    const auto K = nn::param_view(net, theta, bp.K);
    const Eigen::MatrixXd G = K * K.transpose();  // KKᵀ, n×n
    for (Eigen::Index i = 0; i < B; ++i) {
      const Eigen::VectorXd eta = Bd * s.dP.col(i), x = c.k_in.col(i);
      if (bp.d >= 0) {
        out.theorem2 += eta.dot(G * eta);
        out.corollary1 += (K.transpose() * eta).squaredNorm();
      }
      out.theorem2 += (eta * x.transpose()).squaredNorm();
      out.corollary1 += eta.squaredNorm() * x.squaredNorm();
      if (bp.V >= 0) {
        const Eigen::VectorXd gV = Bd * s.dz.col(i), alpha = c.act.col(i);
        out.theorem2 += (gV * alpha.transpose()).squaredNorm();
        out.corollary1 += gV.squaredNorm() * alpha.squaredNorm();
      }
    }
  }
  out.theorem2 /= Bd;
  out.corollary1 /= Bd;
  // Lemma 5 from each sample's own parameter gradient: a batch of one sample, whose loss is ℓ_s.
  for (Eigen::Index i = 0; i < B; ++i) {
    nn::Batch one;
    one.x = samples.x.col(i);
    if (!samples.labels.empty()) one.labels = {samples.labels[static_cast<std::size_t>(i)]};
    if (samples.y.size() > 0) one.y = samples.y.col(i);
    if (!samples.index.empty()) one.index = {samples.index[static_cast<std::size_t>(i)]};
    nn::ForwardCache f1;
    Eigen::VectorXd g1;
    nn::forward(net, theta, one.x, f1);
    nn::backward(net, theta, f1, one, kind, g1);
    for (const nn::BlockParams& bp : net.blocks) {
      if (bp.d >= 0) out.lemma5 += nn::param_view(net, g1, bp.d).squaredNorm();
      out.lemma5 += nn::param_view(net, g1, bp.K).squaredNorm();
      if (bp.V >= 0) out.lemma5 += nn::param_view(net, g1, bp.V).squaredNorm();
    }
  }
  out.lemma5 /= Bd;
  return out;
}

}  // namespace sparseact::flatness
