// Built when nvcc is absent: the GPU path reports that it is not there.
#include <sparseact/cuda/comet_forward.hpp>

#include <stdexcept>

namespace sparseact::cuda {
CometGpuOutput comet_forward(const CometGpuNets&, const Eigen::MatrixXd&) {
  throw std::runtime_error("this build of sparseact has no CUDA kernels");
}
}  // namespace sparseact::cuda
