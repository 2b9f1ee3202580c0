// The plain MLP trained on the card (cuda/plain_train.hpp has the mathematics). One session holds θ, the
// training set, the labels and the per-layer workspaces in device memory; a call uploads the batch's
// indices (and v for H v) and downloads the loss (∇L, H v or vᵀHv only when asked).
#include <sparseact/cuda/plain_train.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <sparseact/cuda/check.cuh>
#include <sparseact/cuda/device_common.cuh>

namespace sparseact::cuda {

namespace {

constexpr int kThreads = 256;
unsigned blocks_for(long long n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__device__ double derivative(int f, double a) {  // f′(a); ReLU′(0) = 0, as nn/plain_mlp
  if (f == 0) return a > 0 ? 1.0 : 0.0;
  if (f == 1) {
    const double t = tanh(a);
    return 1.0 - t * t;
  }
  return 1.0;
}
__device__ double second_derivative(int f, double a) {  // f″(a): 0 for ReLU (a.e.) and the identity
  if (f != 1) return 0.0;
  const double t = tanh(a);
  return -2.0 * t * (1.0 - t * t);
}

// Y[:, j] = X[:, index[j]] (X: rows × M, column-major).
__global__ void gather_columns(const double* X, const long long* index, int rows, long long cols, double* Y) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= static_cast<long long>(rows) * cols) return;
  const long long j = at / rows, i = at % rows;
  Y[at] = X[index[j] * rows + i];
}
__global__ void gather_labels(const int* labels, const long long* index, long long cols, int* out) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < cols) out[j] = labels[index[j]];
}

// x = f(a), m = 1 (no mask).
__global__ void activate_all(const double* a, long long n, int f, double* x, double* mask) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= n) return;
  x[at] = activate(f, a[at]);
  mask[at] = 1.0;
}

// One thread per column: π = softmax(a_L), loss_j = −log π_y, G = (π − onehot(y))/B, π kept for R G.
__global__ void cross_entropy(const double* logits, const int* y, int classes, long long cols, double* loss, double* G, double* pi) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const double* a = logits + j * classes;
  double top = a[0];
  for (int c = 1; c < classes; ++c) top = fmax(top, a[c]);
  double sum = 0;
  for (int c = 0; c < classes; ++c) sum += exp(a[c] - top);
  const double lse = top + log(sum);
  loss[j] = lse - a[y[j]];
  for (int c = 0; c < classes; ++c) {
    const double p = exp(a[c] - lse);
    pi[j * classes + c] = p;
    G[j * classes + c] = (p - (c == y[j] ? 1.0 : 0.0)) / double(cols);
  }
}

// R G = (π ∘ R a − π (πᵀ R a))/B, per column.
__global__ void cross_entropy_r(const double* pi, const double* Ra, int classes, long long cols, double* RG) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  double dot = 0;
  for (int c = 0; c < classes; ++c) dot += pi[j * classes + c] * Ra[j * classes + c];
  for (int c = 0; c < classes; ++c) RG[j * classes + c] = pi[j * classes + c] * (Ra[j * classes + c] - dot) / double(cols);
}

