#include <sparseact/routing/moe_mlp.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>
#include <sparseact/routing/kwta.hpp>

namespace sparseact::routing {

namespace {

/// Offsets of the router blocks of hidden layer ℓ (1-based) in θ, after the backbone.
struct RouterBlock {
  Eigen::Index U1, c1, U2, c2, end;
};

std::vector<RouterBlock> router_blocks(const MoeMlp& net) {
  std::vector<RouterBlock> blocks;
  Eigen::Index at = nn::parameter_count(net.backbone);
  const int H = net.router_hidden, E = net.experts();
  for (std::size_t l = 1; l + 1 < net.backbone.widths.size(); ++l) {
    RouterBlock b;
    b.U1 = at, b.c1 = b.U1 + Eigen::Index(H) * net.backbone.widths[l - 1], b.U2 = b.c1 + H, b.c2 = b.U2 + Eigen::Index(E) * H, b.end = b.c2 + E;
    blocks.push_back(b);
    at = b.end;
  }
  return blocks;
}

std::vector<Eigen::Index> backbone_offsets(const nn::PlainMlp& net) {
  std::vector<Eigen::Index> off(net.widths.size(), 0);
  for (std::size_t l = 1; l < net.widths.size(); ++l)
    off[l] = off[l - 1] + Eigen::Index(net.widths[l]) * net.widths[l - 1] + (net.biases ? net.widths[l] : 0);
  return off;
}

double act(nn::PlainActivation f, double a) {
  return f == nn::PlainActivation::relu ? std::max(a, 0.0) : f == nn::PlainActivation::tanh ? std::tanh(a) : a;
}
double act_derivative(nn::PlainActivation f, double a) {
  return f == nn::PlainActivation::relu ? (a > 0 ? 1.0 : 0.0) : f == nn::PlainActivation::tanh ? 1 - std::tanh(a) * std::tanh(a) : 1.0;
}

}  // namespace

int MoeMlp::experts() const { return std::max(1, int(std::floor(1.0 / p_k + 1e-12))); }

int MoeMlp::expert_size(std::size_t l) const { return std::min(active_units(p_k, backbone.widths[l]), backbone.widths[l] / experts()); }

Eigen::Index parameter_count(const MoeMlp& net) { return router_blocks(net).empty() ? nn::parameter_count(net.backbone) : router_blocks(net).back().end; }

Eigen::VectorXd init_moe_mlp(const MoeMlp& net, std::uint64_t seed, std::uint64_t stream) {
  if (!(net.p_k > 0 && net.p_k <= 1)) throw std::invalid_argument("MoE MLP: p_k must lie in (0, 1]");
  Eigen::VectorXd theta(parameter_count(net));
  theta.head(nn::parameter_count(net.backbone)) = nn::init_plain_mlp(net.backbone, seed, stream);
  const auto blocks = router_blocks(net);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    Rng rng(seed, stream_id(stream_id(stream, 0x0E), i));
    const double b1 = 1.0 / std::sqrt(double(net.backbone.widths[i])), b2 = 1.0 / std::sqrt(double(net.router_hidden));
    for (Eigen::Index j = blocks[i].U1; j < blocks[i].U2; ++j) theta(j) = rng.uniform(-b1, b1);
    for (Eigen::Index j = blocks[i].U2; j < blocks[i].end; ++j) theta(j) = rng.uniform(-b2, b2);
  }
  return theta;
}

MoeForward moe_forward(const MoeMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0) {
  const nn::PlainMlp& bb = net.backbone;
  if (theta.size() != parameter_count(net)) throw std::invalid_argument("moe_forward: θ has the wrong size");
  if (X0.rows() != bb.widths[0]) throw std::invalid_argument("moe_forward: inputs have the wrong dimension");
  const std::size_t L = bb.widths.size() - 1;
  const auto off = backbone_offsets(bb);
  const auto blocks = router_blocks(net);
  const int H = net.router_hidden, E = net.experts();
  MoeForward out;
  out.x.push_back(X0);
  for (std::size_t l = 1; l <= L; ++l) {
    const Eigen::Map<const Eigen::MatrixXd> W(theta.data() + off[l - 1], bb.widths[l], bb.widths[l - 1]);
    Eigen::MatrixXd a = W * out.x.back();
    if (bb.biases) a.colwise() += theta.segment(off[l - 1] + W.size(), bb.widths[l]);
    out.a.push_back(a);
    if (l == L) break;
    const RouterBlock& rb = blocks[l - 1];
    const Eigen::Map<const Eigen::MatrixXd> U1(theta.data() + rb.U1, H, bb.widths[l - 1]), U2(theta.data() + rb.U2, E, H);
    Eigen::MatrixXd h = ((U1 * out.x.back()).colwise() + theta.segment(rb.c1, H)).cwiseMax(0.0);
    Eigen::MatrixXd s = (U2 * h).colwise() + theta.segment(rb.c2, E);
    Eigen::MatrixXd g(E, s.cols());
    std::vector<int> chosen(std::size_t(s.cols()));
    Eigen::MatrixXd x = Eigen::MatrixXd::Zero(bb.widths[l], a.cols());
    const int n = net.expert_size(l);
    for (Eigen::Index j = 0; j < s.cols(); ++j) {
      const double top = s.col(j).maxCoeff();
      g.col(j) = (s.col(j).array() - top).exp().matrix();
      g.col(j) /= g.col(j).sum();
      Eigen::Index e = 0;
      s.col(j).maxCoeff(&e);  // the first maximum: lowest index on ties
      chosen[std::size_t(j)] = int(e);
      const double sigma = net.trainable ? g(e, j) : 1.0;
      for (int u = int(e) * n; u < int(e + 1) * n; ++u) x(u, j) = sigma * act(bb.f, a(u, j));
    }
    out.h.push_back(std::move(h)), out.g.push_back(std::move(g)), out.chosen.push_back(std::move(chosen));
    out.x.push_back(std::move(x));
  }
  return out;
}

