// Dead neurons forced by k = 1 layers (routing/forced_dead, paper 002 §4 eq. (6) under §5.1.2's protocol):
// the mechanism against the router's own masks, the bound against routed inputs, the exact, sampled and
// closed-form counts against each other, and the protocol's rate of forcing nets against its closed form.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <omp.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/routing/forced_dead.hpp>

using namespace sparseact;
using namespace sparseact::routing;

namespace {
CometRouter router_for(const RandomNetDraw& d, std::uint64_t stream) {
  std::vector<int> widths = d.widths;
  widths.push_back(1);
  return make_comet_router(widths, d.p_k, 7, stream);
}
}  // namespace

TEST_CASE("forcing_layer: the first k = 1 layer with a masked layer after it", "[routing][forced_dead]") {
  CHECK(forcing_layer({{784, 100, 200, 300}, 0.012}) == 1);  // k = 1, 2, 4
  CHECK(forcing_layer({{784, 100, 200, 300}, 0.02}) == 0);   // k = 2, 4, 6
  CHECK(forcing_layer({{784, 500, 100, 100}, 0.012}) == 2);  // k = 6, 1, 1
  CHECK(forcing_layer({{784, 500, 500, 100}, 0.012}) == 0);  // k = 6, 6, 1: the last layer forces nothing
  CHECK(forcing_layer({{784, 100}, 0.001}) == 0);
  CHECK(forced_dead_expected({{784, 500, 500, 100}, 0.012}) == 0.0);
}

TEST_CASE("After a k = 1 layer every mask is the top- or bottom-k set of the winner's column, and the bound holds on routed inputs",
          "[routing][forced_dead]") {
  const RandomNetDraw d{{20, 30, 200, 60}, 0.04};  // k = 1, 8, 2
  REQUIRE(forcing_layer(d) == 1);
  const CometRouter router = router_for(d, 3);
  Rng rng(5, 1);
  Eigen::MatrixXd X(20, 3000);
  for (auto& v : X.reshaped()) v = rng.normal();
  const std::vector<Eigen::MatrixXd> masks = comet_masks(router, X);
  const Eigen::MatrixXd scores = router.V[0] * X;  // layer 1's c_1
  for (Eigen::Index x = 0; x < X.cols(); ++x) {
    Eigen::Index j = 0;
    REQUIRE(masks[0].col(x).sum() == 1.0);
    masks[0].col(x).maxCoeff(&j);
    // Eq. (6): z_1 = c·e_j, so layer 2's scores are c·V_2[:, j] and its mask their top-8.
    const Eigen::VectorXd column = scores(j, x) * router.V[1].col(j);
    Eigen::VectorXd expected = Eigen::VectorXd::Zero(200);
    std::vector<int> order(200);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 8, order.end(), [&](int a, int b) { return column(a) > column(b); });
    for (int i = 0; i < 8; ++i) expected(order[std::size_t(i)]) = 1;
    CHECK(masks[1].col(x) == expected);
  }
  long dead = 0;
  for (Eigen::Index i = 0; i < masks[1].rows(); ++i) dead += masks[1].row(i).sum() == 0;
  const long forced = forced_dead(router, d);
  CHECK(forced > 0);
  CHECK(dead >= forced);
  CHECK_THROWS_AS(forced_dead(router_for({{20, 30, 201, 60}, 0.04}, 3), d), std::invalid_argument);
}

TEST_CASE("The forced count from drawn routers and from its subset law both average the closed form", "[routing][forced_dead]") {
  const RandomNetDraw d{{10, 40, 120, 30}, 0.03};  // k = 1, 4, 1: E D = 120 (1 − 8/120)^40 ≈ 7.6
  const double expected = forced_dead_expected(d);
  CHECK(expected == Approx(120 * std::pow(1 - 8.0 / 120, 40)).epsilon(1e-14));
  stats::RunningMean exact, sampled;
  Rng rng(11, 2);
  for (std::uint64_t s = 0; s < 400; ++s) {
    exact.push(double(forced_dead(router_for(d, 100 + s), d)));
    sampled.push(double(forced_dead_sampled(d, rng)));
  }
  CHECK(std::abs(exact.mean() - expected) < 4 * exact.std_error());
  CHECK(std::abs(sampled.mean() - expected) < 4 * sampled.std_error());
}

TEST_CASE("Under §5.1.2's protocol the number of forcing nets averages its closed form, 1000 · E[P(p_k N < 1.5)]", "[routing][forced_dead]") {
  // p_k = 1 − U[0.05, 1) is uniform on (0, 0.95]; k = 1 exactly when p_k N < 1.5 (round half away from zero).
  const auto forcing_rate = [](int layers_before_last) {
    // P(p_k < 1.5 / min of the first `layers_before_last` widths), widths uniform on {100 … 1000}.
    double p = 0;
    for (int m = 100; m <= 1000; ++m) {
      const double above = (1000.0 - m + 1) / 901, above_next = (1000.0 - m) / 901;  // P(min ≥ m), P(min ≥ m + 1)
      p += (std::pow(above, layers_before_last) - std::pow(above_next, layers_before_last)) * 1.5 / (0.95 * m);
    }
    return p;
  };
  const std::vector<ProtocolReading> readings = protocol_readings();
  REQUIRE(readings.size() == 4);
  const double lambda[] = {1000 * forcing_rate(1), 1000 * forcing_rate(2), 1000 * forcing_rate(3), 1000 * forcing_rate(1)};
  for (std::size_t r = 0; r < readings.size(); ++r) {
    const ProtocolTally t = protocol_tally(readings[r], {}, 7.65e-6, 400, 3, r);
    INFO(readings[r].id);
    CHECK(std::abs(t.mean_forcing_nets - lambda[r]) < 4 * std::sqrt(lambda[r] / 400));  // Poisson-like counts
    CHECK(t.mean_neurons == Approx(550.0 * 1000 * readings[r].masked_layers).epsilon(0.01));
    CHECK(t.mean_forced_dead > 100);
  }
}

TEST_CASE("A protocol without k = 1 layers forces nothing and passes; the same count per thread count", "[routing][forced_dead]") {
  const ProtocolReading three = protocol_readings()[1];
  const ProtocolTally none = protocol_tally(three, {.sparsity_lo = 0.05, .sparsity_hi = 0.9}, 7.65e-6, 200, 3, 1);
  CHECK(none.below == 200);
  CHECK(none.mean_forced_dead == 0.0);
  CHECK(none.mean_forcing_nets == 0.0);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const ProtocolTally one = protocol_tally(three, {}, 7.65e-6, 300, 9, 1);
  omp_set_num_threads(2);
  const ProtocolTally two = protocol_tally(three, {}, 7.65e-6, 300, 9, 1);
  omp_set_num_threads(threads);
  CHECK(one.below == two.below);
  CHECK(one.mean_forced_dead == two.mean_forced_dead);
  CHECK_THROWS_AS(protocol_tally(three, {.sparsity_lo = 0.5, .sparsity_hi = 0.5}, 7.65e-6, 10, 3, 1), std::invalid_argument);
  CHECK_THROWS_AS(protocol_tally(three, {}, 7.65e-6, 0, 3, 1), std::invalid_argument);
}
