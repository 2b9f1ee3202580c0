#include <sparseact/lsh/sparse_vs_dense.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <numeric>
#include <stdexcept>

#include <sparseact/core/parallel.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/lsh/lsh_model.hpp>
#include <sparseact/lsh/subspace.hpp>

namespace sparseact::lsh {

const char* to_code(ModelKind kind) noexcept {
  switch (kind) {
    case ModelKind::dense: return "dense";
    case ModelKind::dsm_top_k: return "dsm_top_k";
    case ModelKind::random_hash: return "random_hash";
    case ModelKind::lsh: return "lsh";
  }
  return "?";
}

const char* to_string(ModelKind kind) noexcept {
  switch (kind) {
    case ModelKind::dense: return "dense";
    case ModelKind::dsm_top_k: return "DSM Top-K";
    case ModelKind::random_hash: return "random hash";
    case ModelKind::lsh: return "LSH";
  }
  return "?";
}

Dataset make_dataset(const Target& f, int reps, Eigen::Index n_train, Eigen::Index n_test, std::uint64_t seed,
                     std::uint64_t stream) {
  Dataset D;
  D.d = f.dims();
  for (int r = 0; r < reps; ++r) {
    const std::uint64_t st = stream_id(stream, static_cast<std::uint64_t>(r));
    D.X_train.push_back(sample_cube(D.d, n_train, seed, stream_id(st, 0)));
    D.X_test.push_back(sample_cube(D.d, n_test, seed, stream_id(st, 1)));
    D.y_train.push_back(f(D.X_train.back()));
    D.y_test.push_back(f(D.X_test.back()));
  }
  if (!D.y_test.empty()) {
    const Eigen::VectorXd& y = D.y_test[0];
    D.test_variance = (y.array() - y.mean()).square().mean();
  }
  return D;
}

std::vector<std::unique_ptr<Target>> comparison_targets(Eigen::Index d, int degree, Eigen::Index low_d, Eigen::Index low_k,
                                                        std::uint64_t seed) {
  std::vector<std::unique_ptr<Target>> targets;
  targets.push_back(std::make_unique<RandomPolynomial>(d, degree, 1.0, seed, stream_id(1, 0)));
  targets.push_back(std::make_unique<HypercubeFunction>(d, seed, stream_id(1, 1)));
  if (low_d > 0) targets.push_back(std::make_unique<LowDimTarget>(low_d, low_k, degree, 1.0, seed, stream_id(1, 2)));
  return targets;
}

DatasetCache::DatasetCache(std::vector<std::unique_ptr<Target>> targets, int reps, Eigen::Index n_train, Eigen::Index n_test,
                           std::uint64_t seed)
    : targets_(std::move(targets)),
      reps_(reps),
      n_train_(n_train),
      n_test_(n_test),
      seed_(seed),
      locks_(std::make_unique<std::mutex[]>(targets_.size())),
      data_(std::make_unique<std::unique_ptr<const Dataset>[]>(targets_.size())) {}

const Dataset& DatasetCache::dataset(std::size_t ti) const {
  if (ti >= targets_.size()) throw std::invalid_argument("DatasetCache: target " + std::to_string(ti) + " has no dataset");
  // A mutex rather than std::call_once: a throw inside call_once is not portable across libstdc++ builds.
  const std::lock_guard<std::mutex> lock(locks_[ti]);
  if (!data_[ti])
    data_[ti] = std::make_unique<const Dataset>(make_dataset(*targets_[ti], reps_, n_train_, n_test_, seed_, stream_id(2, ti)));
  return *data_[ti];
}

Outcome train_and_test(const ModelSpec& spec, const Dataset& data, int rep, const TrainingSetup& setup,
                       bool least_squares_reference, std::uint64_t seed, std::uint64_t stream) {
  if (rep < 0 || static_cast<std::size_t>(rep) >= data.X_train.size())
    throw std::invalid_argument("train_and_test: repetition " + std::to_string(rep) + " is not in the dataset");
  const auto r = static_cast<std::size_t>(rep);
  ActiveFeatures Ftr, Fte;
  if (spec.kind == ModelKind::lsh) {
    const LshModel m = make_lsh_model(data.d, spec.K, spec.bits, setup.lsh_offset, seed, stream);
    Ftr = features(m, data.X_train[r]);
    Fte = features(m, data.X_test[r]);
  } else {
    const MaskKind mask = spec.kind == ModelKind::dense ? MaskKind::dense
                          : spec.kind == ModelKind::dsm_top_k ? MaskKind::top_k
                                                              : MaskKind::random_hash;
    const DsmModel m = make_dsm(data.d, spec.T, mask, spec.K, setup.bottom, seed, stream);
    Ftr = features(m, data.X_train[r]);
    Fte = features(m, data.X_test[r]);
  }
  const Eigen::VectorXd& ytr = data.y_train[r];
  const Eigen::VectorXd& yte = data.y_test[r];
  Outcome o;
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(Ftr.width);  // A = 0 (App. D.1's TF default for the top layer)
  const TrainLog log = train_rmsprop(theta, Ftr, ytr, setup.training, seed, stream_id(stream, 99), &Fte, &yte);
  o.test_history = log.test_mse;
  o.train_mse = log.train_mse.empty() ? mse(theta, Ftr, ytr) : log.train_mse.back();
  o.sq_err = (predict(theta, Fte) - yte).array().square().matrix();
  o.test_mse = o.sq_err.mean();
  if (least_squares_reference) {
    const LeastSquaresFit fit = least_squares(Ftr, ytr);
    o.ls_train_mse = fit.train_mse;
    o.ls_test_mse = mse(fit.theta, Fte, yte);
  }
  return o;
}

double Job::cost() const {
  // Per training point and epoch, in units of d flops: the dense, DSM and random-hash models compute all
  // T pre-activations (d·T), the LSH model its s·m hyperplanes (d·K·m, not its T = s·2^m buckets); the
  // top layer's K activated units cost about 4 more each. At --scale quick this ranks the measured
  // per-item seconds with Spearman 0.88 (0.68 for the old K + 0.02·T, which put every LSH job first).
  const double K = model.K;
  return model.kind == ModelKind::lsh ? K * (model.bits + 4) : double(model.T) + 4 * K;
}

std::uint64_t job_stream(const Job& j) {
  const auto kind = static_cast<std::uint64_t>(j.model.kind);
  return stream_id(stream_id(stream_id(3, static_cast<std::uint64_t>(j.target)), static_cast<std::uint64_t>(j.rep)),
                   kind * 1000003ULL + std::uint64_t(j.model.T) * 131ULL + std::uint64_t(j.model.K) + 7ULL * j.model.bits);
}

std::vector<Job> comparison_jobs(int targets, const std::vector<int>& dsm_only, int seeds, const std::vector<int>& units,
                                 const std::vector<int>& widths, const std::vector<int>& bits, int table1_target,
                                 int table1_seeds, const std::vector<int>& table1_units) {
  if (widths.empty()) throw std::invalid_argument("comparison_jobs: no DSM widths");
  const int T_max = widths.back();
  std::vector<Job> jobs;
  for (int ti = 0; ti < targets; ++ti)
    for (int s = 0; s < seeds; ++s)
      for (int K : units) {
        jobs.push_back({ti, s, 0, {ModelKind::dense, K, K, 0}, s == 0 && K <= 512});
        for (int T : widths)
          if (T > K) jobs.push_back({ti, s, 0, {ModelKind::dsm_top_k, K, T, 0}, s == 0 && T <= 1024 && K <= 256});
        if (std::find(dsm_only.begin(), dsm_only.end(), ti) != dsm_only.end()) continue;
        if (T_max > K) jobs.push_back({ti, s, 0, {ModelKind::random_hash, K, T_max, 0}, false});
        for (int m : bits) jobs.push_back({ti, s, 0, {ModelKind::lsh, K, K << m, m}, false});
      }
  for (int s = 0; s < table1_seeds; ++s)
    for (int K : table1_units)
      for (int f : {1, 2, 4})
        jobs.push_back({table1_target, s, 1, {f == 1 ? ModelKind::dense : ModelKind::dsm_top_k, K, f * K, 0}, s == 0 && f * K <= 512});
  return jobs;
}

Outcome run_job(const Job& job, const DatasetCache& data, const TrainingSetup& setup, std::uint64_t seed) {
  return train_and_test(job.model, data.dataset(static_cast<std::size_t>(job.target)), job.rep, setup, job.least_squares_reference,
                        seed, job_stream(job));
}

std::string job_key(const Job& j, const std::vector<std::string>& target_names) {
  const std::string target =
      j.target >= 0 && std::size_t(j.target) < target_names.size() ? target_names[std::size_t(j.target)] : std::to_string(j.target);
  return "group=" + std::to_string(j.group) + ",target=" + target + ",model=" + to_code(j.model.kind) + ",K=" + std::to_string(j.model.K) +
         ",T=" + std::to_string(j.model.T) + ",bits=" + std::to_string(j.model.bits) + ",rep=" + std::to_string(j.rep);
}

std::vector<Outcome> run_jobs(const std::vector<Job>& jobs, const std::vector<Dataset>& data, const TrainingSetup& setup,
                              std::uint64_t seed, const std::function<void()>& done) {
  for (const Job& j : jobs)
    if (j.target < 0 || static_cast<std::size_t>(j.target) >= data.size())
      throw std::invalid_argument("run_jobs: a job's target has no dataset");
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return jobs[x].cost() > jobs[y].cost(); });
  std::vector<Outcome> outcomes(jobs.size());
  // One job per thread: each trains sequentially, so the iterates do not depend on the thread count.
  parallel_for(std::size_t{0}, order.size(), [&](std::size_t oi) {
    const Job& j = jobs[order[oi]];
    outcomes[order[oi]] = train_and_test(j.model, data[static_cast<std::size_t>(j.target)], j.rep, setup,
                                         j.least_squares_reference, seed, job_stream(j));
    if (!done) return;
    std::exception_ptr error;  // an exception must not leave the critical section (its lock would stay held)
#pragma omp critical(sparseact_sparse_vs_dense_done)
    {
      try {
        done();
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
  }, {.dynamic = true, .chunk = 1});
  return outcomes;
}

std::vector<std::size_t> find_jobs(const std::vector<Job>& jobs, int group, int target, ModelKind kind, int K, int T, int bits) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    if (j.group == group && j.target == target && j.model.kind == kind && j.model.K == K && (T == 0 || j.model.T == T) &&
        j.model.bits == bits)
      out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](std::size_t x, std::size_t y) { return jobs[x].rep < jobs[y].rep; });
  return out;
}

