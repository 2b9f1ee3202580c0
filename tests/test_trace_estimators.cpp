// Trace estimators (core/trace_estimators.hpp) against explicit matrices with known traces and,
// for Hutchinson with Rademacher probes, the known single-probe variance 2(‖A‖_F² − Σ A_ii²).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>
#include <omp.h>

#include <Eigen/Dense>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/trace_estimators.hpp>

using namespace sparseact;
using Catch::Matchers::WithinAbs;

namespace {

/// A dense matrix as an operator, column by column.
struct DenseOp {
  const Eigen::MatrixXd& A;
  Eigen::Index rows() const { return A.rows(); }
  Eigen::Index cols() const { return A.cols(); }
  void perform_op(const double* x, double* y) const {
    Eigen::Map<Eigen::VectorXd>(y, A.rows()).noalias() = A * Eigen::Map<const Eigen::VectorXd>(x, A.cols());
  }
};

/// The same, taking a whole block of probes at once.
struct DenseBlockOp : DenseOp {
  void perform_op_block(const double* x, double* y, Eigen::Index k) const {
    Eigen::Map<Eigen::MatrixXd>(y, A.rows(), k).noalias() = A * Eigen::Map<const Eigen::MatrixXd>(x, A.cols(), k);
  }
};

Eigen::MatrixXd random_symmetric(Eigen::Index n, std::uint64_t seed, double shift = 0.0) {
  Rng rng(seed, 17);
  Eigen::MatrixXd G(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) G(i, j) = rng.normal();
  Eigen::MatrixXd A = 0.5 * (G + G.transpose());
  A.diagonal().array() += shift;
  return A;
}

/// Q diag(λ) Qᵀ with Q a random orthogonal matrix.
Eigen::MatrixXd with_spectrum(const Eigen::VectorXd& lambda, std::uint64_t seed) {
  const Eigen::Index n = lambda.size();
  Rng rng(seed, 23);
  Eigen::MatrixXd G(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) G(i, j) = rng.normal();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
  Eigen::MatrixXd Q = qr.householderQ();
  return Q * lambda.asDiagonal() * Q.transpose();
}

double rademacher_variance(const Eigen::MatrixXd& A) {
  return 2.0 * (A.squaredNorm() - A.diagonal().squaredNorm());
}

TraceOptions fixed(Eigen::Index probes, std::uint64_t seed) {
  TraceOptions o;
  o.seed = seed;
  o.min_probes = o.max_probes = probes;
  o.rel_tol = 0.0;
  return o;
}

}  // namespace

TEST_CASE("Student-t and normal quantiles", "[trace]") {
  using namespace sparseact::trace_detail;
  CHECK_THAT(normal_quantile(0.975), WithinAbs(1.959963984540054, 1e-12));
  CHECK_THAT(normal_quantile(0.001), WithinAbs(-3.090232306167813, 1e-10));
  CHECK_THAT(student_t_quantile(0.975, 1), WithinAbs(12.70620473617471, 1e-9));
  CHECK_THAT(student_t_quantile(0.975, 2), WithinAbs(4.302652729749464, 1e-9));
  CHECK_THAT(student_t_quantile(0.975, 3), WithinAbs(3.182446305284263, 2e-2));
  CHECK_THAT(student_t_quantile(0.975, 10), WithinAbs(2.228138851986274, 1e-3));
  CHECK_THAT(student_t_quantile(0.975, 30), WithinAbs(2.042272456301238, 1e-5));
}

TEST_CASE("Hutchinson and Hutch++ are within 4 standard errors of the exact trace", "[trace]") {
  const Eigen::MatrixXd A = random_symmetric(40, 1, 0.3);
  const double exact = A.trace();
  const DenseOp op{A};
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const TraceEstimate h = hutchinson(op, fixed(50, seed));
    CHECK(h.probes == 50);
    CHECK(h.matvecs == 50);
    CHECK(h.std_error > 0);
    CHECK(std::abs(h.estimate - exact) <= 4 * h.std_error);
    TraceOptions o;
    o.seed = seed;
    const TraceEstimate p = hutchpp(op, 30, o);
    CHECK(p.matvecs == 30);
    CHECK(p.probes == 10);
    CHECK(p.std_error > 0);
    CHECK(std::abs(p.estimate - exact) <= 4 * p.std_error);
  }
}

