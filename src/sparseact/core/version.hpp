#pragma once
// Build identity recorded in every result file (docs/DESIGN.md, the analysis contract).
namespace sparseact {
/// `git describe` of the source tree at configure time, prefixed with the project version.
const char* version() noexcept;
/// True when the library was compiled with its CUDA kernels (nvcc was found at configure time).
bool built_with_cuda() noexcept;
}  // namespace sparseact
