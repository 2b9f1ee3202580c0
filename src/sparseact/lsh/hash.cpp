#include <sparseact/lsh/hash.hpp>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <cblas.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/cuda/lsh_hash.hpp>

namespace sparseact::lsh {

namespace {

// Sub-streams of a hash family's stream: directions, then offsets.
constexpr std::uint64_t directions_stream = 0, offsets_stream = 1;
// Columns per OpenMP chunk in the floor / sign pass: large enough that a thread's work pays for itself.
constexpr Eigen::Index min_parallel_entries = 1 << 15;

void check_dims(Eigen::Index rows_expected, const Eigen::MatrixXd& X, const char* what) {
  if (X.rows() != rows_expected)
    throw std::invalid_argument(std::string("lsh::hash: points have ") + std::to_string(X.rows()) + " coordinates, the " + what +
                                " expects " + std::to_string(rows_expected));
}

}  // namespace

EuclideanLsh make_euclidean_lsh(Eigen::Index d, Eigen::Index D, double eps, std::uint64_t seed, std::uint64_t stream) {
  if (d < 1 || D < 1) throw std::invalid_argument("make_euclidean_lsh: need d ≥ 1 and D ≥ 1");
  if (!(eps > 0) || !std::isfinite(eps)) throw std::invalid_argument("make_euclidean_lsh: need a finite width ε > 0");
  EuclideanLsh lsh;
  lsh.eps = eps;
  lsh.a.resize(D, d);  // a_i ~ N(0, I_d): every entry an independent standard normal (paper 000 §2.2)
  fill_random(lsh.a.data(), static_cast<std::size_t>(lsh.a.size()), Distribution::normal, 1.0, seed,
              stream_id(stream, directions_stream));
  lsh.b.resize(D);  // b_i ~ U[0, ε]
  Rng rng(seed, stream_id(stream, offsets_stream));
  for (Eigen::Index i = 0; i < D; ++i) lsh.b(i) = rng.uniform(0.0, eps);
  return lsh;
}

CodeMatrix hash(const EuclideanLsh& lsh, const Eigen::MatrixXd& X, Device device) {
  check_dims(lsh.dims(), X, "Euclidean LSH");
  if (lsh.b.size() != lsh.hashes()) throw std::invalid_argument("lsh::hash: b must have one offset per hash function");
  if (device == Device::cuda) return cuda::lsh_euclidean_codes(lsh.a, lsh.b, lsh.eps, X);

  // One product (Eigen → OpenBLAS) for all N points, then one pass: h_i(x) = ⌊(a_iᵀx + b_i)/ε⌋.
  const Eigen::MatrixXd P = lsh.a * X;
  const Eigen::Index D = P.rows(), N = P.cols();
  CodeMatrix codes(D, N);
  constexpr double lo = static_cast<double>(std::numeric_limits<std::int32_t>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<std::int32_t>::max());
  bool overflow = false;
  const double eps = lsh.eps;
  // Each column is independent and computed identically on any thread: the result does not depend
  // on the thread count.
#pragma omp parallel for schedule(static) reduction(|| : overflow) if (D * N >= min_parallel_entries)
  for (Eigen::Index n = 0; n < N; ++n) {
    for (Eigen::Index i = 0; i < D; ++i) {
      const double v = std::floor((P(i, n) + lsh.b(i)) / eps);
      if (!(v >= lo && v <= hi)) {  // NaN fails both comparisons
        overflow = true;
        codes(i, n) = 0;
      } else {
        codes(i, n) = static_cast<std::int32_t>(v);
      }
    }
  }
  if (overflow)
    throw std::range_error("lsh::hash: a Euclidean LSH code ⌊(aᵀx + b)/ε⌋ lies outside int32 (ε too small for the data, or NaN input)");
  return codes;
}

HyperplaneLsh make_hyperplane_lsh(Eigen::Index d, int tables, int bits, double offset_range, std::uint64_t seed,
                                  std::uint64_t stream) {
  if (d < 1) throw std::invalid_argument("make_hyperplane_lsh: need d ≥ 1");
  if (tables < 1) throw std::invalid_argument("make_hyperplane_lsh: need s ≥ 1 tables");
  if (bits < 1 || bits > 62) throw std::invalid_argument("make_hyperplane_lsh: need 1 ≤ m ≤ 62 bits per table");
  if (!(offset_range >= 0) || !std::isfinite(offset_range)) throw std::invalid_argument("make_hyperplane_lsh: need offset range r ≥ 0");
  HyperplaneLsh lsh;
  lsh.tables = tables;
  lsh.bits = bits;
  const Eigen::Index rows = static_cast<Eigen::Index>(tables) * bits;
  lsh.w.resize(rows, d);
  fill_random(lsh.w.data(), static_cast<std::size_t>(lsh.w.size()), Distribution::normal, 1.0, seed,
              stream_id(stream, directions_stream));
  lsh.c.resize(rows);
  Rng rng(seed, stream_id(stream, offsets_stream));
  for (Eigen::Index j = 0; j < rows; ++j) lsh.c(j) = offset_range > 0 ? rng.uniform(-offset_range, offset_range) : 0.0;
  return lsh;
}

// ---- Hyperplane (sign) hashing ----------------------------------------------------------------
//
// The bit of table row r for point x is 1[wᵀx + c > 0] with w = w_r, c = c_r, decided exactly:
//
// 1. A block of points is multiplied by W with one BLAS call (dgemm, or sgemm on float32 copies) into
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
//    ‖x‖₂ is computed in float64; where its square may have underflowed (Σ x_k² < 2^-900) it is
//    raised by √d 2^-511, above what the underflow can have lost.
// 3. Recomputing a bit (rare: a fraction ~ τ/|wᵀx| of the bits) first evaluates c + Σ_k w_k x_k in
//    float64 (in the float32 path) and certifies it with the float64 bound; failing that, it sums the
//    exact products w_k x_k (integers times powers of 2) and c in a fixed-point accumulator wide
//    enough for every finite double, whose sign is exact.
//
// Every bit is thus the exact sign for finite inputs, whatever the block size, thread count, BLAS
// kernel or precision: the float32 path gives the float64 path's codes, and both give the codes of
// the unblocked float64 product except where that product's own rounding flipped a sign.

namespace {

constexpr double kSafetyFactor = 1.01;
constexpr double kInf = std::numeric_limits<double>::infinity();

double gamma(Eigen::Index n, double u) { return static_cast<double>(n) * u / (1 - static_cast<double>(n) * u); }

// A finite double as ±M · 2^E, M a non-negative integer < 2^53.
struct Decomposed {
  std::uint64_t mantissa;
  int exponent;
  bool negative;
};
Decomposed decompose(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  const int field = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (field == 0) return {frac, -1074, (bits >> 63) != 0};  // zero or subnormal
  return {frac | (std::uint64_t{1} << 52), field - 1075, (bits >> 63) != 0};
}

// Exact sum of products of finite doubles and of finite doubles: a fixed-point number whose lowest
// bit is 2^-2148 (the product of two smallest subnormals) and which reaches past 2^(2·1024), in
// 32-bit limbs held in int64 so that each addition is carry-free (room for 2^29 terms).
class ExactAccumulator {
 public:
  void add_product(double a, double b) {
    const Decomposed x = decompose(a), y = decompose(b);
    if (x.mantissa == 0 || y.mantissa == 0) return;
    add(static_cast<unsigned __int128>(x.mantissa) * y.mantissa, x.exponent + y.exponent, x.negative != y.negative);
  }
  void add_value(double a) {
    const Decomposed x = decompose(a);
    if (x.mantissa != 0) add(x.mantissa, x.exponent, x.negative);
  }
  /// The sign of the sum: −1, 0 or 1.
  int sign() const {
    std::int64_t carry = 0;
    bool nonzero = false;
    for (std::int64_t limb : limbs_) {
      const std::int64_t v = limb + carry;
      nonzero = nonzero || (v & 0xffffffff) != 0;
      carry = v >> 32;  // floor division (arithmetic shift, C++20)
    }
    if (carry != 0) return carry < 0 ? -1 : 1;  // the limbs below it lie in [0, 2^32): the top decides
    return nonzero ? 1 : 0;
  }

