#pragma once
// Certified signs for hyperplane hashing (lsh::hash, issue 15): the bound that says when a BLAS
// projection's sign is the exact sign of wᵀx + c, and the exact decision for the bits it does not
// cover. Internal to lsh/hash.cpp; a header so that the sign pass inlines into each block loop.
//
// The bit of table row r for point x is 1[wᵀx + c > 0] with w = w_r, c = c_r, decided exactly:
//
// 1. A block of points is multiplied by W with one BLAS call (dgemm, or sgemm on float32 values) into
//    a tile that stays in cache, and the sign pass reads the tile at once.
// 2. Each computed projection p̂ comes with a rigorous bound τ ≥ |p̂ − wᵀx|. Where |fl(p̂ + c)| > τ,
//    p̂ + c and wᵀx + c have the same sign, and fl(p̂ + c) has the sign of p̂ + c (round-to-nearest
//    keeps signs), so the bit is exact. Otherwise the bit is recomputed (3.). The factor 1.01 on τ
//    absorbs the rounding of τ itself, of the norms and of fl(p̂ + c) (relative ≤ (d + 4) 2^-53).
//
//    Bounds (Higham, Accuracy and Stability of Numerical Algorithms, §2.2 and §3.1), u the unit
//    roundoff, γ_n = n u / (1 − n u), S = Σ_k |w_k x_k| ≤ ‖w‖₂ ‖x‖₂ (Cauchy–Schwarz):
//    - float64 (dgemm), any summation order, with or without FMA: |p̂ − wᵀx| ≤ γ_d S + d 2^-1075 (each
//      product that underflows loses at most half the smallest subnormal; additions that underflow
//      are exact). Rows with ‖w‖₂ outside [2^-400, 2^500] (zero rows are fine), non-finite rows and
//      offsets, and points with ‖x‖₂ > 2^500 or a NaN are always recomputed: nothing overflows.
//    - float32 (sgemm on ŵ = fl32(w), x̂ = fl32(x), u = 2^-24, η = 2^-150 the float32 underflow
//      unit): |x̂_k − x_k| ≤ u|x_k| + η, likewise for w, so
//        |ŵᵀx̂ − wᵀx| ≤ (2u + u²) S + η (1 + u)(‖w‖₁ + ‖x‖₁) + d η²,
//        |p̂ − ŵᵀx̂| ≤ γ_d Σ_k |ŵ_k x̂_k| + d η (1 + γ_d) ≤ γ_d (1 + u)² S + γ_d η (‖w‖₁ + ‖x‖₁)(1 + u) + 2 d η,
//      with ‖x‖₁ ≤ √d ‖x‖₂. The float32 products must not overflow: rows need |w_k| ≤ 2^50 and points
//      ‖x‖₂ ≤ 2^50 (partial sums < d 2^101 < 2^128 for d < 2^26); others are always recomputed.
//      Points given in float32 (x̂ = x) satisfy the same bound, a little more loosely (u S of the
//      2u S is not needed): one bound serves both inputs, so they recompute the same bits.
//    ‖x‖₂ is computed in float64; where its square may have underflowed (Σ x_k² < 2^-900) it is
//    raised by √d 2^-511, above what the underflow can have lost.
// 3. Recomputing a bit (rare: a fraction ~ τ/|wᵀx| of the bits) first evaluates c + Σ_k w_k x_k in
//    float64 (in the float32 path) and certifies it with the float64 bound; failing that, it sums the
//    exact products w_k x_k (integers times powers of 2) and c in a fixed-point accumulator wide
//    enough for every finite double, whose sign is exact.
//
// Every bit is thus the exact sign for finite inputs, whatever the block size, thread count, BLAS
// kernel, precision or input type: the float32 path gives the float64 path's codes, float32 points
// give the codes of the same points promoted to float64, and all give the codes of the unblocked
// float64 product except where that product's own rounding flipped a sign.
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <sparseact/lsh/hash.hpp>

