// Hyperplane LSH on float32 points (issue 15): lsh::hash on a MatrixXf gives, bit for bit, the codes of
// the same points promoted to float64 hashed by the float64 path, with either precision option, for
// any block size and thread count. Points near a hyperplane (float32 projections within float32's
// rounding of 0) and exactly on one force the certification to recompute in float64, and exactly.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <omp.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/subspace.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {

/// Gaussian hyperplanes; with `float32_w` rounded to float32 values, as FAISS's rotation is (then the
/// products w_k x_k of float32 points are exact in float64 and exact zeros can be built).
HyperplaneLsh family(Eigen::Index d, int tables, int bits, double offsets, bool float32_w, std::uint64_t seed) {
  HyperplaneLsh h = make_hyperplane_lsh(d, tables, bits, offsets, seed);
  if (float32_w) {
    h.w = h.w.cast<float>().cast<double>();
    h.c = h.c.cast<float>().cast<double>();
  }
  return h;
}

/// Float32 points: `random` uniform on [−1, 1]^d; `near` on or near a hyperplane (z minus its component
/// along w_r, plus δ w_r/‖w_r‖² with δ from 0 to well beyond float32's rounding, rounded to float32);
/// with float32 w and c = 0, points exactly on a hyperplane (x = w_rb e_a − w_ra e_b: the two products
/// are the same double); and points off float32's scale, a NaN, an ∞ and the origin.
Eigen::MatrixXf float_points(const HyperplaneLsh& h, Eigen::Index random, Eigen::Index near, bool zeros, std::uint64_t seed) {
  const Eigen::Index d = h.w.cols(), rows = h.w.rows();
  const Eigen::Index nzeros = zeros ? 2 * rows : 0, extra = 7;
  Eigen::MatrixXf X(d, random + near + nzeros + extra);
  X.leftCols(random) = (2 * sample_cube(d, random, seed).array() - 1).cast<float>();
  Eigen::MatrixXd Z(d, near);
  fill_random(Z.data(), static_cast<std::size_t>(Z.size()), Distribution::normal, 1.0, seed, 77);
  const double deltas[] = {0.0, 1e-12, 1e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, -1e-9, -1e-6, -1e-4};
  for (Eigen::Index i = 0; i < near; ++i) {
    const Eigen::Index r = i % rows;
    const Eigen::VectorXd w = h.w.row(r).transpose();
    const double delta = deltas[i % std::size(deltas)] - h.c(r);
    const Eigen::VectorXd x = Z.col(i) - (w.dot(Z.col(i)) / w.squaredNorm()) * w + (delta / w.squaredNorm()) * w;
    X.col(random + i) = x.cast<float>();
  }
  for (Eigen::Index i = 0; i < nzeros; ++i) {
    const Eigen::Index n = random + near + i, r = i % rows, a = i % d, b = (i + 1 + i / d) % d;
    X.col(n).setZero();
    if (a == b) continue;
    X(a, n) = static_cast<float>(h.w(r, b));
    X(b, n) = static_cast<float>(-h.w(r, a));
  }
  const Eigen::Index e = random + near + nzeros;
  X.col(e) = 1e30f * X.col(0);       // ‖x‖ beyond 2^50: always recomputed
  X.col(e + 1) = 1e-42f * X.col(1);  // float32 subnormals
  X.col(e + 2) = X.col(random);      // near a hyperplane, one coordinate far off
  X(0, e + 2) *= 1e20f;
  X.col(e + 3).setZero();
  X.col(e + 4) = X.col(2);
  X(d / 2, e + 4) = std::numeric_limits<float>::quiet_NaN();
  X.col(e + 5) = X.col(3);
  X(0, e + 5) = std::numeric_limits<float>::infinity();
  X.col(e + 6) = -X.col(4);
  return X;
}

struct Shape {
  Eigen::Index d;
  int tables, bits;
  double offsets;
  bool float32_w;
};

}  // namespace