// back ← back ∘ f′(a) ∘ m (and, for the R pass, Rback ← Rback ∘ f′ ∘ m + back ∘ f″(a) ∘ Ra ∘ m, read before back changes).
__global__ void gate_backward(double* back, double* Rback, const double* a, const double* Ra, const double* mask, long long n, int f) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= n) return;
  const double d = derivative(f, a[at]) * mask[at];
  if (Rback) Rback[at] = Rback[at] * d + back[at] * second_derivative(f, a[at]) * Ra[at] * mask[at];
  back[at] *= d;
}
// R x = m ∘ f′(a) ∘ R a.
__global__ void gate_forward_r(const double* a, const double* mask, const double* Ra, long long n, int f, double* Rx) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at < n) Rx[at] = mask[at] * derivative(f, a[at]) * Ra[at];
}
// σ_γ (paper 003 eq. (1)): x = a (a ≥ 0), γ_i a (a < 0); no masks (m = 1).
__global__ void prelu_all(const double* a, const double* gamma, bool shared, int rows, long long n, double* x, double* mask) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= n) return;
  const double g = gamma[shared ? 0 : at % rows];
  x[at] = a[at] < 0 ? g * a[at] : a[at];
  mask[at] = 1.0;
}
// One thread per row i: ∂L/∂γ_i (or row i's share of the shared γ, summed by sum_rows) = Σ_s back a [a < 0], in
// column order as nn::prelu_gradient sums, then back gated by γ_i where a < 0.
__global__ void prelu_backward(double* back, const double* a, const double* gamma, bool shared, int rows, long long cols, double* dgamma) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  const double g = gamma[shared ? 0 : i];
  double sum = 0;
  for (long long j = 0; j < cols; ++j) {
    const long long at = j * rows + i;
    if (a[at] < 0) sum += back[at] * a[at], back[at] *= g;
  }
  dgamma[i] = sum;
}
__global__ void sum_rows(const double* parts, int rows, double* out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double sum = 0;
  for (int i = 0; i < rows; ++i) sum += parts[i];
  *out = sum;
}
// One thread per column: loss_j = Σ_c (a − y)², G = 2(a − y)/(B N_L).
__global__ void squared_error(const double* F, const double* Y, int outputs, long long cols, double* loss, double* G) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const double scale = double(cols) * double(outputs);
  double sum = 0;
  for (int c = 0; c < outputs; ++c) {
    const double d = F[j * outputs + c] - Y[j * outputs + c];
    sum += d * d;
    G[j * outputs + c] = 2 * d / scale;
  }
  loss[j] = sum;
}
__global__ void scale_copy(const double* in, long long n, double factor, double* out) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at < n) out[at] = factor * in[at];
}
// torch.optim.Adam (nn::AdamW with weight decay 0), operation for operation.
__global__ void adam_update(double* theta, const double* g, double* m, double* v, long long n, double b1, double b2, double step_size,
                            double bias2_sqrt, double eps) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= n) return;
  m[at] = b1 * m[at] + (1 - b1) * g[at];
  v[at] = b2 * v[at] + (1 - b2) * (g[at] * g[at]);
  theta[at] -= step_size * m[at] / (sqrt(v[at]) / bias2_sqrt + eps);
}
__global__ void fill_rademacher(double* v, long long n, unsigned long long seed, unsigned long long probe) {
  const long long at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at < n) v[at] = rademacher(seed, probe, static_cast<unsigned long long>(at));
}

}  // namespace

#include "plain_entries.inc"

struct PlainSession {
  PlainTrainSpec spec;
  std::size_t L = 0;
  long long examples = 0;
  std::vector<long long> offset;  ///< θ offset of layer ℓ's W_ℓ (ℓ = 1 … L), then b_ℓ at offset + N_ℓ N_{ℓ−1}
  std::vector<long long> gamma;   ///< θ offset of a PReLU hidden layer's γ_ℓ
  Blas blas;
  IntFlag nan_found;
  Buffer theta, grad, X, Y, ones, v, hv, adam_m, adam_v, gamma_parts;
  long adam_t = 0;
  DeviceArray<int> labels, batch_labels;
  DeviceArray<long long> index;
  std::vector<Buffer> V;  ///< router weights, ℓ = 1 … L−1
  // Workspaces for `capacity` columns; layer ℓ at [ℓ] (x[0] the gathered inputs, a/m unused at 0).
  long long capacity = 0;
  std::vector<Buffer> x, a, m, c, z, Rx, Ra;
  Buffer delta, back, Rdelta, Rback, pi, loss, batch_y;

  bool prelu() const { return spec.activation == kPrelu; }
  int N(std::size_t l) const { return spec.widths[l]; }
  const double* W(std::size_t l) const { return theta.p + offset[l]; }
  const double* b(std::size_t l) const { return theta.p + offset[l] + static_cast<long long>(N(l)) * N(l - 1); }

  void reserve(long long cols) {
    if (cols <= capacity) return;
    const auto layerwise = [&](std::vector<Buffer>& bufs, bool hidden_only) {
      bufs.clear();
      for (std::size_t l = 0; l <= L; ++l)
        bufs.emplace_back((hidden_only && (l == 0 || l == L)) ? 0 : std::size_t(N(l)) * std::size_t(cols));
    };
    layerwise(x, false), layerwise(a, false), layerwise(m, true), layerwise(c, true), layerwise(z, true);
    layerwise(Rx, false), layerwise(Ra, false);
    std::size_t widest = 0;
    for (int w : spec.widths) widest = std::max(widest, std::size_t(w));
    delta = Buffer(widest * cols), back = Buffer(widest * cols), Rdelta = Buffer(widest * cols), Rback = Buffer(widest * cols);
    pi = Buffer(std::size_t(N(L)) * cols), loss = Buffer(std::size_t(cols)), ones = Buffer(std::size_t(cols));
    batch_y = Buffer(spec.loss == PlainLoss::mse ? std::size_t(N(L)) * cols : 0);
    std::vector<double> one(std::size_t(cols), 1.0);
    ones.upload(one.data());
    batch_labels = DeviceArray<int>(std::size_t(cols)), index = DeviceArray<long long>(std::size_t(cols));
    capacity = cols;
  }

