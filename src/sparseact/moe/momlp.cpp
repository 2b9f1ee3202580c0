#include <sparseact/moe/momlp.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/cuda/plain_train.hpp>
#include <sparseact/moe/voronoi.hpp>
#include <sparseact/nn/train.hpp>

namespace sparseact::moe {

// --- Stage 1: eq. (39) -------------------------------------------------------------------------------------

SoftPrototypeModel::SoftPrototypeModel(int K, nn::PreluMlp expert) : K_(K), expert_(std::move(expert)) {
  if (K < 1) throw std::invalid_argument("SoftPrototypeModel: K must be at least 1");
  expert_size_ = nn::parameter_count(expert_);
}

Eigen::Index SoftPrototypeModel::parameter_count() const { return Eigen::Index(expert_.widths[0]) * K_ + K_ * expert_size_; }

Eigen::VectorXd SoftPrototypeModel::init(const Eigen::MatrixXd& inputs, std::uint64_t seed, std::uint64_t stream, double gamma0) const {
  const int n = expert_.widths[0];
  if (inputs.rows() != n || inputs.cols() == 0) throw std::invalid_argument("SoftPrototypeModel::init: inputs must be n × N, N ≥ 1");
  Eigen::VectorXd theta(parameter_count());
  const Eigen::VectorXd lo = inputs.rowwise().minCoeff(), hi = inputs.rowwise().maxCoeff();
  Rng rng(seed, stream_id(stream, 0));
  for (int k = 0; k < K_; ++k)
    for (int i = 0; i < n; ++i) theta(Eigen::Index(k) * n + i) = rng.uniform(lo(i), hi(i));
  for (int k = 0; k < K_; ++k)
    theta.segment(Eigen::Index(n) * K_ + k * expert_size_, expert_size_) = nn::init_prelu_mlp(expert_, seed, stream_id(stream, 1 + k), gamma0);
  return theta;
}

Eigen::MatrixXd SoftPrototypeModel::prototypes(const Eigen::VectorXd& theta) const {
  return Eigen::Map<const Eigen::MatrixXd>(theta.data(), expert_.widths[0], K_);
}

Eigen::VectorXd SoftPrototypeModel::expert_theta(const Eigen::VectorXd& theta, int k) const {
  return theta.segment(Eigen::Index(expert_.widths[0]) * K_ + k * expert_size_, expert_size_);
}

const Eigen::MatrixXd& SoftPrototypeModel::forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& X) {
  if (theta.size() != parameter_count()) throw std::invalid_argument("SoftPrototypeModel: θ has the wrong size");
  const Eigen::Index B = X.cols();
  const Eigen::MatrixXd P = prototypes(theta);
  X_ = X;
  D_.resize(K_, B);
  for (int k = 0; k < K_; ++k) D_.row(k) = (X.colwise() - P.col(k)).colwise().norm();
  // s = softmax(−d) per column, shifted by the smallest distance so that no exponent overflows.
  S_ = (-(D_.rowwise() - D_.colwise().minCoeff())).array().exp().matrix();
  S_.array().rowwise() /= S_.colwise().sum().array();
  fwd_.resize(std::size_t(K_));
  F_ = Eigen::MatrixXd::Zero(expert_.widths.back(), B);
  for (int k = 0; k < K_; ++k) {
    fwd_[std::size_t(k)] = nn::prelu_forward(expert_, expert_theta(theta, k), X);
    F_ += fwd_[std::size_t(k)].z.back() * S_.row(k).asDiagonal();
  }
  return F_;
}