namespace {
stats::RunningMean test_mse_mean(const std::vector<Outcome>& outcomes, const std::vector<std::size_t>& ids) {
  stats::RunningMean m;
  for (auto i : ids) m.push(outcomes.at(i).test_mse);
  return m;
}
}  // namespace

MseSummary test_mse_summary(const std::vector<Outcome>& outcomes, const std::vector<std::size_t>& ids) {
  const stats::RunningMean m = test_mse_mean(outcomes, ids);
  return {m.mean(), std::sqrt(m.variance())};
}

PairedVerdict paired_verdict(const std::vector<Outcome>& outcomes, const std::vector<std::size_t>& ia,
                             const std::vector<std::size_t>& ib) {
  if (ia.empty() || ib.empty()) throw std::invalid_argument("paired_verdict: each model needs at least one run");
  PairedVerdict v;
  const std::size_t S = std::min(ia.size(), ib.size());
  v.pairs = S;
  v.mean_a = test_mse_mean(outcomes, ia).mean();
  v.mean_b = test_mse_mean(outcomes, ib).mean();
  if (S >= 2) {
    std::vector<double> mse_a(S), mse_b(S);
    for (std::size_t s = 0; s < S; ++s) mse_a[s] = outcomes.at(ia[s]).test_mse, mse_b[s] = outcomes.at(ib[s]).test_mse;
    const stats::TTest t = stats::paired_t_test(mse_b, mse_a, stats::Alternative::greater);
    v.mean_diff = t.mean_difference;
    v.margin = stats::student_t_quantile(0.95, t.df) * t.std_error;
  } else {
    // One repetition: the paired differences of squared errors over the test points, with the normal
    // quantile (thousands of points).
    const Eigen::VectorXd &ea = outcomes.at(ia[0]).sq_err, &eb = outcomes.at(ib[0]).sq_err;
    const stats::TTest t = stats::paired_t_test(std::vector<double>(eb.data(), eb.data() + eb.size()),
                                                std::vector<double>(ea.data(), ea.data() + ea.size()), stats::Alternative::greater);
    v.mean_diff = outcomes.at(ib[0]).test_mse - outcomes.at(ia[0]).test_mse;
    v.margin = stats::normal_quantile(0.95) * t.std_error;
  }
  v.beats = v.mean_diff > v.margin;
  return v;
}

bool needs_per_point_errors(const Job& job, int seeds, int table1_seeds) noexcept {
  return (job.group == 0 ? seeds : table1_seeds) == 1;
}

}  // namespace sparseact::lsh
