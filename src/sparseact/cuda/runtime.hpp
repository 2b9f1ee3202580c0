#pragma once
// Host-only view of the CUDA runtime. No CUDA header is included here (DESIGN.md, Devices).
#include <string>

namespace sparseact::cuda {

/// Number of visible CUDA devices; 0 when the build has no CUDA or the driver finds none.
int device_count() noexcept;
/// Name of device 0 ("" when none).
std::string device_name();

}  // namespace sparseact::cuda