  /// Y = op(P) op(Q) + beta Y, column-major, through cuBLAS.
  void gemm(bool tP, bool tQ, int rows, int cols, int inner, const double* P, int ldP, const double* Q, int ldQ, double beta, double* Y) const {
    const double one = 1.0;
    check(cublasDgemm(blas.h, tP ? CUBLAS_OP_T : CUBLAS_OP_N, tQ ? CUBLAS_OP_T : CUBLAS_OP_N, rows, cols, inner, &one, P, ldP, Q, ldQ, &beta, Y,
                      rows),
          "cublasDgemm");
  }
  void add_row_bias(double* A, const double* bias, int rows, long long cols) const {
    const long long total = rows * cols;
    add_bias<<<blocks_for(total), kThreads>>>(A, bias, rows, cols, total);  // one net: bias index = row
    launched("add_bias launch");
  }

  /// The forward pass on the `cols` columns in x[0]: a_ℓ, m_ℓ, x_ℓ for ℓ < L and the logits a_L.
  void forward(long long cols) {
    const int f = spec.activation;
    for (std::size_t l = 1; l <= L; ++l) {
      gemm(false, false, N(l), int(cols), N(l - 1), W(l), N(l), x[l - 1].p, N(l - 1), 0.0, a[l].p);  // (1) / (7)
      if (spec.biases) add_row_bias(a[l].p, b(l), N(l), cols);
      if (l == L) break;
      const long long n = static_cast<long long>(N(l)) * cols;
      if (prelu()) {  // no masks (check_session)
        prelu_all<<<blocks_for(n), kThreads>>>(a[l].p, theta.p + gamma[l], spec.shared_gamma, N(l), n, x[l].p, m[l].p);
        launched("prelu_all launch");
        continue;
      }
      switch (spec.masks) {
        case PlainMasks::none:
          activate_all<<<blocks_for(n), kThreads>>>(a[l].p, n, f, x[l].p, m[l].p);
          launched("activate_all launch");
          break;
        case PlainMasks::router:  // (4)–(6): c_ℓ = V_ℓ z_{ℓ−1}, z_0 = x_0
          gemm(false, false, N(l), int(cols), N(l - 1), V[l - 1].p, N(l), l == 1 ? x[0].p : z[l - 1].p, N(l - 1), 0.0, c[l].p);
          kwta_launch(spec.kwta_kernel == KwtaKernel::select, c[l].p, a[l].p, nullptr, N(l), cols, 1, spec.k[l - 1], spec.tie_rule, f, true, m[l].p, z[l].p, x[l].p, nan_found,
                      "cuda::PlainTrainer");
          break;
        case PlainMasks::layerwise:  // c_ℓ = V_ℓ x_{ℓ−1}
          gemm(false, false, N(l), int(cols), N(l - 1), V[l - 1].p, N(l), x[l - 1].p, N(l - 1), 0.0, c[l].p);
          kwta_launch(spec.kwta_kernel == KwtaKernel::select, c[l].p, a[l].p, nullptr, N(l), cols, 1, spec.k[l - 1], spec.tie_rule, f, true, m[l].p, z[l].p, x[l].p, nan_found,
                      "cuda::PlainTrainer");
          break;
        case PlainMasks::topk:  // C_k on a_ℓ itself
          kwta_launch(spec.kwta_kernel == KwtaKernel::select, a[l].p, a[l].p, nullptr, N(l), cols, 1, spec.k[l - 1], spec.tie_rule, f, true, m[l].p, z[l].p, x[l].p, nan_found,
                      "cuda::PlainTrainer");
          break;
      }
    }
  }

