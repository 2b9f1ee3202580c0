#include <sparseact/lsh/theorem41.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/lsh/bucket_table.hpp>
#include <sparseact/lsh/dsm.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/lower_bound.hpp>
#include <sparseact/lsh/lsh_learner.hpp>
#include <sparseact/lsh/subspace.hpp>
#include <sparseact/lsh/train.hpp>

namespace sparseact::lsh {

namespace {

/// Seconds per input of `run` over `points` inputs, best of three: the forward pass is short and timing
/// noise only ever adds.
template <class Run>
double seconds_per_point(Run&& run, Eigen::Index points) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best / static_cast<double>(points);
}

}  // namespace

SubspaceContext subspace_context(const Target& f, Eigen::Index k, double last_eps, const LearningSetup& setup, std::uint64_t seed,
                                 std::uint64_t stream) {
  const Eigen::Index dim = f.dims();
  if (k < 1 || k > dim)
    throw std::invalid_argument("learn_on_subspace: k = " + std::to_string(k) + " must lie in [1, " + std::to_string(dim) + "]");
  SubspaceContext c;
  c.d = dim;
  c.k = k;
  c.K = setup.C * k;
  c.L = f.lipschitz_bound();
  c.S = random_subspace(dim, k, seed, stream_id(stream, 1));
  c.unit = make_euclidean_lsh(dim, c.K, 1.0, seed, stream_id(stream, 2));
  c.sigma_min = sigma_min_projected(c.unit.a, c.S.U);
  c.Xtest = sample_uniform(c.S, setup.test_points, seed, stream_id(stream, 3));
  const double count_n = std::min(setup.max_samples, 4 * theorem41_samples(dim, k, c.L, last_eps));
  c.Xcount = sample_uniform(c.S, static_cast<Eigen::Index>(std::max(count_n, 1000.0)), seed, stream_id(stream, 5));
  c.ytest = f(c.Xtest);
  return c;
}

EuclideanLsh lsh_for_error(const SubspaceContext& c, double eps) {
  EuclideanLsh lsh = c.unit;
  lsh.eps = width_for_error(eps, c.L, c.sigma_min, c.K, 0.5);
  lsh.b *= lsh.eps;
  return lsh;
}

std::optional<LearnerRun> learner_run(const Target& f, const SubspaceContext& c, double eps, std::size_t ei, double factor,
                                      std::size_t fi, const LearningSetup& setup, std::uint64_t seed, std::uint64_t stream) {
  const double n_star = theorem41_samples(c.d, c.k, c.L, eps);
  const double want = std::ceil(factor * std::max(n_star, 1.0));
  if (want > setup.max_samples) return std::nullopt;
  const EuclideanLsh lsh = lsh_for_error(c, eps);
  const double n_test = static_cast<double>(c.Xtest.cols());
  LearnerRun run;
  run.eps = eps;
  run.eps_lsh = lsh.eps;
  run.factor = factor;
  run.samples = static_cast<Eigen::Index>(want);
  const Eigen::MatrixXd X = sample_uniform(c.S, run.samples, seed, stream_id(stream_id(stream, 4 + ei), fi));
  const LshLearner learner = fit_lsh_learner(lsh, X, f(X));
  LshPrediction pred;
  run.seconds_per_point = seconds_per_point([&] { pred = predict(learner, c.Xtest); }, c.Xtest.cols());
  run.buckets = learner.buckets();
  run.table_order = theorem41_table_size(c.d, c.k, c.L, eps);
  run.sup_error = (pred.y - c.ytest).cwiseAbs().maxCoeff();
  run.mse = (pred.y - c.ytest).squaredNorm() / static_cast<double>(c.ytest.size());
  run.probed_share = double(pred.probed) / n_test;
  run.coarse_share = double(pred.coarse) / n_test;
  run.exhaustive_share = double(pred.exhaustive) / n_test;
  return run;
}

double table_count(const SubspaceContext& c, double eps) {
  return static_cast<double>(assign_buckets(hash(lsh_for_error(c, eps), c.Xcount)).buckets());
}

