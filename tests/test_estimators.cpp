// core/ops and core/estimators against independent ground truth: explicit matrices with known
// traces and spectra (Eigen's dense SelfAdjointEigenSolver), Hutchinson's known single-probe variance
// 2(‖A‖_F² − Σ A_ii²), and the full Hessian of a small network (nn::hessian, one exact Hessian-vector
// product per column) for the Hessian operator.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>
#include <omp.h>

#include <Eigen/Dense>

#include <sparseact/core/estimators/exact_diagonal.hpp>
#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/core/estimators/hutchpp.hpp>
#include <sparseact/core/estimators/lanczos.hpp>
#include <sparseact/core/estimators/probes.hpp>
#include <sparseact/core/estimators/slq.hpp>
#include <sparseact/core/estimators/top_eigenvalues.hpp>
#include <sparseact/core/ops/apply.hpp>
#include <sparseact/core/ops/deflated.hpp>
#include <sparseact/core/ops/gram.hpp>
#include <sparseact/core/ops/segments.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/nn/hvp.hpp>
#include <sparseact/nn/mlp.hpp>

using namespace sparseact;
using namespace sparseact::estimators;
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

/// A random orthogonal matrix (Q of a Gaussian matrix's QR).
Eigen::MatrixXd random_orthogonal(Eigen::Index n, std::uint64_t seed) {
  Rng rng(seed, 23);
  Eigen::MatrixXd G(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) G(i, j) = rng.normal();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
  return qr.householderQ();
}

/// Q diag(λ) Qᵀ with Q a random orthogonal matrix.
Eigen::MatrixXd with_spectrum(const Eigen::VectorXd& lambda, std::uint64_t seed) {
  const Eigen::MatrixXd Q = random_orthogonal(lambda.size(), seed);
  return Q * lambda.asDiagonal() * Q.transpose();
}

double rademacher_variance(const Eigen::MatrixXd& A) {
  return 2.0 * (A.squaredNorm() - A.diagonal().squaredNorm());
}

TraceOptions fixed(Eigen::Index probes, std::uint64_t seed) {
  TraceOptions o;
  o.seed = seed;
  o.stop.min_samples = o.stop.max_samples = probes;
  o.stop.rel_tol = 0.0;
  return o;
}

// A small LayerNorm-ed DB-MLP (the flatness tests' shape): 4 → 6, two blocks of width 9, → 3 logits.
nn::MlpConfig small_net_config() {
  nn::MlpConfig c;
  c.d_in = 4;
  c.d = 6;
  c.d_out = 3;
  for (int l = 0; l < 2; ++l) {
    nn::BlockConfig b;
    b.n = 9;
    b.activation.kind = nn::ActivationKind::j_squared_relu;
    b.zeroth_bias = true;
    c.blocks.push_back(b);
  }
  return c;
}

nn::Batch small_batch(const nn::MlpConfig& c, Eigen::Index B, std::uint64_t seed) {
  nn::Batch b;
  b.x.resize(c.d_in, B);
  fill_random(b.x.data(), static_cast<std::size_t>(b.x.size()), Distribution::normal, 1.0, seed, 1);
  for (Eigen::Index s = 0; s < B; ++s) b.labels.push_back(static_cast<int>((3 * s + 1) % c.d_out));
  return b;
}

Eigen::VectorXd small_params(const nn::Mlp& net, std::uint64_t seed) {
  Eigen::VectorXd theta = nn::init_params(net, seed);
  Eigen::VectorXd noise(net.num_params);
  fill_random(noise.data(), static_cast<std::size_t>(noise.size()), Distribution::normal, 0.3, seed, 9);
  return theta + noise;
}

/// The full Hessian of the small net, symmetrised (HVPs are symmetric only to rounding).
struct SmallNet {
  nn::MlpConfig config = small_net_config();
  nn::Mlp net = nn::make_mlp(config);
  Eigen::VectorXd theta = small_params(net, 7);
  nn::Batch batch = small_batch(config, 16, 8);
  nn::HessianOperator op{net, theta, batch, nn::LossKind::cross_entropy};
  Eigen::MatrixXd H;
  SmallNet() {
    const Eigen::MatrixXd Hraw = nn::hessian(net, theta, batch, nn::LossKind::cross_entropy);
    H = 0.5 * (Hraw + Hraw.transpose());
  }
};

}  // namespace