namespace sparseact::lsh::certify {

/// The next float above a positive finite x, by its bits (nextafterf without the libm call; memcpy, not
/// std::bit_cast, so the header stays C++17 for the notebooks' interpreter).
inline float next_float_up(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  ++bits;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}

constexpr double kMaxNorm64 = 0x1p500, kMaxNorm32 = 0x1p50;  ///< ‖x‖₂ beyond which a point is always recomputed

/// τ for a point x: a · ‖x‖₂ + b, with a and b the largest over the rows that the bound covers; the
/// other rows (`always`, a bit mask per table) are recomputed for every point.
struct Bound {
  double a = 0, b = 0;
  std::vector<std::uint64_t> always;
};

/// What a hashing call shares between its threads: W in both precisions, the bounds, the offsets.
struct SignPlan {
  Eigen::Index rows = 0, d = 0;
  int tables = 0, bits = 0;
  const double* w = nullptr;  ///< rows × d, col-major: w(r, k) at r + k·rows
  const double* c = nullptr;
  double sqrt_d_underflow = 0;  ///< √d 2^-511
  Bound b64;
  bool f32 = false;    ///< the sgemm path applies (asked for, and d < 2^20 so that its bound stays useful)
  Eigen::MatrixXf wf;  ///< fl32(W), when f32
  Eigen::VectorXf cf;  ///< fl32(c), when f32
  Bound b32;
};

/// The plan for `lsh` (validated by the caller); `f32` asks for the float32 path.
SignPlan make_plan(const HyperplaneLsh& lsh, bool f32);

/// ‖x‖₂ as the bounds use it, from Σ x_k²: raised where a square may have underflowed (Σ x_k² <
/// 2^-900), ∞ beyond max_norm or for a NaN. Inline: it runs once per point.
inline double norm_for_bound(const SignPlan& p, double squares, double max_norm) {
  if (!(squares <= max_norm * max_norm)) return std::numeric_limits<double>::infinity();
  return squares < 0x1p-900 ? std::sqrt(squares) + p.sqrt_d_underflow : std::sqrt(squares);
}

/// 1[c + Σ_k w_k x_k > 0] exactly for finite values; for NaN or ±∞ the float64 sum in the order
/// k = 0 … d−1. w has stride w_stride between its d entries.
bool exact_positive(const double* w, Eigen::Index w_stride, const double* x, Eigen::Index d, double c);

/// A bit of row r that float32 could not decide, for the point x (d float64 values): c + wᵀx in
/// float64 under the float64 bound, else exactly.
bool recompute_from_f64(const SignPlan& p, Eigen::Index r, const double* x);

struct BlockCount {
  std::int64_t bits = 0, points = 0;
};

/// One table's m bits from its projections p and offsets c: pos = Σ_j 2^j 1[q_j > 0] and
/// unsure = Σ_j 2^j 1[¬(|q_j| > τ)] (NaN is unsure), q_j = p_j + c_j. SSE2 (every x86-64) compares 2
/// doubles or 4 floats and packs their signs at once; the same IEEE operations either way.
template <class T>
inline void table_bits(const T* p, const T* c, int m, T tau, std::uint64_t& pos, std::uint64_t& unsure) {
  std::uint64_t ps = 0, us = 0;
  int j = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, double>) {
    const __m128d zero = _mm_setzero_pd(), t = _mm_set1_pd(tau), sign = _mm_set1_pd(-0.0);
    for (; j + 2 <= m; j += 2) {
      const __m128d q = _mm_add_pd(_mm_loadu_pd(p + j), _mm_loadu_pd(c + j));
      ps |= static_cast<std::uint64_t>(_mm_movemask_pd(_mm_cmpgt_pd(q, zero))) << j;
      us |= static_cast<std::uint64_t>(_mm_movemask_pd(_mm_cmpngt_pd(_mm_andnot_pd(sign, q), t))) << j;
    }
  } else {
    const __m128 zero = _mm_setzero_ps(), t = _mm_set1_ps(tau), sign = _mm_set1_ps(-0.0f);
    // 16 bits at once: the four compare masks packed to bytes (signed saturation keeps −1 and 0), one movemask.
    const auto pack16 = [](__m128 a, __m128 b, __m128 e, __m128 f) {
      const __m128i ab = _mm_packs_epi32(_mm_castps_si128(a), _mm_castps_si128(b));
      const __m128i ef = _mm_packs_epi32(_mm_castps_si128(e), _mm_castps_si128(f));
      return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(ab, ef))));
    };
    for (; j + 16 <= m; j += 16) {
      const __m128 q0 = _mm_add_ps(_mm_loadu_ps(p + j), _mm_loadu_ps(c + j));
      const __m128 q1 = _mm_add_ps(_mm_loadu_ps(p + j + 4), _mm_loadu_ps(c + j + 4));
      const __m128 q2 = _mm_add_ps(_mm_loadu_ps(p + j + 8), _mm_loadu_ps(c + j + 8));
      const __m128 q3 = _mm_add_ps(_mm_loadu_ps(p + j + 12), _mm_loadu_ps(c + j + 12));
      ps |= pack16(_mm_cmpgt_ps(q0, zero), _mm_cmpgt_ps(q1, zero), _mm_cmpgt_ps(q2, zero), _mm_cmpgt_ps(q3, zero)) << j;
      us |= pack16(_mm_cmpngt_ps(_mm_andnot_ps(sign, q0), t), _mm_cmpngt_ps(_mm_andnot_ps(sign, q1), t),
                   _mm_cmpngt_ps(_mm_andnot_ps(sign, q2), t), _mm_cmpngt_ps(_mm_andnot_ps(sign, q3), t))
            << j;
    }
    for (; j + 4 <= m; j += 4) {
      const __m128 q = _mm_add_ps(_mm_loadu_ps(p + j), _mm_loadu_ps(c + j));
      ps |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_cmpgt_ps(q, zero))) << j;
      us |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_cmpngt_ps(_mm_andnot_ps(sign, q), t))) << j;
    }
  }
