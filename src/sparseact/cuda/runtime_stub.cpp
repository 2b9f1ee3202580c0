// Built when nvcc is absent: the CPU-only library reports no GPU.
#include <sparseact/core/device.hpp>
#include <sparseact/cuda/runtime.hpp>

namespace sparseact::cuda {
int device_count() noexcept { return 0; }
std::string device_name() { return ""; }
void select_device(int) {}
void bind_thread() noexcept {}
int selected_device() noexcept { return 0; }
}  // namespace sparseact::cuda

namespace sparseact {
bool cuda_device_present() noexcept { return false; }
}  // namespace sparseact
