// The CUDA runtime's side of cuda/runtime.hpp, inside libsparseact_cuda.so (cuda/module_api.hpp).
#include <sparseact/cuda/runtime.hpp>

#include <cuda_runtime.h>

namespace sparseact::cuda {

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string device_name() {
  if (device_count() == 0) return "";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, selected_device()) != cudaSuccess) return "";
  return prop.name;
}

namespace {
int g_selected = -1;
}

void select_device(int index) {
  g_selected = index;
  bind_thread();
}

void bind_thread() noexcept {
  if (g_selected >= 0 && cudaSetDevice(g_selected) != cudaSuccess) cudaGetLastError();
}

int selected_device() noexcept { return g_selected < 0 ? 0 : g_selected; }

}  // namespace sparseact::cuda
