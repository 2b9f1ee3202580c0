#pragma once
// The CUDA kernels live in a module of their own, libsparseact_cuda.so, which libsparseact opens on
// first use (cuda/dispatch.cpp): a process that never touches a GPU never loads cuBLAS, cuSOLVER and
// the CUDA runtime, whose loading and static set-up cost every analysis ~0.1 s and ~260 MB of resident
// memory. The module hands libsparseact this table of its entry points; both sides are built together
// by the same compiler, so the C++ signatures are the contract. Host-only: no CUDA header here.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/cuda/comet_forward.hpp>
#include <sparseact/cuda/kwta_limits.hpp>
#include <sparseact/cuda/plain_train.hpp>

namespace sparseact::cuda {

struct ModuleApi {
  int (*device_count)() noexcept;
  std::string (*device_name)();
  void (*select_device)(int);
  void (*bind_thread)() noexcept;
  int (*selected_device)() noexcept;
  std::vector<Eigen::VectorXd> (*gram_eigenvalues)(const std::vector<Eigen::MatrixXd>&);
  Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> (*lsh_euclidean_codes)(const Eigen::MatrixXd&, const Eigen::VectorXd&,
                                                                                      double, const Eigen::MatrixXd&);
  Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> (*lsh_sign_codes)(const Eigen::MatrixXd&, const Eigen::VectorXd&, int,
                                                                                  int, const Eigen::MatrixXd&);
  CometGpuOutput (*comet_forward)(const CometGpuNets&, const Eigen::MatrixXd&);
  // cuda/plain_train.hpp: a session per training run; plain_step applies the update and downloads ∇L when grad is set.
  PlainSession* (*plain_open)(const PlainTrainSpec&, const Eigen::VectorXd&, const Eigen::MatrixXd&, const std::vector<int>&,
                              const Eigen::MatrixXd&);
  void (*plain_close)(PlainSession*) noexcept;
  double (*plain_step)(PlainSession*, const std::vector<Eigen::Index>&, PlainUpdate, double lr, Eigen::VectorXd* grad);
  Eigen::VectorXd (*plain_hvp)(PlainSession*, const std::vector<Eigen::Index>&, const Eigen::VectorXd&);
  Eigen::VectorXd (*plain_hutchinson)(PlainSession*, const std::vector<Eigen::Index>&, int, std::uint64_t);
  Eigen::MatrixXd (*plain_logits)(PlainSession*, const Eigen::MatrixXd&);
  Eigen::VectorXd (*plain_theta)(const PlainSession*);
  KwtaLimits (*kwta_limits)();  ///< cuda/kwta_limits.hpp: the widest layer each k-WTA kernel takes on this thread's device
  // cuda/comet_forward.hpp's CometGpuPlan: nets uploaded once, run many times.
  CometPlanSession* (*comet_plan_open)(const CometGpuNets&);
  void (*comet_plan_close)(CometPlanSession*) noexcept;
  CometGpuOutput (*comet_plan_run)(CometPlanSession*, const Eigen::MatrixXd&, const std::vector<int>&, CometWant);
};

/// The CPU stand-in's table (cuda/standin.hpp), in libsparseact itself.
const ModuleApi* standin_module();

}  // namespace sparseact::cuda

/// The module's one exported symbol (looked up by name with dlsym).
extern "C" const sparseact::cuda::ModuleApi* sparseact_cuda_module_api();
