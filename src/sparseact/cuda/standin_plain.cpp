// The CPU stand-in for cuda/plain_train.cu (cuda/standin.hpp): the same session, the same passes in the same
// order (a dense product per layer, C_k per column, the cross-entropy per column, Pearlmutter's R pass), in
// Eigen. `fault` scales every SGD step by 1 + 1e-3: a wrong learning rate that the training twin must see.
#include <sparseact/cuda/plain_train.hpp>
#include <sparseact/cuda/standin.hpp>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include <sparseact/cuda/kwta_select.hpp>

namespace sparseact::cuda::on_cpu {

namespace {

double activate(int f, double a) { return f == 0 ? (a > 0 ? a : 0.0) : f == 1 ? std::tanh(a) : a; }
double derivative(int f, double a) {
  if (f == 0) return a > 0 ? 1.0 : 0.0;
  if (f == 1) return 1.0 - std::tanh(a) * std::tanh(a);
  return 1.0;
}
double second_derivative(int f, double a) {
  if (f != 1) return 0.0;
  const double t = std::tanh(a);
  return -2.0 * t * (1.0 - t * t);
}

struct PlainState {
  PlainTrainSpec spec;
  std::size_t L = 0;
  std::vector<Eigen::Index> offset;
  Eigen::VectorXd theta;
  Eigen::MatrixXd X;
  std::vector<int> labels;
  // The last forward pass: x_0 … x_{L−1}, a_1 … a_L (index ℓ), masks m_1 … m_{L−1}, the batch's labels.
  std::vector<Eigen::MatrixXd> x, a, m;
  std::vector<int> y;

  int N(std::size_t l) const { return spec.widths[l]; }
  Eigen::Map<const Eigen::MatrixXd> W(const Eigen::VectorXd& t, std::size_t l) const { return {t.data() + offset[l], N(l), N(l - 1)}; }
  Eigen::Map<const Eigen::VectorXd> b(const Eigen::VectorXd& t, std::size_t l) const {
    return {t.data() + offset[l] + Eigen::Index(N(l)) * N(l - 1), N(l)};
  }

  Eigen::MatrixXd kwta(const Eigen::MatrixXd& C, int k) const {  // the kernel's C_k, column by column
    Eigen::MatrixXd mask(C.rows(), C.cols());
    for (Eigen::Index j = 0; j < C.cols(); ++j)
      if (!kwta_select::select_column(C.col(j).data(), int(C.rows()), k, spec.tie_rule, mask.col(j).data()))
        throw std::invalid_argument("cuda::PlainTrainer: a routing vector holds a NaN");
    return mask;
  }

  void forward(const Eigen::MatrixXd& X0) {
    x.assign(L, {}), a.assign(L + 1, {}), m.assign(L, {});
    x[0] = X0;
    Eigen::MatrixXd z = X0;
    for (std::size_t l = 1; l <= L; ++l) {
      a[l] = W(theta, l) * x[l - 1];  // (1) / (7)
      if (spec.biases) a[l].colwise() += b(theta, l);
      if (l == L) break;
      switch (spec.masks) {
        case PlainMasks::none: m[l] = Eigen::MatrixXd::Ones(N(l), X0.cols()); break;
        case PlainMasks::router: {
          const Eigen::MatrixXd C = Eigen::Map<const Eigen::MatrixXd>(spec.V[l - 1].data(), N(l), N(l - 1)) * z;  // (4)
          m[l] = kwta(C, spec.k[l - 1]);                                                                           // (5)
          z = m[l].cwiseProduct(C);                                                                                // (6)
          break;
        }
        case PlainMasks::layerwise:
          m[l] = kwta(Eigen::Map<const Eigen::MatrixXd>(spec.V[l - 1].data(), N(l), N(l - 1)) * x[l - 1], spec.k[l - 1]);
          break;
        case PlainMasks::topk: m[l] = kwta(a[l], spec.k[l - 1]); break;
      }
      x[l] = a[l].unaryExpr([&](double v) { return activate(spec.activation, v); }).cwiseProduct(m[l]);  // (8)
    }
  }

