#pragma once
// Which BLAS kernels run, and a word to the user when they are slower than the CPU allows (issue 26).
//
// Debian's OpenBLAS is a DYNAMIC_ARCH build: it picks its kernels per CPU when it loads. A CPU it does
// not recognise (a VM presenting a generic "Intel Xeon Processor", say) gets its generic Prescott
// (SSE3) kernels even when the CPU has AVX-512: a 2000 × 2000 DGEMM was seen at 14.6 GFLOP/s there and
// at 70.1 with OPENBLAS_CORETYPE=SkylakeX. We say so, once, and leave the variable to the user:
// some OpenBLAS builds compute wrongly with some kernels on some CPUs.
#include <string>

namespace sparseact {

struct BlasInfo {
  std::string core;    ///< OpenBLAS's kernel set ("Prescott", "Haswell", "SkylakeX"…); "" when the BLAS is not OpenBLAS
  std::string config;  ///< openblas_get_config(): version and build options; "" when not OpenBLAS
  int threads = 0;     ///< OpenBLAS's thread pool now; 0 when not OpenBLAS
  std::string cpu;     ///< the widest vector extension the CPU and OS support: "avx512f", "avx2", "avx" or "sse2"
};

/// The BLAS this process runs, looked up in the already-loaded library.
BlasInfo blas_info();

/// One line (no newline) saying that OpenBLAS runs pre-AVX2 kernels on a CPU with AVX2 or AVX-512,
/// and which OPENBLAS_CORETYPE would use them; "" when that is not so, or when the user has set
/// OPENBLAS_CORETYPE already (their choice stands).
std::string blas_kernel_advice(const BlasInfo& info);

/// Prints blas_kernel_advice on stderr, at most once per process; `quiet` (a rank other than 0)
/// only marks it as said.
void advise_on_blas_kernels_once(bool quiet = false);

}  // namespace sparseact
