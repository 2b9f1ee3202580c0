#pragma once
// A parallel for-loop that carries exceptions out of its OpenMP region.
//
// An exception leaving a `#pragma omp parallel` region calls std::terminate (SIGABRT, issue 10), so a
// loop whose body can throw — a library call that validates its input, an allocation — runs through
// parallel_for: body(i) for i ∈ [begin, end) under OpenMP, every exception caught inside the region,
// and after the loop the exception of the smallest index that threw is rethrown as it was (same type,
// same message). Once iteration i has thrown, iterations above i are skipped (they cannot change which
// exception comes out) and iterations below i still run, so the outcome — results or error — is that
// of the sequential loop, for any thread count and schedule (docs/DESIGN.md, Reproducibility).
//
//   sparseact::parallel_for(0, n, [&](std::int64_t i) { out[i] = work(i); });
//   sparseact::parallel_for(0, blocks, body, {.dynamic = true, .chunk = 16});
//
// The body writes only to its own iteration's outputs (reductions: one slot per iteration, reduced
// after the loop). Without OpenMP (an interpreter including this header) the loop runs sequentially.
#include <atomic>
#include <cstdint>
#include <exception>
#include <type_traits>

namespace sparseact {

struct ParallelOptions {
  bool dynamic = false;  ///< schedule(dynamic, chunk) for uneven iterations; schedule(static) otherwise
  int chunk = 1;         ///< iterations per dynamic chunk (≥ 1)
  bool parallel = true;  ///< false: one thread (the OpenMP `if` clause), e.g. for small loops
};

template <class Index, class Body>
void parallel_for(Index begin, Index end, Body&& body, const ParallelOptions& options = {}) {
  static_assert(std::is_integral<Index>::value, "parallel_for: the index must be an integer type");
  if (!(begin < end)) return;
  const std::int64_t n = static_cast<std::int64_t>(end - begin);
  std::atomic<std::int64_t> failed{n};  // smallest iteration that threw; n: none did
  std::exception_ptr error;
  auto run = [&](std::int64_t i) {
    if (i > failed.load(std::memory_order_relaxed)) return;
    try {
      body(static_cast<Index>(begin + static_cast<Index>(i)));
    } catch (...) {
#if defined(_OPENMP)
#pragma omp critical(sparseact_parallel_for_error)
#endif
      {
        if (i < failed.load(std::memory_order_relaxed)) {
          failed.store(i, std::memory_order_relaxed);
          error = std::current_exception();
        }
      }
    }
  };
#if defined(_OPENMP)
  const int chunk = options.chunk > 0 ? options.chunk : 1;
  if (options.dynamic) {
#pragma omp parallel for schedule(dynamic, chunk) if (options.parallel)
    for (std::int64_t i = 0; i < n; ++i) run(i);
  } else {
#pragma omp parallel for schedule(static) if (options.parallel)
    for (std::int64_t i = 0; i < n; ++i) run(i);
  }
#else
  for (std::int64_t i = 0; i < n; ++i) run(i);
#endif
  if (error) std::rethrow_exception(error);
}

}  // namespace sparseact
