#pragma once
// k-WTA by selection (paper 002, eq. (3); routing/kwta.hpp's three tie rules), in functions that compile
// for the GPU (__host__ __device__ under nvcc) and for the CPU, so the logic the kernel runs is tested
// where CI runs (tests/test_kwta_select.cpp, against routing::kwta).
//
// The k-th largest value t of a column is found by a radix select on an order-preserving integer key of
// the double: 8 passes, each a 256-bin histogram of one byte of the keys that still match the prefix
// chosen so far, most significant byte first; pick_digit() walks a histogram from the top and keeps the
// digit holding the k-th largest. O(8 N) per column instead of the counting kernel's O(N²). Then, with
// above = |{v > t}| and at = |{v = t}|, a unit's fate is decided exactly as routing/kwta decides it:
//   v > t  wins;  v < t  loses;
//   v = t  strict: wins iff above + at ≤ k;  inclusive: wins;  exact: wins iff it is among the first
//          k − above tied units in index order.
// Keys: −0.0 and +0.0 map to one key (they compare equal, so they must tie); NaN has no place in the
// order, and the kernel reports it (routing/kwta throws on a NaN too).
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SPARSEACT_HD __host__ __device__
#else
#define SPARSEACT_HD
#endif

namespace sparseact::cuda::kwta_select {

/// a < b ⇔ key(a) < key(b) for all non-NaN doubles; key(−0.0) = key(+0.0).
SPARSEACT_HD inline std::uint64_t key(double v) {
  if (v == 0.0) v = 0.0;  // −0.0 → +0.0
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  // Negative numbers: flip every bit (larger magnitude → smaller key); positive: flip the sign bit.
  return (bits >> 63) ? ~bits : (bits | (std::uint64_t{1} << 63));
}

SPARSEACT_HD inline double from_key(std::uint64_t k) {
  const std::uint64_t bits = (k >> 63) ? (k & ~(std::uint64_t{1} << 63)) : ~k;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// One radix pass: hist[d] counts the candidate keys whose current byte is d. Returns the byte of the
/// `rank`-th largest candidate (rank from 1) and turns `rank` into its rank among the keys with that byte.
SPARSEACT_HD inline int pick_digit(const unsigned* hist, int& rank) {
  for (int d = 255; d > 0; --d) {
    if (rank <= int(hist[d])) return d;
    rank -= int(hist[d]);
  }
  return 0;
}

/// Whether a unit of value v wins under `rule` (0 strict, 1 inclusive, 2 exact: routing::TieRule's order),
/// given the k-th largest value t, above = |{v > t}|, at = |{v = t}| and, for a tied unit, tied_before =
/// the tied units of lower index.
SPARSEACT_HD inline bool wins(int rule, int k, double v, double t, int above, int at, int tied_before) {
  if (v > t) return true;
  if (v < t) return false;
  return rule == 0 ? above + at <= k : rule == 1 ? true : tied_before < k - above;
}

/// The whole selection on the CPU, the kernel's steps in order (the kernel runs each pass's histogram and
/// the counts in parallel): mask[i] = 1 for the winners of v[0..n), 0 otherwise. Returns false on a NaN.
inline bool select_column(const double* v, int n, int k, int rule, double* mask) {
  for (int i = 0; i < n; ++i)
    if (v[i] != v[i]) return false;
  if (k >= n) {
    for (int i = 0; i < n; ++i) mask[i] = 1.0;
    return true;
  }
  std::uint64_t prefix = 0, fixed = 0;  // the bytes of t's key chosen so far, and which bits they cover
  int rank = k;
  for (int shift = 56; shift >= 0; shift -= 8) {
    unsigned hist[256] = {};
    for (int i = 0; i < n; ++i) {
      const std::uint64_t kk = key(v[i]);
      if ((kk & fixed) == prefix) ++hist[(kk >> shift) & 255];
    }
    prefix |= std::uint64_t(pick_digit(hist, rank)) << shift;
    fixed |= std::uint64_t{255} << shift;
  }
  const double t = from_key(prefix);
  int above = 0, at = 0;
  for (int i = 0; i < n; ++i) above += v[i] > t, at += v[i] == t;
  for (int i = 0, tied = 0; i < n; ++i) {
    mask[i] = wins(rule, k, v[i], t, above, at, tied) ? 1.0 : 0.0;
    tied += v[i] == t;
  }
  return true;
}

}  // namespace sparseact::cuda::kwta_select