// --- Operators --------------------------------------------------------------------------------------

TEST_CASE("ops: apply, the Gram and deflated operators, segments", "[estimators][ops]") {
  const Eigen::MatrixXd A = random_symmetric(30, 1);
  Eigen::MatrixXd X(30, 4), Y, Yb;
  fill_random(X.data(), static_cast<std::size_t>(X.size()), Distribution::normal, 1.0, 2, 3);
  STATIC_REQUIRE_FALSE(ops::has_block_op<DenseOp>::value);
  STATIC_REQUIRE(ops::has_block_op<DenseBlockOp>::value);
  ops::apply(DenseOp{A}, X, Y);
  ops::apply(DenseBlockOp{{A}}, X, Yb);
  CHECK((Y - A * X).norm() <= 1e-12 * (A * X).norm());
  CHECK((Yb - A * X).norm() <= 1e-12 * (A * X).norm());

  // Small Gram: KᵀK for a tall K, K Kᵀ for a wide one; block and single products agree.
  for (const auto& shape : {std::pair<int, int>{12, 5}, std::pair<int, int>{5, 12}}) {
    Eigen::MatrixXd K(shape.first, shape.second);
    fill_random(K.data(), static_cast<std::size_t>(K.size()), Distribution::normal, 1.0, 4, 5);
    const Eigen::MatrixXd G = K.rows() >= K.cols() ? Eigen::MatrixXd(K.transpose() * K) : Eigen::MatrixXd(K * K.transpose());
    const ops::SmallGramOp<> op(K);
    REQUIRE(op.rows() == 5);
    Eigen::MatrixXd Z(5, 3), GZ, GZ1(5, 3);
    fill_random(Z.data(), 15, Distribution::normal, 1.0, 6, 7);
    ops::apply(op, Z, GZ);
    for (int j = 0; j < 3; ++j) op.perform_op(Z.col(j).data(), GZ1.col(j).data());
    CHECK((GZ - G * Z).norm() <= 1e-12 * (G * Z).norm());
    CHECK((GZ1 - G * Z).norm() <= 1e-12 * (G * Z).norm());
  }

  // Deflated: (I − QQᵀ) A (I − QQᵀ) formed explicitly.
  const Eigen::MatrixXd Q = random_orthogonal(30, 9).leftCols(6);
  const Eigen::MatrixXd P = Eigen::MatrixXd::Identity(30, 30) - Q * Q.transpose();
  const DenseOp dop{A};
  const ops::DeflatedOp<DenseOp> def(dop, Q);
  ops::apply(def, X, Y);
  CHECK((Y - P * A * P * X).norm() <= 1e-12 * (A * X).norm());

  // Segments: an operator without the member is one segment; HessianOperator exposes its layers.
  const auto whole = ops::segments(dop);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].offset == 0);
  CHECK(whole[0].size == 30);
  const SmallNet s;
  const auto layers = ops::segments(s.op);
  REQUIRE(layers.size() == s.net.layers.size());
  Eigen::Index next = 0;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    CHECK(layers[l].offset == next);
    CHECK(layers[l].name == s.net.layers[l].name);
    next += layers[l].size;
  }
  CHECK(next == s.net.num_params);  // the layers partition θ
  CHECK_THROWS_AS(ops::check_segments({{25, 10, "x"}}, 30), std::invalid_argument);
}

// --- Hutchinson and Hutch++ -------------------------------------------------------------------------

