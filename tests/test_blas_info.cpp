// core/blas_info (issue 26): which OpenBLAS kernels run, and the one line that says when they are the
// generic pre-AVX2 ones on a CPU with AVX2 or AVX-512. The advice is tested on described machines, so
// every branch runs here whatever this CPU is; the live lookup is checked against OpenBLAS itself.
#include <catch2/catch.hpp>

#include "support.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <sparseact/core/blas_info.hpp>

namespace fs = std::filesystem;
using sparseact::BlasInfo;
using sparseact::blas_kernel_advice;

namespace {

/// Unsets OPENBLAS_CORETYPE for a scope (the advice is silent when the user has chosen).
struct WithoutCoretype {
  std::optional<std::string> saved;
  WithoutCoretype() {
    if (const char* v = std::getenv("OPENBLAS_CORETYPE")) saved = v;
    ::unsetenv("OPENBLAS_CORETYPE");
  }
  ~WithoutCoretype() {
    if (saved) ::setenv("OPENBLAS_CORETYPE", saved->c_str(), 1);
  }
};

}  // namespace

TEST_CASE("the kernel advice names the variable only for generic kernels on an AVX2 or AVX-512 CPU", "[core][blas]") {
  const WithoutCoretype clean;
  const std::string avx512 = blas_kernel_advice({"Prescott", "", 2, "avx512f"});
  CHECK_THAT(avx512, Catch::Contains("Prescott") && Catch::Contains("AVX-512") && Catch::Contains("OPENBLAS_CORETYPE=SkylakeX"));
  CHECK(avx512.find('\n') == std::string::npos);
  CHECK_THAT(blas_kernel_advice({"Nehalem", "", 1, "avx2"}), Catch::Contains("OPENBLAS_CORETYPE=Haswell"));
  CHECK_THAT(blas_kernel_advice({"Sandybridge", "", 1, "avx2"}), Catch::Contains("OPENBLAS_CORETYPE=Haswell"));
  CHECK(blas_kernel_advice({"Haswell", "", 2, "avx2"}).empty());      // already AVX2 kernels
  CHECK(blas_kernel_advice({"SkylakeX", "", 2, "avx512f"}).empty());
  CHECK(blas_kernel_advice({"Zen", "", 2, "avx512f"}).empty());       // a chosen AVX2 set: not generic
  CHECK(blas_kernel_advice({"Prescott", "", 2, "avx"}).empty());      // the CPU has nothing better
  CHECK(blas_kernel_advice({"Prescott", "", 2, "sse2"}).empty());
  CHECK(blas_kernel_advice({"", "", 0, "avx512f"}).empty());          // not OpenBLAS
  ::setenv("OPENBLAS_CORETYPE", "Prescott", 1);                       // the user's choice stands
  CHECK(blas_kernel_advice({"Prescott", "", 2, "avx512f"}).empty());
  ::unsetenv("OPENBLAS_CORETYPE");
}

TEST_CASE("blas_info reads OpenBLAS's own core name and thread count", "[core][blas]") {
  const BlasInfo b = sparseact::blas_info();
  using Name = char* (*)();
  const auto core = reinterpret_cast<Name>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (core == nullptr) {
    CHECK(b.core.empty());
    CHECK(b.threads == 0);
    return;
  }
  CHECK(b.core == core());
  CHECK(b.threads >= 1);
  CHECK_THAT(b.config, Catch::Contains("OpenBLAS"));
  CHECK((b.cpu == "avx512f" || b.cpu == "avx2" || b.cpu == "avx" || b.cpu == "sse2"));
}

TEST_CASE("an analysis records the kernels in its JSON and gives the advice once, after its work", "[core][blas][contract]") {
  const fs::path out = test_support::fresh_dir("blas_info_run");
  const test_support::Run r = test_support::run("lsh_lower_bound --scale quick --out " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json j = test_support::read_json(out / "lsh_lower_bound.json");
  const BlasInfo b = sparseact::blas_info();
  CHECK(j["environment"]["openblas_core"] == b.core);
  CHECK(j["environment"]["cpu"] == b.cpu);
  CHECK_FALSE(j["environment"].contains("openblas_threads"));  // differs between a run and its ranks
  const std::string advice = blas_kernel_advice(b);
  std::size_t said = 0;
  for (std::size_t at = 0; (at = r.output.find("OpenBLAS did not recognise", at)) != std::string::npos; ++at) ++said;
  CHECK(said == (advice.empty() ? 0u : 1u));
  // Bad input stays one line, advice or not.
  const test_support::Run bad = test_support::run("lsh_lower_bound --scale quick --bits 0 --out " + (out / "bad").string());
  CHECK(bad.code == 2);
  CHECK(std::count(bad.output.begin(), bad.output.end(), '\n') == 1);
}
