// lsh/sparse_vs_dense as sweep work items (issue 11, dsm_vs_dense): outcomes round-trip through a
// record bit for bit, the per-process dataset cache equals make_dataset on the old stream and hands
// every thread the same copy, a job run as an item equals the old loop's training, and a sweep of the
// jobs gives the same records for any thread count and order.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sparseact/app/sweep.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/sparse_vs_dense.hpp>
#include <sparseact/lsh/sparse_vs_dense_records.hpp>
#include <sparseact/lsh/subspace.hpp>
#include <sparseact/lsh/targets.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}
bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return same_bits(std::vector<double>(a.data(), a.data() + a.size()), std::vector<double>(b.data(), b.data() + b.size()));
}
bool same_outcome(const Outcome& a, const Outcome& b, bool with_sq_err = true) {
  return same_bits(a.test_mse, b.test_mse) && same_bits(a.train_mse, b.train_mse) && same_bits(a.ls_test_mse, b.ls_test_mse) &&
         same_bits(a.ls_train_mse, b.ls_train_mse) && same_bits(a.test_history, b.test_history) &&
         (!with_sq_err || same_bits(a.sq_err, b.sq_err));
}

TrainingSetup small_setup() {
  TrainingSetup setup;
  setup.training.epochs = 2;
  setup.training.optimizer.lr = 1e-3;
  return setup;
}

}  // namespace

TEST_CASE("outcome_record: every double comes back by its bits, per-point errors only when asked", "[sparse_vs_dense_items]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Outcome o{.test_mse = 0.1 + 0.2, .train_mse = -0.0, .ls_test_mse = nan, .ls_train_mse = std::numeric_limits<double>::denorm_min(),
            .test_history = {1.0, inf, -inf, 1e-310}, .sq_err = Eigen::VectorXd::LinSpaced(1000, 0.0, 1.0 / 3)};
  const Outcome back = outcome_from_record(app::deserialize(app::serialize(outcome_record(o, true))));
  CHECK(same_outcome(back, o));
  const app::Record lean = outcome_record(o, false);
  CHECK_FALSE(lean.has("sq_err"));
  const Outcome lean_back = outcome_from_record(app::deserialize(app::serialize(lean)));
  CHECK(same_outcome(lean_back, o, false));
  CHECK(lean_back.sq_err.size() == 0);
  CHECK_THROWS_AS(outcome_from_record(app::Record().set("test_mse", 1.0)), std::out_of_range);
}

TEST_CASE("needs_per_point_errors: only a group with one repetition, and the verdicts without them are unchanged",
          "[sparse_vs_dense_items]") {
  Job sweep_job{.target = 0, .rep = 0, .group = 0, .model = {ModelKind::dense, 4, 4, 0}};
  Job table1_job = sweep_job;
  table1_job.group = 1;
  CHECK(needs_per_point_errors(sweep_job, 1, 3));
  CHECK_FALSE(needs_per_point_errors(sweep_job, 2, 1));
  CHECK(needs_per_point_errors(table1_job, 3, 1));
  CHECK_FALSE(needs_per_point_errors(table1_job, 1, 2));

  // S = 2 pairs: the verdict reads only the test MSEs, so lean records give the same bits.
  const RandomPolynomial f(3, 3, 1.0, 4, 0);
  const std::vector<Dataset> data{make_dataset(f, 2, 300, 100, 4, 1)};
  const std::vector<Job> jobs = comparison_jobs(1, {}, 2, {4}, {16}, {3}, 0, 1, {2, 3, 4});
  const std::vector<Outcome> full = run_jobs(jobs, data, small_setup(), 4);
  std::vector<Outcome> lean;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    lean.push_back(outcome_from_record(outcome_record(full[i], needs_per_point_errors(jobs[i], 2, 1))));
  const auto dense = find_jobs(jobs, 0, 0, ModelKind::dense, 4, 4, 0), dsm = find_jobs(jobs, 0, 0, ModelKind::dsm_top_k, 4, 16, 0);
  REQUIRE(dense.size() == 2);
  const PairedVerdict a = paired_verdict(full, dsm, dense), b = paired_verdict(lean, dsm, dense);
  CHECK(same_bits(a.mean_diff, b.mean_diff));
  CHECK(same_bits(a.margin, b.margin));
  // S = 1 (Table 1, one repetition): the per-point errors came along and give the same verdict.
  const auto t_dense = find_jobs(jobs, 1, 0, ModelKind::dense, 2, 2, 0), t_dsm = find_jobs(jobs, 1, 0, ModelKind::dsm_top_k, 2, 8, 0);
  REQUIRE(t_dense.size() == 1);
  const PairedVerdict c = paired_verdict(full, t_dsm, t_dense), d = paired_verdict(lean, t_dsm, t_dense);
  CHECK(same_bits(c.margin, d.margin));
  CHECK(c.margin > 0);
}

