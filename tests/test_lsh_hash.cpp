// Hash families of paper 000 §2.2: codes against a direct per-point computation, boundaries and
// negative codes, int32 overflow, sign bits, thread-count independence, and the GPU twin.
#include <catch2/catch.hpp>

#include <cmath>
#include <omp.h>

#include <sparseact/core/device.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/subspace.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

TEST_CASE("Euclidean LSH codes equal ⌊(a·x + b)/ε⌋ computed point by point", "[lsh]") {
  const EuclideanLsh h = make_euclidean_lsh(7, 13, 0.3, 11);
  CHECK(h.hashes() == 13);
  CHECK(h.dims() == 7);
  for (Eigen::Index i = 0; i < h.hashes(); ++i) CHECK((h.b(i) >= 0 && h.b(i) <= 0.3));
  const Eigen::MatrixXd X = 3.0 * sample_cube(7, 500, 4);  // values of both signs, |a·x| up to ~20
  const CodeMatrix codes = hash(h, X);
  bool negative = false, positive = false;
  int mismatches = 0;
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (Eigen::Index i = 0; i < h.hashes(); ++i) {
      double dot = 0;
      for (Eigen::Index j = 0; j < 7; ++j) dot += h.a(i, j) * X(j, n);
      const double v = (dot + h.b(i)) / h.eps;
      const auto direct = static_cast<std::int32_t>(std::floor(v));
      // The BLAS product sums in another order: a disagreement is allowed only within rounding of a boundary.
      if (codes(i, n) != direct && std::abs(v - std::round(v)) > 1e-9) ++mismatches;
      negative = negative || codes(i, n) < 0;
      positive = positive || codes(i, n) > 0;
    }
  CHECK(mismatches == 0);
  CHECK(negative);
  CHECK(positive);
}

TEST_CASE("Euclidean LSH: exact boundaries belong to the upper bucket, negative values floor down", "[lsh]") {
  EuclideanLsh h;  // values exact in binary, so every product and sum is exact
  h.eps = 0.5;
  h.a.resize(2, 2);
  h.a << 1, 2, -1, 0.5;
  h.b.resize(2);
  h.b << 0.25, 0;
  Eigen::MatrixXd X(2, 4);
  X << 0.25, -1, 0, -0.75,  //
      0, 0, -0.125, 0;
  // Row 0: a·x + b = 0.5, −0.75, 0, −0.5 → ÷0.5 = 1, −1.5, 0, −1 → 1, −2, 0, −1 (three on a boundary).
  // Row 1: a·x = −0.25, 1, −0.0625, 0.75 → ÷0.5 = −0.5, 2, −0.125, 1.5 → −1, 2, −1, 1.
  const CodeMatrix c = hash(h, X);
  CHECK(c(0, 0) == 1);
  CHECK(c(0, 1) == -2);
  CHECK(c(0, 2) == 0);
  CHECK(c(0, 3) == -1);
  CHECK(c(1, 0) == -1);
  CHECK(c(1, 1) == 2);
  CHECK(c(1, 2) == -1);
  CHECK(c(1, 3) == 1);
}

TEST_CASE("Euclidean LSH refuses codes outside int32 and bad shapes", "[lsh]") {
  EuclideanLsh h = make_euclidean_lsh(3, 2, 1e-7, 1);
  const Eigen::MatrixXd X = Eigen::MatrixXd::Constant(3, 2, 500.0);
  CHECK_THROWS_AS(hash(h, X), std::range_error);
  CHECK_THROWS_AS(hash(h, Eigen::MatrixXd::Zero(4, 2)), std::invalid_argument);
  CHECK_THROWS(make_euclidean_lsh(3, 2, 0.0, 1));
}

