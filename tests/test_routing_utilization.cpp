// Paper 002 §5.1.2's utilisation counts (routing/utilization) against direct mask loops and hand cases;
// Welch's t-test against scipy.
#include <catch2/catch.hpp>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/routing/utilization.hpp>

using namespace sparseact;
using namespace sparseact::routing;

TEST_CASE("Welch's t-test equals scipy's ttest_ind(equal_var=False)", "[stats]") {
  const std::vector<double> x{0.9, 0.8, 0.95, 0.7, 0.99}, y{0.5, 0.3, 0.6, 0.2, 0.4, 0.55, 0.1};
  const stats::TTest g = stats::welch_t_test(x, y, stats::Alternative::greater);
  CHECK(g.t == Approx(5.557028361749502).epsilon(1e-12));
  CHECK(g.p_value == Approx(0.00012416604296668353).epsilon(1e-8));
  CHECK(stats::welch_t_test(x, y).p_value == Approx(0.00024833208593336706).epsilon(1e-8));
  CHECK(stats::welch_t_test(y, x, stats::Alternative::greater).p_value > 0.99);
  CHECK_THROWS_AS(stats::welch_t_test({1.0}, y), std::invalid_argument);
}

TEST_CASE("Keep counts equal a direct loop over every image's masks", "[routing][utilization]") {
  const RandomNetDraw d = draw_random_net(12, 3, 5, 9, 0.05, 1.0, 3, 4);
  REQUIRE(d.widths.size() == 4);
  for (std::size_t l = 1; l < 4; ++l) CHECK((d.widths[l] >= 5 && d.widths[l] <= 9));
  CHECK((d.p_k > 0 && d.p_k <= 0.95));
  const CometRouter router = random_net_router(d, 3, 4);
  Rng rng(2, 2);
  Eigen::MatrixXd X(12, 37);
  for (auto& v : X.reshaped()) v = rng.normal();
  std::vector<int> group(37);
  for (int j = 0; j < 37; ++j) group[std::size_t(j)] = j % 3;
  const KeepCounts c = keep_counts(router, d.p_k, X, group, 3, /*batch=*/8);
  const std::vector<Eigen::MatrixXd> masks = comet_masks(router, X, std::vector<double>(37, d.p_k));
  for (std::size_t l = 0; l < 3; ++l)
    for (Eigen::Index i = 0; i < masks[l].rows(); ++i)
      for (int g = 0; g < 3; ++g) {
        int n = 0;
        for (int j = 0; j < 37; ++j) n += group[std::size_t(j)] == g && masks[l](i, j) == 1.0;
        CHECK(c.counts[l](i, g) == n);
      }
}

TEST_CASE("Utilisation summary counts dead, dead-on-seen and woken neurons", "[routing][utilization]") {
  KeepCounts c;
  Eigen::MatrixXi m(4, 2);  // groups: seen 0, unseen 1
  m << 3, 1,   // used by both
      0, 0,    // dead
      0, 2,    // dead on seen, woken by unseen
      5, 0;    // used by seen only
  c.counts.push_back(m);
  const Utilization u = summarize(c, {5, 2}, 1, 0.5, {3, 4});
  CHECK(u.neurons == 4);
  CHECK(u.dead == 1);
  CHECK(u.dead_seen == 2);
  CHECK(u.woken == 1);
  CHECK(u.fraction[0][0] == Approx(4.0 / 7));
  const Utilization back = utilization_from(to_record(u, true));
  CHECK(back.fraction == u.fraction);
  CHECK(back.dead_seen == 2);
}

TEST_CASE("Per-pixel preprocessing uses the training split's statistics", "[routing][utilization]") {
  Eigen::MatrixXd train(3, 4);
  train << 0, 1, 2, 3,  //
      5, 5, 5, 5,       // a constant pixel
      1, 0, 1, 0;
  Eigen::MatrixXd X = train;
  preprocess(X, train, Preprocess::standardize);
  CHECK(X.row(0).mean() == Approx(0).margin(1e-15));
  CHECK(X.row(0).squaredNorm() / 4 == Approx(1).epsilon(1e-14));
  CHECK(X.row(1).isZero());
  Eigen::MatrixXd Y = train;
  preprocess(Y, train, Preprocess::center);
  CHECK(Y(2, 0) == Approx(0.5));
  Eigen::MatrixXd Z = train;
  preprocess(Z, train, Preprocess::raw);
  CHECK(Z == train);
  CHECK_THROWS_AS(parse_preprocess("whiten"), std::invalid_argument);
}