void SoftPrototypeModel::backward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& G, Eigen::VectorXd& grad) {
  const int n = expert_.widths[0];
  grad = Eigen::VectorXd::Zero(parameter_count());
  const Eigen::MatrixXd P = prototypes(theta);
  for (int k = 0; k < K_; ++k) {
    const Eigen::MatrixXd& f = fwd_[std::size_t(k)].z.back();
    grad.segment(Eigen::Index(n) * K_ + k * expert_size_, expert_size_) =
        nn::prelu_gradient(expert_, expert_theta(theta, k), fwd_[std::size_t(k)], G * S_.row(k).asDiagonal());
    const Eigen::RowVectorXd dL_dd = -(S_.row(k).array() * (G.array() * (f - F_).array()).colwise().sum()).matrix();
    Eigen::Map<Eigen::VectorXd> dp(grad.data() + Eigen::Index(k) * n, n);
    for (Eigen::Index b = 0; b < X_.cols(); ++b)
      if (D_(k, b) > 0) dp += dL_dd(b) / D_(k, b) * (P.col(k) - X_.col(b));
  }
}

// --- Stage 2: deepening --------------------------------------------------------------------------------------

PreluNet deepen(const PreluNet& shallow, int added, double sigma, std::uint64_t seed, std::uint64_t stream) {
  const std::vector<int>& w = shallow.net.widths;
  if (w.size() < 3) throw std::invalid_argument("deepen: the net needs a hidden layer");
  if (added < 0 || !(sigma >= 0)) throw std::invalid_argument("deepen: need added ≥ 0 and σ ≥ 0");
  const int h = w[w.size() - 2], m = w.back();
  PreluNet deep;
  deep.net = shallow.net;
  deep.net.widths.insert(deep.net.widths.end() - 1, std::size_t(added), h);
  const Eigen::Index out_size = Eigen::Index(m) * h + m;  // the output layer's A and b, last in θ
  const Eigen::Index body = shallow.theta.size() - out_size;
  const Eigen::Index gammas = shallow.net.shared_gamma ? 1 : h;
  deep.theta.resize(body + added * (Eigen::Index(h) * h + h + gammas) + out_size);
  deep.theta.head(body) = shallow.theta.head(body);
  Eigen::Index at = body;
  for (int l = 0; l < added; ++l) {
    Rng rng(seed, stream_id(stream, std::uint64_t(l)));
    Eigen::Map<Eigen::MatrixXd> A(deep.theta.data() + at, h, h);
    for (Eigen::Index c = 0; c < h; ++c)
      for (Eigen::Index r = 0; r < h; ++r) A(r, c) = (r == c ? 1.0 : 0.0) + sigma * rng.normal();
    at += Eigen::Index(h) * h;
    deep.theta.segment(at, h).setZero(), at += h;
    deep.theta.segment(at, gammas).setOnes(), at += gammas;  // σ₁ = identity
  }
  deep.theta.tail(out_size) = shallow.theta.tail(out_size);
  if (deep.theta.size() != nn::parameter_count(deep.net)) throw std::logic_error("deepen: layout mismatch");
  return deep;
}

// --- Training ------------------------------------------------------------------------------------------------

