#pragma once
// OpenBLAS's own thread count, set for a scope (docs/DESIGN.md, Reproducibility). OpenBLAS partitions
// some reductions by its thread count, so code that must give the same bits wherever it runs (the
// items of a sweep, on any rank) runs with serial BLAS, and code that runs several BLAS calls at
// once from its own threads must not multiply them by BLAS's pool. Looked up at run time: with
// another BLAS the guard does nothing.
namespace sparseact {

class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;

 private:
  int previous_ = 0;
};

/// OpenBLAS's current thread count; 0 when the BLAS in use is not OpenBLAS.
int blas_threads() noexcept;

}  // namespace sparseact