TEST_CASE("The ensemble pools nets, and its dead percentage resamples whole nets", "[routing][utilization]") {
  // 50 nets of 300 neurons; only net 7 has dead neurons (12 of them).
  std::vector<Utilization> nets(50);
  for (std::size_t i = 0; i < nets.size(); ++i) {
    nets[i].neurons = 300, nets[i].p_k = i == 7 ? 0.05 : 0.5;
    nets[i].dead_seen = i % 2, nets[i].woken = i % 4 == 1;
  }
  nets[7].dead = 12;
  const Ensemble e = pool(nets);
  CHECK(e.nets == 50);
  CHECK(e.neurons == 15000);
  CHECK(e.dead == 12);
  CHECK(e.dead_seen == 25);
  CHECK(e.woken == 13);
  CHECK(e.nets_with_dead == 1);
  CHECK(e.largest_cluster == 12);
  CHECK(e.dead_percent() == Approx(100.0 * 12 / 15000));
  CHECK(e.nets_with_dead_percent() == Approx(2.0));
  CHECK(e.sparsity_dead == std::vector<double>{0.95});
  CHECK(e.sparsity_alive.size() == 49);
  // A resample holds net 7 B ~ Binomial(50, 1/50) times, so the pooled percentage is 100·12·B/15000.
  // Binomial(50, 0.02): P(B ≤ 2) = 0.922, P(B ≤ 3) = 0.982 (scipy.stats.binom), so the 97.5 % point is
  // B = 3, and the 2.5 % point B = 0 (P(B = 0) = 0.364). Resampling neurons instead would give a far
  // narrower interval: that is the clustering the pooled resample exists for.
  const stats::Interval i95 = dead_percent_interval(e, 20000, 1, 0.05);
  CHECK(i95.lo == 0.0);
  CHECK(i95.hi == Approx(100.0 * 12 * 3 / 15000));
  // Every net with the same dead share leaves nothing to resample.
  for (Utilization& u : nets) u.dead = 3;
  const stats::Interval flat = dead_percent_interval(pool(nets), 2000, 1, 0.05);
  CHECK(flat.lo == Approx(1.0));
  CHECK(flat.hi == Approx(1.0));
  // Unequal nets: 10 dead of 100, and 0 of 300. A resample of two nets holds the first twice (1/4), once
  // (1/2: 10 of 400 = 2.5 %) or never (1/4), so the 30 % and 70 % points are both the pooled 2.5 %; the
  // mean of the per-net percentages would give 5 %.
  std::vector<Utilization> two(2);
  two[0].neurons = 100, two[0].dead = 10, two[1].neurons = 300;
  const stats::Interval mid = dead_percent_interval(pool(two), 20000, 1, 0.6);
  CHECK(mid.lo == Approx(2.5));
  CHECK(mid.hi == Approx(2.5));
}

TEST_CASE("A net's routing cost, the nets table and Figure 3's sorted utilisation", "[routing][utilization]") {
  CHECK(routing_cost({{784, 100, 200, 300}, 0.5}) == 784.0 * 100 + 100.0 * 200 + 200.0 * 300);
  Utilization u;
  u.widths = {784, 3, 2, 2}, u.k = {2, 1, 1}, u.p_k = 0.5, u.dead = 1, u.dead_seen = 2, u.woken = 1;
  u.fraction = {{0.2, 0.9, 0.5}, {0.0, 1.0}, {0.5, 0.5}};
  const Table t = nets_table({u, u});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[1] == std::vector<double>{1, 3, 2, 2, 0.5, 2, 1, 1, 1, 2, 1});
  CHECK_THROWS(nets_table({Utilization{}}));  // a net without its three masked layers
  const plot::Figure f = figure3(u, "fig3");
  REQUIRE(f.series.size() == 3);
  CHECK(f.series[0].y == std::vector<double>{0.9, 0.5, 0.2});
  CHECK(f.series[0].x == std::vector<double>{0, 1, 2});
  CHECK(f.lines.at(0).at == 0.5);
}
