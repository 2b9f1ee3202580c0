#include <sparseact/cuda/comet_forward.hpp>

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

}  // namespace

KwtaLimits kwta_limits() { return kwta_prepare(); }

CometGpuOutput comet_forward(const CometGpuNets& nets, const Eigen::MatrixXd& X0) {
  const std::size_t L = nets.widths.size() - 1;
  const int B = nets.nets, M = static_cast<int>(X0.cols());
  const bool backbone = !nets.W.empty();
  check_comet_nets(nets, X0, kwta_prepare());  // before anything is uploaded
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
    Buffer V(nets.V[l - 1].size()), C(layer), mask(layer);
    auto z = std::make_unique<Buffer>(layer), x = std::make_unique<Buffer>(backbone ? layer : 0);
    Buffer W(backbone ? nets.W[l - 1].size() : 0), A(backbone ? layer : 0), bias(nets.b.empty() || !backbone ? 0 : nets.b[l - 1].size());
    V.upload(nets.V[l - 1].data());
    batched_gemm(blas, V.p, static_cast<long long>(N) * Np, z_prev, stride_prev, C.p, N, Np, M, B);  // (4)
    if (backbone) {
      W.upload(nets.W[l - 1].data());
      if (bias.n) bias.upload(nets.b[l - 1].data());
      batched_gemm(blas, W.p, static_cast<long long>(N) * Np, x_prev, stride_prev, A.p, N, Np, M, B);  // (7)
    }
    kwta_launch(nets.kwta_kernel == KwtaKernel::select, C.p, backbone ? A.p : nullptr, bias.n ? bias.p : nullptr, N, M, B, nets.k[l - 1],
                nets.tie_rule, nets.activation, false, mask.p, z->p, backbone ? x->p : nullptr, nan_found, "cuda::comet_forward");  // (5), (6), (8)
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
      launched("add_bias launch");
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
