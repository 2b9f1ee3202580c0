#include <sparseact/nn/prelu_bn_mlp.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>

namespace sparseact::nn {

namespace {

struct Offsets {
  Eigen::Index A, b, scale, shift, gamma, end;  // scale = shift = gamma = end for the output layer
};

std::vector<Offsets> offsets(const PreluBnMlp& net) {
  if (net.widths.size() < 2) throw std::invalid_argument("PReLU-BatchNorm MLP: need an input and an output width");
  for (int w : net.widths)
    if (w < 1) throw std::invalid_argument("PReLU-BatchNorm MLP: every width must be at least 1");
  if (!(net.eps > 0)) throw std::invalid_argument("PReLU-BatchNorm MLP: BatchNorm's eps must be > 0");
  if (!(net.momentum >= 0 && net.momentum <= 1)) throw std::invalid_argument("PReLU-BatchNorm MLP: BatchNorm's momentum must lie in [0, 1]");
  const std::size_t layers = net.widths.size() - 1;  // J + 1 affine maps
  std::vector<Offsets> o;
  Eigen::Index at = 0;
  for (std::size_t j = 0; j < layers; ++j) {
    const Eigen::Index d = net.widths[j + 1];
    const bool hidden = j + 1 < layers;
    Offsets f;
    f.A = at, f.b = f.A + d * net.widths[j];
    f.scale = f.b + d;
    f.shift = f.scale + (hidden ? d : 0);
    f.gamma = f.shift + (hidden ? d : 0);
    f.end = f.gamma + (hidden ? (net.shared_gamma ? 1 : d) : 0);
    o.push_back(f);
    at = f.end;
  }
  return o;
}

Eigen::Map<const Eigen::MatrixXd> weight(const Eigen::VectorXd& theta, const Offsets& o, const PreluBnMlp& net, std::size_t j) {
  return {theta.data() + o.A, net.widths[j + 1], net.widths[j]};
}

double gamma_of(const Eigen::VectorXd& theta, const Offsets& o, bool shared, Eigen::Index i) { return theta(o.gamma + (shared ? 0 : i)); }

/// ∂/∂z of BatchNorm in training mode from ∂/∂x̂ (the batch statistics depend on every column):
///   ∂z = (1/√(v + ε)) (∂x̂ − mean_c ∂x̂ − x̂ ⊙ mean_c(∂x̂ ⊙ x̂))   per row.
Eigen::MatrixXd batch_norm_backward(const Eigen::MatrixXd& dxhat, const Eigen::MatrixXd& xhat, const Eigen::VectorXd& inv_std) {
  const double B = double(xhat.cols());
  const Eigen::VectorXd mean_d = dxhat.rowwise().sum() / B;
  const Eigen::VectorXd mean_dx = (dxhat.array() * xhat.array()).rowwise().sum().matrix() / B;
  Eigen::MatrixXd dz = dxhat;
  dz.colwise() -= mean_d;
  dz -= (xhat.array().colwise() * mean_dx.array()).matrix();
  return inv_std.asDiagonal() * dz;
}

}  // namespace

Eigen::Index parameter_count(const PreluBnMlp& net) { return offsets(net).back().end; }

Eigen::VectorXd init_prelu_bn_mlp(const PreluBnMlp& net, std::uint64_t seed, std::uint64_t stream, double gamma0) {
  const auto o = offsets(net);
  Eigen::VectorXd theta(o.back().end);
  for (std::size_t j = 0; j < o.size(); ++j) {
    Rng rng(seed, stream_id(stream, j));
    const double bound = 1 / std::sqrt(double(net.widths[j]));
    for (Eigen::Index i = o[j].A; i < o[j].scale; ++i) theta(i) = rng.uniform(-bound, bound);
    theta.segment(o[j].scale, o[j].shift - o[j].scale).setOnes();  // BatchNorm1d: weight 1, bias 0
    theta.segment(o[j].shift, o[j].gamma - o[j].shift).setZero();
    theta.segment(o[j].gamma, o[j].end - o[j].gamma).setConstant(gamma0);
  }
  return theta;
}

BnRunning init_bn_running(const PreluBnMlp& net) {
  offsets(net);  // validates
  BnRunning r;
  for (std::size_t j = 1; j + 1 < net.widths.size(); ++j) {
    r.mean.push_back(Eigen::VectorXd::Zero(net.widths[j]));
    r.var.push_back(Eigen::VectorXd::Ones(net.widths[j]));
  }
  return r;
}

PreluBnForward prelu_bn_forward(const PreluBnMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X, BnMode mode,
                                const BnRunning& running) {
  const auto o = offsets(net);
  if (theta.size() != o.back().end) throw std::invalid_argument("prelu_bn_forward: θ has the wrong size");
  if (X.rows() != net.widths[0]) throw std::invalid_argument("prelu_bn_forward: inputs have the wrong dimension");
  if (X.cols() < 1) throw std::invalid_argument("prelu_bn_forward: no inputs");
  if (mode == BnMode::train && X.cols() < 2)
    throw std::invalid_argument("prelu_bn_forward: BatchNorm in training mode needs at least 2 inputs (torch refuses one)");
  if (mode == BnMode::eval && running.mean.size() + 2 != net.widths.size())
    throw std::invalid_argument("prelu_bn_forward: running statistics of another network");
  const double B = double(X.cols());
  PreluBnForward f;
  f.mode = mode;
  f.x.push_back(X);
  for (std::size_t j = 0; j < o.size(); ++j) {
    const Eigen::Index d = net.widths[j + 1];
    Eigen::MatrixXd z = weight(theta, o[j], net, j) * f.x.back();
    z.colwise() += theta.segment(o[j].b, d);
    if (j + 1 == o.size()) {  // affine output
      f.out = std::move(z);
      break;
    }
    Eigen::VectorXd mu, v;
    if (mode == BnMode::train) {
      mu = z.rowwise().sum() / B;
      v = (z.colwise() - mu).array().square().rowwise().sum().matrix() / B;  // biased, as torch normalises
    } else {
      mu = running.mean[j], v = running.var[j];
    }
    const Eigen::VectorXd inv_std = (v.array() + net.eps).rsqrt().matrix();
    Eigen::MatrixXd xhat = inv_std.asDiagonal() * (z.colwise() - mu);
    Eigen::MatrixXd u = theta.segment(o[j].scale, d).asDiagonal() * xhat;
    u.colwise() += theta.segment(o[j].shift, d);
    Eigen::MatrixXd x = u;
    for (Eigen::Index i = 0; i < d; ++i) {
      const double g = gamma_of(theta, o[j], net.shared_gamma, i);
      for (Eigen::Index c = 0; c < u.cols(); ++c)
        if (u(i, c) < 0) x(i, c) = g * u(i, c);
    }
    f.mean.push_back(std::move(mu)), f.var.push_back(std::move(v)), f.inv_std.push_back(inv_std);
    f.xhat.push_back(std::move(xhat)), f.u.push_back(std::move(u)), f.x.push_back(std::move(x));
  }
  return f;
}

void update_bn_running(const PreluBnMlp& net, const PreluBnForward& fwd, BnRunning& running) {
  if (fwd.mode != BnMode::train) throw std::invalid_argument("update_bn_running: needs a training-mode forward pass");
  if (running.mean.size() != fwd.mean.size() || running.mean.size() + 2 != net.widths.size())
    throw std::invalid_argument("update_bn_running: running statistics of another network");
  const double B = double(fwd.x.front().cols()), m = net.momentum;
  for (std::size_t j = 0; j < fwd.mean.size(); ++j) {
    running.mean[j] = (1 - m) * running.mean[j] + m * fwd.mean[j];
    running.var[j] = (1 - m) * running.var[j] + m * fwd.var[j] * (B / (B - 1));  // the unbiased variance
  }
  ++running.batches;
}

Eigen::VectorXd prelu_bn_gradient(const PreluBnMlp& net, const Eigen::VectorXd& theta, const PreluBnForward& fwd, const Eigen::MatrixXd& G) {
  const auto o = offsets(net);
  if (theta.size() != o.back().end || fwd.x.size() != o.size() || G.rows() != fwd.out.rows() || G.cols() != fwd.out.cols())
    throw std::invalid_argument("prelu_bn_gradient: θ, the forward pass and G do not match");
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
  Eigen::MatrixXd delta = G;  // ∂/∂z^{(j)}
  for (std::size_t j = o.size(); j-- > 0;) {
    const Eigen::Index d = net.widths[j + 1];
    Eigen::Map<Eigen::MatrixXd>(grad.data() + o[j].A, d, net.widths[j]) = delta * fwd.x[j].transpose();
    grad.segment(o[j].b, d) = delta.rowwise().sum();
    if (j == 0) break;
    const std::size_t h = j - 1;  // the hidden layer below: PReLU, then BatchNorm, backwards
    const Offsets& oh = o[h];
    const Eigen::MatrixXd dx = weight(theta, o[j], net, j).transpose() * delta;  // ∂/∂x^{(j)}
    const Eigen::MatrixXd& u = fwd.u[h];
    Eigen::MatrixXd du = dx;
    for (Eigen::Index i = 0; i < u.rows(); ++i) {
      const Eigen::Index gi = oh.gamma + (net.shared_gamma ? 0 : i);
      for (Eigen::Index c = 0; c < u.cols(); ++c)
        if (u(i, c) < 0) {
          grad(gi) += dx(i, c) * u(i, c);  // ∂σ_γ/∂γ = u
          du(i, c) = dx(i, c) * theta(gi);
        }
    }
    const Eigen::Index dh = net.widths[h + 1];
    grad.segment(oh.scale, dh) = (du.array() * fwd.xhat[h].array()).rowwise().sum().matrix();
    grad.segment(oh.shift, dh) = du.rowwise().sum();
    const Eigen::MatrixXd dxhat = theta.segment(oh.scale, dh).asDiagonal() * du;
    delta = fwd.mode == BnMode::train ? batch_norm_backward(dxhat, fwd.xhat[h], fwd.inv_std[h])
                                      : Eigen::MatrixXd(fwd.inv_std[h].asDiagonal() * dxhat);
  }
  return grad;
}

const Eigen::MatrixXd& PreluBnModel::forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& x) {
  fwd_ = prelu_bn_forward(net_, theta, x, mode_, running_);
  if (mode_ == BnMode::train) update_bn_running(net_, fwd_, running_);
  return fwd_.out;
}

Eigen::MatrixXd PreluBnModel::predict(const Eigen::VectorXd& theta, const Eigen::MatrixXd& X) const {
  Eigen::MatrixXd out(net_.widths.back(), X.cols());
  for (Eigen::Index at = 0; at < X.cols(); at += 1000) {
    const Eigen::Index n = std::min<Eigen::Index>(1000, X.cols() - at);
    out.middleCols(at, n) = prelu_bn_forward(net_, theta, X.middleCols(at, n), BnMode::eval, running_).out;
  }
  return out;
}

}  // namespace sparseact::nn
