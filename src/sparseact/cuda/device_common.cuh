#pragma once
// Device pieces shared by the .cu files: RAII device buffers, a cuBLAS handle, the activation, the bias
// kernel and the two k-WTA kernels (counting and selection) that decide C_k per column exactly as
// routing/kwta does. Each .cu file that includes this gets its own copies (internal linkage).
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <sparseact/cuda/check.cuh>
#include <sparseact/cuda/kwta_limits.hpp>
#include <sparseact/cuda/kwta_select.hpp>

namespace sparseact::cuda {
namespace {

/// A device array of T (doubles for θ and activations, ints and long longs for labels and batch
/// indices), freed on every exit path.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  std::size_t n = 0;
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count) : n(count) {
    if (count) check(cudaMalloc(&p, sizeof(T) * count), "cudaMalloc");
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr, o.n = 0; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) cudaFree(p), p = o.p, n = o.n, o.p = nullptr, o.n = 0;
    return *this;
  }
  ~DeviceArray() { cudaFree(p); }
  /// The first `count` elements (all n by default) from the host.
  void upload(const T* host, std::size_t count) { check(cudaMemcpy(p, host, sizeof(T) * count, cudaMemcpyHostToDevice), "copy to device"); }
  void upload(const T* host) { upload(host, n); }
  void download(T* host, std::size_t count, std::size_t offset = 0) const {
    check(cudaMemcpy(host, p + offset, sizeof(T) * count, cudaMemcpyDeviceToHost), "copy to host");
  }
};
using Buffer = DeviceArray<double>;

/// Page-locked host memory that grows and is reused: a download lands here at the bus's full rate (pageable memory
/// goes through the driver's own staging at a fraction of it), then one memcpy puts it in place.
struct PinnedStage {
  void* p = nullptr;
  std::size_t bytes = 0;
  PinnedStage() = default;
  PinnedStage(const PinnedStage&) = delete;
  PinnedStage& operator=(const PinnedStage&) = delete;
  ~PinnedStage() { cudaFreeHost(p); }
  /// `count` Ts from the device array at `offset` into host memory at `host`, through the stage.
  template <class T>
  void download(const DeviceArray<T>& from, T* host, std::size_t count, std::size_t offset = 0) {
    const std::size_t need = sizeof(T) * count;
    if (need > bytes) {
      cudaFreeHost(p);
      p = nullptr, bytes = 0;
      check(cudaMallocHost(&p, need), "cudaMallocHost");
      bytes = need;
    }
    check(cudaMemcpy(p, from.p + offset, need, cudaMemcpyDeviceToHost), "copy to host");
    std::memcpy(host, p, need);
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
// count plus the equal values of lower index < k. The column sits in shared memory. A NaN sets *nan_found and
// the column is left unwritten (routing/kwta refuses a NaN; so does every implementation, issue 51). A loser
// is written as 0 (times its value when `times_zero`: m ∘ c as nn::plain_forward computes it, so ±inf gives
// NaN there too; the COMET forward's sparse twin never touches a loser, so it gets a plain 0).
__global__ void kwta_apply(const double* C, const double* A, const double* bias, int N, long long M, int k, int rule, int f,
                           bool times_zero, double* mask, double* z, double* x, int* nan_found) {
  extern __shared__ double col[];
  const long long column = blockIdx.x;  // net · M + input
  const long long net = column / M;
  const double* c = C + column * N;
  int has_nan = 0;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    col[i] = c[i];
    has_nan |= col[i] != col[i];
  }
  if (__syncthreads_or(has_nan)) {
    if (threadIdx.x == 0) atomicExch(nan_found, 1);
    return;
  }
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
    z[at] = win ? v : times_zero ? 0.0 * v : 0.0;
    if (A) {
      const double h = activate(f, A[at] + (bias ? bias[net * N + i] : 0.0));
      x[at] = win ? h : times_zero ? 0.0 * h : 0.0;
    }
  }
}