TEST_CASE("Hyperplane LSH bits equal the signs of w·x + c, table by table", "[lsh]") {
  const HyperplaneLsh h = make_hyperplane_lsh(5, 3, 7, 0.5, 2);
  const Eigen::MatrixXd X = sample_cube(5, 300, 8);
  const auto words = hash(h, X);
  REQUIRE(words.rows() == 3);
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (int t = 0; t < 3; ++t) {
      std::uint64_t expect = 0;
      for (int j = 0; j < 7; ++j) {
        const Eigen::Index r = t * 7 + j;
        if (h.w.row(r).dot(X.col(n)) + h.c(r) > 0) expect |= std::uint64_t{1} << j;
      }
      CHECK(words(t, n) == expect);
    }
  // Exactly on a hyperplane: the bit is 0 (strict >); origin-centred planes with r = 0.
  const HyperplaneLsh h0 = make_hyperplane_lsh(5, 1, 62, 0.0, 3);
  CHECK(h0.c.cwiseAbs().maxCoeff() == 0.0);
  CHECK(hash(h0, Eigen::MatrixXd::Zero(5, 1))(0, 0) == 0);
  CHECK_THROWS(make_hyperplane_lsh(5, 1, 63, 0.0, 3));
}

TEST_CASE("CPU hashing is identical for 1 and 2 threads", "[lsh][reproducible]") {
  const EuclideanLsh h = make_euclidean_lsh(16, 40, 0.2, 5);
  const HyperplaneLsh hp = make_hyperplane_lsh(16, 4, 16, 0.1, 5);
  const Eigen::MatrixXd X = sample_cube(16, 5000, 6);
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const CodeMatrix c1 = hash(h, X);
  const auto w1 = hash(hp, X);
  const EuclideanLsh h1 = make_euclidean_lsh(16, 40, 0.2, 5);
  omp_set_num_threads(2);
  const CodeMatrix c2 = hash(h, X);
  const auto w2 = hash(hp, X);
  const EuclideanLsh h2 = make_euclidean_lsh(16, 40, 0.2, 5);
  omp_set_num_threads(before);
  CHECK(c1 == c2);
  CHECK(w1 == w2);
  CHECK(h1.a == h2.a);
  CHECK(h1.b == h2.b);
}

TEST_CASE("cuBLAS LSH hashing equals the CPU hashing", "[lsh][cuda]") {
  const EuclideanLsh h = make_euclidean_lsh(64, 48, 0.25, 9);
  const HyperplaneLsh hp = make_hyperplane_lsh(64, 4, 16, 0.1, 9);
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible: LSH GPU agreement not tested here");
    CHECK_THROWS(hash(h, sample_cube(64, 4, 1), Device::cuda));
    return;
  }
  const Eigen::MatrixXd X = sample_cube(64, 100000, 10);
  const CodeMatrix cpu = hash(h, X, Device::cpu), gpu = hash(h, X, Device::cuda);
  REQUIRE(gpu.rows() == cpu.rows());
  REQUIRE(gpu.cols() == cpu.cols());
  const Eigen::MatrixXd V = ((h.a * X).colwise() + h.b) / h.eps;
  long bad = 0;
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (Eigen::Index i = 0; i < h.hashes(); ++i)
      if (cpu(i, n) != gpu(i, n) && std::abs(V(i, n) - std::round(V(i, n))) > 1e-9) ++bad;  // only at boundaries
  CHECK(bad == 0);
  const auto wc = hash(hp, X, Device::cpu), wg = hash(hp, X, Device::cuda);
  REQUIRE(wg.rows() == wc.rows());
  REQUIRE(wg.cols() == wc.cols());
  const Eigen::MatrixXd S = (hp.w * X).colwise() + hp.c;
  long bad_bits = 0;
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (int t = 0; t < 4; ++t)
      for (int j = 0; j < 16; ++j)
        if (((wc(t, n) ^ wg(t, n)) >> j & 1) && std::abs(S(t * 16 + j, n)) > 1e-9) ++bad_bits;
  CHECK(bad_bits == 0);
}
