#include <sparseact/cuda/comet_forward.hpp>

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

/// Y_b = P_b Q_b for every net b (P: r × c per net, or shared when strideP = 0; Q: c × M per net or shared).
void batched_gemm(const Blas& blas, const double* P, long long strideP, const double* Q, long long strideQ, double* Y, int r, int c,
                  int M, int nets) {
  const double one = 1.0, zero = 0.0;
  check(cublasDgemmStridedBatched(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, r, M, c, &one, P, r, strideP, Q, c, strideQ, &zero, Y, r,
                                  static_cast<long long>(r) * M, nets),
        "cublasDgemmStridedBatched");
}

/// One thread per (net, input) column: the kept units' indices in index order (at most `cap`, −1 after the count),
/// x at them when x is given, and the column's count (which may exceed cap: the caller then runs it again wider).
__global__ void compact_kept(const double* mask, const double* x, int N, long long columns, int cap, int* index, double* value, int* count) {
  const long long column = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (column >= columns) return;
  const double* m = mask + column * N;
  int t = 0;
  for (int i = 0; i < N; ++i)
    if (m[i] != 0) {
      if (t < cap) {
        index[column * cap + t] = i;
        if (x) value[column * cap + t] = x[column * N + i];
      }
      ++t;
    }
  for (int u = t; u < cap; ++u) {
    index[column * cap + u] = -1;
    if (x) value[column * cap + u] = 0.0;
  }
  count[column] = t;
}

}  // namespace

KwtaLimits kwta_limits() { return kwta_prepare(); }

/// A plan's state on the card (cuda/comet_forward.hpp's CometGpuPlan): the nets' weights, uploaded once; a cuBLAS
/// handle; scratch that grows to the widest run and is reused: C, A and the mask for the layer in hand, and two
/// (z, x) pairs used in turn, since layer ℓ reads layer ℓ − 1's.
struct CometPlanSession {
  CometGpuNets nets;  // widths, counts and codes; the weights live on the card
  bool backbone = false, biases = false;
  Blas blas;
  IntFlag nan_found;
  std::vector<Buffer> V, W, b;
  Buffer x0, C, A, mask, out;
  Buffer z[2], x[2];
  DeviceArray<int> kept_index, kept_count;  // CometWant::kept
  Buffer kept_value;
  PinnedStage stage;  // every download goes through it
};

namespace {
template <class T>
void grow(DeviceArray<T>& buffer, std::size_t count) {
  if (buffer.n < count) buffer = DeviceArray<T>(count);
}
}  // namespace

CometPlanSession* comet_plan_open(const CometGpuNets& nets) {
  check_comet_nets(nets, Eigen::MatrixXd(nets.widths.empty() ? 0 : nets.widths[0], 0), kwta_prepare());  // before any upload
  auto s = std::make_unique<CometPlanSession>();
  s->backbone = !nets.W.empty(), s->biases = s->backbone && !nets.b.empty();
  for (const auto& v : nets.V) s->V.emplace_back(v.size()), s->V.back().upload(v.data());
  for (const auto& w : nets.W) s->W.emplace_back(w.size()), s->W.back().upload(w.data());
  if (s->biases)
    for (const auto& b : nets.b) s->b.emplace_back(b.size()), s->b.back().upload(b.data());
  s->nets = CometGpuNets{.widths = nets.widths, .nets = nets.nets, .k = nets.k, .tie_rule = nets.tie_rule, .activation = nets.activation,
                         .kwta_kernel = nets.kwta_kernel};
  return s.release();
}

void comet_plan_close(CometPlanSession* s) noexcept { delete s; }

