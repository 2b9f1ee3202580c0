#include <sparseact/core/blas_info.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace sparseact {

namespace {

std::string call_string(const char* symbol) {
  using Fn = char* (*)();
  const auto f = reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, symbol));
  const char* s = f ? f() : nullptr;
  return s ? std::string(s) : std::string();
}

// OpenBLAS's x86-64 kernel sets that use neither AVX2 nor AVX-512: what DYNAMIC_ARCH falls back to.
bool pre_avx2_core(std::string_view core) {
  for (std::string_view c : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge", "Atom", "Katmai",
                             "Coppermine", "Northwood", "Banias", "Athlon", "Opteron", "Opteron(SSE3)", "Barcelona",
                             "Bobcat", "Bulldozer", "Piledriver", "Steamroller"})
    if (core == c) return true;
  return false;
}

}  // namespace

BlasInfo blas_info() {
  BlasInfo b;
  b.core = call_string("openblas_get_corename");
  b.config = call_string("openblas_get_config");
  using GetFn = int (*)();
  if (const auto get = reinterpret_cast<GetFn>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))) b.threads = get();
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's cpuid checks the OS's XSAVE state too: a feature reported here is usable.
  b.cpu = __builtin_cpu_supports("avx512f") ? "avx512f" : __builtin_cpu_supports("avx2") ? "avx2"
          : __builtin_cpu_supports("avx")   ? "avx"
                                            : "sse2";
#endif
  return b;
}

std::string blas_kernel_advice(const BlasInfo& info) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return {};
  if (!pre_avx2_core(info.core) || (info.cpu != "avx2" && info.cpu != "avx512f")) return {};
  const char* suggest = info.cpu == "avx512f" ? "SkylakeX" : "Haswell";
  return fmt::format(
      "sparseact: note: OpenBLAS did not recognise this CPU and runs its generic {} kernels, but the CPU supports {}: "
      "matrix products may take several times longer than needed. OPENBLAS_CORETYPE={} selects kernels for it "
      "(check your results with it; the choice is yours)",
      info.core, info.cpu == "avx512f" ? "AVX-512" : "AVX2", suggest);
}

void advise_on_blas_kernels_once(bool quiet) {
  static std::atomic<bool> said{false};
  if (said.exchange(true) || quiet) return;
  const std::string line = blas_kernel_advice(blas_info());
  if (!line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace sparseact