SubspaceLearning learn_on_subspace(const Target& f, Eigen::Index k, const std::vector<double>& epss, const std::vector<double>& factors,
                                   const LearningSetup& setup, std::uint64_t seed, std::uint64_t stream,
                                   const std::function<void()>& eps_done) {
  if (epss.empty()) throw std::invalid_argument("learn_on_subspace: no ε");
  const SubspaceContext c = subspace_context(f, k, epss.back(), setup, seed, stream);
  SubspaceLearning s;
  s.d = c.d, s.k = c.k, s.K = c.K, s.L = c.L, s.sigma_min = c.sigma_min;
  s.count_points = c.Xcount.cols();
  for (std::size_t ei = 0; ei < epss.size(); ++ei) {
    for (std::size_t fi = 0; fi < factors.size(); ++fi) {
      if (auto run = learner_run(f, c, epss[ei], ei, factors[fi], fi, setup, seed, stream)) s.runs.push_back(*run);
      else ++s.skipped;
    }
    s.inv_eps.push_back(1 / epss[ei]);
    s.buckets.push_back(table_count(c, epss[ei]));
    if (eps_done) eps_done();
  }
  return s;
}

TableGrowth table_growth(const SubspaceLearning& s) {
  if (s.inv_eps.size() < 2) throw std::invalid_argument("table_growth: needs at least two values of ε");
  const stats::LinearFit fit = stats::loglog_fit(s.inv_eps, s.buckets);
  TableGrowth g;
  g.slope = fit.slope;
  g.se = fit.slope_se;  // 0 with two values of ε
  g.bound = static_cast<double>(s.k) + 3 * g.se;
  g.saturated = s.buckets.back() > 0.5 * static_cast<double>(s.count_points);
  return g;
}

EqualErrorComparison dense_at_equal_error(Eigen::Index d, int C, double eps, Eigen::Index test_points, std::uint64_t seed,
                                          std::uint64_t index, bool timed) {
  const auto time_it = [timed](const std::function<void()>& pass, Eigen::Index points) {
    if (timed) return seconds_per_point(pass, points);
    pass();
    return 0.0;
  };
  const Eigen::Index k1 = 1;
  const BumpFamily family = make_bump_family(d, k1, eps, 1.0);
  const Eigen::VectorXd sigma = random_signs(family, seed, stream_id(300, index));
  auto target = [&](const Eigen::MatrixXd& X) { return evaluate(family, sigma, X); };
  const Subspace G = subspace_from_basis(family.E);
  EqualErrorComparison c;
  c.eps = eps;
  c.K = C * k1;
  EuclideanLsh lsh = make_euclidean_lsh(d, c.K, 1.0, seed, stream_id(301, index));
  lsh.eps = width_for_error(eps, 1.0, sigma_min_projected(lsh.a, G.U), c.K, 0.5);
  lsh.b *= lsh.eps;
  const auto N = static_cast<Eigen::Index>(std::ceil(theorem41_samples(d, k1, 1.0, eps)));
  const Eigen::MatrixXd X = sample_uniform(G, N, seed, stream_id(302, index));
  const Eigen::MatrixXd Xt = sample_uniform(G, test_points, seed, stream_id(303, index));
  const Eigen::VectorXd yt = target(Xt);
  const LshLearner learner = fit_lsh_learner(lsh, X, target(X));
  LshPrediction pred;
  c.lsh_seconds_per_point = time_it([&] { pred = predict(learner, Xt); }, Xt.cols());
  c.lsh_mse = (pred.y - yt).squaredNorm() / static_cast<double>(yt.size());

  const Eigen::MatrixXd Xd = sample_uniform(G, 8000, seed, stream_id(304, index));
  const Eigen::VectorXd yd = target(Xd);
  c.dense_mse = std::numeric_limits<double>::infinity();
  for (c.dense_width = 8;; c.dense_width *= 2) {
    DsmModel dense = make_dsm(d, c.dense_width, MaskKind::dense, 0, BottomLayer{}, seed, stream_id(305, index));
    dense.A = least_squares(features(dense, Xd), yd).theta;
    Eigen::VectorXd out;
    c.dense_seconds_per_point = time_it([&] { out = predict(dense, Xt); }, Xt.cols());
    c.dense_mse = (out - yt).squaredNorm() / static_cast<double>(yt.size());
    if (c.dense_mse <= c.lsh_mse || c.dense_width >= 512) break;
  }
  c.lsh_flops = 2.0 * d * c.K + c.K;
  c.dense_flops = 2.0 * d * c.dense_width + 3.0 * c.dense_width;
  c.reached = c.dense_mse <= c.lsh_mse;
  return c;
}

}  // namespace sparseact::lsh