CometGpuOutput comet_plan_run(CometPlanSession* s, const Eigen::MatrixXd& X0, const std::vector<int>& k, CometWant want) {
  const CometGpuNets& nets = s->nets;
  const std::size_t L = nets.widths.size() - 1;
  const int B = nets.nets, M = static_cast<int>(X0.cols());
  if (X0.rows() != nets.widths[0] || k.size() != L - 1) throw std::invalid_argument("cuda::comet_forward: shapes disagree");
  const KwtaLimits limits = kwta_prepare();
  for (std::size_t l = 1; l < L; ++l) check_kwta(limits, nets.kwta_kernel, nets.widths[l], k[l - 1], nets.tie_rule, "cuda::comet_forward");
  const bool backbone = s->backbone;
  CometGpuOutput out(B, static_cast<int>(L - 1), backbone);
  const auto shape = [&](Eigen::MatrixXd& m, int rows, bool wanted) { m.resize(wanted ? rows : 0, wanted ? M : 0); };
  if (M == 0) {  // every wanted matrix N_ℓ × 0, as the CPU path returns
    for (int n = 0; n < B; ++n) {
      for (std::size_t l = 1; l < L; ++l) {
        shape(out.mask(n, int(l)), nets.widths[l], want.masks);
        if (backbone) shape(out.x(n, int(l)), nets.widths[l], want.x);
      }
      if (backbone) shape(out.output(n), nets.widths[L], want.output);
    }
    return out;
  }
  grow(s->x0, X0.size());
  s->x0.upload(X0.data(), X0.size());
  // Z and X of the previous layer (per net; layer 0: the shared inputs, stride 0).
  const double* z_prev = s->x0.p;
  const double* x_prev = s->x0.p;
  long long stride_prev = 0;
  for (std::size_t l = 1; l < L; ++l) {
    const int N = nets.widths[l], Np = nets.widths[l - 1];
    const std::size_t layer = std::size_t(B) * N * M;
    Buffer &z = s->z[l % 2], &x = s->x[l % 2];
    grow(s->C, layer), grow(s->mask, layer), grow(z, layer);
    if (backbone) grow(s->A, layer), grow(x, layer);
    batched_gemm(s->blas, s->V[l - 1].p, static_cast<long long>(N) * Np, z_prev, stride_prev, s->C.p, N, Np, M, B);  // (4)
    if (backbone) batched_gemm(s->blas, s->W[l - 1].p, static_cast<long long>(N) * Np, x_prev, stride_prev, s->A.p, N, Np, M, B);  // (7)
    kwta_launch(nets.kwta_kernel == KwtaKernel::select, s->C.p, backbone ? s->A.p : nullptr, s->biases ? s->b[l - 1].p : nullptr, N, M, B,
                k[l - 1], nets.tie_rule, nets.activation, false, s->mask.p, z.p, backbone ? x.p : nullptr, s->nan_found,
                "cuda::comet_forward");  // (5), (6), (8)
    const bool named = want.layers.empty() || std::find(want.layers.begin(), want.layers.end(), int(l)) != want.layers.end();
    const bool masks = want.masks && named, xs = want.x && named;
    if (want.kept && named) {  // compacted on the card; a second, wider pass only when ties kept more than k (inclusive rule)
      const long long columns = static_cast<long long>(B) * M;
      grow(s->kept_count, std::size_t(columns));
      int cap = std::min(k[l - 1], N), most = 0;
      for (;;) {
        grow(s->kept_index, std::size_t(columns) * cap);
        if (backbone) grow(s->kept_value, std::size_t(columns) * cap);
        compact_kept<<<static_cast<unsigned>((columns + 127) / 128), 128>>>(s->mask.p, backbone ? x.p : nullptr, N, columns, cap,
                                                                             s->kept_index.p, backbone ? s->kept_value.p : nullptr, s->kept_count.p);
        launched("compact_kept launch");
        Eigen::VectorXi counts(columns);
        s->stage.download(s->kept_count, counts.data(), std::size_t(columns));
        most = counts.size() ? counts.maxCoeff() : 0;
        if (most <= cap) {
          for (int n = 0; n < B; ++n) out.kept_count(n, static_cast<int>(l)) = counts.segment(Eigen::Index(n) * M, M);
          break;
        }
        cap = most;
      }
      for (int n = 0; n < B; ++n) {  // rows: the most any column kept, as routing's sparse columns hold them
        Eigen::MatrixXi idx(cap, M);
        s->stage.download(s->kept_index, idx.data(), std::size_t(cap) * M, std::size_t(n) * cap * M);
        out.kept_index(n, static_cast<int>(l)) = idx.topRows(most);
        if (backbone) {
          Eigen::MatrixXd val(cap, M);
          s->stage.download(s->kept_value, val.data(), std::size_t(cap) * M, std::size_t(n) * cap * M);
          out.kept_value(n, static_cast<int>(l)) = val.topRows(most);
        }
      }
    }
    for (int n = 0; n < B; ++n) {
      Eigen::MatrixXd& m = out.mask(n, static_cast<int>(l));
      shape(m, N, masks);
      if (masks) s->stage.download(s->mask, m.data(), std::size_t(N) * M, std::size_t(n) * N * M);
      if (backbone) {
        Eigen::MatrixXd& xv = out.x(n, static_cast<int>(l));
        shape(xv, N, xs);
        if (xs) s->stage.download(x, xv.data(), std::size_t(N) * M, std::size_t(n) * N * M);
      }
    }
    z_prev = z.p, x_prev = backbone ? x.p : nullptr, stride_prev = static_cast<long long>(N) * M;
  }
  if (backbone) {  // the unmasked output layer
    const int N = nets.widths[L], Np = nets.widths[L - 1];
    const std::size_t total = std::size_t(B) * N * M;
    for (int n = 0; n < B; ++n) shape(out.output(n), N, want.output);
    if (want.output) {
      grow(s->out, total);
      batched_gemm(s->blas, s->W[L - 1].p, static_cast<long long>(N) * Np, x_prev, stride_prev, s->out.p, N, Np, M, B);
      if (s->biases) {
        add_bias<<<static_cast<unsigned>((total + 255) / 256), 256>>>(s->out.p, s->b[L - 1].p, N, M, static_cast<long long>(total));
        launched("add_bias launch");
      }
      for (int n = 0; n < B; ++n) s->stage.download(s->out, out.output(n).data(), std::size_t(N) * M, std::size_t(n) * N * M);
    }
  }
  return out;
}

CometGpuOutput comet_forward(const CometGpuNets& nets, const Eigen::MatrixXd& X0) {
  check_comet_nets(nets, X0, kwta_prepare());  // before anything is uploaded
  const std::unique_ptr<CometPlanSession, void (*)(CometPlanSession*) noexcept> plan(comet_plan_open(nets), &comet_plan_close);
  return comet_plan_run(plan.get(), X0, nets.k, CometWant{});
}

}  // namespace sparseact::cuda
