#include <sparseact/core/blas_threads.hpp>

#include <dlfcn.h>

namespace sparseact {

namespace {
using SetFn = void (*)(int);
using GetFn = int (*)();
SetFn set_fn() {
  static const SetFn f = reinterpret_cast<SetFn>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  return f;
}
GetFn get_fn() {
  static const GetFn f = reinterpret_cast<GetFn>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return f;
}
}  // namespace

int blas_threads() noexcept { return get_fn() ? get_fn()() : 0; }

ScopedBlasThreads::ScopedBlasThreads(int threads) : previous_(blas_threads()) {
  if (set_fn() && previous_ > 0) set_fn()(threads);
}

ScopedBlasThreads::~ScopedBlasThreads() {
  if (set_fn() && previous_ > 0) set_fn()(previous_);
}

}  // namespace sparseact
