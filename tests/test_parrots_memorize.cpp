// Paper 004's memorization construction (parrots/memorize): the LP on labelings known to be (and not to be) memorized,
// Lemma D.6's router by hand and against the paper's argmax, the minimal width against a linear scan, parameter counts
// by hand, the lemmas' formulas, and determinism.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <sparseact/core/rng.hpp>
#include <sparseact/parrots/memorize.hpp>

using namespace sparseact;
using namespace sparseact::parrots;

namespace {

Eigen::MatrixXd gaussian(int rows, int cols, std::uint64_t stream) {
  Rng rng(7, stream);
  Eigen::MatrixXd x(rows, cols);
  for (auto& v : x.reshaped()) v = rng.normal();
  return x;
}

}  // namespace

TEST_CASE("memorize: labels of a width-q ReLU net are memorized at width q with its first layer", "[parrots][parrots_memorize]") {
  const int d = 6, q = 5, n = 40;
  const Eigen::MatrixXd x = gaussian(d, n, 1);
  const Eigen::MatrixXd W = first_layer(d, q, 3, 11);
  Eigen::VectorXd a_star(q);
  a_star << 1.0, -2.0, 0.5, 1.5, -1.0;
  std::vector<int> y(n);
  for (int i = 0; i < n; ++i) y[std::size_t(i)] = a_star.dot((W.transpose() * x.col(i)).cwiseMax(0.0)) > 0 ? 1 : -1;
  const Memorization mem = memorize(x, y, W);
  CHECK(mem.lp_feasible);
  CHECK(mem.memorized);
  CHECK(verify_memorization(x, y, W, mem.a));
  // The same stream's first q units realise the labels, so the minimal width is at most q.
  const MinimalWidth mw = minimal_width(x, y, 3, 11);
  CHECK(mw.q >= 1);
  CHECK(mw.q <= q);
  CHECK(mw.unverified == 0);
  CHECK(verify_memorization(x, y, W.leftCols(mw.q), mw.a));
}

TEST_CASE("memorize: labelings no width can realise are refused", "[parrots][parrots_memorize]") {
  // Duplicated inputs with opposite labels: no f gives f(x) > 0 and −f(x) > 0.
  const int d = 4;
  Eigen::MatrixXd x = gaussian(d, 6, 2);
  x.col(5) = x.col(0);
  std::vector<int> y{1, -1, 1, 1, -1, -1};
  CHECK_FALSE(memorize(x, y, first_layer(d, 12, 1, 5)).memorized);
  CHECK(minimal_width(x, y, 1, 5).q == -1);
  // One unit without bias: f = a·ReLU(⟨w, x⟩) has one sign (or 0), so mixed labels fail at q = 1 for every draw.
  for (std::uint64_t s = 0; s < 10; ++s) {
    const Eigen::MatrixXd x2 = gaussian(d, 2, 100 + s);
    CHECK_FALSE(memorize(x2, {1, -1}, first_layer(d, 1, 1, s)).lp_feasible);
  }
  // The exact check refuses a certificate whose margin is exactly 0 and one with a wrong sign.
  Eigen::MatrixXd x3(2, 1), W3(2, 1);
  x3 << 1.0, 0.0;
  W3 << 0.0, 1.0;  // ⟨w, x⟩ = 0
  CHECK_FALSE(verify_memorization(x3, {1}, W3, Eigen::VectorXd::Ones(1)));
  W3 << 1.0, 0.0;
  CHECK(verify_memorization(x3, {1}, W3, Eigen::VectorXd::Ones(1)));
  CHECK_FALSE(verify_memorization(x3, {-1}, W3, Eigen::VectorXd::Ones(1)));
  // ⟨w, x⟩ = 2⁻⁵² against magnitudes 2: inside the rounding bound, so rationals decide (positive), and w = (1, −1)
  // gives exactly 0 (not memorized).
  x3 << 1.0, 1.0;
  W3 << 1.0 + std::ldexp(1.0, -52), -1.0;
  CHECK(verify_memorization(x3, {1}, W3, Eigen::VectorXd::Ones(1)));
  CHECK_FALSE(verify_memorization(x3, {-1}, W3, Eigen::VectorXd::Ones(1)));
  W3 << 1.0, -1.0;
  CHECK_FALSE(verify_memorization(x3, {1}, W3, Eigen::VectorXd::Ones(1)));
}