  void gather(const std::vector<Eigen::Index>& idx) {
    if (idx.empty()) throw std::invalid_argument("cuda::PlainTrainer: an empty batch");
    Eigen::MatrixXd X0(X.rows(), Eigen::Index(idx.size()));
    y.clear();
    for (std::size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < 0 || idx[j] >= X.cols()) throw std::invalid_argument("cuda::PlainTrainer: an index outside the training set");
      X0.col(Eigen::Index(j)) = X.col(idx[j]);
      y.push_back(labels[std::size_t(idx[j])]);
    }
    forward(X0);
  }

  /// The loss; G and π of the last forward pass.
  double loss(Eigen::MatrixXd& G, Eigen::MatrixXd& pi) const {
    const Eigen::MatrixXd& F = a[L];
    const double B = double(F.cols());
    G.resize(F.rows(), F.cols()), pi.resize(F.rows(), F.cols());
    double sum = 0;
    for (Eigen::Index j = 0; j < F.cols(); ++j) {
      const double top = F.col(j).maxCoeff();
      const double lse = top + std::log((F.col(j).array() - top).exp().sum());
      sum += lse - F(y[std::size_t(j)], j);
      pi.col(j) = (F.col(j).array() - lse).exp().matrix();
      G.col(j) = pi.col(j) / B;
      G(y[std::size_t(j)], j) -= 1.0 / B;
    }
    return sum / B;
  }

  /// ∇L (R = null) or H v (R = v) on the last forward pass.
  Eigen::VectorXd backward(const Eigen::VectorXd* v) const {
    Eigen::MatrixXd delta, pi;
    loss(delta, pi);
    std::vector<Eigen::MatrixXd> Ra(L + 1), Rx(L);
    Eigen::MatrixXd Rdelta;
    if (v) {
      for (std::size_t l = 1; l <= L; ++l) {
        Ra[l] = W(*v, l) * x[l - 1];
        if (l > 1) Ra[l] += W(theta, l) * Rx[l - 1];
        if (spec.biases) Ra[l].colwise() += b(*v, l);
        if (l == L) break;
        Rx[l] = m[l].cwiseProduct(a[l].unaryExpr([&](double t) { return derivative(spec.activation, t); })).cwiseProduct(Ra[l]);
      }
      const Eigen::RowVectorXd dot = pi.cwiseProduct(Ra[L]).colwise().sum();
      Rdelta = (pi.cwiseProduct(Ra[L]) - pi * dot.asDiagonal()) / double(pi.cols());
    }
    Eigen::VectorXd out(theta.size());
    for (std::size_t l = L; l >= 1; --l) {
      Eigen::Map<Eigen::MatrixXd> gW(out.data() + offset[l], N(l), N(l - 1));
      gW = (v ? Rdelta : delta) * x[l - 1].transpose();
      if (v && l > 1) gW += delta * Rx[l - 1].transpose();
      if (spec.biases) out.segment(offset[l] + Eigen::Index(N(l)) * N(l - 1), N(l)) = (v ? Rdelta : delta).rowwise().sum();
      if (l == 1) break;
      const Eigen::MatrixXd back = W(theta, l).transpose() * delta;
      const Eigen::MatrixXd d = a[l - 1].unaryExpr([&](double t) { return derivative(spec.activation, t); }).cwiseProduct(m[l - 1]);
      if (v) {
        const Eigen::MatrixXd Rback = W(*v, l).transpose() * delta + W(theta, l).transpose() * Rdelta;
        const Eigen::MatrixXd d2 = a[l - 1].unaryExpr([&](double t) { return second_derivative(spec.activation, t); }).cwiseProduct(m[l - 1]);
        Rdelta = Rback.cwiseProduct(d) + back.cwiseProduct(d2).cwiseProduct(Ra[l - 1]);
      }
      delta = back.cwiseProduct(d);
    }
    return out;
  }
};

PlainState* state(PlainSession* s) { return reinterpret_cast<PlainState*>(s); }
const PlainState* state(const PlainSession* s) { return reinterpret_cast<const PlainState*>(s); }

}  // namespace

