#include <sparseact/lsh/hash.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <cblas.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/cuda/lsh_hash.hpp>
#include <sparseact/lsh/hash_certify.hpp>

namespace sparseact::lsh {

namespace {

// Sub-streams of a hash family's stream: directions, then offsets.
constexpr std::uint64_t directions_stream = 0, offsets_stream = 1;
// Columns per OpenMP chunk in the floor / sign pass: large enough that a thread's work pays for itself.
constexpr Eigen::Index min_parallel_entries = 1 << 15;

// The GPU's CPU twin (core/twin.hpp) rehashes the first points of a GPU batch: codes must be identical.
constexpr Eigen::Index twin_points = 4096;

template <class Gpu, class Cpu>
void record_code_twin(const char* path, const Gpu& gpu, const Cpu& cpu, Eigen::Index points, const twin::Timer& timer) {
  const double differ = gpu.rows() == cpu.rows() && gpu.cols() == cpu.cols() ? double((gpu.array() != cpu.array()).count())
                                                                             : std::numeric_limits<double>::infinity();
  twin::record({.path = path,
                .slice = "the first " + std::to_string(cpu.cols()) + " of " + std::to_string(points) + " points: " +
                         std::to_string(cpu.size()) + " codes, the number that differ",
                .rule = twin::Rule::identical,
                .error = differ,
                .tolerance = 0,
                .cpu_s = timer.seconds()});
}

void check_dims(Eigen::Index rows_expected, Eigen::Index x_rows, const char* what) {
  if (x_rows != rows_expected)
    throw std::invalid_argument(std::string("lsh::hash: points have ") + std::to_string(x_rows) + " coordinates, the " + what +
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
  check_dims(lsh.dims(), X.rows(), "Euclidean LSH");
  if (lsh.b.size() != lsh.hashes()) throw std::invalid_argument("lsh::hash: b must have one offset per hash function");
  if (device == Device::cuda) {
    CodeMatrix gpu = cuda::lsh_euclidean_codes(lsh.a, lsh.b, lsh.eps, X);
    if (twin::due("lsh.euclidean_codes")) {
      const twin::Timer timer;
      const Eigen::Index n = std::min<Eigen::Index>(X.cols(), twin_points);
      record_code_twin("lsh.euclidean_codes", gpu.leftCols(n), hash(lsh, Eigen::MatrixXd(X.leftCols(n)), Device::cpu), X.cols(), timer);
    }
    return gpu;
  }

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
// Blocks of points, one BLAS product each into a cache-sized tile, then the certified sign pass on the
// tile (lsh/hash_certify.hpp: why every bit is the exact sign, whatever the precision and input type).

namespace {

using certify::BlockCount;
using certify::SignPlan;

// One thread's buffers, allocated once per call and reused block after block; each path sizes what it uses.
struct SignScratch {
  Eigen::MatrixXd P;       // rows × block projections (float64 arithmetic)
  Eigen::MatrixXf Pf;      // rows × block projections (float32 arithmetic)
  Eigen::MatrixXf Xf;      // d × block: float64 points rounded to float32
  Eigen::MatrixXd Xd;      // d × block: float32 points promoted to float64 (exact)
  Eigen::VectorXd x64;     // one float32 point promoted to float64, for its recomputed bits
  Eigen::VectorXd norms;   // ‖x‖₂ per point of the block (∞: always recompute)
  SignScratch(const SignPlan& p, Eigen::Index block, bool float_points) : norms(block) {
    if (p.f32) {
      Pf.resize(p.rows, block);
      if (float_points) x64.resize(p.d);
      else Xf.resize(p.d, block);
    } else {
      P.resize(p.rows, block);
      if (float_points) Xd.resize(p.d, block);
    }
  }
};

// The float32 paths' norms pass is the first read of a block's points from memory: it asks for the
// points a couple of KiB ahead, which the hardware prefetcher alone does not keep up with (measured:
// about 25% off the float32 paths, nothing on the float64 one; a hint, no effect on results).
constexpr Eigen::Index kPrefetchAhead = 2048;  // bytes
template <class Scalar>
inline void prefetch_ahead(const Scalar* x, Eigen::Index d) {
  const char* next = reinterpret_cast<const char*>(x) + kPrefetchAhead;
  for (Eigen::Index b = 0; b < d * static_cast<Eigen::Index>(sizeof(Scalar)); b += 64) __builtin_prefetch(next + b);
}

// Hashes the nc float64 points at xs (d × nc, col-major) into out (tables × nc words, column stride `tables`).
BlockCount hash_block(const SignPlan& p, SignScratch& s, const double* xs, Eigen::Index nc, std::uint64_t* out) {
  const Eigen::Index d = p.d, rows = p.rows;
  if (!p.f32) {
    // The norms' pass also brings the block into cache for the product.
    const Eigen::Map<const Eigen::MatrixXd> Xb(xs, d, nc);
    for (Eigen::Index n = 0; n < nc; ++n) s.norms[n] = certify::norm_for_bound(p, Xb.col(n).squaredNorm(), certify::kMaxNorm64);
    // β = 0: the tile is written, never read or zeroed first.
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(nc), static_cast<int>(d), 1.0, p.w,
                static_cast<int>(rows), xs, static_cast<int>(d), 0.0, s.P.data(), static_cast<int>(rows));
    const auto exact = [&](Eigen::Index r, Eigen::Index n) { return certify::exact_positive(p.w + r, rows, xs + n * d, d, p.c[r]); };
    return certify::sign_pass(p, p.b64, s.P.data(), p.c, s.norms.data(), nc, out, exact);
  }
  // One pass: the block rounded to float32, and Σ x_k² (two chains, which the compiler pairs in SSE2).
  for (Eigen::Index n = 0; n < nc; ++n) {
    const double* x = xs + n * d;
    prefetch_ahead(x, d);
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
    s.norms[n] = certify::norm_for_bound(p, s0 + s1, certify::kMaxNorm32);
  }
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(nc), static_cast<int>(d), 1.0f,
              p.wf.data(), static_cast<int>(rows), s.Xf.data(), static_cast<int>(d), 0.0f, s.Pf.data(), static_cast<int>(rows));
  const auto recompute = [&](Eigen::Index r, Eigen::Index n) { return certify::recompute_from_f64(p, r, xs + n * d); };
  return certify::sign_pass(p, p.b32, s.Pf.data(), p.cf.data(), s.norms.data(), nc, out, recompute);
}

// Σ x_k² of a float32 point, in float64 (each square exact): four chains, which the compiler pairs in SSE2.
double squares_f64(const float* x, Eigen::Index d) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  Eigen::Index k = 0;
  for (; k + 4 <= d; k += 4) {
    const double a = x[k], b = x[k + 1], c = x[k + 2], e = x[k + 3];
    s0 += a * a;
    s1 += b * b;
    s2 += c * c;
    s3 += e * e;
  }
  for (; k < d; ++k) s0 += static_cast<double>(x[k]) * x[k];
  return (s0 + s1) + (s2 + s3);
}

// Hashes the nc float32 points at xs: with the float32 path, sgemm straight on them (no copy); a bit
// it cannot decide is recomputed from the point promoted to float64, which is exact, so the codes are
// those of the promoted points. With float64 arithmetic, the block is promoted into the scratch and
// hashed as float64 points.
BlockCount hash_block(const SignPlan& p, SignScratch& s, const float* xs, Eigen::Index nc, std::uint64_t* out) {
  const Eigen::Index d = p.d, rows = p.rows;
  if (!p.f32) {
    s.Xd.leftCols(nc) = Eigen::Map<const Eigen::MatrixXf>(xs, d, nc).cast<double>();
    return hash_block(p, s, s.Xd.data(), nc, out);
  }
  // The norms' pass also brings the block into cache for the product.
  for (Eigen::Index n = 0; n < nc; ++n) {
    prefetch_ahead(xs + n * d, d);
    s.norms[n] = certify::norm_for_bound(p, squares_f64(xs + n * d, d), certify::kMaxNorm32);
  }
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(nc), static_cast<int>(d), 1.0f,
              p.wf.data(), static_cast<int>(rows), xs, static_cast<int>(d), 0.0f, s.Pf.data(), static_cast<int>(rows));
  // sign_pass visits the points in order: a point is promoted once, for all of its recomputed bits.
  Eigen::Index promoted = -1;
  const auto recompute = [&](Eigen::Index r, Eigen::Index n) {
    if (n != promoted) {
      s.x64 = Eigen::Map<const Eigen::VectorXf>(xs + n * d, d).cast<double>();
      promoted = n;
    }
    return certify::recompute_from_f64(p, r, s.x64.data());
  };
  return certify::sign_pass(p, p.b32, s.Pf.data(), p.cf.data(), s.norms.data(), nc, out, recompute);
}

// Points per block: the block's points and its tile of projections together about 512 KiB (in L2 on
// the machines we run on), a multiple of 64 points; `bytes` per value held.
Eigen::Index auto_block(Eigen::Index rows, Eigen::Index d, double bytes) {
  constexpr double kBlockBytes = 512.0 * 1024;
  const auto cols = static_cast<Eigen::Index>(kBlockBytes / (bytes * static_cast<double>(rows + d)));
  return std::max<Eigen::Index>(64, cols / 64 * 64);
}

void check_hyperplane(const HyperplaneLsh& lsh, Eigen::Index x_rows, const HashOptions& options) {
  check_dims(lsh.w.cols(), x_rows, "hyperplane LSH");
  const Eigen::Index rows = static_cast<Eigen::Index>(lsh.tables) * lsh.bits;
  if (lsh.tables < 1 || lsh.bits < 1 || lsh.bits > 62 || lsh.w.rows() != rows || lsh.c.size() != rows)
    throw std::invalid_argument("lsh::hash: a hyperplane LSH needs s·m rows of w and c, 1 ≤ m ≤ 62");
  if (options.block_points < 0) throw std::invalid_argument("lsh::hash: block_points must be ≥ 0 (0: automatic)");
}

// The CPU path for points of type Scalar (double or float), d × N col-major at X.
template <class Scalar>
SignCodes hash_cpu(const HyperplaneLsh& lsh, const Scalar* X, Eigen::Index N, const HashOptions& options, HashStats* stats) {
  constexpr bool float_points = std::is_same_v<Scalar, float>;
  const Eigen::Index rows = lsh.w.rows(), d = lsh.w.cols();
  if (d > std::numeric_limits<int>::max() || rows > std::numeric_limits<int>::max())
    throw std::invalid_argument("lsh::hash: dimensions beyond the BLAS's 32-bit integers");
  SignCodes words(lsh.tables, N);
  if (N == 0) return words;
  const SignPlan plan = certify::make_plan(lsh, options.precision == HashPrecision::float32_certified);
  // Float32 points hashed in float32 hold 4 bytes a value; every other path holds float64 values.
  const double bytes = float_points && plan.f32 ? 4.0 : 8.0;
  const Eigen::Index block = std::min<Eigen::Index>(
      {options.block_points > 0 ? options.block_points : auto_block(rows, d, bytes), N, std::numeric_limits<int>::max()});
  const Eigen::Index blocks = (N + block - 1) / block;
  // Each block is one serial BLAS call on its own thread; with one block (or one thread) the loop runs
  // here and BLAS keeps its own pool. The codes are exact either way, so this choice cannot change them.
  const bool parallel = blocks > 1 && omp_get_max_threads() > 1 && !omp_in_parallel();
  std::optional<ScopedBlasThreads> serial;
  if (parallel && blas_threads() > 1) serial.emplace(1);
  std::int64_t bits_recomputed = 0, points_recomputed = 0;
#pragma omp parallel if (parallel) reduction(+ : bits_recomputed, points_recomputed)
  {
    SignScratch scratch(plan, block, float_points);
#pragma omp for schedule(dynamic)
    for (Eigen::Index b = 0; b < blocks; ++b) {
      const Eigen::Index c0 = b * block, nc = std::min(block, N - c0);
      const BlockCount k = hash_block(plan, scratch, X + c0 * d, nc, words.data() + c0 * lsh.tables);
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

}  // namespace

SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXd& X, Device device) { return hash(lsh, X, HashOptions{}, nullptr, device); }

SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXd& X, const HashOptions& options, HashStats* stats, Device device) {
  check_hyperplane(lsh, X.rows(), options);
  if (stats) *stats = HashStats{.points = X.cols()};
  if (device == Device::cuda) {
    SignCodes gpu = cuda::lsh_sign_codes(lsh.w, lsh.c, lsh.tables, lsh.bits, X);
    if (twin::due("lsh.sign_codes")) {
      const twin::Timer timer;
      const Eigen::Index n = std::min<Eigen::Index>(X.cols(), twin_points);
      record_code_twin("lsh.sign_codes", gpu.leftCols(n), hash_cpu(lsh, X.data(), n, options, nullptr), X.cols(), timer);
    }
    return gpu;
  }
  return hash_cpu(lsh, X.data(), X.cols(), options, stats);
}

SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXf& X, const HashOptions& options, HashStats* stats, Device device) {
  check_hyperplane(lsh, X.rows(), options);
  if (stats) *stats = HashStats{.points = X.cols()};
  if (device == Device::cuda) return hash(lsh, Eigen::MatrixXd(X.cast<double>()), options, stats, device);  // the same codes, bit for bit
  return hash_cpu(lsh, X.data(), X.cols(), options, stats);
}

}  // namespace sparseact::lsh
