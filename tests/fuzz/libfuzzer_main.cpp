// libFuzzer entry for one target of fuzz_targets.hpp, chosen at compile time:
// -DSPARSEACT_FUZZ_ENTRY=fuzz_safetensors (tests/fuzz/CMakeLists.txt builds one executable per target).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.hpp"

#ifndef SPARSEACT_FUZZ_ENTRY
#error "define SPARSEACT_FUZZ_ENTRY to one of the entry points of fuzz_targets.hpp"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return SPARSEACT_FUZZ_ENTRY(data, size);
}