TEST_CASE("Reported standard errors match the spread over repeated runs", "[trace]") {
  const Eigen::MatrixXd A = random_symmetric(40, 2, 0.2);
  const DenseOp op{A};
  const int repeats = 200;
  for (int method = 0; method < 2; ++method) {
    std::vector<double> est;
    double se_sum = 0.0;
    for (int r = 0; r < repeats; ++r) {
      TraceOptions o = fixed(30, 1000 + r);
      const TraceEstimate e = method == 0 ? hutchinson(op, o) : hutchpp(op, 45, o);
      est.push_back(e.estimate);
      se_sum += e.std_error;
    }
    double mean = 0.0;
    for (double v : est) mean += v;
    mean /= repeats;
    double var = 0.0;
    for (double v : est) var += (v - mean) * (v - mean);
    const double sd = std::sqrt(var / (repeats - 1));
    const double ratio = (se_sum / repeats) / sd;
    INFO("method " << method << " mean SE / empirical sd = " << ratio);
    CHECK(ratio >= 0.7);
    CHECK(ratio <= 1.4);
    // Unbiased: the mean of the repeats is within 4 of its own standard errors.
    CHECK(std::abs(mean - A.trace()) <= 4 * sd / std::sqrt(double(repeats)));
  }
}

TEST_CASE("Hutchinson's sample variance matches 2(|A|_F^2 - sum A_ii^2)", "[trace]") {
  const Eigen::MatrixXd A = random_symmetric(20, 3);
  const DenseOp op{A};
  const double var_exact = rademacher_variance(A);
  const TraceEstimate h = hutchinson(op, fixed(20000, 5));
  INFO("sample variance " << h.sample_variance << " exact " << var_exact);
  CHECK(std::abs(h.sample_variance / var_exact - 1) < 0.06);
  CHECK_THAT(h.std_error * h.std_error * double(h.probes), WithinAbs(h.sample_variance, 1e-9 * var_exact));
  // Empirical variance of single probes over independent runs (different seeds).
  const int runs = 3000;
  double s = 0.0, s2 = 0.0;
  for (int r = 0; r < runs; ++r) {
    TraceOptions o = fixed(2, 77 + r);
    o.stream = 9;
    const double v = hutchinson(op, o).estimate;  // mean of 2 probes: variance var/2
    s += v;
    s2 += v * v;
  }
  const double emp = (s2 - s * s / runs) / (runs - 1);
  INFO("empirical variance of 2-probe means " << emp << " expected " << var_exact / 2);
  CHECK(std::abs(emp / (var_exact / 2) - 1) < 0.1);
}

TEST_CASE("Hutch++ beats Hutchinson at equal matvecs on a fast-decaying spectrum", "[trace]") {
  const Eigen::Index n = 150;
  Eigen::VectorXd lambda(n);
  for (Eigen::Index i = 0; i < n; ++i) lambda(i) = 1.0 / double((i + 1) * (i + 1));
  const Eigen::MatrixXd A = with_spectrum(lambda, 4);
  const double exact = lambda.sum();
  const DenseOp op{A};
  const Eigen::Index m = 60;
  double e_h = 0.0, e_p = 0.0;
  const int seeds = 20;
  for (int s = 0; s < seeds; ++s) {
    const TraceEstimate h = hutchinson(op, fixed(m, 500 + s));
    TraceOptions o;
    o.seed = 500 + s;
    const TraceEstimate p = hutchpp(op, m, o);
    REQUIRE(p.matvecs == m);
    e_h += (h.estimate - exact) * (h.estimate - exact);
    e_p += (p.estimate - exact) * (p.estimate - exact);
    CHECK(p.std_error < h.std_error);
  }
  e_h = std::sqrt(e_h / seeds);
  e_p = std::sqrt(e_p / seeds);
  INFO("RMS error Hutchinson " << e_h << ", Hutch++ " << e_p);
  CHECK(e_p < 0.1 * e_h);
}

