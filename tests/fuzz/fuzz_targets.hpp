#pragma once
// Fuzz entry points for the file readers (issue 26, section 3), one per format. Each takes the
// bytes of one file, writes them to a temporary file of the right name (the readers take paths)
// and runs the readers' public API on it.
//
// Contract: InputError (core/errors.hpp) is the correct outcome for bad input and is swallowed;
// anything else escapes (another exception type, or a broken invariant thrown as
// std::logic_error), so libFuzzer reports it as a crash and the replay test as a failure.
// Invariants checked beyond "no crash": a tensor that open_checkpoint accepted loads with the
// shape it listed (stored data load without error), the readers that overlap agree value for
// value (load_safetensors vs load_tensor, load_npy vs load_tensor, an IDX file plain vs gzipped),
// and a refused dtype is refused with InputError.
//
// The same functions serve the libFuzzer mains (libfuzzer_main.cpp, built by `sparseact.sh fuzz`)
// and the replay executable (replay.cpp, ctest label `fuzz`).
#include <cstddef>
#include <cstdint>
#include <span>

int fuzz_safetensors(const std::uint8_t* data, std::size_t size);
int fuzz_npy(const std::uint8_t* data, std::size_t size);
int fuzz_npz(const std::uint8_t* data, std::size_t size);
/// `data` is a model.safetensors.index.json beside two fixed, valid shards (fuzz_index_shards()).
int fuzz_index(const std::uint8_t* data, std::size_t size);
/// `data` is an IDX file, plain or gzip; a plain one is also read gzipped (and must read the same).
int fuzz_idx(const std::uint8_t* data, std::size_t size);

struct FuzzTarget {
  const char* name;  ///< "safetensors", "npy", "npz", "index", "idx": also the corpus folder's name
  int (*run)(const std::uint8_t* data, std::size_t size);
};
/// Every target, in the order above.
std::span<const FuzzTarget> fuzz_targets();

/// Loads are skipped for tensors of more elements than this (open_checkpoint has validated them):
/// the fuzzer looks for bugs in the parsing, not for the cost of converting large valid arrays.
inline constexpr std::uint64_t fuzz_max_load_elements = std::uint64_t{1} << 22;
