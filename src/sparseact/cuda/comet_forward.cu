#include <sparseact/cuda/comet_forward.hpp>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <sparseact/cuda/check.cuh>
#include <sparseact/cuda/kwta_select.hpp>

namespace sparseact::cuda {

namespace {

/// A device buffer of doubles, freed on every exit path.
struct Buffer {
  double* p = nullptr;
  std::size_t n = 0;
  explicit Buffer(std::size_t count) : n(count) {
    if (count) check(cudaMalloc(&p, sizeof(double) * count), "cudaMalloc");
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { cudaFree(p); }
  void upload(const double* host) { check(cudaMemcpy(p, host, sizeof(double) * n, cudaMemcpyHostToDevice), "copy to device"); }
  void download(double* host, std::size_t count, std::size_t offset = 0) const {
    check(cudaMemcpy(host, p + offset, sizeof(double) * count, cudaMemcpyDeviceToHost), "copy to host");
  }
};

/// One device int (the selection kernel's NaN flag).
struct IntFlag {
  int* p = nullptr;
  IntFlag() { check(cudaMalloc(&p, sizeof(int)), "cudaMalloc"); }
  IntFlag(const IntFlag&) = delete;
  IntFlag& operator=(const IntFlag&) = delete;
  ~IntFlag() { cudaFree(p); }
};

struct Blas {
  cublasHandle_t h = nullptr;
  Blas() { check(cublasCreate(&h), "cublasCreate"); }
  ~Blas() { cublasDestroy(h); }
};

__device__ double activate(int f, double a) { return f == 0 ? (a > 0 ? a : 0.0) : f == 1 ? tanh(a) : a; }

// One block per (net, input) column of C (N × M per net, nets after each other): C_k by counting, with the
// comparisons of eq. (3) — strict: |{j : c_j ≥ c_i}| ≤ k; inclusive: |{j : c_j > c_i}| < k; exact: that
// count plus the equal values of lower index < k. The column sits in shared memory when it fits.
__global__ void kwta_apply(const double* C, const double* A, const double* bias, int N, long long M, int k, int rule, int f,
                           double* mask, double* z, double* x) {
  extern __shared__ double col[];
  const long long column = blockIdx.x;  // net · M + input
  const long long net = column / M;
  const double* c = C + column * N;
  for (int i = threadIdx.x; i < N; i += blockDim.x) col[i] = c[i];
  __syncthreads();
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const double v = col[i];
    int ge = 0, gt = 0, eq_before = 0;
    for (int j = 0; j < N; ++j) {
      const double u = col[j];
      ge += u >= v;
      gt += u > v;
      eq_before += (u == v) && (j < i);
    }
    const bool win = rule == 0 ? ge <= k : rule == 1 ? gt < k : gt + eq_before < k;
    const long long at = column * N + i;
    mask[at] = win ? 1.0 : 0.0;
    z[at] = win ? v : 0.0;
    if (A) x[at] = win ? activate(f, A[at] + (bias ? bias[net * N + i] : 0.0)) : 0.0;
  }
}

// The same decisions by selection (cuda/kwta_select.hpp, whose logic the CPU tests run): one block per
// column; the column's order-preserving keys in shared memory; eight radix passes of a 256-bin shared
// histogram find the key of the k-th largest value t; one more pass counts |{v > t}| and |{v = t}|. Under
// the exact rule the tied units are decided by one thread in index order (ties are rare, and their order
// is the rule). O(N) per column against the counting kernel's O(N²). A NaN sets *nan_found (routing/kwta
// refuses a NaN too).
__global__ void kwta_select_apply(const double* C, const double* A, const double* bias, int N, long long M, int k, int rule, int f,
                                  double* mask, double* z, double* x, int* nan_found) {
  extern __shared__ unsigned long long keys[];
  __shared__ unsigned hist[256];
  __shared__ unsigned long long prefix_s, fixed_s;
  __shared__ int rank_s, above_s, at_s, nan_s;
  const long long column = blockIdx.x;  // net · M + input
  const long long net = column / M;
  const double* c = C + column * N;
  if (threadIdx.x == 0) prefix_s = 0, fixed_s = 0, rank_s = k, above_s = 0, at_s = 0, nan_s = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const double v = c[i];
    if (v != v) nan_s = 1;
    keys[i] = kwta_select::key(v);
  }
  __syncthreads();
  if (nan_s) {
    if (threadIdx.x == 0) atomicExch(nan_found, 1);
    return;
  }
  const bool all = k >= N;
  if (!all) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      for (int d = threadIdx.x; d < 256; d += blockDim.x) hist[d] = 0;
      __syncthreads();
      const unsigned long long prefix = prefix_s, fixed = fixed_s;
      for (int i = threadIdx.x; i < N; i += blockDim.x)
        if ((keys[i] & fixed) == prefix) atomicAdd(&hist[(keys[i] >> shift) & 255], 1u);
      __syncthreads();
      if (threadIdx.x == 0) {
        int rank = rank_s;
        const int d = kwta_select::pick_digit(hist, rank);
        rank_s = rank;
        prefix_s = prefix | (static_cast<unsigned long long>(d) << shift);
        fixed_s = fixed | (255ULL << shift);
      }
      __syncthreads();
    }
    int above = 0, at = 0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) above += keys[i] > prefix_s, at += keys[i] == prefix_s;
    atomicAdd(&above_s, above);
    atomicAdd(&at_s, at);
    __syncthreads();
  }
  const unsigned long long t_key = prefix_s;
  const double t = kwta_select::from_key(t_key);
  const int above = above_s, at = at_s;
  const auto write = [&](int i, bool win) {
    const long long where = column * N + i;
    mask[where] = win ? 1.0 : 0.0;
    z[where] = win ? c[i] : 0.0;
    if (A) x[where] = win ? activate(f, A[where] + (bias ? bias[net * N + i] : 0.0)) : 0.0;
  };
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    if (all) write(i, true);
    else if (keys[i] != t_key) write(i, keys[i] > t_key);
    else if (rule != 2) write(i, kwta_select::wins(rule, k, t, t, above, at, 0));
  }
  if (!all && rule == 2 && threadIdx.x == 0)
    for (int i = 0, tied = 0; i < N; ++i)
      if (keys[i] == t_key) write(i, kwta_select::wins(rule, k, t, t, above, at, tied++));
}