 private:
  static constexpr int kLowest = -2148;
  static constexpr int kLimbs = 132;  // 132 · 32 = 4224 bits > 2148 + 971 + 971 + 106 (a product's mantissa width)
  void add(unsigned __int128 mag, int exponent, bool negative) {
    const int shift = exponent - kLowest;  // ≥ 0
    int limb = shift / 32;
    const int offset = shift % 32;
    for (; mag != 0; mag >>= 32, ++limb) {
      const std::uint64_t piece = static_cast<std::uint64_t>(mag & 0xffffffffu) << offset;  // < 2^63
      const auto lo = static_cast<std::int64_t>(piece & 0xffffffffu), hi = static_cast<std::int64_t>(piece >> 32);
      limbs_[limb] += negative ? -lo : lo;
      limbs_[limb + 1] += negative ? -hi : hi;
    }
  }
  std::int64_t limbs_[kLimbs + 1] = {};
};

// 1[c + Σ_k w_k x_k > 0] exactly for finite values; for NaN or ±∞ the float64 sum in the order k = 0 … d−1.
// w has stride w_stride between its d entries.
bool exact_positive(const double* w, Eigen::Index w_stride, const double* x, Eigen::Index d, double c) {
  bool finite = std::isfinite(c);
  for (Eigen::Index k = 0; k < d && finite; ++k) finite = std::isfinite(w[k * w_stride]) && std::isfinite(x[k]);
  if (!finite) {
    double q = 0;
    for (Eigen::Index k = 0; k < d; ++k) q += w[k * w_stride] * x[k];
    return q + c > 0;
  }
  ExactAccumulator acc;
  for (Eigen::Index k = 0; k < d; ++k) acc.add_product(w[k * w_stride], x[k]);
  acc.add_value(c);
  return acc.sign() > 0;
}

constexpr double kMaxNorm64 = 0x1p500, kMinNorm64 = 0x1p-400, kMaxNorm32 = 0x1p50;
constexpr double kUnderflowSquares = 0x1p-900;

// τ for a point x: a · ‖x‖₂ + b, with a and b the largest over the rows that the bound covers; the
// other rows (`always`, per table) are recomputed for every point.
struct Bound {
  double a = 0, b = 0;
  std::vector<std::uint64_t> always;
};

// What a hashing call shares between its threads: W in both precisions, the bounds, the offsets.
struct SignPlan {
  Eigen::Index rows = 0, d = 0;
  int tables = 0, bits = 0;
  const double* w = nullptr;  // rows × d, col-major: w(r, k) at r + k·rows
  const double* c = nullptr;
  double sqrt_d_underflow = 0;  // √d 2^-511
  Bound b64;
  bool f32 = false;
  Eigen::MatrixXf wf;  // fl32(W)
  Eigen::VectorXf cf;  // fl32(c)
  Bound b32;
};

SignPlan make_plan(const HyperplaneLsh& lsh, bool f32) {
  SignPlan p;
  p.w = lsh.w.data();
  p.c = lsh.c.data();
  p.rows = lsh.w.rows();
  p.d = lsh.w.cols();
  p.tables = lsh.tables;
  p.bits = lsh.bits;
  const double dd = static_cast<double>(p.d);
  p.sqrt_d_underflow = std::sqrt(dd) * 0x1p-511;
  const double g64 = gamma(p.d, 0x1p-53);
  const double u = 0x1p-24, eta = 0x1p-150;
  p.f32 = f32 && p.d < (Eigen::Index{1} << 20);  // γ_d < 0.07: the bound stays useful
  const double g32 = gamma(p.d, u), kappa = g32 * (1 + u) * (1 + u) + 2 * u + u * u;
  p.b64.always.assign(static_cast<std::size_t>(p.tables), 0);
  p.b32.always.assign(static_cast<std::size_t>(p.tables), 0);
  for (Eigen::Index r = 0; r < p.rows; ++r) {
    const double n2 = lsh.w.row(r).norm(), n1 = lsh.w.row(r).lpNorm<1>(), nmax = lsh.w.row(r).cwiseAbs().maxCoeff();
    const bool finite = std::isfinite(lsh.c(r)) && std::isfinite(n1);  // a NaN or ∞ entry makes n1 non-finite
    const auto t = static_cast<std::size_t>(r / p.bits);
    const std::uint64_t bit = std::uint64_t{1} << (r % p.bits);
    if (finite && (n2 == 0 || (n2 >= kMinNorm64 && n2 <= kMaxNorm64))) {
      p.b64.a = std::max(p.b64.a, kSafetyFactor * g64 * n2);
      p.b64.b = kSafetyFactor * dd * 0x1p-1074 + 0x1p-1073;  // d · 2^-1075, doubled
    } else {
      p.b64.always[t] |= bit;
    }
    // float32 adds the rounding of c to fl32(c) and of fl32(p̂ + fl32(c)) (relative u, in the 1.01).
    if (p.f32 && finite && nmax <= kMaxNorm32 && std::fabs(lsh.c(r)) <= 0x1p100 && (n2 == 0 || n2 >= kMinNorm64)) {
      p.b32.a = std::max(p.b32.a, kSafetyFactor * (kappa * n2 + g32 * eta * (1 + u) * std::sqrt(dd)));
      p.b32.b = std::max(p.b32.b, kSafetyFactor * (eta * ((1 + g32) * (1 + u) * n1 + 3 * dd) + u * std::fabs(lsh.c(r)) + eta));
    } else {
      p.b32.always[t] |= bit;
    }
  }
  if (p.f32) {
    p.wf = lsh.w.cast<float>();
    p.cf = lsh.c.cast<float>();
  }
  return p;
}

// One thread's buffers, allocated once per call and reused block after block.
struct SignScratch {
  Eigen::MatrixXd P;          // rows × block projections (float64 path)
  Eigen::MatrixXf Pf, Xf;     // rows × block projections, d × block points (float32 path)
  Eigen::VectorXd norms;      // ‖x‖₂ per point of the block (∞: always recompute)
  SignScratch(const SignPlan& p, Eigen::Index block) : norms(block) {
    if (p.f32) {
      Pf.resize(p.rows, block);
      Xf.resize(p.d, block);
    } else {
      P.resize(p.rows, block);
    }
  }
};

struct BlockCount {
  std::int64_t bits = 0, points = 0;
};

// One table's m bits from its projections p and offsets c: pos = Σ_j 2^j 1[q_j > 0] and
// unsure = Σ_j 2^j 1[¬(|q_j| > τ)] (NaN is unsure), q_j = p_j + c_j. SSE2 (every x86-64) compares 2
// doubles or 4 floats and packs their signs at once; the same IEEE operations either way.
template <class T>
void table_bits(const T* p, const T* c, int m, T tau, std::uint64_t& pos, std::uint64_t& unsure) {
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

// The sign pass over a tile of projections (T = double or float) and offsets c (in T), certifying each
// bit with τ(x) = bound.a ‖x‖₂ + bound.b; `recompute` decides a bit that τ does not.
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
      tau_t = tau <= 0x1p100 ? std::max(std::nextafter(tau_t, inf), 0x1p-126f) : inf;
    }
    std::uint64_t any_unsure = 0;
    for (int t = 0; t < p.tables; ++t) {
      std::uint64_t word = 0, unsure = 0;
      const Eigen::Index r0 = static_cast<Eigen::Index>(t) * p.bits;
      table_bits(pc + r0, c + r0, p.bits, tau_t, word, unsure);
      unsure |= bound.always[t];
      for (std::uint64_t m = unsure; m != 0; m &= m - 1) {
        const int j = std::countr_zero(m);
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

// ‖x‖₂ as the bounds use it, from Σ x_k²: raised where a square may have underflowed, ∞ beyond max_norm
// or for a NaN.
double norm_for_bound(const SignPlan& p, double squares, double max_norm) {
  if (!(squares <= max_norm * max_norm)) return kInf;
  return squares < kUnderflowSquares ? std::sqrt(squares) + p.sqrt_d_underflow : std::sqrt(squares);
}

// Hashes points c0 … c0+nc−1 of X into out (tables × nc words, column stride `tables`).
BlockCount hash_block(const SignPlan& p, SignScratch& s, const double* X, Eigen::Index c0, Eigen::Index nc, std::uint64_t* out) {
  const Eigen::Index d = p.d, rows = p.rows;
  const double* xs = X + c0 * d;
  const auto exact = [&](Eigen::Index r, Eigen::Index n) { return exact_positive(p.w + r, rows, xs + n * d, d, p.c[r]); };
  if (!p.f32) {
    // The norms' pass also brings the block into cache for the product.
    const Eigen::Map<const Eigen::MatrixXd> Xb(xs, d, nc);
    for (Eigen::Index n = 0; n < nc; ++n) s.norms[n] = norm_for_bound(p, Xb.col(n).squaredNorm(), kMaxNorm64);
    // β = 0: the tile is written, never read or zeroed first.
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(nc), static_cast<int>(d), 1.0, p.w,
                static_cast<int>(rows), xs, static_cast<int>(d), 0.0, s.P.data(), static_cast<int>(rows));
    return sign_pass(p, p.b64, s.P.data(), p.c, s.norms.data(), nc, out, exact);
  }
  // One pass: the block rounded to float32, and Σ x_k² (two chains, which the compiler pairs in SSE2).
  for (Eigen::Index n = 0; n < nc; ++n) {
    const double* x = xs + n * d;
    float* y = s.Xf.data() + n * d;
    double s0 = 0, s1 = 0;
    Eigen::Index k = 0;
    for (; k + 2 <= d; k += 2) {
      s0 += x[k] * x[k];
      s1 += x[k + 1] * x[k + 1];
      y[k] = static_cast<float>(x[k]);
      y[k + 1] = static_cast<float>(x[k + 1]);
    }
    if (k < d) {
      s0 += x[k] * x[k];
      y[k] = static_cast<float>(x[k]);
    }
    s.norms[n] = norm_for_bound(p, s0 + s1, kMaxNorm32);
  }
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(nc), static_cast<int>(d), 1.0f,
              p.wf.data(), static_cast<int>(rows), s.Xf.data(), static_cast<int>(d), 0.0f, s.Pf.data(), static_cast<int>(rows));
  // A bit float32 cannot decide: c + wᵀx in float64 under the float64 bound, else exactly.
  const auto recompute = [&](Eigen::Index r, Eigen::Index n) {
    const double* x = xs + n * d;
    const double xn = norm_for_bound(p, Eigen::Map<const Eigen::VectorXd>(x, d).squaredNorm(), kMaxNorm64);
    if (!(p.b64.always[static_cast<std::size_t>(r / p.bits)] >> (r % p.bits) & 1)) {
      double q = 0;
      for (Eigen::Index k = 0; k < d; ++k) q += p.w[r + k * rows] * x[k];
      q += p.c[r];
      if (std::fabs(q) > p.b64.a * xn + p.b64.b) return q > 0;
    }
    return exact(r, n);
  };
  return sign_pass(p, p.b32, s.Pf.data(), p.cf.data(), s.norms.data(), nc, out, recompute);
}

// Points per block: the block's float64 points and its tile of projections together about 512 KiB
// (in L2 on the machines we run on), a multiple of 64 points.
Eigen::Index auto_block(Eigen::Index rows, Eigen::Index d) {
  constexpr double kBlockBytes = 512.0 * 1024;
  const auto cols = static_cast<Eigen::Index>(kBlockBytes / (8.0 * static_cast<double>(rows + d)));
  return std::max<Eigen::Index>(64, cols / 64 * 64);
}

}  // namespace

SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXd& X, Device device) { return hash(lsh, X, HashOptions{}, nullptr, device); }

SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXd& X, const HashOptions& options, HashStats* stats, Device device) {
  check_dims(lsh.w.cols(), X, "hyperplane LSH");
  const Eigen::Index rows = static_cast<Eigen::Index>(lsh.tables) * lsh.bits;
  if (lsh.tables < 1 || lsh.bits < 1 || lsh.bits > 62 || lsh.w.rows() != rows || lsh.c.size() != rows)
    throw std::invalid_argument("lsh::hash: a hyperplane LSH needs s·m rows of w and c, 1 ≤ m ≤ 62");
  if (options.block_points < 0) throw std::invalid_argument("lsh::hash: block_points must be ≥ 0 (0: automatic)");
  const Eigen::Index N = X.cols(), d = X.rows();
  if (stats) *stats = HashStats{.points = N};
  if (device == Device::cuda) return cuda::lsh_sign_codes(lsh.w, lsh.c, lsh.tables, lsh.bits, X);
  if (d > std::numeric_limits<int>::max() || rows > std::numeric_limits<int>::max())
    throw std::invalid_argument("lsh::hash: dimensions beyond the BLAS's 32-bit integers");

  SignCodes words(lsh.tables, N);
  if (N == 0) return words;
  const SignPlan plan = make_plan(lsh, options.precision == HashPrecision::float32_certified);
  const Eigen::Index block =
      std::min<Eigen::Index>({options.block_points > 0 ? options.block_points : auto_block(rows, d), N, std::numeric_limits<int>::max()});
  const Eigen::Index blocks = (N + block - 1) / block;
  // Each block is one serial BLAS call on its own thread; with one block (or one thread) the loop runs
  // here and BLAS keeps its own pool. The codes are exact either way, so this choice cannot change them.
  const bool parallel = blocks > 1 && omp_get_max_threads() > 1 && !omp_in_parallel();
  std::optional<ScopedBlasThreads> serial;
  if (parallel && blas_threads() > 1) serial.emplace(1);
  std::int64_t bits_recomputed = 0, points_recomputed = 0;
#pragma omp parallel if (parallel) reduction(+ : bits_recomputed, points_recomputed)
  {
    SignScratch scratch(plan, block);
#pragma omp for schedule(dynamic)
    for (Eigen::Index b = 0; b < blocks; ++b) {
      const Eigen::Index c0 = b * block, nc = std::min(block, N - c0);
      const BlockCount k = hash_block(plan, scratch, X.data(), c0, nc, words.data() + c0 * lsh.tables);
      bits_recomputed += k.bits;
      points_recomputed += k.points;
    }
  }
  if (stats) {
    stats->bits_recomputed = bits_recomputed;
    stats->points_recomputed = static_cast<Eigen::Index>(points_recomputed);
  }
  return words;
}

}  // namespace sparseact::lsh
