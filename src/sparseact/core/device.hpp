#pragma once
// Device choice (docs/DESIGN.md, Devices): --device auto uses a GPU when the library was built with
// CUDA and one is present, else the CPU.
#include <string>

namespace sparseact {

enum class Device { cpu, cuda };

/// True when this build has CUDA kernels and the runtime sees at least one GPU.
bool cuda_device_present() noexcept;

/// Resolves "auto", "cpu" or "cuda". Throws InputError for "cuda" when no GPU can be used, naming why.
Device resolve_device(const std::string& flag);

const char* to_string(Device d) noexcept;

}  // namespace sparseact