TEST_CASE("Lemma D.6 router: sign patterns by hand and the paper's argmax", "[parrots][parrots_memorize]") {
  Eigen::VectorXd x(5);
  x << 0.3, -1.2, 2.0, -0.1, 0.7;
  CHECK(route(x, 1) == 0);
  CHECK(route(x, 2) == 1);   // (+)        → 1
  CHECK(route(x, 4) == 2);   // (+, −)     → 10₂
  CHECK(route(x, 8) == 5);   // (+, −, +)  → 101₂
  CHECK(route(x, 16) == 10); // (+, −, +, −) → 1010₂
  x << -0.3, -1.2, -2.0, 4.0, 0.0;
  CHECK(route(x, 8) == 0);
  CHECK(route(x, 16) == 1);
  CHECK(route(x, 32) == 2);  // x₅ = 0 reads as "−"
  // route() is the argmax of r_jᵀx (L679), zeros included.
  Rng rng(3, 4);
  for (int t = 0; t < 300; ++t) {
    Eigen::VectorXd v(6);
    for (auto& e : v) e = (rng.below(4) == 0) ? 0.0 : rng.normal();
    for (int K : {1, 2, 4, 8, 16, 32, 64}) CHECK(route(v, K) == route_argmax(v, K));
  }
  CHECK_THROWS(route(x, 3));
  CHECK_THROWS(route(x, 64));  // needs 6 coordinates
  CHECK(log2_experts(64) == 6);
  CHECK_THROWS(log2_experts(0));
  CHECK_THROWS(log2_experts(12));
  // Expert inputs: the coordinates the router does not read.
  Eigen::MatrixXd xs(4, 2);
  xs << 1, 2, 3, 4, 5, 6, 7, 8;
  const Eigen::MatrixXd e = expert_inputs(xs, 4, {1});
  REQUIRE(e.rows() == 2);
  CHECK(e(0, 0) == 6);
  CHECK(e(1, 0) == 8);
  CHECK(expert_loads({0, 3, 3, 1}, 4) == std::vector<long>{1, 1, 0, 2});
}

TEST_CASE("minimal_width: bisection returns the first width a linear scan memorizes", "[parrots][parrots_memorize]") {
  for (std::uint64_t s = 0; s < 6; ++s) {
    const int d = 5, n = 24;
    const Eigen::MatrixXd x = gaussian(d, n, 50 + s);
    Rng rng(9, s);
    std::vector<int> y(n);
    for (int& v : y) v = rng.rademacher() > 0 ? 1 : -1;
    const MinimalWidth mw = minimal_width(x, y, 2, s);
    const int q_max = n + 32;  // minimal_width's default
    const Eigen::MatrixXd W = first_layer(d, q_max, 2, s);
    int first = -1;
    for (int q = 1; q <= q_max && first < 0; ++q)
      if (memorize(x, y, W.leftCols(q)).memorized) first = q;
    CAPTURE(s);
    CHECK(mw.q == first);
    CHECK(mw.lps < n);
    for (int q = first; q <= q_max; ++q) CHECK(memorize(x, y, W.leftCols(q)).memorized);  // monotone (nested draws)
  }
  CHECK(minimal_width(Eigen::MatrixXd(3, 0), {}, 1, 1).q == 0);
  CHECK(cover_median_width(1) == 1);
  CHECK(cover_median_width(4) == 2);
  CHECK(cover_median_width(5) == 3);
}

