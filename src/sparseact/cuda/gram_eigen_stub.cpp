// Built when nvcc is absent: the GPU path reports that it is not there.
#include <sparseact/cuda/gram_eigen.hpp>

#include <stdexcept>

namespace sparseact::cuda {
std::vector<Eigen::VectorXd> gram_eigenvalues(const std::vector<Eigen::MatrixXd>&) {
  throw std::runtime_error("this build of sparseact has no CUDA kernels");
}
}  // namespace sparseact::cuda
