#include <sparseact/nn/prelu_mlp.hpp>

#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>

namespace sparseact::nn {

namespace {

struct Offsets {
  Eigen::Index A, b, gamma, end;  // gamma = end for the output layer
};

std::vector<Offsets> offsets(const PreluMlp& net) {
  if (net.widths.size() < 2) throw std::invalid_argument("PReLU MLP: need an input and an output width");
  for (int w : net.widths)
    if (w < 1) throw std::invalid_argument("PReLU MLP: every width must be at least 1");
  const std::size_t layers = net.widths.size() - 1;  // J + 1 affine maps
  std::vector<Offsets> o;
  Eigen::Index at = 0;
  for (std::size_t j = 0; j < layers; ++j) {
    Offsets f;
    f.A = at, f.b = f.A + Eigen::Index(net.widths[j + 1]) * net.widths[j], f.gamma = f.b + net.widths[j + 1];
    f.end = f.gamma + (j + 1 < layers ? (net.shared_gamma ? 1 : net.widths[j + 1]) : 0);
    o.push_back(f);
    at = f.end;
  }
  return o;
}

}  // namespace

Eigen::Index parameter_count(const PreluMlp& net) { return offsets(net).back().end; }

Eigen::VectorXd init_prelu_mlp(const PreluMlp& net, std::uint64_t seed, std::uint64_t stream, double gamma0) {
  const auto o = offsets(net);
  Eigen::VectorXd theta(o.back().end);
  for (std::size_t j = 0; j < o.size(); ++j) {
    Rng rng(seed, stream_id(stream, j));
    const double bound = 1 / std::sqrt(double(net.widths[j]));
    for (Eigen::Index i = o[j].A; i < o[j].gamma; ++i) theta(i) = rng.uniform(-bound, bound);
    for (Eigen::Index i = o[j].gamma; i < o[j].end; ++i) theta(i) = gamma0;
  }
  return theta;
}

PreluForward prelu_forward(const PreluMlp& net, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X) {
  const auto o = offsets(net);
  if (theta.size() != o.back().end) throw std::invalid_argument("prelu_forward: θ has the wrong size");
  if (X.rows() != net.widths[0]) throw std::invalid_argument("prelu_forward: inputs have the wrong dimension");
  PreluForward f;
  f.x.push_back(X);
  for (std::size_t j = 0; j < o.size(); ++j) {
    const Eigen::Map<const Eigen::MatrixXd> A(theta.data() + o[j].A, net.widths[j + 1], net.widths[j]);
    Eigen::MatrixXd z = A * f.x.back();
    z.colwise() += theta.segment(o[j].b, net.widths[j + 1]);
    f.z.push_back(z);
    if (j + 1 == o.size()) break;  // affine output
    Eigen::MatrixXd x = z;
    for (Eigen::Index i = 0; i < z.rows(); ++i) {
      const double g = theta(o[j].gamma + (net.shared_gamma ? 0 : i));
      for (Eigen::Index c = 0; c < z.cols(); ++c)
        if (z(i, c) < 0) x(i, c) = g * z(i, c);
    }
    f.x.push_back(std::move(x));
  }
  return f;
}

Eigen::VectorXd prelu_gradient(const PreluMlp& net, const Eigen::VectorXd& theta, const PreluForward& fwd, const Eigen::MatrixXd& G) {
  const auto o = offsets(net);
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
  Eigen::MatrixXd delta = G;  // ∂/∂z^{(j)}
  for (std::size_t j = o.size(); j-- > 0;) {
    Eigen::Map<Eigen::MatrixXd>(grad.data() + o[j].A, net.widths[j + 1], net.widths[j]) = delta * fwd.x[j].transpose();
    grad.segment(o[j].b, net.widths[j + 1]) = delta.rowwise().sum();
    if (j == 0) break;
    const Eigen::Map<const Eigen::MatrixXd> A(theta.data() + o[j].A, net.widths[j + 1], net.widths[j]);
    const Eigen::MatrixXd dx = A.transpose() * delta;  // ∂/∂x^{(j)}
    const Eigen::MatrixXd& z = fwd.z[j - 1];
    Eigen::MatrixXd next = dx;
    for (Eigen::Index i = 0; i < z.rows(); ++i) {
      const Eigen::Index gi = o[j - 1].gamma + (net.shared_gamma ? 0 : i);
      for (Eigen::Index c = 0; c < z.cols(); ++c)
        if (z(i, c) < 0) {
          grad(gi) += dx(i, c) * z(i, c);  // ∂σ_γ/∂γ = z
          next(i, c) = dx(i, c) * theta(gi);
        }
    }
    delta = std::move(next);
  }
  return grad;
}

}  // namespace sparseact::nn
