#include <sparseact/core/device.hpp>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/version.hpp>

namespace sparseact {

Device resolve_device(const std::string& flag) {
  if (flag == "cpu") return Device::cpu;
  if (flag == "auto") return cuda_device_present() ? Device::cuda : Device::cpu;
  if (flag == "cuda") {
    if (cuda_device_present()) return Device::cuda;  // (or the CPU stand-in for tests, cuda/standin.hpp)
    if (!built_with_cuda())
      throw InputError("--device cuda: this build of sparseact has no CUDA kernels (rebuild where nvcc is found)");
    throw InputError("--device cuda: no CUDA GPU is visible to this process");
  }
  throw InputError("--device: expected auto, cpu or cuda, got '" + flag + "'");
}

const char* to_string(Device d) noexcept { return d == Device::cuda ? "cuda" : "cpu"; }

}  // namespace sparseact
