#include <sparseact/cuda/gram_eigen.hpp>

#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <sparseact/cuda/check.cuh>
#include <cusolverDn.h>

namespace sparseact::cuda {

namespace {

/// Owns the handles and device buffers of one batch; frees them on every exit path.
struct Workspace {
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  double *K = nullptr, *G = nullptr, *w = nullptr, *work = nullptr;
  int* info = nullptr;
  ~Workspace() {
    cudaFree(K);
    cudaFree(G);
    cudaFree(w);
    cudaFree(work);
    cudaFree(info);
    if (solver) cusolverDnDestroy(solver);
    if (blas) cublasDestroy(blas);
  }
};

}  // namespace

std::vector<Eigen::VectorXd> gram_eigenvalues(const std::vector<Eigen::MatrixXd>& Ks) {
  std::vector<Eigen::VectorXd> out;
  if (Ks.empty()) return out;
  const int n = static_cast<int>(Ks[0].rows()), d = static_cast<int>(Ks[0].cols());
  for (const auto& K : Ks)
    if (K.rows() != n || K.cols() != d) throw std::invalid_argument("cuda::gram_eigenvalues: matrices differ in shape");
  const bool tall = n >= d;
  const int m = tall ? d : n, k = tall ? n : d;

  Workspace ws;
  check(cublasCreate(&ws.blas), "cublasCreate");
  check(cusolverDnCreate(&ws.solver), "cusolverDnCreate");
  check(cudaMalloc(&ws.K, sizeof(double) * static_cast<size_t>(n) * d), "cudaMalloc K");
  check(cudaMalloc(&ws.G, sizeof(double) * static_cast<size_t>(m) * m), "cudaMalloc G");
  check(cudaMalloc(&ws.w, sizeof(double) * m), "cudaMalloc w");
  check(cudaMalloc(&ws.info, sizeof(int)), "cudaMalloc info");
  int lwork = 0;
  check(cusolverDnDsyevd_bufferSize(ws.solver, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, m, ws.G, m, ws.w, &lwork),
        "cusolverDnDsyevd_bufferSize");
  check(cudaMalloc(&ws.work, sizeof(double) * static_cast<size_t>(lwork)), "cudaMalloc work");

  const double one = 1.0, zero = 0.0;
  for (const auto& K : Ks) {
    check(cudaMemcpy(ws.K, K.data(), sizeof(double) * static_cast<size_t>(n) * d, cudaMemcpyHostToDevice), "copy K");
    // Column-major K (n×d): KᵀK = syrk(T) over k = n rows; K Kᵀ = syrk(N) over k = d columns.
    check(cublasDsyrk(ws.blas, CUBLAS_FILL_MODE_LOWER, tall ? CUBLAS_OP_T : CUBLAS_OP_N, m, k, &one, ws.K, n, &zero, ws.G, m),
          "cublasDsyrk");
    check(cusolverDnDsyevd(ws.solver, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, m, ws.G, m, ws.w, ws.work, lwork,
                           ws.info),
          "cusolverDnDsyevd");
    int info = 0;
    check(cudaMemcpy(&info, ws.info, sizeof(int), cudaMemcpyDeviceToHost), "copy info");
    if (info != 0) throw std::runtime_error("cusolverDnDsyevd: info = " + std::to_string(info));
    Eigen::VectorXd w(m);
    check(cudaMemcpy(w.data(), ws.w, sizeof(double) * m, cudaMemcpyDeviceToHost), "copy eigenvalues");
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace sparseact::cuda
