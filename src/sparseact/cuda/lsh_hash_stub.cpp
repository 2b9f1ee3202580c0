// Built when nvcc is absent: the GPU path reports that it is not there.
#include <sparseact/cuda/lsh_hash.hpp>

#include <stdexcept>

namespace sparseact::cuda {
Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> lsh_euclidean_codes(const Eigen::MatrixXd&, const Eigen::VectorXd&,
                                                                                double, const Eigen::MatrixXd&) {
  throw std::runtime_error("this build of sparseact has no CUDA kernels");
}
Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> lsh_sign_codes(const Eigen::MatrixXd&, const Eigen::VectorXd&, int,
                                                                            int, const Eigen::MatrixXd&) {
  throw std::runtime_error("this build of sparseact has no CUDA kernels");
}
}  // namespace sparseact::cuda
