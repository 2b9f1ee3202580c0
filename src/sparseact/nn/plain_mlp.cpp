#include <sparseact/nn/plain_mlp.hpp>

#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>

namespace sparseact::nn {

PlainActivation parse_plain_activation(const std::string& name) {
  if (name == "relu") return PlainActivation::relu;
  if (name == "tanh") return PlainActivation::tanh;
  if (name == "identity") return PlainActivation::identity;
  throw std::invalid_argument("activation '" + name + "': use relu, tanh or identity");
}

namespace {

Eigen::Index layer_size(const PlainMlp& net, std::size_t l) {  // W_ℓ and b_ℓ, ℓ ≥ 1
  return Eigen::Index(net.widths[l]) * net.widths[l - 1] + (net.biases ? net.widths[l] : 0);
}

void check_net(const PlainMlp& net) {
  if (net.widths.size() < 2) throw std::invalid_argument("plain MLP: need an input width and at least one layer");
  for (int w : net.widths)
    if (w < 1) throw std::invalid_argument("plain MLP: every width must be at least 1");
}

Eigen::MatrixXd act(PlainActivation f, const Eigen::MatrixXd& a) {
  switch (f) {
    case PlainActivation::relu: return a.cwiseMax(0.0);
    case PlainActivation::tanh: return a.array().tanh().matrix();
    case PlainActivation::identity: return a;
  }
  return a;
}

/// f'(a); ReLU'(0) = 0.
Eigen::MatrixXd act_derivative(PlainActivation f, const Eigen::MatrixXd& a) {
  switch (f) {
    case PlainActivation::relu: return (a.array() > 0.0).cast<double>().matrix();
    case PlainActivation::tanh: return (1.0 - a.array().tanh().square()).matrix();
    case PlainActivation::identity: return Eigen::MatrixXd::Ones(a.rows(), a.cols());
  }
  return a;
}

}  // namespace

Eigen::Index parameter_count(const PlainMlp& net) {
  check_net(net);
  Eigen::Index n = 0;
  for (std::size_t l = 1; l < net.widths.size(); ++l) n += layer_size(net, l);
  return n;
}

Eigen::VectorXd init_plain_mlp(const PlainMlp& net, std::uint64_t seed, std::uint64_t stream) {
  Eigen::VectorXd theta(parameter_count(net));
  Eigen::Index at = 0;
  for (std::size_t l = 1; l < net.widths.size(); ++l) {
    const double bound = 1.0 / std::sqrt(double(net.widths[l - 1]));
    Rng rng(seed, stream_id(stream, l));
    for (Eigen::Index i = 0; i < layer_size(net, l); ++i) theta(at++) = rng.uniform(-bound, bound);
  }
  return theta;
}

PlainForward plain_forward(const PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0,
                           const std::vector<Eigen::MatrixXd>& masks) {
  if (!masks.empty() && masks.size() != net.widths.size() - 2) throw std::invalid_argument("plain_forward: need one mask per hidden layer");
  std::vector<Eigen::MatrixXd> used;
  return plain_forward(
      net, theta, X0, [&](std::size_t l, const Eigen::MatrixXd&, const Eigen::MatrixXd&) { return masks.empty() ? Eigen::MatrixXd() : masks[l - 1]; },
      used);
}

PlainForward plain_forward(const PlainMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X0, const MaskRule& rule,
                           std::vector<Eigen::MatrixXd>& masks) {
  check_net(net);
  const std::size_t L = net.widths.size() - 1;
  if (theta.size() != parameter_count(net)) throw std::invalid_argument("plain_forward: θ has the wrong size");
  if (X0.rows() != net.widths[0]) throw std::invalid_argument("plain_forward: inputs have the wrong dimension");
  masks.clear();
  PlainForward out;
  out.x.push_back(X0);
  Eigen::Index at = 0;
  for (std::size_t l = 1; l <= L; ++l) {
    const Eigen::Map<const Eigen::MatrixXd> W(theta.data() + at, net.widths[l], net.widths[l - 1]);
    at += W.size();
    Eigen::MatrixXd a = W * out.x.back();  // (1) / (7)
    if (net.biases) {
      a.colwise() += theta.segment(at, net.widths[l]);
      at += net.widths[l];
    }
    out.a.push_back(a);
    if (l == L) break;  // the output a_L is not masked
    Eigen::MatrixXd x = act(net.f, a);  // (2)
    Eigen::MatrixXd m = rule(l, out.a.back(), out.x.back());
    if (m.size() > 0) {
      if (m.rows() != x.rows() || m.cols() != x.cols()) throw std::invalid_argument("plain_forward: a mask has the wrong shape");
      x = x.cwiseProduct(m);  // (8)
      masks.push_back(std::move(m));
    }
    out.x.push_back(std::move(x));
  }
  if (!masks.empty() && masks.size() != L - 1) throw std::invalid_argument("plain_forward: a mask rule must mask every hidden layer or none");
  return out;
}

Eigen::VectorXd plain_gradient(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd, const Eigen::MatrixXd& G,
                               const std::vector<Eigen::MatrixXd>& masks) {
  const std::size_t L = net.widths.size() - 1;
  if (G.rows() != net.widths[L] || G.cols() != fwd.x[0].cols()) throw std::invalid_argument("plain_gradient: G has the wrong shape");
  Eigen::VectorXd grad(theta.size());
  std::vector<Eigen::Index> offset(L + 1, 0);
  for (std::size_t l = 1; l <= L; ++l) offset[l] = offset[l - 1] + layer_size(net, l);
  Eigen::MatrixXd delta = G;  // ∂/∂a_ℓ, starting at ℓ = L
  for (std::size_t l = L; l >= 1; --l) {
    const Eigen::Index at = offset[l - 1];
    Eigen::Map<Eigen::MatrixXd>(grad.data() + at, net.widths[l], net.widths[l - 1]) = delta * fwd.x[l - 1].transpose();
    if (net.biases) grad.segment(at + Eigen::Index(net.widths[l]) * net.widths[l - 1], net.widths[l]) = delta.rowwise().sum();
    if (l == 1) break;
    const Eigen::Map<const Eigen::MatrixXd> W(theta.data() + at, net.widths[l], net.widths[l - 1]);
    Eigen::MatrixXd back = (W.transpose() * delta).cwiseProduct(act_derivative(net.f, fwd.a[l - 2]));
    if (!masks.empty()) back = back.cwiseProduct(masks[l - 2]);  // masks are constants
    delta = std::move(back);
  }
  return grad;
}

std::vector<Eigen::MatrixXd> plain_signals(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd, Eigen::Index j,
                                           const std::vector<Eigen::MatrixXd>& masks) {
  const std::size_t L = net.widths.size() - 1;
  std::vector<Eigen::Index> offset(L + 1, 0);
  for (std::size_t l = 1; l <= L; ++l) offset[l] = offset[l - 1] + layer_size(net, l);
  std::vector<Eigen::MatrixXd> S(L + 1);  // S[ℓ], ℓ = 1 … L (S[0] unused)
  S[L] = Eigen::MatrixXd::Identity(net.widths[L], net.widths[L]);
  for (std::size_t l = L; l >= 2; --l) {
    const Eigen::Map<const Eigen::MatrixXd> W(theta.data() + offset[l - 1], net.widths[l], net.widths[l - 1]);
    Eigen::VectorXd d = act_derivative(net.f, fwd.a[l - 2].col(j));
    if (!masks.empty()) d = d.cwiseProduct(masks[l - 2].col(j));
    S[l - 1] = (S[l] * W) * d.asDiagonal();
  }
  S.erase(S.begin());
  return S;
}

Eigen::MatrixXd plain_jacobian(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd, Eigen::Index j,
                               const std::vector<Eigen::MatrixXd>& masks) {
  const std::size_t L = net.widths.size() - 1;
  const std::vector<Eigen::MatrixXd> S = plain_signals(net, theta, fwd, j, masks);
  Eigen::MatrixXd J(net.widths[L], theta.size());
  Eigen::Index at = 0;
  for (std::size_t l = 1; l <= L; ++l) {
    const Eigen::VectorXd x = fwd.x[l - 1].col(j);
    for (Eigen::Index k = 0; k < x.size(); ++k)  // column-major W_ℓ: entry (i, k) at at + k N_ℓ + i
      J.middleCols(at + k * net.widths[l], net.widths[l]) = S[l - 1] * x(k);
    at += Eigen::Index(net.widths[l]) * net.widths[l - 1];
    if (net.biases) {
      J.middleCols(at, net.widths[l]) = S[l - 1];
      at += net.widths[l];
    }
  }
  return J;
}

Eigen::MatrixXd plain_ntk(const PlainMlp& net, const Eigen::VectorXd& theta, const PlainForward& fwd, Eigen::Index i, Eigen::Index j,
                          const std::vector<Eigen::MatrixXd>& masks, std::vector<Eigen::MatrixXd>* blocks) {
  const std::size_t L = net.widths.size() - 1;
  const std::vector<Eigen::MatrixXd> Si = plain_signals(net, theta, fwd, i, masks), Sj = plain_signals(net, theta, fwd, j, masks);
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(net.widths[L], net.widths[L]);
  if (blocks) blocks->clear();
  for (std::size_t l = 1; l <= L; ++l) {
    const Eigen::MatrixXd SS = Si[l - 1] * Sj[l - 1].transpose();
    const Eigen::MatrixXd block = fwd.x[l - 1].col(i).dot(fwd.x[l - 1].col(j)) * SS;  // eq. (11) with x_{ℓ−1}
    if (blocks) blocks->push_back(block);
    K += block;
    if (net.biases) K += SS;
  }
  return K;
}

}  // namespace sparseact::nn
