// lsh/sparse_vs_dense (paper 000 §5): the paired verdict against scipy's paired t-test, the design of
// the jobs, training against closed forms and the least-squares optimum, thread independence, and an
// exception of one job carried out of the parallel loop (issue 10).
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include <omp.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/sparse_vs_dense.hpp>
#include <sparseact/lsh/targets.hpp>

using namespace sparseact;
using namespace sparseact::lsh;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

std::vector<Outcome> with_mse(const std::vector<double>& mse) {
  std::vector<Outcome> out(mse.size());
  for (std::size_t i = 0; i < mse.size(); ++i) out[i].test_mse = mse[i];
  return out;
}

struct Threads {
  int saved;
  explicit Threads(int n) : saved(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved); }
};

}  // namespace

TEST_CASE("paired_verdict over repetitions is scipy's one-sided paired t-test at 5%", "[lsh][sparse_vs_dense]") {
  // a = (0.10, 0.12, 0.11), b = (0.15, 0.14, 0.16): δ = b − a = (0.05, 0.02, 0.05).
  // scipy 1.10: d.mean() = 0.04, d.std(ddof=1)/√3 = 0.01, stats.t.ppf(0.95, 2) = 2.919985580355516,
  // so the margin is 0.029199855803555143; ttest_rel(b, a, alternative='greater').pvalue = 0.0286 < 0.05.
  std::vector<Outcome> o = with_mse({0.10, 0.12, 0.11, 0.15, 0.14, 0.16});
  const PairedVerdict v = paired_verdict(o, {0, 1, 2}, {3, 4, 5});
  CHECK(v.pairs == 3);
  CHECK_THAT(v.mean_a, WithinRel(0.11, 1e-12));
  CHECK_THAT(v.mean_b, WithinRel(0.15, 1e-12));
  CHECK_THAT(v.mean_diff, WithinRel(0.04, 1e-12));
  CHECK_THAT(v.margin, WithinRel(0.029199855803555143, 1e-9));
  CHECK(v.beats);
  // Reversed, b does not beat a.
  CHECK_FALSE(paired_verdict(o, {3, 4, 5}, {0, 1, 2}).beats);

  // a = (0.10, 0.30, 0.12, 0.11), b = (0.15, 0.14, 0.16, 0.12): mean δ = −0.015, margin
  // stats.t.ppf(0.95, 3)·sd/2 = 0.11549077606962782; p = 0.61 (scipy): a does not beat b.
  o = with_mse({0.10, 0.30, 0.12, 0.11, 0.15, 0.14, 0.16, 0.12});
  const PairedVerdict w = paired_verdict(o, {0, 1, 2, 3}, {4, 5, 6, 7});
  CHECK_THAT(w.mean_diff, WithinAbs(-0.015, 1e-15));
  CHECK_THAT(w.margin, WithinRel(0.11549077606962782, 1e-9));
  CHECK_FALSE(w.beats);

  // Unequal numbers of runs: the pairs are the first min(|a|, |b|); the means use every run.
  const PairedVerdict u = paired_verdict(o, {0, 1, 2, 3}, {4, 5, 6});
  CHECK(u.pairs == 3);
  CHECK_THAT(u.mean_a, WithinRel(0.1575, 1e-12));
  CHECK_THAT(u.mean_b, WithinRel(0.15, 1e-12));
  CHECK_THROWS_AS(paired_verdict(o, {}, {0}), std::invalid_argument);
}

TEST_CASE("paired_verdict with one repetition uses the test set's per-point differences", "[lsh][sparse_vs_dense]") {
  // e_a = (0.01, 0.04, 0, 0.09, 0.16), e_b = (0.04, 0.04, 0.01, 0.25, 0.16): mean(e_b − e_a) = 0.04,
  // standard error 0.030495901363953814, z_0.95 = 1.6448536269514722 (scipy.stats.norm.ppf), margin
  // 0.05016129396565378 > 0.04: no verdict.
  std::vector<Outcome> o(2);
  o[0].sq_err = (Eigen::VectorXd(5) << 0.01, 0.04, 0.0, 0.09, 0.16).finished();
  o[1].sq_err = (Eigen::VectorXd(5) << 0.04, 0.04, 0.01, 0.25, 0.16).finished();
  for (auto& x : o) x.test_mse = x.sq_err.mean();
  const PairedVerdict v = paired_verdict(o, {0}, {1});
  CHECK(v.pairs == 1);
  CHECK_THAT(v.mean_diff, WithinRel(0.04, 1e-12));
  CHECK_THAT(v.margin, WithinRel(0.05016129396565378, 1e-9));
  CHECK_FALSE(v.beats);
  // Shifting every point of b by 0.1 keeps the spread of the differences and moves their mean to 0.14,
  // past the margin.
  o[1].sq_err.array() += 0.1;
  o[1].test_mse = o[1].sq_err.mean();
  CHECK(paired_verdict(o, {0}, {1}).beats);
}

