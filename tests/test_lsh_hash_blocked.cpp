// Hyperplane LSH hashed in blocks (issue 15): the codes against the unblocked float64 product
// W X that lsh::hash computed before, for several block sizes and thread counts; the certified
// float32 path against the float64 path on adversarial points (projections within rounding of 0);
// and both against an exact oracle (big integers), including projections that float64 gets wrong.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <omp.h>

#include <boost/multiprecision/cpp_int.hpp>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/subspace.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {

/// The pre-blocking lsh::hash: one product P = W X (Eigen → BLAS), then the sign pass.
SignCodes unblocked_codes(const HyperplaneLsh& h, const Eigen::MatrixXd& X) {
  const Eigen::MatrixXd P = h.w * X;
  SignCodes words(h.tables, X.cols());
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (int t = 0; t < h.tables; ++t) {
      std::uint64_t w = 0;
      for (int j = 0; j < h.bits; ++j) {
        const Eigen::Index r = t * h.bits + j;
        if (P(r, n) + h.c(r) > 0.0) w |= std::uint64_t{1} << j;
      }
      words(t, n) = w;
    }
  return words;
}

/// sign(c + Σ_k w_k x_k) exactly: every double is M·2^E with integer M, so the sum times 2^2252 is an integer.
int exact_sign(const Eigen::VectorXd& w, const double* x, double c) {
  using boost::multiprecision::cpp_int;
  const auto scaled = [](double v, int& e) {  // v = m · 2^e, m an integer
    int ex = 0;
    const double f = std::frexp(v, &ex);
    e = ex - 53;
    return static_cast<std::int64_t>(std::ldexp(f, 53));
  };
  cpp_int sum = 0;
  for (Eigen::Index k = 0; k < w.size(); ++k) {
    if (w(k) == 0 || x[k] == 0) continue;
    int ew = 0, ex = 0;
    const cpp_int m = cpp_int(scaled(w(k), ew)) * scaled(x[k], ex);
    sum += m << (ew + ex + 2252);
  }
  if (c != 0) {
    int ec = 0;
    sum += cpp_int(scaled(c, ec)) << (ec + 2252);
  }
  return sum > 0 ? 1 : (sum < 0 ? -1 : 0);
}

SignCodes exact_codes(const HyperplaneLsh& h, const Eigen::MatrixXd& X) {
  SignCodes words(h.tables, X.cols());
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (int t = 0; t < h.tables; ++t) {
      std::uint64_t w = 0;
      for (int j = 0; j < h.bits; ++j) {
        const Eigen::Index r = t * h.bits + j;
        if (exact_sign(h.w.row(r).transpose(), X.col(n).data(), h.c(r)) > 0) w |= std::uint64_t{1} << j;
      }
      words(t, n) = w;
    }
  return words;
}

/// Points whose projection on row r is exactly 0, in exact and in any floating-point arithmetic:
/// x = w_rb e_a − w_ra e_b (the two products are the same double, all other products are 0).
void add_exact_zeros(const HyperplaneLsh& h, Eigen::MatrixXd& X, Eigen::Index first, Eigen::Index count) {
  const Eigen::Index d = X.rows(), rows = h.w.rows();
  for (Eigen::Index i = 0; i < count; ++i) {
    const Eigen::Index n = first + i, r = i % rows, a = i % d, b = (i + 1 + i / d) % d;
    X.col(n).setZero();
    if (a == b) continue;  // the zero point
    X(a, n) = h.w(r, b);
    X(b, n) = -h.w(r, a);
  }
}

/// Points near the hyperplane of row r: z minus its component along w_r, plus δ w_r/‖w_r‖² with δ
/// from exactly 0 up to well beyond float32's rounding (|wᵀx| ≈ δ).
void add_near_hyperplane(const HyperplaneLsh& h, Eigen::MatrixXd& X, Eigen::Index first, Eigen::Index count, std::uint64_t seed) {
  const Eigen::Index d = X.rows(), rows = h.w.rows();
  Eigen::MatrixXd Z(d, count);
  fill_random(Z.data(), static_cast<std::size_t>(Z.size()), Distribution::normal, 1.0, seed, 77);
  const double deltas[] = {0.0, 1e-300, 1e-17, 1e-15, 1e-12, 1e-9, 3e-7, 1e-6, 1e-5, -1e-17, -1e-12, -1e-7, -1e-5};
  for (Eigen::Index i = 0; i < count; ++i) {
    const Eigen::Index r = i % rows;
    const Eigen::VectorXd w = h.w.row(r).transpose();
    const double delta = deltas[i % std::size(deltas)] - h.c(r);  // aim wᵀx + c at δ
    Eigen::VectorXd x = Z.col(i) - (w.dot(Z.col(i)) / w.squaredNorm()) * w + (delta / w.squaredNorm()) * w;
    X.col(first + i) = x;
  }
}

long differing_bits(const SignCodes& a, const SignCodes& b) {
  long n = 0;
  for (Eigen::Index i = 0; i < a.size(); ++i) n += std::popcount(a.data()[i] ^ b.data()[i]);
  return n;
}