TEST_CASE("The stopping rule stops when the interval is narrow, not before min_probes", "[trace]") {
  const Eigen::MatrixXd A = random_symmetric(40, 6, 2.0);  // trace ≈ 80
  const DenseOp op{A};
  TraceOptions o;
  o.seed = 11;
  o.min_probes = 20;
  o.max_probes = 100000;
  o.batch = 1;
  o.rel_tol = 0.05;
  o.keep_history = true;
  const TraceEstimate h = hutchinson(op, o);
  REQUIRE(h.converged);
  CHECK(h.probes >= o.min_probes);
  CHECK(h.probes < o.max_probes);
  const double tol = o.rel_tol * std::abs(h.estimate);
  CHECK(h.half_width <= tol);
  CHECK_THAT(h.half_width,
             WithinAbs(trace_detail::student_t_quantile(0.975, double(h.probes - 1)) * h.std_error, 1e-12));
  REQUIRE(h.history.size() == std::size_t(h.probes));  // batch 1: one step per probe
  CHECK(h.history.back().probes == h.probes);
  for (std::size_t i = std::size_t(o.min_probes - 1); i + 1 < h.history.size(); ++i)  // not earlier
    CHECK(h.history[i].half_width > o.rel_tol * std::abs(h.history[i].estimate));
  CHECK(std::abs(h.estimate - A.trace()) <= 4 * h.std_error);

  // Zero variance (diagonal A: zᵀAz = tr A for every z): stops exactly at min_probes.
  const Eigen::MatrixXd D = Eigen::VectorXd::LinSpaced(30, 1.0, 3.0).asDiagonal();
  const DenseOp dop{D};
  o.keep_history = false;
  o.batch = 8;
  const TraceEstimate d = hutchinson(dop, o);
  CHECK(d.converged);
  CHECK(d.probes == o.min_probes);
  CHECK_THAT(d.estimate, WithinAbs(D.trace(), 1e-12));

  // Unreachable tolerance: runs to max_probes, not converged.
  o.rel_tol = 1e-6;
  o.max_probes = 50;
  const TraceEstimate u = hutchinson(op, o);
  CHECK_FALSE(u.converged);
  CHECK(u.probes == 50);

  // Hutch++ adaptive: stops on the same rule, applied to the full estimate.
  TraceOptions q;
  q.seed = 3;
  q.min_probes = 10;
  q.max_probes = 100000;
  q.rel_tol = 0.01;
  const TraceEstimate p = hutchpp_adaptive(op, 10, q);
  CHECK(p.converged);
  CHECK(p.probes >= 10);
  CHECK(p.half_width <= 0.01 * std::abs(p.estimate));
  CHECK(p.matvecs == p.probes + 20);
}

TEST_CASE("Trace estimates do not depend on the thread count or the batch size", "[trace]") {
  const Eigen::MatrixXd A = random_symmetric(600, 8, 1.0);
  const DenseOp op{A};
  const DenseBlockOp bop{{A}};
  const int before = omp_get_max_threads();
  TraceEstimate h[2], p[2], b[2];
  for (int t = 0; t < 2; ++t) {
    omp_set_num_threads(t + 1);
    TraceOptions o;
    o.seed = 42;
    o.stream = 3;
    o.min_probes = 16;
    o.max_probes = 64;
    o.rel_tol = 1e-3;
    h[t] = hutchinson(op, o);
    p[t] = hutchpp(op, 48, o);
    b[t] = hutchinson(bop, o);
  }
  omp_set_num_threads(before);
  CHECK(h[0].estimate == h[1].estimate);
  CHECK(h[0].std_error == h[1].std_error);
  CHECK(h[0].probes == h[1].probes);
  CHECK(p[0].estimate == p[1].estimate);
  CHECK(p[0].std_error == p[1].std_error);
  // Eigen's threaded GEMM inside the block operator may round differently: the operator's own
  // business, the probes are the same.
  CHECK_THAT(b[0].estimate, WithinAbs(b[1].estimate, 1e-9 * std::abs(b[1].estimate)));
  // A block operator sees the same probes: same numbers up to rounding.
  CHECK_THAT(b[0].estimate, WithinAbs(h[0].estimate, 1e-9 * std::abs(h[0].estimate)));
  // Batch size changes nothing for a column-by-column operator.
  TraceOptions o1;
  o1.seed = 42;
  o1.stream = 3;
  o1.min_probes = o1.max_probes = 24;
  TraceOptions o8 = o1;
  o1.batch = 1;
  o8.batch = 8;
  CHECK(hutchinson(op, o1).estimate == hutchinson(op, o8).estimate);
}