// The same decisions by selection (cuda/kwta_select.hpp, whose logic the CPU tests run): one block per
// column; the column's order-preserving keys in shared memory; eight radix passes of a 256-bin shared
// histogram find the key of the k-th largest value t; one more pass counts |{v > t}| and |{v = t}|. Under
// the exact rule the tied units are decided by one thread in index order (ties are rare, and their order
// is the rule). O(N) per column against the counting kernel's O(N²). A NaN sets *nan_found (routing/kwta
// refuses a NaN too).
__global__ void kwta_select_apply(const double* C, const double* A, const double* bias, int N, long long M, int k, int rule, int f,
                                  bool times_zero, double* mask, double* z, double* x, int* nan_found) {
  extern __shared__ unsigned long long keys[];
  __shared__ unsigned hist[256];
  __shared__ unsigned long long prefix_s, fixed_s;
  __shared__ int rank_s, above_s, at_s;
  const long long column = blockIdx.x;  // net · M + input
  const long long net = column / M;
  const double* c = C + column * N;
  if (threadIdx.x == 0) prefix_s = 0, fixed_s = 0, rank_s = k, above_s = 0, at_s = 0;
  int has_nan = 0;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    const double v = c[i];
    has_nan |= v != v;
    keys[i] = kwta_select::key(v);
  }
  // One barrier that also tells every thread whether the column holds a NaN (no shared flag, so racecheck is quiet).
  if (__syncthreads_or(has_nan)) {
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
    z[where] = win ? c[i] : times_zero ? 0.0 * c[i] : 0.0;
    if (A) {
      const double h = activate(f, A[where] + (bias ? bias[net * N + i] : 0.0));
      x[where] = win ? h : times_zero ? 0.0 * h : 0.0;
    }
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

/// Once per device, for this translation unit's copies of the two kernels: raise each one's dynamic shared-memory
/// cap to the device's opt-in maximum less the kernel's static size, and return the widest column each then takes
/// (cuda/kwta_limits.hpp). The cap is never lowered again, so launches of different widths from many threads
/// cannot race on it (issue 51, fix 1: the cap was once set to each call's own 8·N before its launch).
KwtaLimits kwta_prepare() {
  static std::mutex mutex;
  static std::map<int, KwtaLimits> prepared;  // device → its limits
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = prepared.find(device); it != prepared.end()) return it->second;
  int optin = 0;
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "shared memory per block (opt-in)");
  cudaFuncAttributes count{}, select{};
  check(cudaFuncGetAttributes(&count, kwta_apply), "kwta_apply attributes");
  check(cudaFuncGetAttributes(&select, kwta_select_apply), "kwta_select_apply attributes");
  const KwtaLimits limits = kwta_limits_for(std::size_t(optin), count.sharedSizeBytes, select.sharedSizeBytes);
  check(cudaFuncSetAttribute(kwta_apply, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * limits.count_widest), "kwta_apply shared memory");
  check(cudaFuncSetAttribute(kwta_select_apply, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * limits.select_widest),
        "kwta_select_apply shared memory");
  return prepared[device] = limits;
}

/// C_k on every column of C (N × M per net, `nets` nets after each other) by the chosen kernel: writes m,
/// z = m ∘ c and, when A is given, x = m ∘ f(A + bias) (losers as kwta_apply says). Throws std::invalid_argument
/// on a NaN, k < 1, an unknown tie rule or a column wider than the kernel takes (the callers check the last
/// three before uploading anything; this is the last line).
void kwta_launch(bool select, const double* C, const double* A, const double* bias, int N, long long M, int nets, int k, int rule, int f,
                 bool times_zero, double* mask, double* z, double* x, IntFlag& nan_found, const char* who) {
  check_kwta(kwta_prepare(), select ? KwtaKernel::select : KwtaKernel::count, N, k, rule, who);
  const long long columns = static_cast<long long>(nets) * M;
  if (columns > 2147483647LL) throw std::invalid_argument(std::string(who) + ": more than 2³¹ − 1 columns in one launch");
  const int threads = N < 256 ? ((N + 31) / 32) * 32 : 256;
  const unsigned blocks = static_cast<unsigned>(columns);
  check(cudaMemset(nan_found.p, 0, sizeof(int)), "cudaMemset");
  if (select) {
    kwta_select_apply<<<blocks, threads, sizeof(unsigned long long) * N>>>(C, A, bias, N, M, k, rule, f, times_zero, mask, z, x, nan_found.p);
    launched("kwta_select_apply launch");
  } else {
    kwta_apply<<<blocks, threads, sizeof(double) * N>>>(C, A, bias, N, M, k, rule, f, times_zero, mask, z, x, nan_found.p);
    launched("kwta_apply launch");
  }
  int nan = 0;
  check(cudaMemcpy(&nan, nan_found.p, sizeof(int), cudaMemcpyDeviceToHost), "copy to host");
  if (nan) throw std::invalid_argument(std::string(who) + ": a routing vector holds a NaN");
}

__global__ void add_bias(double* A, const double* bias, int N, long long M, long long total) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const long long net = idx / (static_cast<long long>(N) * M);
  A[idx] += bias[net * N + idx % N];
}

}  // namespace
}  // namespace sparseact::cuda