struct Shape {
  Eigen::Index d;
  int tables, bits;
  double offsets;
};

}  // namespace

TEST_CASE("Blocked hyperplane hashing equals the unblocked float64 product for every block size and thread count", "[lsh][reproducible]") {
  // Shapes with row counts that are and are not multiples of BLAS's tiles, d beyond one k-panel.
  const Shape shapes[] = {{64, 1, 16, 0.0}, {64, 2, 32, 0.0}, {17, 3, 7, 0.5}, {300, 1, 62, 0.1}, {5, 4, 3, 0.0}};
  const int before = omp_get_max_threads();
  for (const Shape& s : shapes) {
    INFO("d = " << s.d << ", " << s.tables << " tables of " << s.bits << " bits, offsets in ±" << s.offsets);
    const HyperplaneLsh h = make_hyperplane_lsh(s.d, s.tables, s.bits, s.offsets, 21);
    const Eigen::Index random_points = 4099, zeros = 3 * s.tables * s.bits;  // N not a multiple of any block size below
    Eigen::MatrixXd X(s.d, random_points + zeros);
    X.leftCols(random_points) = 2 * sample_cube(s.d, random_points, 22).array() - 1;
    add_exact_zeros(h, X, random_points, zeros);

    // The random points: no projection lies within rounding of 0, so the bits are the unblocked
    // product's. The exact zeros: the offset's sign (c = 0: bit 0), where the unblocked product may
    // hold the rounding error of a product instead of 0 (a BLAS kernel with FMA computes
    // fma(w_b, x_b, fl(w_a x_a)) = the rounding error of w_a x_a), so it may differ there, and only there.
    const SignCodes reference = unblocked_codes(h, X);
    const SignCodes codes = hash(h, X);
    CHECK(codes.leftCols(random_points) == reference.leftCols(random_points));
    CHECK(codes.leftCols(300) == exact_codes(h, X.leftCols(300)));  // the exact oracle is slow: a sample of the random points
    CHECK(codes.rightCols(zeros) == exact_codes(h, X.rightCols(zeros)));
    const Eigen::MatrixXd P = h.w * X;
    long zero_bits = 0, flipped = 0;
    for (Eigen::Index n = random_points; n < X.cols(); ++n)
      for (int t = 0; t < s.tables; ++t)
        for (int j = 0; j < s.bits; ++j) {
          const Eigen::Index r = t * s.bits + j;
          const double S = (h.w.row(r).cwiseAbs().transpose().array() * X.col(n).cwiseAbs().array()).sum();
          if (exact_sign(h.w.row(r).transpose(), X.col(n).data(), 0.0) == 0) {
            ++zero_bits;
            CHECK(((codes(t, n) >> j) & 1) == (h.c(r) > 0 ? 1u : 0u));
          }
          if (((codes(t, n) ^ reference(t, n)) >> j) & 1) {
            ++flipped;
            CHECK(std::fabs(P(r, n) + h.c(r)) <= 2 * s.d * 0x1p-53 * S);
          }
        }
    CHECK(zero_bits >= zeros);
    INFO(flipped << " of " << zeros * s.tables * s.bits << " bits of the exact-zero points differ from the unblocked product");
    for (int threads : {1, 2, 3})
      for (Eigen::Index block : {0, 1, 7, 64, 1000, 5000}) {
        omp_set_num_threads(threads);
        INFO("threads " << threads << ", block " << block);
        HashStats stats;
        CHECK(hash(h, X, HashOptions{.block_points = block}, &stats) == codes);
        CHECK(stats.points == X.cols());
      }
    omp_set_num_threads(before);
    {
      const ScopedBlasThreads serial(1);  // one block: the BLAS's own pool, here serial
      CHECK(hash(h, X, HashOptions{.block_points = X.cols()}) == codes);
    }
  }
}