TEST_CASE("Hutchinson and Hutch++ are within 4 standard errors of the exact trace", "[estimators][hutchinson]") {
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

TEST_CASE("Reported standard errors match the spread over repeated runs", "[estimators][hutchinson]") {
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

TEST_CASE("Hutchinson's sample variance matches 2(|A|_F^2 - sum A_ii^2)", "[estimators][hutchinson]") {
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

TEST_CASE("Hutch++ beats Hutchinson at equal matvecs on a fast-decaying spectrum", "[estimators][hutchpp]") {
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

TEST_CASE("The stopping rule stops when the interval is narrow, not before min_probes", "[estimators][hutchinson]") {
  const Eigen::MatrixXd A = random_symmetric(40, 6, 2.0);  // trace ≈ 80
  const DenseOp op{A};
  TraceOptions o;
  o.seed = 11;
  o.stop.min_samples = 20;
  o.stop.max_samples = 100000;
  o.batch = 1;
  o.stop.rel_tol = 0.05;
  o.keep_history = true;
  const TraceEstimate h = hutchinson(op, o);
  REQUIRE(h.converged);
  CHECK(h.probes >= o.stop.min_samples);
  CHECK(h.probes < o.stop.max_samples);
  const double tol = o.stop.rel_tol * std::abs(h.estimate);
  CHECK(h.half_width <= tol);
  // The half-width uses Boost's exact Student-t quantile (core/stats); at ν = 3 it is scipy's
  // t.ppf(0.975, 3) = 3.182446305284263, which the former Cornish–Fisher approximation missed by 2e-2.
  CHECK_THAT(stats::student_t_quantile(0.975, 3), WithinAbs(3.182446305284263, 1e-12));
  CHECK_THAT(h.half_width, WithinAbs(stats::student_t_quantile(0.975, double(h.probes - 1)) * h.std_error, 1e-12));
  REQUIRE(h.history.size() == std::size_t(h.probes));  // batch 1: one step per probe
  CHECK(h.history.back().probes == h.probes);
  for (std::size_t i = std::size_t(o.stop.min_samples - 1); i + 1 < h.history.size(); ++i)  // not earlier
    CHECK(h.history[i].half_width > o.stop.rel_tol * std::abs(h.history[i].estimate));
  CHECK(std::abs(h.estimate - A.trace()) <= 4 * h.std_error);

  // Zero variance (diagonal A: zᵀAz = tr A for every z): stops exactly at min_probes.
  const Eigen::MatrixXd D = Eigen::VectorXd::LinSpaced(30, 1.0, 3.0).asDiagonal();
  const DenseOp dop{D};
  o.keep_history = false;
  o.batch = 8;
  const TraceEstimate d = hutchinson(dop, o);
  CHECK(d.converged);
  CHECK(d.probes == o.stop.min_samples);
  CHECK_THAT(d.estimate, WithinAbs(D.trace(), 1e-12));

  // Unreachable tolerance: runs to max_probes, not converged.
  o.stop.rel_tol = 1e-6;
  o.stop.max_samples = 50;
  const TraceEstimate u = hutchinson(op, o);
  CHECK_FALSE(u.converged);
  CHECK(u.probes == 50);

  // Hutch++ adaptive: stops on the same rule, applied to the full estimate.
  TraceOptions q;
  q.seed = 3;
  q.stop.min_samples = 10;
  q.stop.max_samples = 100000;
  q.stop.rel_tol = 0.01;
  const TraceEstimate p = hutchpp_adaptive(op, 10, q);
  CHECK(p.converged);
  CHECK(p.probes >= 10);
  CHECK(p.half_width <= 0.01 * std::abs(p.estimate));
  CHECK(p.matvecs == p.probes + 20);
}

TEST_CASE("Trace estimates do not depend on the thread count or the batch size", "[estimators][hutchinson]") {
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
    o.stop.min_samples = 16;
    o.stop.max_samples = 64;
    o.stop.rel_tol = 1e-3;
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
  o1.stop.min_samples = o1.stop.max_samples = 24;
  TraceOptions o8 = o1;
  o1.batch = 1;
  o8.batch = 8;
  CHECK(hutchinson(op, o1).estimate == hutchinson(op, o8).estimate);
}

TEST_CASE("The single Hutchinson estimator reproduces the former whole-network and per-layer loops bit for bit",
          "[estimators][hutchinson]") {
  // The former loop (core/trace_estimators.hpp's hutchinson and flatness/hessian_trace.hpp's
  // hutchinson_layer_traces, which computed the same numbers), written out: batches of `batch`
  // probes as the columns of Z, probe j drawn entry by entry from Rng(seed, stream_id(stream, j)),
  // one block product, and Welford's running mean and variance in probe order for every layer's
  // z_lᵀ(Hz)_l and for the whole zᵀHz. (The dots are taken on the columns of the batch matrix, as
  // before: Eigen's vectorised dot sums in an order that depends on the column's alignment.)
  const SmallNet s;
  const auto segs = ops::segments(s.op);
  const std::uint64_t seed = 3, stream = 5;
  const Eigen::Index probes = 37, batch = 8;  // the last batch is partial
  const std::size_t L = segs.size();
  std::vector<double> mean(L + 1, 0.0), m2(L + 1, 0.0);
  const Eigen::Index n = s.op.rows();
  Eigen::Index k = 0;
  while (k < probes) {
    const Eigen::Index count = std::min(batch, probes - k);
    Eigen::MatrixXd Z(n, count), HZ(n, count);
    for (Eigen::Index j = 0; j < count; ++j) {
      Rng rng(seed, stream_id(stream, static_cast<std::uint64_t>(k + j)));
      for (Eigen::Index i = 0; i < n; ++i) Z(i, j) = rng.rademacher();
    }
    s.op.perform_op_block(Z.data(), HZ.data(), count);
    for (Eigen::Index j = 0; j < count; ++j) {
      ++k;
      auto push = [&](std::size_t i, double v) {
        const double delta = v - mean[i];
        mean[i] += delta / static_cast<double>(k);
        m2[i] += delta * (v - mean[i]);
      };
      for (std::size_t l = 0; l < L; ++l)
        push(l, Z.col(j).segment(segs[l].offset, segs[l].size).dot(HZ.col(j).segment(segs[l].offset, segs[l].size)));
      push(L, Z.col(j).dot(HZ.col(j)));
    }
  }
  auto se = [&](std::size_t i) { return std::sqrt(m2[i] / double(probes - 1) / double(probes)); };

  TraceOptions opt = fixed(probes, seed);
  opt.stream = stream;
  opt.batch = batch;
  const TraceEstimate per_layer = hutchinson(s.op, segs, opt);
  const TraceEstimate whole = hutchinson(s.op, opt);
  // Over the operator's own layers, nn::HessianOperator's quadratic_forms_block gives z_lᵀ(Hz)_l
  // without forming Hz (nn/hvp.hpp): the per-layer values, and the whole as their sum, agree with
  // the loop to rounding (measured ≤ 4e-16 relative), not bit for bit; the whole alone is the loop's.
  auto rel = [](double a, double b) { return std::abs(a - b) / std::abs(b); };
  REQUIRE(per_layer.segments.size() == L);
  CHECK(per_layer.probes == probes);
  CHECK(rel(per_layer.estimate, mean[L]) <= 1e-12);
  CHECK(rel(per_layer.std_error, se(L)) <= 1e-12);
  CHECK(rel(per_layer.sample_variance, m2[L] / double(probes - 1)) <= 1e-12);
  CHECK(whole.estimate == mean[L]);
  CHECK(whole.std_error == se(L));
  for (std::size_t l = 0; l < L; ++l) {
    INFO("layer " << segs[l].name);
    CHECK(per_layer.segments[l].name == segs[l].name);
    CHECK(rel(per_layer.segments[l].estimate, mean[l]) <= 1e-12);
    CHECK(rel(per_layer.segments[l].std_error, se(l)) <= 1e-12);
  }
  // Not bit for bit: the interval's half-width t_{0.975, k−1}·SE. The former quantile was a
  // Cornish–Fisher approximation (2e-2 off at ν = 3), the new one is Boost's exact quantile, so the
  // half-widths — and, under a stopping rule, the probe count at which the rule fires — can differ.
  CHECK(per_layer.half_width == Approx(stats::student_t_quantile(0.975, double(probes - 1)) * se(L)).epsilon(1e-15));
}

// --- Lanczos and the Spectra wrapper -----------------------------------------------------------------

TEST_CASE("Lanczos with full reorthogonalisation: V'AV = T, V orthonormal, invariant subspaces found",
          "[estimators][lanczos]") {
  const Eigen::Index n = 120, m = 60;
  const Eigen::MatrixXd A = random_symmetric(n, 31);
  const DenseOp op{A};
  Eigen::VectorXd v0(n);
  fill_random(v0.data(), static_cast<std::size_t>(n), Distribution::normal, 1.0, 32, 0);
  LanczosOptions lo;
  lo.steps = m;
  lo.keep_basis = true;
  const Tridiagonal T = lanczos(op, v0, lo);
  REQUIRE(T.steps() == m);
  CHECK_FALSE(T.invariant);
  Eigen::MatrixXd Tm = Eigen::MatrixXd::Zero(m, m);
  Tm.diagonal() = T.alpha;
  Tm.diagonal(1) = T.beta;
  Tm.diagonal(-1) = T.beta;
  const Eigen::MatrixXd& V = T.basis;
  CHECK((V.transpose() * V - Eigen::MatrixXd::Identity(m, m)).cwiseAbs().maxCoeff() < 1e-13);
  CHECK((V.transpose() * A * V - Tm).cwiseAbs().maxCoeff() < 1e-11 * A.norm());
  CHECK((V.col(0) - v0.normalized()).norm() < 1e-15 * std::sqrt(double(n)));
  // Ritz pairs: A (V s) − θ (V s) is β_m s_m v_{m+1}, orthogonal to V; the largest has converged to A's.
  const Ritz r = ritz(T, true);
  CHECK(r.weights.sum() == Approx(1.0).epsilon(1e-12));
  const double lmax = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A, Eigen::EigenvaluesOnly).eigenvalues()(n - 1);
  CHECK(r.values(m - 1) == Approx(lmax).epsilon(1e-6));
  CHECK((A * r.vectors.col(m - 1) - r.values(m - 1) * r.vectors.col(m - 1)).norm() < 1e-3 * std::abs(lmax));

  // Columns run in lockstep give the same T as one at a time (a column-by-column operator).
  Eigen::MatrixXd V0(n, 3);
  fill_random(V0.data(), static_cast<std::size_t>(V0.size()), Distribution::normal, 1.0, 33, 0);
  lo.keep_basis = false;
  lo.steps = 20;
  const auto Ts = lanczos(op, V0, lo);
  for (Eigen::Index c = 0; c < 3; ++c) {
    const Tridiagonal one = lanczos(op, Eigen::VectorXd(V0.col(c)), lo);
    CHECK(one.alpha == Ts[std::size_t(c)].alpha);
    CHECK(one.beta == Ts[std::size_t(c)].beta);
  }

  // Five distinct eigenvalues of multiplicity 8: the Krylov subspace is invariant after 5 steps,
  // and the 5 Ritz values are the eigenvalues.
  Eigen::VectorXd lambda(40);
  for (Eigen::Index i = 0; i < 40; ++i) lambda(i) = -2.0 + double(i % 5);
  const Eigen::MatrixXd B = with_spectrum(lambda, 34);
  lo.steps = 40;
  const Tridiagonal Tb = lanczos(DenseOp{B}, Eigen::VectorXd(V0.col(0).head(40)), lo);
  CHECK(Tb.invariant);
  REQUIRE(Tb.steps() == 5);
  const Ritz rb = ritz(Tb);
  for (Eigen::Index i = 0; i < 5; ++i) CHECK_THAT(rb.values(i), WithinAbs(-2.0 + double(i), 1e-12));
}

TEST_CASE("Spectra's extreme eigenvalues of any operator match the dense solver", "[estimators][lanczos]") {
  Eigen::MatrixXd K(300, 40);
  fill_random(K.data(), static_cast<std::size_t>(K.size()), Distribution::normal, 1.0, 41, 0);
  const ops::SmallGramOp<> gram(K);
  const Eigen::VectorXd exact =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(K.transpose() * K, Eigen::EigenvaluesOnly).eigenvalues();
  Eigen::Index iterations = 0;
  const Eigen::VectorXd top = lanczos_eigenvalues(gram, 3, true, 1e-10, &iterations);
  const Eigen::VectorXd bottom = lanczos_eigenvalues(gram, 2, false, 1e-10, &iterations);
  CHECK(iterations > 0);
  for (int i = 0; i < 3; ++i) CHECK(top(i) == Approx(exact(39 - i)).epsilon(1e-9));  // descending
  for (int i = 0; i < 2; ++i) CHECK(bottom(i) == Approx(exact(i)).epsilon(1e-9));    // ascending
  CHECK_THROWS_AS(lanczos_eigenvalues(gram, 40, true), std::invalid_argument);
}

TEST_CASE("Top-k eigenvalues of the Hessian operator match the dense Hessian's", "[estimators][lanczos]") {
  const SmallNet s;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(s.H);
  const Eigen::VectorXd lambda = es.eigenvalues();  // ascending
  const Eigen::Index n = lambda.size(), k = 4;
  const double scale = lambda.cwiseAbs().maxCoeff();
  TopEigenOptions opt;
  opt.vectors = true;
  const TopEigen top = top_eigenvalues(s.op, k, opt);
  REQUIRE(top.values.size() == k);
  CHECK(top.matvecs > 0);
  for (Eigen::Index i = 0; i < k; ++i) {
    INFO("eigenvalue " << i << ": " << top.values(i) << " vs " << lambda(n - 1 - i));
    CHECK_THAT(top.values(i), WithinAbs(lambda(n - 1 - i), 1e-8 * scale));
    const Eigen::VectorXd u = top.vectors.col(i);
    CHECK((s.H * u - top.values(i) * u).norm() < 1e-6 * scale);
  }
  // By magnitude (PyHessian's power iteration finds the largest |λ|).
  Eigen::VectorXd by_mag = lambda.cwiseAbs();
  std::sort(by_mag.data(), by_mag.data() + n, std::greater<double>());
  opt.by_magnitude = true;
  opt.vectors = false;
  const TopEigen mag = top_eigenvalues(s.op, k, opt);
  for (Eigen::Index i = 0; i < k; ++i) CHECK_THAT(std::abs(mag.values(i)), WithinAbs(by_mag(i), 1e-8 * scale));
}

// --- Exact diagonal -----------------------------------------------------------------------------------

TEST_CASE("exact_diagonal and exact_trace match the dense matrix", "[estimators][exact]") {
  const Eigen::MatrixXd A = random_symmetric(45, 51);
  const Eigen::VectorXd d1 = exact_diagonal(DenseOp{A}, 1), d7 = exact_diagonal(DenseBlockOp{{A}}, 7);
  CHECK((d1 - A.diagonal()).cwiseAbs().maxCoeff() < 1e-12);
  CHECK((d7 - A.diagonal()).cwiseAbs().maxCoeff() < 1e-12);

  const SmallNet s;
  const auto segs = ops::segments(s.op);
  const Eigen::VectorXd dh = exact_diagonal(s.op, 7);
  CHECK((dh - s.H.diagonal()).cwiseAbs().maxCoeff() <= 1e-12 * s.H.diagonal().cwiseAbs().maxCoeff());
  const TraceEstimate ex = exact_trace(s.op, segs, 5);
  CHECK(ex.estimate == Approx(s.H.trace()).epsilon(1e-12));
  CHECK(ex.matvecs == s.op.rows());
  REQUIRE(ex.segments.size() == segs.size());
  for (std::size_t l = 0; l < segs.size(); ++l)
    CHECK(ex.segments[l].estimate ==
          Approx(s.H.block(segs[l].offset, segs[l].offset, segs[l].size, segs[l].size).trace()).epsilon(1e-12));
}

// --- Stochastic Lanczos quadrature --------------------------------------------------------------------

TEST_CASE("SLQ: at m = n the Ritz nodes are the eigenvalues and the weights their spectral weights",
          "[estimators][slq]") {
  const Eigen::Index n = 60;
  Eigen::VectorXd lambda(n);
  for (Eigen::Index i = 0; i < n; ++i) lambda(i) = std::pow(double(i) / n, 2) * 10 - 1;  // distinct, clustered low
  const Eigen::MatrixXd Qm = random_orthogonal(n, 61);
  const Eigen::MatrixXd A = Qm * lambda.asDiagonal() * Qm.transpose();
  for (ProbeKind kind : {ProbeKind::rademacher, ProbeKind::gaussian}) {
    SlqOptions o;
    o.probes = 2;
    o.steps = n;
    o.probe = kind;
    o.seed = 62;
    const Slq s = slq(DenseOp{A}, o);
    REQUIRE(s.probes() == 2);
    Eigen::MatrixXd V;
    unit_probe_columns(V, n, 0, 2, o.seed, o.stream, kind);
    for (Eigen::Index p = 0; p < 2; ++p) {
      const Ritz& q = s.quadrature[std::size_t(p)];
      REQUIRE(q.values.size() == n);
      CHECK((q.values - lambda).cwiseAbs().maxCoeff() < 1e-10 * 10);
      const Eigen::VectorXd w_exact = (Qm.transpose() * V.col(p)).array().square();  // (u_kᵀv)²
      CHECK((q.weights - w_exact).cwiseAbs().maxCoeff() < 1e-10);
    }
  }
}

TEST_CASE("SLQ: tr f(A) for f = x, x^2 against the exact traces and against Hutchinson on the same probes",
          "[estimators][slq]") {
  const Eigen::Index n = 200;
  const Eigen::MatrixXd A = random_symmetric(n, 71, 1.0) / std::sqrt(double(n));  // semicircle on [0, 2]
  SlqOptions o;
  o.probes = 40;
  o.steps = 12;  // Gauss quadrature is exact for degree ≤ 23: x and x² exactly
  o.seed = 72;
  o.stream = 4;
  const Slq s = slq(DenseOp{A}, o);
  CHECK(s.matvecs == o.probes * o.steps);
  const TraceEstimate t1 = slq_trace(s, [](double x) { return x; });
  const TraceEstimate t2 = slq_trace(s, [](double x) { return x * x; });
  // n Σ τ² θ = zᵀAz and n Σ τ² θ² = ‖Az‖² for the Rademacher probe z = √n v: Hutchinson's values.
  TraceOptions h = fixed(o.probes, o.seed);
  h.stream = o.stream;
  const TraceEstimate hu = hutchinson(DenseOp{A}, h);
  CHECK_THAT(t1.estimate, WithinAbs(hu.estimate, 1e-10 * std::abs(hu.estimate)));
  CHECK_THAT(t1.std_error, WithinAbs(hu.std_error, 1e-8 * hu.std_error));
  Eigen::MatrixXd Z;
  rademacher_columns(Z, n, 0, o.probes, o.seed, o.stream);
  const double sq = (A * Z).colwise().squaredNorm().mean();
  CHECK_THAT(t2.estimate, WithinAbs(sq, 1e-10 * sq));
  // Against the exact traces, within 4 standard errors.
  INFO("tr A " << A.trace() << " SLQ " << t1.estimate << " ± " << t1.std_error << "; tr A² " << A.squaredNorm()
               << " SLQ " << t2.estimate << " ± " << t2.std_error);
  CHECK(std::abs(t1.estimate - A.trace()) <= 4 * t1.std_error);
  CHECK(std::abs(t2.estimate - A.squaredNorm()) <= 4 * t2.std_error);
  // A higher moment through the quadrature (degree 6 ≤ 23) and a non-polynomial f, Gaussian probes.
  o.probe = ProbeKind::gaussian;
  const Slq g = slq(DenseOp{A}, o);
  const Eigen::VectorXd lambda = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A, Eigen::EigenvaluesOnly).eigenvalues();
  for (const auto& f : std::vector<std::function<double(double)>>{[](double x) { return std::pow(x, 6); },
                                                                   [](double x) { return std::exp(-x); }}) {
    const TraceEstimate t = slq_trace(g, f);
    const double exact = lambda.unaryExpr(f).sum();
    INFO("exact " << exact << " SLQ " << t.estimate << " ± " << t.std_error);
    CHECK(std::abs(t.estimate - exact) <= 4 * t.std_error);
  }
}

TEST_CASE("SLQ density: against the broadened exact spectrum, its moments, its error band", "[estimators][slq]") {
  const Eigen::Index n = 300;
  const Eigen::MatrixXd A = random_symmetric(n, 81) / std::sqrt(double(n));  // semicircle on [−√2, √2]
  const Eigen::VectorXd lambda = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A, Eigen::EigenvaluesOnly).eigenvalues();
  SlqOptions o;
  o.probes = 64;
  o.steps = 40;
  o.seed = 82;
  const Slq s = slq(DenseOp{A}, o);
  const double sigma = 0.1;
  const SpectralDensity d = slq_density(s, 241, sigma);
  REQUIRE(d.grid.size() == 241);
  CHECK(d.probes == 64);
  const double h = d.grid(1) - d.grid(0);
  const double c = 1.0 / (sigma * std::sqrt(2 * 3.14159265358979323846));
  double mass = 0, first = 0, worst_z = 0;
  for (Eigen::Index g = 0; g < d.grid.size(); ++g) {
    const double exact = c * ((lambda.array() - d.grid(g)) / sigma).square().unaryExpr([](double x) { return std::exp(-0.5 * x); }).mean();
    worst_z = std::max(worst_z, std::abs(d.density(g) - exact) / (d.std_error(g) + 1e-3 * c));
    mass += h * d.density(g);
    first += h * d.grid(g) * d.density(g);
  }
  INFO("largest |SLQ − exact| / SE over the grid " << worst_z);
  CHECK(worst_z < 4.5);
  CHECK(mass == Approx(1.0).epsilon(1e-6));  // the grid covers ±5σ beyond the nodes
  // ∫ λ φ̂_σ = tr(A)/n estimated (the Gaussian has mean zero): the SLQ trace over n.
  CHECK_THAT(first, WithinAbs(slq_trace(s, [](double x) { return x; }).estimate / double(n), 1e-6));
  // The error band shrinks like 1/√n_v: a quarter of the probes, twice the standard errors.
  o.probes = 16;
  const SpectralDensity d16 = slq_density(slq(DenseOp{A}, o), d.grid, sigma);
  const double ratio = d16.std_error.sum() / d.std_error.sum();
  INFO("SE(16 probes) / SE(64 probes) " << ratio);
  CHECK(ratio > 1.4);
  CHECK(ratio < 2.8);
}

TEST_CASE("SLQ on a small network's Hessian against its exact eigenvalues", "[estimators][slq]") {
  const SmallNet s;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(s.H);
  const Eigen::VectorXd lambda = es.eigenvalues();
  const Eigen::Index n = lambda.size();
  const double scale = lambda.cwiseAbs().maxCoeff();
  // m = n: every node is an eigenvalue, and the quadrature measure Σ τ_i² δ(λ − θ_i) is the probe's
  // spectral measure Σ_k (u_kᵀv)² δ(λ − λ_k). Compared through their distribution functions between
  // eigenvalues: Lanczos resolves a cluster of near-equal eigenvalues (here many near 0) into as
  // many nodes as the probe sees, so only the weight of the whole cluster is determined.
  SlqOptions o;
  o.probes = 1;
  o.steps = n;
  o.seed = 91;
  const Slq full = slq(s.op, o);
  Eigen::MatrixXd V;
  unit_probe_columns(V, n, 0, 1, o.seed, o.stream);
  const Eigen::VectorXd w_exact = (es.eigenvectors().transpose() * V.col(0)).array().square();
  const Ritz& q = full.quadrature.front();
  CHECK(q.weights.sum() == Approx(1.0).epsilon(1e-12));
  for (Eigen::Index i = 0; i < q.values.size(); ++i) {
    INFO("node " << q.values(i) << " weight " << q.weights(i));
    CHECK((lambda.array() - q.values(i)).abs().minCoeff() < 1e-8 * scale);
  }
  int gaps = 0;
  for (Eigen::Index k = 0; k + 1 < n; ++k) {
    if (lambda(k + 1) - lambda(k) < 1e-6 * scale) continue;
    const double t = 0.5 * (lambda(k) + lambda(k + 1));
    const double F_exact = w_exact.head(k + 1).sum();
    const double F_slq = (q.values.array() <= t).select(q.weights.array(), 0.0).sum();
    INFO("between eigenvalues " << lambda(k) << " and " << lambda(k + 1));
    CHECK_THAT(F_slq, WithinAbs(F_exact, 1e-8));
    ++gaps;
  }
  INFO(n << " eigenvalues, " << gaps << " gaps compared");
  CHECK(gaps > n / 2);
  // tr(H) and tr(H²) from a few short runs, within 4 standard errors of the exact traces.
  o.probes = 48;
  o.steps = 10;
  const Slq short_runs = slq(s.op, o);
  const TraceEstimate t1 = slq_trace(short_runs, [](double x) { return x; });
  const TraceEstimate t2 = slq_trace(short_runs, [](double x) { return x * x; });
  INFO("tr H " << s.H.trace() << " SLQ " << t1.estimate << " ± " << t1.std_error);
  CHECK(std::abs(t1.estimate - s.H.trace()) <= 4 * t1.std_error);
  INFO("tr H² " << s.H.squaredNorm() << " SLQ " << t2.estimate << " ± " << t2.std_error);
  CHECK(std::abs(t2.estimate - s.H.squaredNorm()) <= 4 * t2.std_error);
  // SLQ's trace is Hutchinson's on the same Rademacher probes.
  TraceOptions h = fixed(o.probes, o.seed);
  CHECK_THAT(t1.estimate, WithinAbs(hutchinson(s.op, h).estimate, 1e-10 * std::abs(t1.estimate) + 1e-12));
}