  /// Gathers the examples `idx` into x[0] and their labels; returns the column count.
  long long gather(const std::vector<Eigen::Index>& idx) {
    const long long cols = static_cast<long long>(idx.size());
    if (cols == 0) throw std::invalid_argument("cuda::PlainTrainer: an empty batch");
    for (Eigen::Index i : idx)
      if (i < 0 || i >= examples) throw std::invalid_argument("cuda::PlainTrainer: an index outside the training set");
    reserve(cols);
    std::vector<long long> host(idx.begin(), idx.end());
    index.upload(host.data(), host.size());
    gather_columns<<<blocks_for(static_cast<long long>(N(0)) * cols), kThreads>>>(X.p, index.p, N(0), cols, x[0].p);
    if (spec.loss == PlainLoss::mse) gather_columns<<<blocks_for(static_cast<long long>(N(L)) * cols), kThreads>>>(Y.p, index.p, N(L), cols, batch_y.p);
    else gather_labels<<<blocks_for(cols), kThreads>>>(labels.p, index.p, cols, batch_labels.p);
    launched("gather launch");
    return cols;
  }

  /// Loss at θ on x[0]'s columns; G in delta, π in pi (cross-entropy).
  double loss_and_G(long long cols) {
    const bool mse = spec.loss == PlainLoss::mse;
    if (mse) squared_error<<<blocks_for(cols), kThreads>>>(a[L].p, batch_y.p, N(L), cols, loss.p, delta.p);
    else cross_entropy<<<blocks_for(cols), kThreads>>>(a[L].p, batch_labels.p, N(L), cols, loss.p, delta.p, pi.p);
    launched("loss launch");
    std::vector<double> host(static_cast<std::size_t>(cols));
    loss.download(host.data(), host.size());
    double sum = 0;
    for (double l : host) sum += l;
    return sum / (double(cols) * (mse ? double(N(L)) : 1.0));
  }

  /// ∇L into grad from δ_L = G in delta (the forward's workspaces intact). With R: H v into hv from R δ_L in
  /// Rdelta and v's slices (the forward's R pass in Ra, Rx done).
  void backward(long long cols, bool R) {
    const int f = spec.activation;
    double* out = R ? hv.p : grad.p;
    for (std::size_t l = L; l >= 1; --l) {
      double* gW = out + offset[l];
      if (!R) {
        gemm(false, true, N(l), N(l - 1), int(cols), delta.p, N(l), x[l - 1].p, N(l - 1), 0.0, gW);  // δ_ℓ x_{ℓ−1}ᵀ
      } else {
        gemm(false, true, N(l), N(l - 1), int(cols), Rdelta.p, N(l), x[l - 1].p, N(l - 1), 0.0, gW);  // R δ_ℓ x_{ℓ−1}ᵀ
        if (l > 1) gemm(false, true, N(l), N(l - 1), int(cols), delta.p, N(l), Rx[l - 1].p, N(l - 1), 1.0, gW);  // + δ_ℓ R x_{ℓ−1}ᵀ
      }
      if (spec.biases) {
        const double one = 1.0, zero = 0.0;
        check(cublasDgemv(blas.h, CUBLAS_OP_N, N(l), int(cols), &one, R ? Rdelta.p : delta.p, N(l), ones.p, 1, &zero,
                          out + offset[l] + static_cast<long long>(N(l)) * N(l - 1), 1),
              "cublasDgemv");
      }
      if (l == 1) break;
      gemm(true, false, N(l - 1), int(cols), N(l), W(l), N(l), delta.p, N(l), 0.0, back.p);  // W_ℓᵀ δ_ℓ
      if (R) {
        gemm(true, false, N(l - 1), int(cols), N(l), v.p + offset[l], N(l), delta.p, N(l), 0.0, Rback.p);  // V^Wᵀ_ℓ δ_ℓ
        gemm(true, false, N(l - 1), int(cols), N(l), W(l), N(l), Rdelta.p, N(l), 1.0, Rback.p);           // + W_ℓᵀ R δ_ℓ
      }
      const long long n = static_cast<long long>(N(l - 1)) * cols;
      if (prelu()) {  // the R pass is refused for PReLU nets (plain_hvp)
        double* dgamma = out + gamma[l - 1];
        prelu_backward<<<blocks_for(N(l - 1)), kThreads>>>(back.p, a[l - 1].p, theta.p + gamma[l - 1], spec.shared_gamma, N(l - 1), cols,
                                                        spec.shared_gamma ? gamma_parts.p : dgamma);
        if (spec.shared_gamma) sum_rows<<<1, 1>>>(gamma_parts.p, N(l - 1), dgamma);
        launched("prelu_backward launch");
        std::swap(delta, back);
        continue;
      }
      gate_backward<<<blocks_for(n), kThreads>>>(back.p, R ? Rback.p : nullptr, a[l - 1].p, Ra[l - 1].p, m[l - 1].p, n, f);
      launched("gate_backward launch");
      std::swap(delta, back);
      if (R) std::swap(Rdelta, Rback);
    }
  }

