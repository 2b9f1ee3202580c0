#pragma once
// Host-only view of the CUDA runtime. No CUDA header is included here (docs/DESIGN.md, Devices).
#include <string>

namespace sparseact::cuda {

/// Number of visible CUDA devices; 0 when the build has no CUDA or the driver finds none.
int device_count() noexcept;
/// Name of device 0 ("" when none).
std::string device_name();

/// The GPU this process computes on (an MPI rank's, by local rank): set once, before the work;
/// each thread that launches work binds to it (the CUDA runtime keeps the current device per thread).
void select_device(int index);
/// Makes the selected device current on the calling thread (a no-op without CUDA or a selection).
void bind_thread() noexcept;
/// The selected device (0 unless select_device was called).
int selected_device() noexcept;

}  // namespace sparseact::cuda
