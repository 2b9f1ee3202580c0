#include <sparseact/lsh/hash.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

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

Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> hash(const HyperplaneLsh& lsh, const Eigen::MatrixXd& X, Device device) {
  check_dims(lsh.w.cols(), X, "hyperplane LSH");
  const Eigen::Index rows = static_cast<Eigen::Index>(lsh.tables) * lsh.bits;
  if (lsh.tables < 1 || lsh.bits < 1 || lsh.bits > 62 || lsh.w.rows() != rows || lsh.c.size() != rows)
    throw std::invalid_argument("lsh::hash: a hyperplane LSH needs s·m rows of w and c, 1 ≤ m ≤ 62");
  if (device == Device::cuda) return cuda::lsh_sign_codes(lsh.w, lsh.c, lsh.tables, lsh.bits, X);

  const Eigen::MatrixXd P = lsh.w * X;  // one product, then the sign pass
  const Eigen::Index N = P.cols();
  Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> words(lsh.tables, N);
#pragma omp parallel for schedule(static) if (rows * N >= min_parallel_entries)
  for (Eigen::Index n = 0; n < N; ++n) {
    for (int t = 0; t < lsh.tables; ++t) {
      std::uint64_t w = 0;
      for (int j = 0; j < lsh.bits; ++j) {
        const Eigen::Index r = static_cast<Eigen::Index>(t) * lsh.bits + j;
        if (P(r, n) + lsh.c(r) > 0.0) w |= (std::uint64_t{1} << j);
      }
      words(t, n) = w;
    }
  }
  return words;
}

}  // namespace sparseact::lsh