namespace {

/// d_out: the targets' rows (regression) or 1 + the largest label (classification).
int output_dim(const nn::Dataset& d) {
  if (d.y.size() != 0) return int(d.y.rows());
  if (d.labels.empty()) throw InputError("MoMLP: the training set has neither targets nor labels");
  return 1 + *std::max_element(d.labels.begin(), d.labels.end());
}

nn::LossKind loss_of(const nn::Dataset& d) { return d.y.size() != 0 ? nn::LossKind::mse : nn::LossKind::cross_entropy; }

/// Optimizer steps of `epochs` epochs over N points (the last short batch dropped).
long steps_of(Eigen::Index N, int epochs, int batch) { return N == 0 ? 0 : long(epochs) * long(N / std::min<Eigen::Index>(batch, N)); }

template <class Model>
double adam_steps(Model& model, Eigen::VectorXd& theta, const nn::Dataset& data, long steps, int batch, double lr, std::uint64_t seed,
                  std::uint64_t stream) {
  const Eigen::Index N = data.size();
  if (N == 0 || steps <= 0) return std::numeric_limits<double>::quiet_NaN();
  nn::BatchStream batches(data, std::min<Eigen::Index>(batch, N), seed, stream);
  nn::AdamW adam;
  adam.lr = lr, adam.weight_decay = 0;  // torch.optim.Adam
  return nn::train(model, theta, adam, nn::constant_schedule(lr), batches, {.steps = steps, .loss = loss_of(data)});
}

/// adam_steps for a PReLU net on the GPU: the same batches (nn::BatchStream on the CPU, indices uploaded), Adam
/// on the card; the first steps again on the CPU as the training twin.
double adam_steps_on_gpu(PreluNet& f, const nn::Dataset& data, long steps, int batch, double lr, std::uint64_t seed, std::uint64_t stream) {
  const Eigen::Index N = data.size();
  if (N == 0 || steps <= 0) return std::numeric_limits<double>::quiet_NaN();
  const bool mse = data.y.size() != 0;
  const cuda::PlainTrainSpec spec{.widths = f.net.widths, .activation = cuda::kPrelu, .biases = true, .shared_gamma = f.net.shared_gamma,
                                  .loss = mse ? cuda::PlainLoss::mse : cuda::PlainLoss::cross_entropy};
  std::vector<double> cpu_losses, gpu_losses;
  double twin_seconds = 0;
  const bool twin = twin::due("moe.fit");
  if (twin) {
    const twin::Timer timer;
    nn::PreluModel model(f.net);
    Eigen::VectorXd theta = f.theta;
    nn::BatchStream batches(data, std::min<Eigen::Index>(batch, N), seed, stream);
    nn::AdamW adam;
    adam.lr = lr, adam.weight_decay = 0;
    nn::train(model, theta, adam, nn::constant_schedule(lr), batches,
              {.steps = std::min<long>(steps, twin::kTrainingSteps), .loss = loss_of(data)},
              [&](const nn::TrainStep& st) { cpu_losses.push_back(st.loss); });
    twin_seconds = timer.seconds();
  }
  cuda::PlainTrainer gpu(spec, f.theta, data.x, data.labels, data.y);
  nn::BatchStream batches(data, std::min<Eigen::Index>(batch, N), seed, stream);
  double L = std::numeric_limits<double>::quiet_NaN();
  for (long t = 0; t < steps; ++t) {
    L = gpu.adam_step(batches.next().index, lr);
    if (twin && gpu_losses.size() < cpu_losses.size()) gpu_losses.push_back(L);
  }
  f.theta = gpu.theta();
  if (twin) twin::record_losses("moe.fit", fmt::format("PReLU MLP {} on {} points, Adam", fmt::join(f.net.widths, "–"), N), cpu_losses, gpu_losses, twin_seconds);
  return L;
}

nn::Dataset subset(const nn::Dataset& d, const std::vector<Eigen::Index>& cells, Eigen::Index k) {
  std::vector<Eigen::Index> idx;
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (cells[i] == k) idx.push_back(Eigen::Index(i));
  nn::Dataset s;
  s.x = d.x(Eigen::all, idx);
  if (d.y.size() != 0) s.y = d.y(Eigen::all, idx);
  for (Eigen::Index i : idx)
    if (!d.labels.empty()) s.labels.push_back(d.labels[std::size_t(i)]);
  return s;
}

}  // namespace

double fit(PreluNet& f, const nn::Dataset& data, int epochs, int batch, double lr, std::uint64_t seed, std::uint64_t stream, Device device) {
  if (device == Device::cuda) return adam_steps_on_gpu(f, data, steps_of(data.size(), epochs, batch), batch, lr, seed, stream);
  nn::PreluModel model(f.net);
  return adam_steps(model, f.theta, data, steps_of(data.size(), epochs, batch), batch, lr, seed, stream);
}