#endif
  for (; j < m; ++j) {
    const T q = p[j] + c[j];
    ps |= static_cast<std::uint64_t>(q > 0) << j;
    us |= static_cast<std::uint64_t>(!(std::fabs(q) > tau)) << j;
  }
  pos = ps;
  unsure = us;
}

/// The sign pass over a tile of projections (T = double or float; rows × nc, col-major) and offsets c
/// (in T), certifying each bit with τ(x) = bound.a ‖x‖₂ + bound.b; `recompute(r, n)` decides a bit
/// that τ does not. Writes tables words per point to out (column stride `tables`).
template <class T, class Recompute>
BlockCount sign_pass(const SignPlan& p, const Bound& bound, const T* tile, const T* c, const double* norms, Eigen::Index nc,
                     std::uint64_t* out, Recompute&& recompute) {
  BlockCount count;
  for (Eigen::Index n = 0; n < nc; ++n) {
    const T* pc = tile + n * p.rows;
    const double tau = bound.a * norms[n] + bound.b;  // NaN (∞ · 0) or ∞: every bit unsure
    T tau_t = static_cast<T>(tau);
    if constexpr (std::is_same_v<T, float>) {  // rounded up, and a normal float32 (so relative); NaN → ∞
      constexpr float inf = std::numeric_limits<float>::infinity();
      // τ_t ≥ 0 finite: the next float up is the next bit pattern (std::nextafter is a libm call per point).
      tau_t = tau <= 0x1p100 ? std::max(next_float_up(tau_t), 0x1p-126f) : inf;
    }
    std::uint64_t any_unsure = 0;
    for (int t = 0; t < p.tables; ++t) {
      std::uint64_t word = 0, unsure = 0;
      const Eigen::Index r0 = static_cast<Eigen::Index>(t) * p.bits;
      table_bits(pc + r0, c + r0, p.bits, tau_t, word, unsure);
      unsure |= bound.always[static_cast<std::size_t>(t)];
      for (std::uint64_t m = unsure; m != 0; m &= m - 1) {
        const int j = __builtin_ctzll(m);  // m ≠ 0 here (std::countr_zero is C++20; the header stays C++17)
        const std::uint64_t bit = std::uint64_t{1} << j;
        word = recompute(r0 + j, n) ? (word | bit) : (word & ~bit);
        ++count.bits;
      }
      any_unsure |= unsure;
      out[n * p.tables + t] = word;
    }
    count.points += any_unsure != 0;
  }
  return count;
}

}  // namespace sparseact::lsh::certify