TEST_CASE("parameter counts by hand", "[parrots][parrots_memorize]") {
  const ParameterCount p = moe_parameters(32, 4, 10);
  CHECK(p.router == 128);           // K·m
  CHECK(p.expert == 10 * (30 + 1)); // q(m − log₂K) + q
  CHECK(p.active == 128 + 310);
  CHECK(p.total == 128 + 4 * 310);
  const ParameterCount dense = dense_parameters(32, 10);
  CHECK(dense.router == 0);
  CHECK(dense.active == 330);
  CHECK(dense.total == 330);
  CHECK_THROWS(moe_parameters(3, 8, 1));  // m must exceed log₂K
  CHECK(lemma_d7_min_n(4, std::exp(-1.0)) == Approx(8.0));
  CHECK(corollary_d9_min_n(2, 0.5) == Approx(2 * std::log(4.0)));
  CHECK(lemma_d8_width(64, 32, 2) == Approx(8.0 * 64 * std::pow(std::log(31.0), 4) / 64));
  // Theorem 3.5's factor L = ln⁴(d)(d + 1)/m: Lemma D.8's width times the weights per unit is 8(n/K)·L.
  CHECK(theorem35_log_factor(32, 4) == Approx(std::pow(std::log(30.0), 4) * 31.0 / 32));
  CHECK(lemma_d8_width(512, 32, 4) * (32 - 2 + 1) == Approx(8.0 * 512 / 4 * theorem35_log_factor(32, 4)));
  CHECK(theorem35_log_factor(32, 1) == Approx(std::pow(std::log(32.0), 4) * 33.0 / 32));
  CHECK_THROWS(theorem35_log_factor(2, 4));
}

TEST_CASE("the task: averaging attention, nested first layers, determinism", "[parrots][parrots_memorize]") {
  Eigen::MatrixXd X(2, 3);
  X << 1, 2, 3, 3, 6, -3;
  CHECK(average_attention(X).isApprox(Eigen::Vector3d(2, 4, 0)));
  CHECK(first_layer(7, 9, 5, 6).leftCols(4) == first_layer(7, 4, 5, 6));
  const MemorizationTask t{64, 4, 8, 2.0};
  const Examples e1 = draw_examples(t, 3, 1), e2 = draw_examples(t, 3, 1);
  CHECK(e1.x == e2.x);
  CHECK(e1.y == e2.y);
  // x̄ ~ N(0, c/N): the sample variance of 512 entries is near 0.5.
  CHECK((e1.x.array().square().mean()) == Approx(0.5).epsilon(0.3));
  const MemorizationCell a = memorization_cell(t, 4, 2, 9, 1000), b = memorization_cell(t, 4, 2, 9, 1000);
  CHECK(a.solved);
  CHECK(a.loads == b.loads);
  CHECK(a.widths == b.widths);
  CHECK(a.q == b.q);
  long sum = 0;
  for (long l : a.loads) sum += l;
  CHECK(sum == 64);
  CHECK(a.q == *std::max_element(a.widths.begin(), a.widths.end()));
  const MemorizationCell back = cell_from_record(to_record(a));
  CHECK(back.loads == a.loads);
  CHECK(back.widths == a.widths);
  CHECK(back.q == a.q);
  const CellParameters cp = cell_parameters(a, 8, 4);
  CHECK(cp.valid);
  CHECK(cp.built.active == moe_parameters(8, 4, a.q).active);
  double sum_q = 0;
  for (int q : a.widths) sum_q += q;
  CHECK(cp.own_total == Approx(32 + sum_q * 7));  // router 4·8, d + 1 = 8 − 2 + 1
  CHECK(cp.own_total <= double(cp.built.total));
  CHECK(sqrt_rule_experts(512, 32) == 4);
  CHECK(sqrt_rule_experts(8192, 32) == 16);
  CHECK(sqrt_rule_experts(1024, 32) == 0);  // √32 is not a power of 2
  CHECK(sqrt_rule_experts(32, 32) == 1);
  // Every K sees the same examples: K = 1's single load is n, and the routes nest (K = 2's expert is K = 4's top bit).
  const Examples e = draw_examples(t, 9, examples_stream(64, 2));
  const std::vector<int> r2 = route_all(e.x, 2), r4 = route_all(e.x, 4);
  for (std::size_t i = 0; i < r2.size(); ++i) CHECK(r2[i] == r4[i] / 2);
  const MemorizationCell skipped = memorization_cell(t, 2, 0, 9, 16);  // n/K = 32 > 16
  CHECK_FALSE(skipped.solved);
  CHECK(skipped.widths.empty());
  CHECK_THROWS(memorization_cell({64, 4, 3, 1.0}, 8, 0, 1, 100));
  CHECK_THROWS(validate({0, 4, 8, 1.0}));
  CHECK_THROWS(validate({4, 4, 8, 0.0}));
}