Momlp train_momlp(const nn::Dataset& train, const MomlpSettings& s, std::uint64_t seed, std::uint64_t stream) {
  if (s.K < 1 || s.width < 1 || s.hidden_layers < 1 || s.batch < 1 || s.epochs < 0 || s.stage1_epochs < 0 || !(s.lr > 0))
    throw InputError("MoMLP: need K, width, hidden layers, batch ≥ 1, epochs ≥ 0 and lr > 0");
  if (train.size() == 0) throw InputError("MoMLP: empty training set");
  const int n = int(train.x.rows()), m = output_dim(train);
  // 1. Discovering prototypes, eq. (39).
  SoftPrototypeModel stage1(s.K, nn::PreluMlp{{n, s.width, m}, s.shared_gamma});
  Eigen::VectorXd theta = stage1.init(train.x, seed, stream_id(stream, 1), s.gamma0);
  Momlp out;
  out.stage1_loss = adam_steps(stage1, theta, train, steps_of(train.size(), s.stage1_epochs, s.batch), s.batch, s.lr, seed, stream_id(stream, 2));
  out.prototypes = stage1.prototypes(theta);
  // 2. Deepen, 3. eq. (40): each expert on its Voronoi cell.
  const std::vector<Eigen::Index> cells = route(out.prototypes, train.x);
  for (int k = 0; k < s.K; ++k) {
    PreluNet f = deepen({stage1.expert(), stage1.expert_theta(theta, k)}, s.hidden_layers - 1, s.sigma, seed, stream_id(stream, 100 + k));
    const nn::Dataset cell = subset(train, cells, k);
    out.cell_sizes.push_back(cell.size());
    const long steps = s.budget == Budget::epochs ? steps_of(cell.size(), s.epochs, s.batch) : steps_of(train.size(), s.epochs, s.batch);
    if (s.device == Device::cuda) {
      adam_steps_on_gpu(f, cell, steps, s.batch, s.lr, seed, stream_id(stream, 200 + k));
    } else {
      nn::PreluModel model(f.net);
      adam_steps(model, f.theta, cell, steps, s.batch, s.lr, seed, stream_id(stream, 200 + k));
    }
    out.experts.push_back(std::move(f));
  }
  return out;
}

std::vector<Eigen::Index> route(const Eigen::MatrixXd& prototypes, const Eigen::MatrixXd& X) {
  std::vector<Eigen::Index> cells(std::size_t(X.cols()));
  for (Eigen::Index i = 0; i < X.cols(); ++i) cells[std::size_t(i)] = voronoi_cell(X.col(i), prototypes);
  return cells;
}

int baseline_width(int w, int K) noexcept { return int(std::lround(w * std::sqrt(double(K)))); }

Eigen::MatrixXd predict(const PreluNet& f, const Eigen::MatrixXd& X) { return nn::prelu_forward(f.net, f.theta, X).z.back(); }

Eigen::MatrixXd predict(const Momlp& m, const Eigen::MatrixXd& X) {
  const std::vector<Eigen::Index> cells = route(m.prototypes, X);
  Eigen::MatrixXd F(m.experts.front().net.widths.back(), X.cols());
  for (std::size_t k = 0; k < m.experts.size(); ++k) {
    std::vector<Eigen::Index> idx;
    for (std::size_t i = 0; i < cells.size(); ++i)
      if (cells[i] == Eigen::Index(k)) idx.push_back(Eigen::Index(i));
    if (!idx.empty()) F(Eigen::all, idx) = predict(m.experts[k], X(Eigen::all, idx));
  }
  return F;
}

PreluNet train_prelu_mlp(const nn::Dataset& train, int width, int hidden_layers, int epochs, int batch, double lr, double gamma0,
                         bool shared_gamma, std::uint64_t seed, std::uint64_t stream, Device device) {
  if (width < 1 || hidden_layers < 1 || batch < 1 || epochs < 0 || !(lr > 0)) throw InputError("PReLU MLP: need width, layers, batch ≥ 1, epochs ≥ 0, lr > 0");
  const int n = int(train.x.rows()), m = output_dim(train);
  PreluNet f;
  f.net.widths.assign(std::size_t(hidden_layers) + 2, width);
  f.net.widths.front() = n, f.net.widths.back() = m, f.net.shared_gamma = shared_gamma;
  f.theta = nn::init_prelu_mlp(f.net, seed, stream_id(stream, 1), gamma0);
  fit(f, train, epochs, batch, lr, seed, stream_id(stream, 2), device);
  return f;
}

}  // namespace sparseact::moe