TEST_CASE("Certified float32 hashing gives the float64 codes, exact signs included, near the hyperplanes", "[lsh][reproducible]") {
  const Shape shapes[] = {{64, 1, 16, 0.0}, {64, 2, 32, 0.0}, {33, 2, 11, 0.3}, {300, 1, 40, 0.0}};
  const int before = omp_get_max_threads();
  for (const Shape& s : shapes) {
    INFO("d = " << s.d << ", " << s.tables << " tables of " << s.bits << " bits");
    const HyperplaneLsh h = make_hyperplane_lsh(s.d, s.tables, s.bits, s.offsets, 31);
    const Eigen::Index random_points = 3001, near = 1300, zeros = 2 * s.tables * s.bits;
    Eigen::MatrixXd X(s.d, random_points + near + zeros + 4);
    X.leftCols(random_points) = 2 * sample_cube(s.d, random_points, 32).array() - 1;
    add_near_hyperplane(h, X, random_points, near, 33);
    add_exact_zeros(h, X, random_points + near, zeros);
    // Beyond float32's range, below its normal range, and a point on no scale at all.
    const Eigen::Index extra = random_points + near + zeros;
    X.col(extra) = 1e200 * X.col(0);
    X.col(extra + 1) = 1e-300 * X.col(1);
    X.col(extra + 2) = 1e-42 * X.col(2);
    X.col(extra + 3) = X.col(random_points);  // near a hyperplane, with one coordinate far off
    X(0, extra + 3) *= 1e30;

    HashStats s64, s32;
    const SignCodes f64 = hash(h, X, HashOptions{}, &s64);
    const SignCodes f32 = hash(h, X, HashOptions{.precision = HashPrecision::float32_certified}, &s32);
    CHECK(f32 == f64);
    CHECK(f64.leftCols(200) == exact_codes(h, X.leftCols(200)));  // the exact oracle is slow: a sample of the random points
    CHECK(f64.rightCols(X.cols() - random_points) == exact_codes(h, X.rightCols(X.cols() - random_points)));
    // Only the points near a hyperplane (and the off-scale ones) can be recomputed in float32.
    CHECK(s32.points == X.cols());
    CHECK(s32.points_recomputed > 0);
    CHECK(s32.points_recomputed <= near + zeros + 4 + random_points / 20);  // random points: a few percent at most
    CHECK(s32.bits_recomputed >= s32.points_recomputed);
    CHECK(s32.recomputed_fraction() == Approx(double(s32.points_recomputed) / double(X.cols())));
    CHECK(s64.points_recomputed <= s32.points_recomputed);
    // The random points agree with the unblocked product bit for bit; near the hyperplanes any bit
    // that differs is one whose projection lies within the float64 product's rounding of 0.
    const SignCodes ref = unblocked_codes(h, X);
    CHECK(f64.leftCols(random_points) == ref.leftCols(random_points));
    const Eigen::MatrixXd P = h.w * X;
    for (Eigen::Index n = random_points; n < random_points + near; ++n)
      for (int t = 0; t < s.tables; ++t)
        for (int j = 0; j < s.bits; ++j) {
          if (!(((f64(t, n) ^ ref(t, n)) >> j) & 1)) continue;
          const Eigen::Index r = t * s.bits + j;
          const double S = (h.w.row(r).cwiseAbs().transpose().array() * X.col(n).cwiseAbs().array()).sum();
          CHECK(std::fabs(P(r, n) + h.c(r)) <= 2 * s.d * 0x1p-53 * S);
        }
    for (int threads : {1, 2})
      for (Eigen::Index block : {0, 1, 13, 512}) {
        omp_set_num_threads(threads);
        INFO("threads " << threads << ", block " << block);
        HashStats st;
        CHECK(hash(h, X, HashOptions{.precision = HashPrecision::float32_certified, .block_points = block}, &st) == f64);
        CHECK(st.points_recomputed == s32.points_recomputed);
        CHECK(hash(h, X, HashOptions{.block_points = block}) == f64);
      }
    omp_set_num_threads(before);
    CHECK(differing_bits(f32, f64) == 0);
  }
}

TEST_CASE("Hyperplane bits are exact signs where float64 rounding would flip them", "[lsh]") {
  HyperplaneLsh h;
  h.tables = 1;
  h.bits = 3;
  h.w.resize(3, 3);
  h.w << 1, 1, -1,  //
      1, -1, 0,     //
      1, 1, -1;
  h.c.resize(3);
  h.c << 0, 1e-300, -0x1p-60;
  Eigen::MatrixXd X(3, 3);
  X << 1, 1, 1e300,  //
      0x1p-60, 1, 0,  //
      1, 0, 1e300;
  // Column 0: row 0 exact 2^-60 > 0 (1 + 2^-60 − 1 is 0 in float64); row 1: 1 − 2^-60 + 1e-300 > 0;
  // row 2: 2^-60 − 2^-60 = 0 → bit 0. Column 1: rows 0 and 2 give 2 > 0 and 2 − 2^-60 > 0, row 1: 0 + 1e-300 > 0.
  // Column 2: 1e300 − 1e300 = 0, so rows 0 and 2 take the offset's sign (0, −2^-60: bits 0); row 1: 1e300 > 0.
  for (HashPrecision p : {HashPrecision::float64, HashPrecision::float32_certified}) {
    HashStats st;
    const SignCodes c = hash(h, X, HashOptions{.precision = p}, &st);
    CHECK(c(0, 0) == 0b011);
    CHECK(c(0, 1) == 0b111);
    CHECK(c(0, 2) == 0b010);
    CHECK(st.bits_recomputed >= 2);
  }
  // NaN and ∞: both paths give the float64 sum's sign in the order k = 1 … d.
  Eigen::MatrixXd Y = X;
  Y(0, 0) = std::numeric_limits<double>::quiet_NaN();
  Y(1, 1) = std::numeric_limits<double>::infinity();
  const SignCodes a = hash(h, Y), b = hash(h, Y, HashOptions{.precision = HashPrecision::float32_certified});
  CHECK(a == b);
  CHECK(a(0, 0) == 0);       // NaN > 0 is false
  CHECK(a(0, 1) == 0b101);   // 1 + ∞ = ∞ in rows 0 and 2, 1 − ∞ = −∞ in row 1
  CHECK_THROWS_AS(hash(h, X, HashOptions{.block_points = -1}), std::invalid_argument);
}
