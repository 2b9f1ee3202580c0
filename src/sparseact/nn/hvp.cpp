#include <sparseact/nn/hvp.hpp>

#include <stdexcept>
#include <vector>

namespace sparseact::nn {

HessianOperator::HessianOperator(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind)
    : net_(&net), theta_(theta), batch_(&batch), kind_(kind) {
  forward(net, theta_, batch.x, fwd_, /*second_order=*/true);
  loss_ = backward(net, theta_, fwd_, batch, kind, grad_, &bwd_);
}

Eigen::VectorXd HessianOperator::apply(const Eigen::VectorXd& v) const {
  if (v.size() != net_->num_params) throw std::invalid_argument("nn: HVP vector has the wrong size");
  Eigen::VectorXd out(v.size());
  perform_op(v.data(), out.data());
  return out;
}

void HessianOperator::perform_op_block(const double* x_in, double* y_out, Eigen::Index ncols) const {
  const Eigen::Index P = net_->num_params;
#pragma omp parallel for schedule(dynamic, 1) if (ncols > 1)
  for (Eigen::Index j = 0; j < ncols; ++j) perform_op(x_in + j * P, y_out + j * P);
}

void HessianOperator::perform_op(const double* x_in, double* y_out) const {
  const Mlp& net = *net_;
  const MlpConfig& cfg = net.config;
  const Eigen::VectorXd& theta = theta_;
  const Eigen::Map<const Eigen::VectorXd> v(x_in, net.num_params);
  Eigen::Map<Eigen::VectorXd> Hv(y_out, net.num_params);
  Hv.setZero();
  auto W = [&](int i) { return param_view(net, theta, i); };  // θ's tensor
  auto Vt = [&](int i) {                                      // v's tensor
    const ParamInfo& p = net.params[static_cast<std::size_t>(i)];
    return ConstMatrixMap(x_in + p.offset, p.rows, p.cols);
  };
  auto H = [&](int i) {  // (H v)'s tensor
    const ParamInfo& p = net.params[static_cast<std::size_t>(i)];
    return MatrixMap(y_out + p.offset, p.rows, p.cols);
  };
  const ForwardCache& f = fwd_;
  const BackwardCache& b = bwd_;

  // ---- forward R-pass
  struct RBlock {
    Eigen::MatrixXd Rxhat;      // R{x̂}
    Eigen::RowVectorXd Rr_r;    // R{r}/r per column
    Eigen::MatrixXd Rk;         // R{u + d}
    Eigen::MatrixXd RP, RA;     // R{P}, R{A}
  };
  std::vector<RBlock> R(cfg.blocks.size());
  Eigen::MatrixXd Rh = Vt(net.W_in) * f.x;
  Rh.colwise() += Vt(net.b_in).col(0);
  for (std::size_t l = 0; l < cfg.blocks.size(); ++l) {
    const BlockConfig& bc = cfg.blocks[l];
    const BlockParams& bp = net.blocks[l];
    const BlockCache& c = f.blocks[l];
    RBlock& r = R[l];
    if (bc.layernorm) {
      const Eigen::RowVectorXd t = c.xhat.cwiseProduct(Rh).colwise().mean();  // mean(x̂ ⊙ R{h})
      r.Rxhat = Rh.rowwise() - Rh.colwise().mean();
      r.Rxhat -= (c.xhat.array().rowwise() * t.array()).matrix();
      r.Rxhat.array().rowwise() *= c.rstd.array();
      r.Rr_r = -(c.rstd.array() * t.array()).matrix();  // R{r}/r = −r t
      r.Rk = r.Rxhat;
      if (bp.gamma >= 0) {
        r.Rk.array().colwise() *= W(bp.gamma).col(0).array();
        r.Rk += (c.xhat.array().colwise() * Vt(bp.gamma).col(0).array()).matrix();
      }
      if (bp.beta >= 0) r.Rk.colwise() += Vt(bp.beta).col(0);
    } else {
      r.Rk = Rh;
    }
    if (bp.d >= 0) r.Rk.colwise() += Vt(bp.d).col(0);
    r.RP.noalias() = Vt(bp.K) * c.k_in;
    r.RP.noalias() += W(bp.K) * r.Rk;
    r.RP.colwise() += Vt(bp.b_K).col(0);
    r.RA = c.d1.cwiseProduct(r.RP);
    Eigen::MatrixXd Rz;
    if (bp.V >= 0) {
      Rz.noalias() = Vt(bp.V) * c.act;
      Rz.noalias() += W(bp.V) * r.RA;
      Rz.colwise() += Vt(bp.b_V).col(0);
    } else {
      Rz = r.RA;
    }
    if (bc.residual)
      Rh += Rz;
    else
      Rh = std::move(Rz);
  }
  Eigen::MatrixXd RF = Vt(net.W_out) * f.h_last;
  RF.noalias() += W(net.W_out) * Rh;
  RF.colwise() += Vt(net.b_out).col(0);

  // ---- backward R-pass
  const Eigen::MatrixXd RdF = loss_hessian_product(kind_, f.logits, RF, *batch_);
  H(net.W_out).noalias() = RdF * f.h_last.transpose();
  H(net.W_out).noalias() += b.dlogits * Rh.transpose();
  H(net.b_out) = RdF.rowwise().sum();
  Eigen::MatrixXd Rdh = Vt(net.W_out).transpose() * b.dlogits;
  Rdh.noalias() += W(net.W_out).transpose() * RdF;

  for (std::size_t li = cfg.blocks.size(); li-- > 0;) {
    const BlockConfig& bc = cfg.blocks[li];
    const BlockParams& bp = net.blocks[li];
    const BlockCache& c = f.blocks[li];
    const BlockSignals& s = b.blocks[li];
    const RBlock& r = R[li];
    const Eigen::MatrixXd& Rdz = Rdh;
    Eigen::MatrixXd RdA;
    if (bp.V >= 0) {
      H(bp.V).noalias() = Rdz * c.act.transpose();
      H(bp.V).noalias() += s.dz * r.RA.transpose();
      H(bp.b_V) = Rdz.rowwise().sum();
      RdA.noalias() = Vt(bp.V).transpose() * s.dz;
      RdA.noalias() += W(bp.V).transpose() * Rdz;
    } else {
      RdA = Rdz;
    }
    const Eigen::MatrixXd RdP =
        (RdA.array() * c.d1.array() + s.dA.array() * c.d2.array() * r.RP.array()).matrix();
    H(bp.K).noalias() = RdP * c.k_in.transpose();
    H(bp.K).noalias() += s.dP * r.Rk.transpose();
    H(bp.b_K) = RdP.rowwise().sum();
    Eigen::MatrixXd Rdu = Vt(bp.K).transpose() * s.dP;
    Rdu.noalias() += W(bp.K).transpose() * RdP;
    if (bp.d >= 0) H(bp.d) = Rdu.rowwise().sum();
    Eigen::MatrixXd Rdh_in;
    if (bc.layernorm) {
      if (bp.beta >= 0) H(bp.beta) = Rdu.rowwise().sum();
      Eigen::MatrixXd dxhat = s.du, Rdxhat = Rdu;
      if (bp.gamma >= 0) {
        H(bp.gamma) = (Rdu.cwiseProduct(c.xhat) + s.du.cwiseProduct(r.Rxhat)).rowwise().sum();
        const ConstMatrixMap gamma = W(bp.gamma);
        dxhat.array().colwise() *= gamma.col(0).array();
        Rdxhat.array().colwise() *= gamma.col(0).array();
        Rdxhat += (s.du.array().colwise() * Vt(bp.gamma).col(0).array()).matrix();
      }
      const Eigen::RowVectorXd m1 = dxhat.colwise().mean();
      const Eigen::RowVectorXd m2 = dxhat.cwiseProduct(c.xhat).colwise().mean();
      const Eigen::RowVectorXd Rm1 = Rdxhat.colwise().mean();
      const Eigen::RowVectorXd Rm2 =
          (Rdxhat.cwiseProduct(c.xhat) + dxhat.cwiseProduct(r.Rxhat)).colwise().mean();
      Eigen::MatrixXd q = dxhat.rowwise() - m1;
      q -= (c.xhat.array().rowwise() * m2.array()).matrix();
      Rdh_in = Rdxhat.rowwise() - Rm1;
      Rdh_in -= (r.Rxhat.array().rowwise() * m2.array()).matrix();
      Rdh_in -= (c.xhat.array().rowwise() * Rm2.array()).matrix();
      Rdh_in += (q.array().rowwise() * r.Rr_r.array()).matrix();
      Rdh_in.array().rowwise() *= c.rstd.array();
    } else {
      Rdh_in = std::move(Rdu);
    }
    if (bc.residual)
      Rdh += Rdh_in;
    else
      Rdh = std::move(Rdh_in);
  }
  H(net.W_in).noalias() = Rdh * f.x.transpose();
  H(net.b_in) = Rdh.rowwise().sum();
}

Eigen::VectorXd hessian_vector_product(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch,
                                       LossKind kind, const Eigen::VectorXd& v) {
  return HessianOperator(net, theta, batch, kind).apply(v);
}

Eigen::MatrixXd hessian(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind) {
  const HessianOperator op(net, theta, batch, kind);
  const Eigen::Index P = net.num_params;
  Eigen::MatrixXd Hm(P, P);
#pragma omp parallel
  {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(P);
#pragma omp for schedule(static)
    for (Eigen::Index i = 0; i < P; ++i) {
      e(i) = 1.0;
      op.perform_op(e.data(), Hm.col(i).data());
      e(i) = 0.0;
    }
  }
  return Hm;
}

Eigen::MatrixXd hessian_finite_difference(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch,
                                          LossKind kind, double h) {
  const Eigen::Index P = net.num_params;
  Eigen::MatrixXd Hm(P, P);
#pragma omp parallel
  {
    Eigen::VectorXd t = theta, gp, gm;
#pragma omp for schedule(static)
    for (Eigen::Index i = 0; i < P; ++i) {
      t(i) = theta(i) + h;
      loss_and_gradient(net, t, batch, kind, gp);
      t(i) = theta(i) - h;
      loss_and_gradient(net, t, batch, kind, gm);
      t(i) = theta(i);
      Hm.col(i) = (gp - gm) / (2.0 * h);
    }
  }
  return Hm;
}

}  // namespace sparseact::nn
