#include <sparseact/core/rng.hpp>

#include <algorithm>
#include <cmath>

namespace sparseact {

namespace {
constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
constexpr std::size_t block_size = 1 << 14;
}  // namespace

Rng::Rng(std::uint64_t seed, std::uint64_t stream) noexcept {
  std::uint64_t z = mix64(seed) ^ mix64(stream ^ 0xd1b54a32d192ed03ULL);
  for (auto& s : s_) {
    z += 0x9e3779b97f4a7c15ULL;
    s = mix64(z);
  }
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;  // xoshiro's one forbidden state
}

std::uint64_t Rng::next_u64() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t n) noexcept {
  // Lemire, "Fast random integer generation in an interval" (2019).
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::normal() noexcept {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Box–Muller on (0, 1] × [0, 1): u1 > 0 keeps the log finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

void fill_random(double* x, std::size_t count, Distribution dist, double sd, std::uint64_t seed,
                 std::uint64_t stream) {
  const auto blocks = static_cast<std::int64_t>((count + block_size - 1) / block_size);
  const double half_width = std::sqrt(3.0) * sd;  // U[-h, h] has variance h²/3
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    Rng rng(seed, stream_id(stream, static_cast<std::uint64_t>(b)));
    const std::size_t begin = static_cast<std::size_t>(b) * block_size;
    const std::size_t end = std::min(count, begin + block_size);
    if (dist == Distribution::normal) {
      for (std::size_t i = begin; i < end; ++i) x[i] = sd * rng.normal();
    } else {
      for (std::size_t i = begin; i < end; ++i) x[i] = rng.uniform(-half_width, half_width);
    }
  }
}

}  // namespace sparseact
