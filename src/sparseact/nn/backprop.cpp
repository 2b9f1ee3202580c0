#include <sparseact/nn/backprop.hpp>

#include <stdexcept>

namespace sparseact::nn {

void forward(const Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x, ForwardCache& cache,
             bool second_order) {
  const MlpConfig& cfg = net.config;
  if (theta.size() != net.num_params) throw std::invalid_argument("nn: theta has the wrong size");
  if (x.rows() != cfg.d_in) throw std::invalid_argument("nn: input rows must equal d_in");
  cache.x = x;
  cache.blocks.resize(cfg.blocks.size());
  // h^0 = W_in x + b_in
  Eigen::MatrixXd h = param_view(net, theta, net.W_in) * x;
  h.colwise() += param_view(net, theta, net.b_in).col(0);
  for (std::size_t l = 0; l < cfg.blocks.size(); ++l) {
    const BlockConfig& bc = cfg.blocks[l];
    const BlockParams& bp = net.blocks[l];
    BlockCache& c = cache.blocks[l];
    c.h_in = h;
    if (bc.layernorm) {
      // x̂ = (h − μ)/√(σ² + ε), per column
      const Eigen::RowVectorXd mu = h.colwise().mean();
      c.xhat = h.rowwise() - mu;
      const Eigen::RowVectorXd var = c.xhat.array().square().colwise().mean();
      c.rstd = (var.array() + bc.ln_eps).rsqrt();
      c.xhat.array().rowwise() *= c.rstd.array();
      c.k_in = c.xhat;
      if (bp.gamma >= 0) c.k_in.array().colwise() *= param_view(net, theta, bp.gamma).col(0).array();
      if (bp.beta >= 0) c.k_in.colwise() += param_view(net, theta, bp.beta).col(0);
    } else {
      c.xhat.resize(0, 0);
      c.rstd.resize(0);
      c.k_in = h;
    }
    if (bp.d >= 0) c.k_in.colwise() += param_view(net, theta, bp.d).col(0);  // u + d^l
    c.pre = param_view(net, theta, bp.K) * c.k_in;
    c.pre.colwise() += param_view(net, theta, bp.b_K).col(0);
    apply_activation(bc.activation, c.pre, &c.act, &c.d1, second_order ? &c.d2 : nullptr);
    if (!second_order) c.d2.resize(0, 0);
    Eigen::MatrixXd z;
    if (bp.V >= 0) {
      z.noalias() = param_view(net, theta, bp.V) * c.act;
      z.colwise() += param_view(net, theta, bp.b_V).col(0);
    } else {
      z = c.act;
    }
    if (bc.residual)
      h += z;
    else
      h = std::move(z);
  }
  cache.h_last = h;
  cache.logits = param_view(net, theta, net.W_out) * h;
  cache.logits.colwise() += param_view(net, theta, net.b_out).col(0);
}

Eigen::MatrixXd predict(const Mlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& x) {
  ForwardCache cache;
  forward(net, theta, x, cache);
  return cache.logits;
}

double loss(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind) {
  return loss_value(kind, predict(net, theta, batch.x), batch);
}

namespace {

// Backpropagates sig.dlogits = ∂L/∂F through the network (the formulas in backprop.hpp).
void backprop(const Mlp& net, const Eigen::VectorXd& theta, const ForwardCache& cache, Eigen::VectorXd& grad,
              BackwardCache& sig, Eigen::MatrixXd* per_sample) {
  const MlpConfig& cfg = net.config;
  const Eigen::Index B = cache.x.cols();
  grad.setZero(net.num_params);
  sig.blocks.resize(cfg.blocks.size());
  auto g = [&](int index) { return param_view(net, grad, index); };

  // Per-sample gradients: ℓ_s's gradient is B × (sample s's share of the batch signals), since
  // L = (1/B) Σ ℓ_s. Column writes are independent, so the result is the same for any thread count.
  const double Bd = static_cast<double>(B);
  if (per_sample) per_sample->setZero(net.num_params, B);
  auto outer = [&](int index, const Eigen::MatrixXd& left, const Eigen::MatrixXd& right) {
    if (!per_sample) return;
    const ParamInfo& p = net.params[static_cast<std::size_t>(index)];
#pragma omp parallel for schedule(static)
    for (Eigen::Index s = 0; s < B; ++s) {
      Eigen::Map<Eigen::MatrixXd> G(per_sample->col(s).data() + p.offset, p.rows, p.cols);
      G.noalias() = Bd * left.col(s) * right.col(s).transpose();
    }
  };
  auto column = [&](int index, const Eigen::MatrixXd& m) {
    if (!per_sample) return;
    const ParamInfo& p = net.params[static_cast<std::size_t>(index)];
    per_sample->block(p.offset, 0, p.size(), B) = Bd * m;
  };

  // Output Linear
  const Eigen::MatrixXd& dF = sig.dlogits;
  g(net.W_out).noalias() = dF * cache.h_last.transpose();
  g(net.b_out) = dF.rowwise().sum();
  outer(net.W_out, dF, cache.h_last);
  column(net.b_out, dF);
  Eigen::MatrixXd dh = param_view(net, theta, net.W_out).transpose() * dF;

  for (std::size_t li = cfg.blocks.size(); li-- > 0;) {
    const BlockConfig& bc = cfg.blocks[li];
    const BlockParams& bp = net.blocks[li];
    const BlockCache& c = cache.blocks[li];
    BlockSignals& s = sig.blocks[li];
    s.dz = dh;
    if (bp.V >= 0) {
      g(bp.V).noalias() = s.dz * c.act.transpose();
      g(bp.b_V) = s.dz.rowwise().sum();
      outer(bp.V, s.dz, c.act);
      column(bp.b_V, s.dz);
      s.dA.noalias() = param_view(net, theta, bp.V).transpose() * s.dz;
    } else {
      s.dA = s.dz;
    }
    s.dP = s.dA.cwiseProduct(c.d1);
    g(bp.K).noalias() = s.dP * c.k_in.transpose();
    g(bp.b_K) = s.dP.rowwise().sum();
    outer(bp.K, s.dP, c.k_in);
    column(bp.b_K, s.dP);
    s.du.noalias() = param_view(net, theta, bp.K).transpose() * s.dP;
    if (bp.d >= 0) {
      g(bp.d) = s.du.rowwise().sum();
      column(bp.d, s.du);
    }
    Eigen::MatrixXd dh_in;
    if (bc.layernorm) {
      if (bp.beta >= 0) {
        g(bp.beta) = s.du.rowwise().sum();
        column(bp.beta, s.du);
      }
      Eigen::MatrixXd dxhat = s.du;
      if (bp.gamma >= 0) {
        const Eigen::MatrixXd dg = s.du.cwiseProduct(c.xhat);
        g(bp.gamma) = dg.rowwise().sum();
        column(bp.gamma, dg);
        dxhat.array().colwise() *= param_view(net, theta, bp.gamma).col(0).array();
      }
      const Eigen::RowVectorXd m1 = dxhat.colwise().mean();
      const Eigen::RowVectorXd m2 = dxhat.cwiseProduct(c.xhat).colwise().mean();
      dh_in = dxhat.rowwise() - m1;
      dh_in -= (c.xhat.array().rowwise() * m2.array()).matrix();
      dh_in.array().rowwise() *= c.rstd.array();
    } else {
      dh_in = s.du;
    }
    if (bc.residual)
      dh += dh_in;
    else
      dh = std::move(dh_in);
  }
  g(net.W_in).noalias() = dh * cache.x.transpose();
  g(net.b_in) = dh.rowwise().sum();
  outer(net.W_in, dh, cache.x);
  column(net.b_in, dh);
  sig.dh0 = std::move(dh);
}

}  // namespace

double backward(const Mlp& net, const Eigen::VectorXd& theta, const ForwardCache& cache, const Batch& batch,
                LossKind kind, Eigen::VectorXd& grad, BackwardCache* signals, Eigen::MatrixXd* per_sample) {
  BackwardCache local;
  BackwardCache& sig = signals ? *signals : local;
  const double L = loss_value(kind, cache.logits, batch, &sig.dlogits);
  backprop(net, theta, cache, grad, sig, per_sample);
  return L;
}

void backward(const Mlp& net, const Eigen::VectorXd& theta, const ForwardCache& cache, const Eigen::MatrixXd& dlogits,
              Eigen::VectorXd& grad, BackwardCache* signals, Eigen::MatrixXd* per_sample) {
  if (dlogits.rows() != net.config.d_out || dlogits.cols() != cache.logits.cols())
    throw std::invalid_argument("nn: dL/dF must be d_out x B, the shape of the last forward pass's outputs");
  BackwardCache local;
  BackwardCache& sig = signals ? *signals : local;
  sig.dlogits = dlogits;
  backprop(net, theta, cache, grad, sig, per_sample);
}

double loss_and_gradient(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind,
                         Eigen::VectorXd& grad, Eigen::MatrixXd* per_sample) {
  ForwardCache cache;
  forward(net, theta, batch.x, cache);
  return backward(net, theta, cache, batch, kind, grad, nullptr, per_sample);
}

}  // namespace sparseact::nn
