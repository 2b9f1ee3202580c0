#pragma once
// Seeded randomness (docs/DESIGN.md, Reproducibility): every random stream is derived from
// (seed, stream id), never from a thread id, so results are identical for any --threads.
//
// Generator: xoshiro256** (Blackman & Vigna), state filled by splitmix64 from the pair
// (seed, stream). Normal variates by Box–Muller, so the stream of normals is the same on every
// platform (std::normal_distribution is implementation-defined).
#include <cstddef>
#include <cstdint>
#include <limits>

namespace sparseact {

/// splitmix64 finalizer: a bijective 64-bit mix.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Stream id of a sub-stream (e.g. trial t of stream s, block b of trial t).
constexpr std::uint64_t stream_id(std::uint64_t parent, std::uint64_t child) noexcept {
  return mix64(parent ^ mix64(child + 0x632be59bd9b4e019ULL));
}

class Rng {
 public:
  using result_type = std::uint64_t;

  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) noexcept;

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
  result_type operator()() noexcept { return next_u64(); }

  std::uint64_t next_u64() noexcept;
  /// Uniform on [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n), unbiased (Lemire's method).
  std::uint64_t below(std::uint64_t n) noexcept;
  /// Standard normal.
  double normal() noexcept;
  /// ±1 with probability 1/2 each.
  double rademacher() noexcept { return (next_u64() >> 63) ? 1.0 : -1.0; }

 private:
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

enum class Distribution { normal, uniform };

/// Fills x[0..count) with i.i.d. centred entries of standard deviation `sd` (normal, or uniform on
/// [-√3 sd, √3 sd]). Work is split in fixed blocks, block b drawing from Rng(seed, stream_id(stream, b)),
/// and blocks run in parallel under OpenMP: the numbers do not depend on the thread count.
void fill_random(double* x, std::size_t count, Distribution dist, double sd, std::uint64_t seed,
                 std::uint64_t stream);

}  // namespace sparseact
