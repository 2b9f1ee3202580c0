#include <sparseact/cuda/lsh_hash.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <sparseact/cuda/check.cuh>

namespace sparseact::cuda {

namespace {

/// Owns the handle and device buffers; frees them on every exit path.
struct Workspace {
  cublasHandle_t blas = nullptr;
  double *A = nullptr, *X = nullptr, *P = nullptr, *off = nullptr;
  void* codes = nullptr;
  int* overflow = nullptr;
  ~Workspace() {
    cudaFree(A);
    cudaFree(X);
    cudaFree(P);
    cudaFree(off);
    cudaFree(codes);
    cudaFree(overflow);
    if (blas) cublasDestroy(blas);
  }
};

// One thread per entry of P (D × N, column-major): code = ⌊(p + b_i)/ε⌋, flagged when outside int32.
__global__ void euclidean_floor(const double* P, const double* b, double eps, long long D, long long total, int* codes,
                                int* overflow) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  const long long i = idx % D;
  const double v = floor((P[idx] + b[i]) / eps);
  if (!(v >= -2147483648.0 && v <= 2147483647.0)) {  // also catches NaN
    *overflow = 1;
    codes[idx] = 0;
    return;
  }
  codes[idx] = static_cast<int>(v);
}

// One thread per (table, point): pack the table's m sign bits into a word.
__global__ void sign_pack(const double* P, const double* c, int tables, int bits, long long N, unsigned long long* words) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(tables) * N) return;
  const long long t = idx % tables, n = idx / tables;
  const long long rows = static_cast<long long>(tables) * bits;
  unsigned long long w = 0;
  for (int j = 0; j < bits; ++j) {
    const long long r = t * bits + j;
    if (P[n * rows + r] + c[r] > 0.0) w |= (1ULL << j);
  }
  words[idx] = w;
}

/// P = A X on the device (A: R × d, X: d × N, column-major), into ws.P.
void project(Workspace& ws, const Eigen::MatrixXd& A, const Eigen::VectorXd& off, const Eigen::MatrixXd& X) {
  const int R = static_cast<int>(A.rows()), d = static_cast<int>(A.cols()), N = static_cast<int>(X.cols());
  check(cublasCreate(&ws.blas), "cublasCreate");
  check(cudaMalloc(&ws.A, sizeof(double) * static_cast<size_t>(R) * d), "cudaMalloc A");
  check(cudaMalloc(&ws.X, sizeof(double) * static_cast<size_t>(d) * N), "cudaMalloc X");
  check(cudaMalloc(&ws.P, sizeof(double) * static_cast<size_t>(R) * N), "cudaMalloc P");
  check(cudaMalloc(&ws.off, sizeof(double) * static_cast<size_t>(R)), "cudaMalloc offsets");
  check(cudaMemcpy(ws.A, A.data(), sizeof(double) * static_cast<size_t>(R) * d, cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(ws.X, X.data(), sizeof(double) * static_cast<size_t>(d) * N, cudaMemcpyHostToDevice), "copy X");
  check(cudaMemcpy(ws.off, off.data(), sizeof(double) * static_cast<size_t>(R), cudaMemcpyHostToDevice), "copy offsets");
  const double one = 1.0, zero = 0.0;
  check(cublasDgemm(ws.blas, CUBLAS_OP_N, CUBLAS_OP_N, R, N, d, &one, ws.A, R, ws.X, d, &zero, ws.P, R), "cublasDgemm");
}

}  // namespace

Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> lsh_euclidean_codes(const Eigen::MatrixXd& A, const Eigen::VectorXd& b,
                                                                                double eps, const Eigen::MatrixXd& X) {
  const long long D = A.rows(), N = X.cols();
  Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> out(D, N);
  if (D == 0 || N == 0) return out;
  Workspace ws;
  project(ws, A, b, X);
  check(cudaMalloc(&ws.codes, sizeof(int) * static_cast<size_t>(D * N)), "cudaMalloc codes");
  check(cudaMalloc(&ws.overflow, sizeof(int)), "cudaMalloc overflow");
  check(cudaMemset(ws.overflow, 0, sizeof(int)), "memset overflow");
  const long long total = D * N;
  const int threads = 256;
  euclidean_floor<<<static_cast<unsigned>((total + threads - 1) / threads), threads>>>(ws.P, ws.off, eps, D, total,
                                                                                         static_cast<int*>(ws.codes), ws.overflow);
  launched("euclidean_floor launch");
  int overflow = 0;
  check(cudaMemcpy(&overflow, ws.overflow, sizeof(int), cudaMemcpyDeviceToHost), "copy overflow");
  if (overflow) throw std::range_error("lsh::hash: a Euclidean LSH code ⌊(aᵀx + b)/ε⌋ lies outside int32 (ε too small for the data)");
  check(cudaMemcpy(out.data(), ws.codes, sizeof(int) * static_cast<size_t>(total), cudaMemcpyDeviceToHost), "copy codes");
  return out;
}

Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> lsh_sign_codes(const Eigen::MatrixXd& W, const Eigen::VectorXd& c,
                                                                            int tables, int bits, const Eigen::MatrixXd& X) {
  const long long N = X.cols();
  Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> out(tables, N);
  if (tables == 0 || N == 0) return out;
  Workspace ws;
  project(ws, W, c, X);
  const long long total = static_cast<long long>(tables) * N;
  check(cudaMalloc(&ws.codes, sizeof(unsigned long long) * static_cast<size_t>(total)), "cudaMalloc words");
  const int threads = 256;
  sign_pack<<<static_cast<unsigned>((total + threads - 1) / threads), threads>>>(ws.P, ws.off, tables, bits, N,
                                                                                   static_cast<unsigned long long*>(ws.codes));
  launched("sign_pack launch");
  check(cudaMemcpy(out.data(), ws.codes, sizeof(unsigned long long) * static_cast<size_t>(total), cudaMemcpyDeviceToHost),
        "copy words");
  return out;
}

}  // namespace sparseact::cuda