Eigen::VectorXd moe_gradient(const MoeMlp& net, const Eigen::VectorXd& theta, const MoeForward& fwd, const Eigen::MatrixXd& G) {
  const nn::PlainMlp& bb = net.backbone;
  const std::size_t L = bb.widths.size() - 1;
  const auto off = backbone_offsets(bb);
  const auto blocks = router_blocks(net);
  const int H = net.router_hidden, E = net.experts();
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
  Eigen::MatrixXd delta = G;  // ∂/∂a_ℓ, from ℓ = L down
  Eigen::MatrixXd carry;      // ∂/∂x_{ℓ−1} through hidden layer ℓ's router (it reads x_{ℓ−1}); empty at ℓ = L
  for (std::size_t l = L; l >= 1; --l) {
    const Eigen::Map<const Eigen::MatrixXd> W(theta.data() + off[l - 1], bb.widths[l], bb.widths[l - 1]);
    Eigen::Map<Eigen::MatrixXd>(grad.data() + off[l - 1], W.rows(), W.cols()) = delta * fwd.x[l - 1].transpose();
    if (bb.biases) grad.segment(off[l - 1] + W.size(), bb.widths[l]) = delta.rowwise().sum();
    if (l == 1) break;
    Eigen::MatrixXd dx = W.transpose() * delta;  // ∂/∂x_{ℓ−1}
    if (carry.size() > 0) dx += carry;
    // Hidden layer k = ℓ − 1: x_k = σ m_{e*} ∘ f(a_k).
    const std::size_t k = l - 1;
    const Eigen::MatrixXd& a = fwd.a[k - 1];
    const int n = net.expert_size(k);
    Eigen::MatrixXd next = Eigen::MatrixXd::Zero(a.rows(), a.cols()), ds = Eigen::MatrixXd::Zero(E, a.cols());
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const int e = fwd.chosen[k - 1][std::size_t(j)];
      const double sigma = net.trainable ? fwd.g[k - 1](e, j) : 1.0;
      double dsigma = 0;
      for (int u = e * n; u < (e + 1) * n; ++u) {
        next(u, j) = dx(u, j) * sigma * act_derivative(bb.f, a(u, j));
        dsigma += dx(u, j) * act(bb.f, a(u, j));
      }
      if (net.trainable) {  // σ = g_e = softmax(s)_e: ∂σ/∂s_i = σ (1[i = e] − g_i)
        ds.col(j) = -dsigma * sigma * fwd.g[k - 1].col(j);
        ds(e, j) += dsigma * sigma;
      }
    }
    carry.resize(0, 0);
    if (net.trainable) {
      const RouterBlock& rb = blocks[k - 1];
      const Eigen::Map<const Eigen::MatrixXd> U1(theta.data() + rb.U1, H, bb.widths[k - 1]), U2(theta.data() + rb.U2, E, H);
      const Eigen::MatrixXd& h = fwd.h[k - 1];
      Eigen::Map<Eigen::MatrixXd>(grad.data() + rb.U2, E, H) = ds * h.transpose();
      grad.segment(rb.c2, E) = ds.rowwise().sum();
      const Eigen::MatrixXd dh = (U2.transpose() * ds).cwiseProduct((h.array() > 0).cast<double>().matrix());
      Eigen::Map<Eigen::MatrixXd>(grad.data() + rb.U1, H, bb.widths[k - 1]) = dh * fwd.x[k - 1].transpose();
      grad.segment(rb.c1, H) = dh.rowwise().sum();
      carry = U1.transpose() * dh;
    }
    delta = std::move(next);
  }
  return grad;
}

}  // namespace sparseact::routing