  /// H v on x[0]'s columns, v in the buffer v, the forward pass done; leaves H v in hv.
  void hessian_vector(long long cols) {
    const int f = spec.activation;
    for (std::size_t l = 1; l <= L; ++l) {  // R a_ℓ = V^W_ℓ x_{ℓ−1} + W_ℓ R x_{ℓ−1} + v^b_ℓ
      gemm(false, false, N(l), int(cols), N(l - 1), v.p + offset[l], N(l), x[l - 1].p, N(l - 1), 0.0, Ra[l].p);
      if (l > 1) gemm(false, false, N(l), int(cols), N(l - 1), W(l), N(l), Rx[l - 1].p, N(l - 1), 1.0, Ra[l].p);
      if (spec.biases) add_row_bias(Ra[l].p, v.p + offset[l] + static_cast<long long>(N(l)) * N(l - 1), N(l), cols);
      if (l == L) break;
      const long long n = static_cast<long long>(N(l)) * cols;
      gate_forward_r<<<blocks_for(n), kThreads>>>(a[l].p, m[l].p, Ra[l].p, n, f, Rx[l].p);
      launched("gate_forward_r launch");
    }
    loss_and_G(cols);  // δ_L = G and π again: backward consumed them
    if (spec.loss == PlainLoss::mse) {
      const long long n = static_cast<long long>(N(L)) * cols;
      scale_copy<<<blocks_for(n), kThreads>>>(Ra[L].p, n, 2.0 / (double(cols) * double(N(L))), Rdelta.p);
    } else {
      cross_entropy_r<<<blocks_for(cols), kThreads>>>(pi.p, Ra[L].p, N(L), cols, Rdelta.p);
    }
    launched("loss R launch");
    backward(cols, true);
  }
};

PlainSession* plain_open(const PlainTrainSpec& spec, const Eigen::VectorXd& theta0, const Eigen::MatrixXd& X, const std::vector<int>& labels,
                         const Eigen::MatrixXd& Y) {
  check_session(spec, X, labels, Y, kwta_prepare());
  const std::size_t L = spec.widths.size() - 1;
  auto s = std::make_unique<PlainSession>();
  s->spec = spec, s->L = L, s->examples = X.cols();
  s->offset.assign(L + 1, 0), s->gamma.assign(L + 1, 0);
  long long at = 0;
  int widest = 1;
  for (std::size_t l = 1; l <= L; ++l) {
    s->offset[l] = at;
    at += static_cast<long long>(spec.widths[l]) * spec.widths[l - 1] + (spec.biases ? spec.widths[l] : 0);
    s->gamma[l] = at;
    if (spec.activation == kPrelu && l < L) at += spec.shared_gamma ? 1 : spec.widths[l];
    widest = std::max(widest, spec.widths[l]);
  }
  if (theta0.size() != at) throw std::invalid_argument("cuda::PlainTrainer: θ has the wrong size");
  s->theta = Buffer(std::size_t(at)), s->grad = Buffer(std::size_t(at)), s->v = Buffer(std::size_t(at)), s->hv = Buffer(std::size_t(at));
  s->theta.upload(theta0.data());
  check(cudaMemset(s->grad.p, 0, sizeof(double) * std::size_t(at)), "cudaMemset");
  s->gamma_parts = Buffer(std::size_t(widest));
  s->X = Buffer(std::size_t(X.size()));
  s->X.upload(X.data());
  if (spec.loss == PlainLoss::mse) {
    s->Y = Buffer(std::size_t(Y.size()));
    s->Y.upload(Y.data());
  } else {
    s->labels = DeviceArray<int>(labels.size());
    s->labels.upload(labels.data(), labels.size());
  }
  if (spec.masks == PlainMasks::router || spec.masks == PlainMasks::layerwise)
    for (std::size_t l = 1; l < L; ++l) {
      s->V.emplace_back(spec.V[l - 1].size());
      s->V.back().upload(spec.V[l - 1].data());
    }
  return s.release();
}

