// The CPU stand-in for cuda/plain_train.cu (cuda/standin.hpp): the same session, the same passes in the same
// order (a dense product per layer, C_k per column, the cross-entropy per column, Pearlmutter's R pass), in
// Eigen. `fault` scales every SGD and Adam step by 1 + 1e-3: a wrong learning rate that the training twin must see.
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
  std::vector<Eigen::Index> offset, gamma;  ///< layer ℓ's W_ℓ, and its γ_ℓ (PReLU hidden layers)
  Eigen::VectorXd theta, adam_m, adam_v;
  long adam_t = 0;
  Eigen::MatrixXd X, Y;
  std::vector<int> labels;
  // The last forward pass: x_0 … x_{L−1}, a_1 … a_L (index ℓ), masks m_1 … m_{L−1}, the batch's labels or targets.
  std::vector<Eigen::MatrixXd> x, a, m;
  std::vector<int> y;
  Eigen::MatrixXd yb;

  bool prelu() const { return spec.activation == kPrelu; }
  int N(std::size_t l) const { return spec.widths[l]; }
  double g(std::size_t l, Eigen::Index i) const { return theta(gamma[l] + (spec.shared_gamma ? 0 : i)); }
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
        case PlainMasks::none: m[l] = Eigen::MatrixXd::Ones(N(l), X0.cols()); break;  // (PReLU nets have no masks)
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
      if (prelu()) {  // σ_γ, paper 003 eq. (1)
        x[l] = a[l];
        for (Eigen::Index j = 0; j < x[l].cols(); ++j)
          for (Eigen::Index i = 0; i < x[l].rows(); ++i)
            if (a[l](i, j) < 0) x[l](i, j) = g(l, i) * a[l](i, j);
        continue;
      }
      x[l] = a[l].unaryExpr([&](double v) { return activate(spec.activation, v); }).cwiseProduct(m[l]);  // (8)
    }
  }

  void gather(const std::vector<Eigen::Index>& idx) {
    if (idx.empty()) throw std::invalid_argument("cuda::PlainTrainer: an empty batch");
    Eigen::MatrixXd X0(X.rows(), Eigen::Index(idx.size()));
    y.clear();
    yb.resize(Y.rows(), Eigen::Index(idx.size()));
    for (std::size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < 0 || idx[j] >= X.cols()) throw std::invalid_argument("cuda::PlainTrainer: an index outside the training set");
      X0.col(Eigen::Index(j)) = X.col(idx[j]);
      if (spec.loss == PlainLoss::mse) yb.col(Eigen::Index(j)) = Y.col(idx[j]);
      else y.push_back(labels[std::size_t(idx[j])]);
    }
    forward(X0);
  }

  /// The loss; G and π (cross-entropy) of the last forward pass.
  double loss(Eigen::MatrixXd& G, Eigen::MatrixXd& pi) const {
    const Eigen::MatrixXd& F = a[L];
    const double B = double(F.cols());
    if (spec.loss == PlainLoss::mse) {
      const double scale = B * double(F.rows());
      G = 2 * (F - yb) / scale;
      double sum = 0;
      for (Eigen::Index j = 0; j < F.cols(); ++j) sum += (F.col(j) - yb.col(j)).squaredNorm();
      return sum / scale;
    }
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
      if (spec.loss == PlainLoss::mse) {
        Rdelta = 2 * Ra[L] / (double(Ra[L].cols()) * double(Ra[L].rows()));
      } else {
        const Eigen::RowVectorXd dot = pi.cwiseProduct(Ra[L]).colwise().sum();
        Rdelta = (pi.cwiseProduct(Ra[L]) - pi * dot.asDiagonal()) / double(pi.cols());
      }
    }
    Eigen::VectorXd out = Eigen::VectorXd::Zero(theta.size());
    for (std::size_t l = L; l >= 1; --l) {
      Eigen::Map<Eigen::MatrixXd> gW(out.data() + offset[l], N(l), N(l - 1));
      gW = (v ? Rdelta : delta) * x[l - 1].transpose();
      if (v && l > 1) gW += delta * Rx[l - 1].transpose();
      if (spec.biases) out.segment(offset[l] + Eigen::Index(N(l)) * N(l - 1), N(l)) = (v ? Rdelta : delta).rowwise().sum();
      if (l == 1) break;
      const Eigen::MatrixXd back = W(theta, l).transpose() * delta;
      if (prelu()) {  // ∂L/∂γ_i = Σ_s back_{i,s} a_{i,s} [a < 0]; δ gated by γ_i where a < 0
        const Eigen::MatrixXd& z = a[l - 1];
        delta = back;
        for (Eigen::Index i = 0; i < z.rows(); ++i) {
          double sum = 0;
          for (Eigen::Index j = 0; j < z.cols(); ++j)
            if (z(i, j) < 0) sum += back(i, j) * z(i, j), delta(i, j) = back(i, j) * g(l - 1, i);
          out(gamma[l - 1] + (spec.shared_gamma ? 0 : i)) += sum;
        }
        continue;
      }
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

#include "plain_entries.inc"

PlainSession* plain_open(const PlainTrainSpec& spec, const Eigen::VectorXd& theta0, const Eigen::MatrixXd& X, const std::vector<int>& labels,
                         const Eigen::MatrixXd& Y) {
  check_session(spec, X, labels, Y, kStandinKwtaLimits);  // an H100's k-WTA limits (cuda/kwta_limits.hpp)
  const std::size_t L = spec.widths.size() - 1;
  auto s = std::make_unique<PlainState>();
  s->spec = spec, s->L = L, s->X = X, s->labels = labels, s->Y = Y;
  s->offset.assign(L + 1, 0), s->gamma.assign(L + 1, 0);
  Eigen::Index at = 0;
  for (std::size_t l = 1; l <= L; ++l) {
    s->offset[l] = at;
    at += Eigen::Index(spec.widths[l]) * spec.widths[l - 1] + (spec.biases ? spec.widths[l] : 0);
    s->gamma[l] = at;
    if (spec.activation == kPrelu && l < L) at += spec.shared_gamma ? 1 : spec.widths[l];
  }
  if (theta0.size() != at) throw std::invalid_argument("cuda::PlainTrainer: θ has the wrong size");
  s->theta = theta0;
  return reinterpret_cast<PlainSession*>(s.release());
}

void plain_close(PlainSession* s) noexcept { delete state(s); }

double plain_step(PlainSession* s, const std::vector<Eigen::Index>& idx, PlainUpdate update, double lr, Eigen::VectorXd* grad) {
  PlainState& p = *state(s);
  p.gather(idx);
  Eigen::MatrixXd G, pi;
  const double L = p.loss(G, pi);
  const Eigen::VectorXd g = p.backward(nullptr);
  if (grad) *grad = g;
  if (standin() == Standin::fault) lr *= 1 + 1e-3;
  if (update == PlainUpdate::sgd) p.theta -= lr * g;
  if (update == PlainUpdate::adam) {  // nn::AdamW with weight decay 0, the same operations in the same order
    if (p.adam_t == 0) p.adam_m = Eigen::VectorXd::Zero(g.size()), p.adam_v = Eigen::VectorXd::Zero(g.size());
    const long t = ++p.adam_t;
    const double b1 = p.spec.adam_beta1, b2 = p.spec.adam_beta2;
    p.adam_m = b1 * p.adam_m + (1 - b1) * g;
    p.adam_v = b2 * p.adam_v + (1 - b2) * g.cwiseAbs2();
    const double step_size = lr / (1 - std::pow(b1, double(t))), bias2_sqrt = std::sqrt(1 - std::pow(b2, double(t)));
    p.theta.array() -= step_size * p.adam_m.array() / (p.adam_v.array().sqrt() / bias2_sqrt + p.spec.adam_eps);
  }
  return L;
}

Eigen::VectorXd plain_hvp(PlainSession* s, const std::vector<Eigen::Index>& idx, const Eigen::VectorXd& v) {
  PlainState& p = *state(s);
  if (p.prelu()) throw std::invalid_argument("cuda::PlainTrainer::hvp: no R-operator for PReLU nets");
  if (v.size() != p.theta.size()) throw std::invalid_argument("cuda::PlainTrainer::hvp: v has the wrong size");
  p.gather(idx);
  return p.backward(&v);
}

Eigen::VectorXd plain_hutchinson(PlainSession* s, const std::vector<Eigen::Index>& idx, int probes, std::uint64_t seed) {
  if (probes < 1) throw std::invalid_argument("cuda::PlainTrainer::hutchinson: need at least one probe");
  PlainState& p = *state(s);
  if (p.prelu()) throw std::invalid_argument("cuda::PlainTrainer::hutchinson: no R-operator for PReLU nets");
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