TEST_CASE("Float32 points hash to the codes of the same points in float64, bit for bit for every block size and thread count; the count of recomputed points within a printed bound", "[lsh][reproducible]") {
  // b = 16, 32 and 64 bits (64 as two tables of 32), FAISS-like float32 hyperplanes and Gaussian
  // float64 ones with offsets, d beyond one BLAS k-panel; N is a multiple of no block size below.
  const Shape shapes[] = {{64, 1, 16, 0.0, true}, {64, 1, 32, 0.0, true}, {64, 2, 32, 0.0, true},
                          {64, 2, 32, 0.3, false}, {37, 3, 7, 0.5, false}, {300, 1, 62, 0.0, true}};
  const int before = omp_get_max_threads();
  for (const Shape& s : shapes) {
    INFO("d = " << s.d << ", " << s.tables << " tables of " << s.bits << " bits, offsets ±" << s.offsets
                << (s.float32_w ? ", float32 w" : ", float64 w"));
    const HyperplaneLsh h = family(s.d, s.tables, s.bits, s.offsets, s.float32_w, 41);
    const Eigen::Index random = 4099, near = 1001;
    const Eigen::MatrixXf Xf = float_points(h, random, near, s.float32_w && s.offsets == 0, 42);
    const Eigen::MatrixXd Xd = Xf.cast<double>();
    const Eigen::Index N = Xf.cols();

    HashStats s64;
    const SignCodes reference = hash(h, Xd, HashOptions{}, &s64);  // the float64 path on the promoted points
    HashStats sf32, sf64;
    const SignCodes f32 = hash(h, Xf, HashOptions{.precision = HashPrecision::float32_certified}, &sf32);
    const SignCodes f64 = hash(h, Xf, HashOptions{}, &sf64);
    CHECK(f32 == reference);
    CHECK(f64 == reference);
    // The certification's counts: every point counted; only near, exact-zero and off-scale points (and
    // at most a few percent of the random ones) recomputed; float64 arithmetic recomputes fewer.
    CHECK(sf32.points == N);
    CHECK(sf32.points_recomputed > 0);
    CHECK(sf32.points_recomputed <= N - random + random / 20);
    CHECK(sf32.bits_recomputed >= sf32.points_recomputed);
    CHECK(sf32.recomputed_fraction() == Approx(double(sf32.points_recomputed) / double(N)));
    CHECK(sf64.points == N);
    CHECK(sf64.points_recomputed == s64.points_recomputed);  // float64 arithmetic: the same products as the float64 points'
    CHECK(sf64.points_recomputed <= sf32.points_recomputed);
    // The same points given as float64 and hashed in float32: the same codes.
    CHECK(hash(h, Xd, HashOptions{.precision = HashPrecision::float32_certified}) == reference);

    // The codes are bit-identical for every block and thread count: certification makes them so. The
    // count of recomputed points, a diagnostic of the certification's work, is not: which float32
    // projections fall within the bound of zero depends on the rounding of the float32 product, so
    // on its GEMM shapes (the block; the automatic block follows the thread count), on serial or
    // threaded BLAS and on OpenBLAS's kernel (Prescott's differed by one point between thread counts).
    // It agrees to a bound, printed with the worst difference seen.
    const Eigen::Index count_bound = std::max<Eigen::Index>(8, sf32.points_recomputed / 50);
    Eigen::Index worst_count_diff = 0;
    for (Eigen::Index block : {0, 1, 7, 64, 1000}) {
      for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        INFO("threads " << threads << ", block " << block);
        HashStats st;
        CHECK(hash(h, Xf, HashOptions{.precision = HashPrecision::float32_certified, .block_points = block}, &st) == reference);
        CHECK(st.points == N);
        worst_count_diff = std::max(worst_count_diff, std::abs(st.points_recomputed - sf32.points_recomputed));
        CHECK(hash(h, Xf, HashOptions{.block_points = block}) == reference);
      }
    }
    INFO("recomputed points: " << sf32.points_recomputed << " unblocked; worst difference over blocks "
                               << worst_count_diff << ", bound " << count_bound);
    CHECK(worst_count_diff <= count_bound);
    omp_set_num_threads(before);
    {
      const ScopedBlasThreads serial(1);  // one block: the BLAS's own pool, here serial
      CHECK(hash(h, Xf, HashOptions{.precision = HashPrecision::float32_certified, .block_points = N}) == reference);
    }
  }
}

TEST_CASE("Float32 points exactly on a hyperplane take the offset's sign; NaN and ∞ as in float64", "[lsh]") {
  HyperplaneLsh h;
  h.tables = 1;
  h.bits = 3;
  h.w.resize(3, 3);
  h.w << 1, 1, -1,  //
      1, -1, 0,     //
      0.1, 0.1, -0.2;  // not float32 values: recomputed bits need the float64 w
  h.c.resize(3);
  h.c << 0, 1e-30, -0x1p-60;
  Eigen::MatrixXf X(3, 4);
  X << 1, 1, 1e30f, 1,  //
      0x1p-30f, 1, 0, 1,  //
      1, 0, 1e30f, 1;
  // Column 0: row 0 exact 2^-30 > 0; row 1: 1 − 2^-30 + 1e-30 > 0; row 2: 0.1 + 0.1·2^-30 − 0.2 in
  // float64 (w as given) decides. Column 2: 1e30 − 1e30 = 0 exactly: rows 0 and 2 take the offset's sign.
  const Eigen::MatrixXd Xd = X.cast<double>();
  for (HashPrecision p : {HashPrecision::float64, HashPrecision::float32_certified}) {
    HashStats st;
    const SignCodes c = hash(h, X, HashOptions{.precision = p}, &st);
    CHECK(c == hash(h, Xd, HashOptions{.precision = p}));
    CHECK(c(0, 0) == hash(h, Xd)(0, 0));
    CHECK((c(0, 0) & 0b011) == 0b011);
    CHECK(c(0, 2) == 0b010);
    CHECK(st.points == 4);
    CHECK(st.bits_recomputed >= 2);
  }
  Eigen::MatrixXf Y = X;
  Y(0, 0) = std::numeric_limits<float>::quiet_NaN();
  Y(1, 1) = std::numeric_limits<float>::infinity();
  const SignCodes a = hash(h, Y.cast<double>().eval());
  CHECK(hash(h, Y, HashOptions{.precision = HashPrecision::float32_certified}) == a);
  CHECK(hash(h, Y, HashOptions{}) == a);
  CHECK(a(0, 0) == 0);      // NaN > 0 is false
  CHECK(a(0, 1) == 0b101);  // 1 + ∞ = ∞ in rows 0 and 2, 1 − ∞ = −∞ in row 1
  CHECK_THROWS_AS(hash(h, Eigen::MatrixXf(4, 2), HashOptions{}), std::invalid_argument);
  CHECK_THROWS_AS(hash(h, X, HashOptions{.block_points = -1}), std::invalid_argument);
  CHECK(hash(h, Eigen::MatrixXf(3, 0), HashOptions{}).cols() == 0);
}