void plain_close(PlainSession* s) noexcept { delete s; }

double plain_step(PlainSession* s, const std::vector<Eigen::Index>& idx, PlainUpdate update, double lr, Eigen::VectorXd* grad) {
  const long long cols = s->gather(idx);
  s->forward(cols);
  const double L = s->loss_and_G(cols);
  s->backward(cols, false);
  if (grad) {
    grad->resize(Eigen::Index(s->grad.n));
    s->grad.download(grad->data(), s->grad.n);
  }
  const long long n = static_cast<long long>(s->theta.n);
  if (update == PlainUpdate::sgd) {
    const double minus_lr = -lr;
    check(cublasDaxpy(s->blas.h, int(n), &minus_lr, s->grad.p, 1, s->theta.p, 1), "cublasDaxpy");
  } else if (update == PlainUpdate::adam) {
    if (s->adam_t == 0) {
      s->adam_m = Buffer(std::size_t(n)), s->adam_v = Buffer(std::size_t(n));
      check(cudaMemset(s->adam_m.p, 0, sizeof(double) * std::size_t(n)), "cudaMemset");
      check(cudaMemset(s->adam_v.p, 0, sizeof(double) * std::size_t(n)), "cudaMemset");
    }
    const long t = ++s->adam_t;
    const double b1 = s->spec.adam_beta1, b2 = s->spec.adam_beta2;
    adam_update<<<blocks_for(n), kThreads>>>(s->theta.p, s->grad.p, s->adam_m.p, s->adam_v.p, n, b1, b2, lr / (1 - std::pow(b1, double(t))),
                                             std::sqrt(1 - std::pow(b2, double(t))), s->spec.adam_eps);
    launched("adam_update launch");
  }
  return L;
}

Eigen::VectorXd plain_hvp(PlainSession* s, const std::vector<Eigen::Index>& idx, const Eigen::VectorXd& v) {
  if (s->prelu()) throw std::invalid_argument("cuda::PlainTrainer::hvp: no R-operator for PReLU nets");
  if (std::size_t(v.size()) != s->theta.n) throw std::invalid_argument("cuda::PlainTrainer::hvp: v has the wrong size");
  const long long cols = s->gather(idx);
  s->forward(cols);
  s->v.upload(v.data());
  s->hessian_vector(cols);
  Eigen::VectorXd out(v.size());
  s->hv.download(out.data(), s->hv.n);
  return out;
}

Eigen::VectorXd plain_hutchinson(PlainSession* s, const std::vector<Eigen::Index>& idx, int probes, std::uint64_t seed) {
  if (probes < 1) throw std::invalid_argument("cuda::PlainTrainer::hutchinson: need at least one probe");
  if (s->prelu()) throw std::invalid_argument("cuda::PlainTrainer::hutchinson: no R-operator for PReLU nets");
  const long long cols = s->gather(idx);
  s->forward(cols);
  Eigen::VectorXd out(probes);
  const long long n = static_cast<long long>(s->theta.n);
  for (int p = 0; p < probes; ++p) {
    fill_rademacher<<<blocks_for(n), kThreads>>>(s->v.p, n, seed, static_cast<unsigned long long>(p));
    launched("fill_rademacher launch");
    s->hessian_vector(cols);
    check(cublasDdot(s->blas.h, int(n), s->v.p, 1, s->hv.p, 1, &out(p)), "cublasDdot");
  }
  return out;
}

Eigen::MatrixXd plain_logits(PlainSession* s, const Eigen::MatrixXd& X) {
  if (X.rows() != s->N(0)) throw std::invalid_argument("cuda::PlainTrainer::logits: inputs have the wrong dimension");
  const long long cols = X.cols();
  Eigen::MatrixXd out(s->N(s->L), cols);
  if (cols == 0) return out;
  s->reserve(cols);
  check(cudaMemcpy(s->x[0].p, X.data(), sizeof(double) * X.size(), cudaMemcpyHostToDevice), "copy to device");
  s->forward(cols);
  s->a[s->L].download(out.data(), std::size_t(out.size()));
  return out;
}

Eigen::VectorXd plain_theta(const PlainSession* s) {
  Eigen::VectorXd out(Eigen::Index(s->theta.n));
  s->theta.download(out.data(), s->theta.n);
  return out;
}

}  // namespace sparseact::cuda
