// The entry table of libsparseact_cuda.so (cuda/module_api.hpp): the kernels' host functions, as
// defined in this module's other .cu files. The module is linked with -Bsymbolic, so these calls bind to
// its own definitions, never to libsparseact's dispatchers of the same names.
#include <sparseact/cuda/comet_forward.hpp>
#include <sparseact/cuda/gram_eigen.hpp>
#include <sparseact/cuda/kwta_limits.hpp>
#include <sparseact/cuda/lsh_hash.hpp>
#include <sparseact/cuda/module_api.hpp>
#include <sparseact/cuda/runtime.hpp>

namespace sparseact::cuda {
#include "plain_entries.inc"  // defined in cuda/plain_train.cu
#include "comet_plan_entries.inc"  // defined in cuda/comet_forward.cu
}  // namespace sparseact::cuda

extern "C" const sparseact::cuda::ModuleApi* sparseact_cuda_module_api() {
  namespace c = sparseact::cuda;
  static const c::ModuleApi api{&c::device_count,     &c::device_name,         &c::select_device,
                                &c::bind_thread,      &c::selected_device,     &c::gram_eigenvalues,
                                &c::lsh_euclidean_codes, &c::lsh_sign_codes,   &c::comet_forward,
                                &c::plain_open,       &c::plain_close,         &c::plain_step,
                                &c::plain_hvp,        &c::plain_hutchinson,    &c::plain_logits,
                                &c::plain_theta,      &c::kwta_limits,         &c::comet_plan_open,
                                &c::comet_plan_close, &c::comet_plan_run};
  return &api;
}