__global__ void add_bias(double* A, const double* bias, int N, long long M, long long total) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const long long net = idx / (static_cast<long long>(N) * M);
  A[idx] += bias[net * N + idx % N];
}

/// Y_b = P_b Q_b for every net b (P: r × c per net, or shared when strideP = 0; Q: c × M per net or shared).
void batched_gemm(const Blas& blas, const double* P, long long strideP, const double* Q, long long strideQ, double* Y, int r, int c,
                  int M, int nets) {
  const double one = 1.0, zero = 0.0;
  check(cublasDgemmStridedBatched(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, r, M, c, &one, P, r, strideP, Q, c, strideQ, &zero, Y, r,
                                  static_cast<long long>(r) * M, nets),
        "cublasDgemmStridedBatched");
}

}  // namespace

CometGpuOutput comet_forward(const CometGpuNets& nets, const Eigen::MatrixXd& X0) {
  const std::size_t L = nets.widths.size() - 1;
  const int B = nets.nets, M = static_cast<int>(X0.cols());
  const bool backbone = !nets.W.empty();
  if (nets.widths.size() < 3 || B < 1 || nets.V.size() != L - 1 || nets.k.size() != L - 1 || (backbone && nets.W.size() != L) ||
      (!nets.b.empty() && nets.b.size() != L) || X0.rows() != nets.widths[0])
    throw std::invalid_argument("cuda::comet_forward: shapes disagree");
  CometGpuOutput out(B, static_cast<int>(L - 1), backbone);
  if (M == 0) {  // every matrix N_ℓ × 0, as the CPU path returns
    for (int n = 0; n < B; ++n) {
      for (std::size_t l = 1; l < L; ++l) {
        out.mask(n, int(l)).resize(nets.widths[l], 0);
        if (backbone) out.x(n, int(l)).resize(nets.widths[l], 0);
      }
      if (backbone) out.output(n).resize(nets.widths[L], 0);
    }
    return out;
  }
  Blas blas;
  IntFlag nan_found;
  Buffer x0(X0.size());
  x0.upload(X0.data());
    // Z and X of the previous layer (per net; layer 0: the shared inputs, stride 0).
  const double* z_prev = x0.p;
  const double* x_prev = x0.p;
  long long stride_prev = 0;
  std::unique_ptr<Buffer> z_keep, x_keep;  // the previous layer's z and x, alive until the next layer is computed
  for (std::size_t l = 1; l < L; ++l) {
    const int N = nets.widths[l], Np = nets.widths[l - 1];
    const std::size_t layer = std::size_t(B) * N * M;
    const int widest = nets.kwta_kernel == KwtaKernel::select ? 24576 : 6144;  // a column in shared memory: 48 KB, or 192 KB opted in
    if (N > widest)
      throw std::invalid_argument("cuda::comet_forward: hidden widths above " + std::to_string(widest) + " do not fit the k-WTA kernel's shared memory");
    Buffer V(nets.V[l - 1].size()), C(layer), mask(layer);
    auto z = std::make_unique<Buffer>(layer), x = std::make_unique<Buffer>(backbone ? layer : 0);
    Buffer W(backbone ? nets.W[l - 1].size() : 0), A(backbone ? layer : 0), bias(nets.b.empty() || !backbone ? 0 : nets.b[l - 1].size());
    if (nets.V[l - 1].size() != std::size_t(B) * N * Np) throw std::invalid_argument("cuda::comet_forward: a V block has the wrong size");
    V.upload(nets.V[l - 1].data());
    batched_gemm(blas, V.p, static_cast<long long>(N) * Np, z_prev, stride_prev, C.p, N, Np, M, B);  // (4)
    if (backbone) {
      W.upload(nets.W[l - 1].data());
      if (bias.n) bias.upload(nets.b[l - 1].data());
      batched_gemm(blas, W.p, static_cast<long long>(N) * Np, x_prev, stride_prev, A.p, N, Np, M, B);  // (7)
    }
    const int threads = N < 256 ? ((N + 31) / 32) * 32 : 256;
    if (nets.kwta_kernel == KwtaKernel::select) {
      const int shared = static_cast<int>(sizeof(unsigned long long) * N);
      check(cudaFuncSetAttribute(kwta_select_apply, cudaFuncAttributeMaxDynamicSharedMemorySize, shared), "kwta_select_apply shared memory");
      check(cudaMemset(nan_found.p, 0, sizeof(int)), "cudaMemset");
      kwta_select_apply<<<static_cast<unsigned>(std::size_t(B) * M), threads, shared>>>(
          C.p, backbone ? A.p : nullptr, bias.n ? bias.p : nullptr, N, M, nets.k[l - 1], nets.tie_rule, nets.activation, mask.p, z->p,
          backbone ? x->p : nullptr, nan_found.p);  // (5), (6), (8)
      check(cudaGetLastError(), "kwta_select_apply launch");
      int nan = 0;
      check(cudaMemcpy(&nan, nan_found.p, sizeof(int), cudaMemcpyDeviceToHost), "copy to host");
      if (nan) throw std::invalid_argument("cuda::comet_forward: a routing vector holds a NaN");
    } else {
      kwta_apply<<<static_cast<unsigned>(std::size_t(B) * M), threads, sizeof(double) * N>>>(
          C.p, backbone ? A.p : nullptr, bias.n ? bias.p : nullptr, N, M, nets.k[l - 1], nets.tie_rule, nets.activation, mask.p, z->p,
          backbone ? x->p : nullptr);  // (5), (6), (8)
      check(cudaGetLastError(), "kwta_apply launch");
    }
    for (int n = 0; n < B; ++n) {
      Eigen::MatrixXd& m = out.mask(n, static_cast<int>(l));
      m.resize(N, M);
      mask.download(m.data(), std::size_t(N) * M, std::size_t(n) * N * M);
      if (backbone) {
        Eigen::MatrixXd& xv = out.x(n, static_cast<int>(l));
        xv.resize(N, M);
        x->download(xv.data(), std::size_t(N) * M, std::size_t(n) * N * M);
      }
    }
    z_prev = z->p, x_prev = x->p, stride_prev = static_cast<long long>(N) * M;
    z_keep = std::move(z), x_keep = std::move(x);
  }
  if (backbone) {  // the unmasked output layer
    const int N = nets.widths[L], Np = nets.widths[L - 1];
    Buffer W(nets.W[L - 1].size()), A(std::size_t(B) * N * M), bias(nets.b.empty() ? 0 : nets.b[L - 1].size());
    W.upload(nets.W[L - 1].data());
    batched_gemm(blas, W.p, static_cast<long long>(N) * Np, x_prev, stride_prev, A.p, N, Np, M, B);
    if (bias.n) {
      bias.upload(nets.b[L - 1].data());
      const long long total = static_cast<long long>(B) * N * M;
      add_bias<<<static_cast<unsigned>((total + 255) / 256), 256>>>(A.p, bias.p, N, M, total);
      check(cudaGetLastError(), "add_bias launch");
    }
    for (int n = 0; n < B; ++n) {
      Eigen::MatrixXd& a = out.output(n);
      a.resize(N, M);
      A.download(a.data(), std::size_t(N) * M, std::size_t(n) * N * M);
    }
  }
  return out;
}

}  // namespace sparseact::cuda