PlainSession* plain_open(const PlainTrainSpec& spec, const Eigen::VectorXd& theta0, const Eigen::MatrixXd& X, const std::vector<int>& labels) {
  if (spec.widths.size() < 2) throw std::invalid_argument("cuda::PlainTrainer: need an input width and at least one layer");
  for (int w : spec.widths)
    if (w < 1) throw std::invalid_argument("cuda::PlainTrainer: every width must be at least 1");
  const std::size_t L = spec.widths.size() - 1;
  const bool routed = spec.masks == PlainMasks::router || spec.masks == PlainMasks::layerwise;
  if ((spec.masks != PlainMasks::none && spec.k.size() != L - 1) || (routed && spec.V.size() != L - 1))
    throw std::invalid_argument("cuda::PlainTrainer: masks need k (and, routed, V) for every hidden layer");
  if (X.rows() != spec.widths[0] || std::size_t(X.cols()) != labels.size() || X.cols() == 0)
    throw std::invalid_argument("cuda::PlainTrainer: the training inputs and labels disagree");
  for (int y : labels)
    if (y < 0 || y >= spec.widths[L]) throw std::invalid_argument("cuda::PlainTrainer: a label outside [0, classes)");
  auto s = std::make_unique<PlainState>();
  s->spec = spec, s->L = L, s->X = X, s->labels = labels;
  s->offset.assign(L + 1, 0);
  Eigen::Index at = 0;
  for (std::size_t l = 1; l <= L; ++l) {
    s->offset[l] = at;
    at += Eigen::Index(spec.widths[l]) * spec.widths[l - 1] + (spec.biases ? spec.widths[l] : 0);
  }
  if (theta0.size() != at) throw std::invalid_argument("cuda::PlainTrainer: θ has the wrong size");
  if (routed)
    for (std::size_t l = 1; l < L; ++l)
      if (spec.V[l - 1].size() != std::size_t(spec.widths[l]) * spec.widths[l - 1])
        throw std::invalid_argument("cuda::PlainTrainer: a router matrix has the wrong size");
  s->theta = theta0;
  return reinterpret_cast<PlainSession*>(s.release());
}

void plain_close(PlainSession* s) noexcept { delete state(s); }

double plain_step(PlainSession* s, const std::vector<Eigen::Index>& idx, double lr, Eigen::VectorXd* grad) {
  PlainState& p = *state(s);
  p.gather(idx);
  Eigen::MatrixXd G, pi;
  const double L = p.loss(G, pi);
  const Eigen::VectorXd g = p.backward(nullptr);
  if (grad) *grad = g;
  if (lr > 0) p.theta -= (standin() == Standin::fault ? lr * (1 + 1e-3) : lr) * g;
  return L;
}

Eigen::VectorXd plain_hvp(PlainSession* s, const std::vector<Eigen::Index>& idx, const Eigen::VectorXd& v) {
  PlainState& p = *state(s);
  if (v.size() != p.theta.size()) throw std::invalid_argument("cuda::PlainTrainer::hvp: v has the wrong size");
  p.gather(idx);
  return p.backward(&v);
}

Eigen::VectorXd plain_hutchinson(PlainSession* s, const std::vector<Eigen::Index>& idx, int probes, std::uint64_t seed) {
  if (probes < 1) throw std::invalid_argument("cuda::PlainTrainer::hutchinson: need at least one probe");
  PlainState& p = *state(s);
  p.gather(idx);
  Eigen::VectorXd out(probes), v(p.theta.size());
  for (int k = 0; k < probes; ++k) {
    for (Eigen::Index i = 0; i < v.size(); ++i) v(i) = rademacher(seed, std::uint64_t(k), std::uint64_t(i));
    out(k) = v.dot(p.backward(&v));
  }
  return out;
}

Eigen::MatrixXd plain_logits(PlainSession* s, const Eigen::MatrixXd& X) {
  PlainState& p = *state(s);
  if (X.rows() != p.N(0)) throw std::invalid_argument("cuda::PlainTrainer::logits: inputs have the wrong dimension");
  if (X.cols() == 0) return Eigen::MatrixXd(p.N(p.L), 0);
  p.forward(X);
  return p.a[p.L];
}

Eigen::VectorXd plain_theta(const PlainSession* s) { return state(s)->theta; }

}  // namespace sparseact::cuda::on_cpu
