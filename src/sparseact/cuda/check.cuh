#pragma once
// Error checks shared by the .cu files: a failed CUDA, cuBLAS or cuSOLVER call becomes a
// std::runtime_error naming the call. Device code only (never included by public headers).
#include <cstdlib>
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

/// Whether every launch is waited for (launched): in a debug build, and under SPARSEACT_CUDA_SYNC=1.
inline bool sync_launches() {
#ifndef NDEBUG
  return true;
#else
  static const bool on = [] {
    const char* e = std::getenv("SPARSEACT_CUDA_SYNC");
    return e != nullptr && std::string(e) == "1";
  }();
  return on;
#endif
}

/// After a kernel launch: its launch error and, when sync_launches(), the kernel's own fault, waited for here, so
/// that an asynchronous fault is reported under the launch that caused it, not under a later call's name (issue 51,
/// fix 6). A fault is sticky: the process's later CUDA calls fail too, hence one ctest process per [cuda] test.
inline void launched(const char* what) {
  check(cudaGetLastError(), what);
  if (sync_launches()) check(cudaDeviceSynchronize(), (std::string(what) + " (kernel fault)").c_str());
}

}  // namespace sparseact::cuda