TEST_CASE("comparison_targets: the analysis's three targets on streams stream_id(1, ti)", "[sparse_vs_dense_items]") {
  const auto targets = comparison_targets(5, 3, 12, 4, 9);
  REQUIRE(targets.size() == 3);
  CHECK(comparison_targets(5, 3, 0, 4, 9).size() == 2);  // low_d = 0 leaves p(Ax) out
  const RandomPolynomial poly(5, 3, 1.0, 9, stream_id(1, 0));
  const HypercubeFunction cube(5, 9, stream_id(1, 1));
  const LowDimTarget low(12, 4, 3, 1.0, 9, stream_id(1, 2));
  const Eigen::MatrixXd X5 = sample_cube(5, 50, 3, 0), X12 = sample_cube(12, 50, 3, 1);
  CHECK(same_bits((*targets[0])(X5), poly(X5)));
  CHECK(same_bits((*targets[1])(X5), cube(X5)));
  CHECK(same_bits((*targets[2])(X12), low(X12)));
  CHECK(targets[2]->dims() == 12);
}

TEST_CASE("DatasetCache: make_dataset on stream_id(2, ti), made once, the same copy for every thread", "[sparse_vs_dense_items]") {
  const DatasetCache cache(comparison_targets(4, 2, 0, 2, 13), 2, 200, 60, 13);
  REQUIRE(cache.size() == 2);
  std::vector<const Dataset*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&, t] { seen[t] = &cache.dataset(t % 2); });
  for (auto& th : threads) th.join();
  for (std::size_t t = 0; t < seen.size(); ++t) CHECK(seen[t] == seen[t % 2]);
  CHECK(seen[0] != seen[1]);
  for (std::size_t ti = 0; ti < 2; ++ti) {
    const Dataset fresh = make_dataset(cache.target(ti), 2, 200, 60, 13, stream_id(2, ti));
    const Dataset& got = cache.dataset(ti);
    REQUIRE(got.X_train.size() == 2);
    for (std::size_t r = 0; r < 2; ++r) {
      CHECK(got.X_train[r] == fresh.X_train[r]);
      CHECK(got.X_test[r] == fresh.X_test[r]);
      CHECK(same_bits(got.y_train[r], fresh.y_train[r]));
      CHECK(same_bits(got.y_test[r], fresh.y_test[r]));
    }
    CHECK(same_bits(got.test_variance, fresh.test_variance));
  }
  CHECK_THROWS_AS(cache.dataset(2), std::invalid_argument);
}

TEST_CASE("run_job: a job as a work item equals the old loop, for any thread count and item order", "[sparse_vs_dense_items]") {
  const DatasetCache cache(comparison_targets(3, 3, 6, 2, 11), 2, 400, 100, 11);
  const std::vector<Job> jobs = comparison_jobs(int(cache.size()), {2}, 2, {4, 8}, {16}, {3}, 1, 1, {2, 3, 4});
  const std::vector<std::string> names{"poly", "hypercube", "lowdim"};
  const TrainingSetup setup = small_setup();

  // The old loop: every dataset made before it, run_jobs over them.
  std::vector<Dataset> data;
  for (std::size_t ti = 0; ti < cache.size(); ++ti) data.push_back(make_dataset(cache.target(ti), 2, 400, 100, 11, stream_id(2, ti)));
  const std::vector<Outcome> before = run_jobs(jobs, data, setup, 11);

  std::set<std::string> keys;
  for (const Job& j : jobs) keys.insert(job_key(j, names));
  CHECK(keys.size() == jobs.size());
  CHECK(job_key(jobs[1], names) == "group=0,target=poly,model=dsm_top_k,K=4,T=16,bits=0,rep=0");

  const app::Sweep sweep{.label = "training runs", .count = jobs.size(), .key = [&](std::size_t i) { return job_key(jobs[i], names); },
                         .cost = [&](std::size_t i) { return jobs[i].cost(); },
                         .item = [&](std::size_t i) { return outcome_record(run_job(jobs[i], cache, setup, 11), true); }};
  for (int threads : {1, 2})
    for (app::ItemOrder order : {app::ItemOrder::cost, app::ItemOrder::reverse, app::ItemOrder::shuffle}) {
      app::SweepOptions o;
      o.threads = threads;
      o.order = order;
      o.analysis = "dsm_items";
      o.version = "test";
      o.show_progress = false;
      const std::vector<app::Record> records = app::run_sweep(sweep, o);
      REQUIRE(records.size() == jobs.size());
      for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(same_outcome(outcome_from_record(records[i]), before[i]));
    }
}

TEST_CASE("Job::cost: the LSH model costs its hyperplanes, not its buckets", "[sparse_vs_dense_items]") {
  const Job lsh{.target = 0, .rep = 0, .group = 0, .model = {ModelKind::lsh, 32, 32 << 11, 11}};
  const Job dsm{.target = 0, .rep = 0, .group = 1, .model = {ModelKind::dsm_top_k, 128, 512, 0}};
  const Job dense{.target = 0, .rep = 0, .group = 1, .model = {ModelKind::dense, 128, 128, 0}};
  CHECK(lsh.cost() == 32 * 15);
  CHECK(dsm.cost() == 512 + 4 * 128);
  CHECK(dense.cost() == 128 + 4 * 128);
  CHECK(dsm.cost() > dense.cost());
  CHECK(dsm.cost() > lsh.cost());  // measured at --scale quick: 1.0 s against 0.4 s
}
