#pragma once
// Error checks shared by the .cu files: a failed CUDA, cuBLAS or cuSOLVER call becomes a
// std::runtime_error naming the call. Device code only (never included by public headers).
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

namespace sparseact::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
inline void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuSOLVER status " + std::to_string(s));
}

}  // namespace sparseact::cuda
