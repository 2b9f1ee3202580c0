#pragma once
// The large spectral pass on the GPU (host-only API; no CUDA header here, docs/DESIGN.md Devices):
// Gram matrix with cuBLAS dsyrk, eigenvalues with cuSOLVER dsyevd, in double precision. The CPU
// twin is spectral::small_gram + spectral::symmetric_eigenvalues; a [cuda] test compares them.
#include <vector>

#include <Eigen/Core>

namespace sparseact::cuda {

/// Eigenvalues (ascending) of the smaller Gram matrix of each K (KᵀK when n ≥ d, else K Kᵀ). All
/// matrices must have the same shape: device buffers and the solver workspace are allocated once
/// and reused across the batch. Throws std::runtime_error when CUDA is absent or a call fails.
std::vector<Eigen::VectorXd> gram_eigenvalues(const std::vector<Eigen::MatrixXd>& Ks);

}  // namespace sparseact::cuda