TEST_CASE("comparison_jobs: the §5 design, counted by hand", "[lsh][sparse_vs_dense]") {
  // Targets 0, 1 full, target 2 DSM only; 2 repetitions; K ∈ {8, 16}; T ∈ {16, 64}; m ∈ {6}.
  // Full target, one repetition: K = 8: dense, DSM(16), DSM(64), random(64), LSH = 5; K = 16: dense,
  // DSM(64), random(64), LSH = 4. DSM-only target: 3 + 2. Table 1: 1 repetition × 3 K × 3 models.
  const std::vector<Job> jobs = comparison_jobs(3, {2}, 2, {8, 16}, {16, 64}, {6}, 1, 1, {4, 8, 16});
  CHECK(jobs.size() == std::size_t(2 * 2 * 9 + 2 * 5 + 9));
  const auto lsh = find_jobs(jobs, 0, 1, ModelKind::lsh, 16, 0, 6);
  REQUIRE(lsh.size() == 2);
  CHECK(jobs[lsh[0]].rep == 0);
  CHECK(jobs[lsh[1]].rep == 1);
  CHECK(jobs[lsh[0]].model.T == 16 << 6);
  CHECK(find_jobs(jobs, 0, 2, ModelKind::random_hash, 8, 64, 0).empty());
  CHECK(find_jobs(jobs, 1, 1, ModelKind::dsm_top_k, 16, 64, 0).size() == 1);
  // Least-squares references: repetition 0 only.
  for (const Job& j : jobs)
    if (j.least_squares_reference) CHECK(j.rep == 0);
  CHECK(jobs[find_jobs(jobs, 0, 0, ModelKind::dense, 8, 8, 0)[0]].least_squares_reference);
  // Streams differ between the models of one row and between repetitions.
  CHECK(job_stream(jobs[find_jobs(jobs, 1, 1, ModelKind::dense, 8, 8, 0)[0]]) !=
        job_stream(jobs[find_jobs(jobs, 1, 1, ModelKind::dsm_top_k, 8, 16, 0)[0]]));
  CHECK(job_stream(jobs[lsh[0]]) != job_stream(jobs[lsh[1]]));
}

TEST_CASE("train_and_test: θ = 0 gives MSE = mean y², and RMSProp never beats the least-squares optimum", "[lsh][sparse_vs_dense]") {
  const HypercubeFunction f(4, 7, 1);
  const Dataset D = make_dataset(f, 1, 2000, 500, 7, 2);
  CHECK(D.X_train[0].cwiseAbs().maxCoeff() <= 1.0);
  const Eigen::VectorXd& y = D.y_test[0];
  CHECK_THAT(D.test_variance, WithinRel((y.array() - y.mean()).square().sum() / double(y.size()), 1e-12));

  TrainingSetup setup;
  setup.training.epochs = 0;  // the top layer stays at A = 0
  const Outcome zero = train_and_test({ModelKind::dsm_top_k, 4, 32, 0}, D, 0, setup, false, 7, 5);
  CHECK_THAT(zero.test_mse, WithinRel(y.squaredNorm() / double(y.size()), 1e-12));
  CHECK(zero.test_history.empty());
  CHECK(std::isnan(zero.ls_test_mse));

  setup.training.epochs = 5;
  setup.training.optimizer.lr = 1e-2;
  for (const ModelSpec& m : {ModelSpec{ModelKind::dense, 16, 16, 0}, ModelSpec{ModelKind::dsm_top_k, 4, 32, 0},
                             ModelSpec{ModelKind::random_hash, 4, 32, 0}, ModelSpec{ModelKind::lsh, 3, 3 << 4, 4}}) {
    CAPTURE(to_string(m.kind));
    const Outcome o = train_and_test(m, D, 0, setup, true, 7, 5);
    CHECK(o.test_history.size() == 5);
    CHECK_THAT(o.test_history.back(), WithinRel(o.test_mse, 1e-12));
    CHECK(o.train_mse >= o.ls_train_mse * (1 - 1e-9));  // the optimum of the same convex problem
    CHECK(o.test_mse < zero.test_mse);                  // training helped
  }
  CHECK_THROWS_AS(train_and_test({ModelKind::dense, 4, 4, 0}, D, 1, setup, false, 7, 5), std::invalid_argument);
}

TEST_CASE("run_jobs: the same outcomes at 1 and 2 threads, equal to training each job alone", "[lsh][sparse_vs_dense]") {
  const RandomPolynomial f(3, 3, 1.0, 11, 0);
  const std::vector<Dataset> data{make_dataset(f, 2, 600, 200, 11, 1)};
  TrainingSetup setup;
  setup.training.epochs = 2;
  setup.training.optimizer.lr = 1e-3;
  const std::vector<Job> jobs = comparison_jobs(1, {}, 2, {4, 8}, {16}, {3}, 0, 1, {2, 3, 4});
  std::vector<Outcome> one, two;
  int calls = 0;
  {
    Threads t(1);
    one = run_jobs(jobs, data, setup, 11, [&] { ++calls; });
  }
  {
    Threads t(2);
    two = run_jobs(jobs, data, setup, 11);
  }
  CHECK(calls == int(jobs.size()));
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CHECK(one[i].test_mse == two[i].test_mse);
    CHECK(one[i].test_history == two[i].test_history);
  }
  const Job& j = jobs[3];
  const Outcome alone = train_and_test(j.model, data[0], j.rep, setup, j.least_squares_reference, 11, job_stream(j));
  CHECK(alone.test_mse == one[3].test_mse);
}

TEST_CASE("run_jobs: a job that throws comes out as its exception, not an abort", "[lsh][sparse_vs_dense]") {
  const HypercubeFunction f(3, 5, 0);
  const std::vector<Dataset> data{make_dataset(f, 1, 100, 50, 5, 1)};
  TrainingSetup setup;
  setup.training.epochs = 1;
  std::vector<Job> jobs = comparison_jobs(1, {}, 1, {2, 4}, {8}, {}, 0, 0, {});
  jobs.push_back({0, 0, 0, {ModelKind::dsm_top_k, 9, 8, 0}, false});  // K > T: make_dsm refuses it
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Threads t(threads);
    try {
      run_jobs(jobs, data, setup, 5);
      FAIL("no exception");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("make_dsm") != std::string::npos);
    }
  }
}
