// The k-WTA kernels' edges (issue 51): widths at and beyond the shared-memory limit, k < 1, unknown tie rules,
// NaN, tie-heavy columns and launches of different widths from many threads. Each body runs twice: on the CPU
// stand-in ([standin], every machine, CI included), and on a card ([cuda], where one is present; skipped
// otherwise), so the stand-in refuses exactly what the card refuses and the first GPU run has these tests ready.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include <sparseact/core/device.hpp>
#include <sparseact/cuda/comet_forward.hpp>
#include <sparseact/cuda/kwta_limits.hpp>
#include <sparseact/cuda/plain_train.hpp>
#include <sparseact/cuda/runtime.hpp>
#include <sparseact/cuda/standin.hpp>
#include <sparseact/routing/comet_batch.hpp>
#include <sparseact/routing/kwta.hpp>

using namespace sparseact;
using cuda::KwtaKernel;

namespace {

constexpr KwtaKernel kKernels[] = {KwtaKernel::count, KwtaKernel::select};

/// A route-only COMET net of one hidden layer N wide on inputs of dimension n0 (widths {n0, N, 1}; the output
/// layer is never computed without a backbone). V: row i is sin(i·n0 + j + 1), or the identity when N = n0 and
/// `identity` (then C = X0 exactly).
cuda::CometGpuNets route_only(int n0, int N, int k, KwtaKernel kernel, int rule = 0, bool identity = false) {
  cuda::CometGpuNets nets{.widths = {n0, N, 1}, .nets = 1, .k = {k}, .tie_rule = rule, .kwta_kernel = kernel};
  std::vector<double> V(std::size_t(N) * std::size_t(n0));
  for (int j = 0; j < n0; ++j)
    for (int i = 0; i < N; ++i) V[std::size_t(j) * N + i] = identity ? double(i == j) : std::sin(double(i) * n0 + j + 1);
  nets.V = {V};
  return nets;
}

Eigen::MatrixXd inputs(int n0, int M, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd X(n0, M);
  for (auto& v : X.reshaped()) v = normal(gen);
  return X;
}

void refuses_before_any_work(const cuda::KwtaLimits& limits) {
  for (KwtaKernel kernel : kKernels) {
    CAPTURE(int(kernel));
    const int widest = limits.widest(kernel);
    CHECK_THROWS_WITH(cuda::comet_forward(route_only(2, widest + 1, 1, kernel), inputs(2, 1, 1)),
                      Catch::Contains("does not fit the") && Catch::Contains(std::to_string(widest)));
    CHECK_THROWS_AS(cuda::comet_forward(route_only(2, widest + 1, 1, kernel), inputs(2, 1, 1)), std::invalid_argument);
    CHECK_THROWS_WITH(cuda::comet_forward(route_only(2, 8, 0, kernel), inputs(2, 1, 1)), Catch::Contains("k ≥ 1"));
    CHECK_THROWS_WITH(cuda::comet_forward(route_only(2, 8, 2, kernel, 3), inputs(2, 1, 1)), Catch::Contains("tie rule 3"));
    auto short_V = route_only(2, 8, 2, kernel);
    short_V.V[0].pop_back();
    CHECK_THROWS_AS(cuda::comet_forward(short_V, inputs(2, 1, 1)), std::invalid_argument);
    // A NaN reaching the router: refused by both kernels, as routing::kwta refuses it.
    Eigen::MatrixXd X = inputs(2, 3, 2);
    X(1, 2) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(cuda::comet_forward(route_only(2, 8, 2, kernel), X), Catch::Contains("NaN"));
    // The trainer checks the same before it uploads θ and the data.
    cuda::PlainTrainSpec spec{.widths = {2, widest + 1, 2}, .masks = cuda::PlainMasks::topk, .k = {1}, .kwta_kernel = kernel};
    const Eigen::VectorXd theta = Eigen::VectorXd::Zero(1);  // never read: the spec is refused first
    CHECK_THROWS_WITH(cuda::PlainTrainer(spec, theta, inputs(2, 4, 3), {0, 1, 0, 1}), Catch::Contains("does not fit the"));
    spec.widths = {2, 8, 2}, spec.k = {0};
    CHECK_THROWS_WITH(cuda::PlainTrainer(spec, theta, inputs(2, 4, 3), {0, 1, 0, 1}), Catch::Contains("k ≥ 1"));
  }
}

/// At the widest column the kernel takes (and at 8,192, past the 48 KB default where the opt-in path begins): the
/// masks keep k units per column, as routing::kwta decides on the same C.
void widest_columns_fit(const cuda::KwtaLimits& limits) {
  for (KwtaKernel kernel : kKernels)
    for (int N : {8192, limits.widest(kernel)}) {
      CAPTURE(int(kernel), N);
      const auto nets = route_only(3, N, N / 10, kernel);
      const Eigen::MatrixXd X = inputs(3, 2, 4);
      const cuda::CometGpuOutput out = cuda::comet_forward(nets, X);
      const Eigen::MatrixXd C = Eigen::Map<const Eigen::MatrixXd>(nets.V[0].data(), N, 3) * X;
      for (Eigen::Index j = 0; j < X.cols(); ++j) CHECK(out.mask(0, 1).col(j) == routing::kwta(C.col(j), N / 10));
    }
}

/// Tie-heavy columns through the identity router (C = X0 exactly): small integer levels, ±0 and denormals, under
/// both kernels and all three tie rules, against routing::kwta (issue 51: ties never reached the device kernel).
void ties_match_kwta() {
  const int n = 24, M = 400;
  std::mt19937_64 gen(11);
  const double atoms[] = {0.0, -0.0, std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::denorm_min(), 1e-310, 1.0, 2.0, -1.0};
  Eigen::MatrixXd X(n, M);
  for (Eigen::Index j = 0; j < M; ++j)
    for (Eigen::Index i = 0; i < n; ++i) X(i, j) = j % 2 ? double(gen() % 3) : atoms[gen() % 8];
  for (KwtaKernel kernel : kKernels)
    for (int rule : {0, 1, 2})
      for (int k : {1, 5, 12, 23, 24, 30}) {
        CAPTURE(int(kernel), rule, k);
        const cuda::CometGpuOutput out = cuda::comet_forward(route_only(n, n, k, kernel, rule, true), X);
        int differ = 0;
        for (Eigen::Index j = 0; j < M; ++j) differ += out.mask(0, 1).col(j) != routing::kwta(X.col(j), k, routing::TieRule(rule));
        CHECK(differ == 0);
      }
}

/// Launches of different widths from several threads at once under selection, each result equal to the same
/// launch made alone (issue 51, fix 1: the shared-memory cap once followed each call's width).
void concurrent_widths(int rounds) {
  const Eigen::MatrixXd X = inputs(4, 16, 5);
  std::vector<cuda::CometGpuNets> nets;
  std::vector<Eigen::MatrixXd> alone;
  for (int N : {64, 2048, 300, 1500}) {
    nets.push_back(route_only(4, N, N / 7, KwtaKernel::select));
    alone.push_back(cuda::comet_forward(nets.back(), X).mask(0, 1));
  }
  std::vector<int> failures(nets.size(), 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < nets.size(); ++t)
    threads.emplace_back([&, t] {
      sparseact::cuda::bind_thread();
      for (int r = 0; r < rounds; ++r) {
        try {
          failures[t] += cuda::comet_forward(nets[t], X).mask(0, 1) != alone[t];
        } catch (const std::exception&) {
          ++failures[t];
        }
      }
    });
  for (auto& th : threads) th.join();
  for (std::size_t t = 0; t < nets.size(); ++t) CHECK(failures[t] == 0);
}

struct StandinOn {
  StandinOn() { cuda::use_standin(cuda::Standin::exact); }
  ~StandinOn() { cuda::use_standin(cuda::Standin::off); }
};

}  // namespace

TEST_CASE("k-WTA limits: the stand-in enforces an H100's, derived from its shared memory", "[standin][kwta_limits]") {
  // (opt-in − static)/8 per kernel: 232,448 B on an H100; an A100 (166,912 B) and sm_86/89 (101,376 B) take less.
  CHECK(cuda::kStandinKwtaLimits.count_widest == 29056);
  CHECK(cuda::kStandinKwtaLimits.select_widest == 28924);
  CHECK(cuda::kwta_limits_for(166912, 0, 1056).select_widest == 20732);
  CHECK(cuda::kwta_limits_for(101376, 0, 1056).select_widest == 12540);
  CHECK(cuda::kwta_limits_for(512, 1056, 1056).select_widest == 0);
  const StandinOn on;
  CHECK(cuda::kwta_limits().select_widest == cuda::kStandinKwtaLimits.select_widest);
}

TEST_CASE("The stand-in refuses what the card refuses, before any work: too wide, k < 1, an unknown tie rule, NaN",
          "[standin][kwta_limits]") {
  const StandinOn on;
  refuses_before_any_work(cuda::kwta_limits());
}

TEST_CASE("The stand-in at the widest columns, on tie-heavy columns and from several threads", "[standin][kwta_limits]") {
  const StandinOn on;
  widest_columns_fit(cuda::kwta_limits());
  ties_match_kwta();
  concurrent_widths(3);
}

TEST_CASE("The card refuses too wide, k < 1, an unknown tie rule and NaN, before any work", "[cuda][routing][kwta_limits]") {
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible: the card's k-WTA limits are not tested here (the stand-in's are, [standin])");
    return;
  }
  refuses_before_any_work(cuda::kwta_limits());
}

TEST_CASE("The card at 8,192 units and at its widest column, on both kernels (the opt-in shared-memory path)",
          "[cuda][routing][kwta_limits]") {
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible: the opt-in path is not tested here");
    return;
  }
  widest_columns_fit(cuda::kwta_limits());
}

TEST_CASE("The card's k-WTA on tie-heavy columns: both kernels, every rule, as routing::kwta", "[cuda][routing][kwta_limits]") {
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible: tie-heavy columns are not tested on a card here");
    return;
  }
  ties_match_kwta();
}

TEST_CASE("The card under launches of different widths from several threads (selection)", "[cuda][routing][kwta_limits]") {
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible: concurrent launches are not tested here");
    return;
  }
  concurrent_widths(200);
}

namespace {

/// A plan run many times (several p_k, two input sets, a refused run between) against one-shot calls; a run that
/// wants only the masks leaves x and the output empty.
void plan_matches_one_shot() {
  using namespace sparseact::routing;
  std::vector<CometNet> owned;
  for (int b = 0; b < 3; ++b) owned.push_back(make_comet_net({.widths = {12, 40, 30, 5}}, 7, std::uint64_t(b)));
  std::vector<const CometNet*> nets;
  for (const CometNet& n : owned) nets.push_back(&n);
  CometGpuBatch batch(nets);
  for (std::uint64_t seed : {1, 2})
    for (double p_k : {0.1, 0.5, 1.0}) {
      CAPTURE(seed, p_k);
      const Eigen::MatrixXd X = inputs(12, 9, seed);
      const auto planned = batch.forward(X, p_k);
      const auto one_shot = comet_forward_batch(nets, X, p_k, 0, Device::cuda);
      REQUIRE(planned.size() == one_shot.size());
      for (std::size_t b = 0; b < planned.size(); ++b) {
        CHECK(planned[b].output == one_shot[b].output);
        for (std::size_t l = 0; l < planned[b].hidden.size(); ++l) {
          CHECK(planned[b].hidden[l].mask() == one_shot[b].hidden[l].mask());
          CHECK(planned[b].hidden[l].dense() == one_shot[b].hidden[l].dense());
        }
      }
      CHECK_THROWS_AS(batch.forward(inputs(11, 2, seed), p_k), std::invalid_argument);  // refused; the plan stays usable
    }
  // Masks only: the router's plan brings back m_ℓ and nothing else, equal to the one-shot masks.
  CometGpuMasks masks(owned[0].router);
  const Eigen::MatrixXd X = inputs(12, 9, 3);
  const auto m = masks.masks(X, 0.3);
  const auto once = comet_masks_gpu(owned[0].router, X, 0.3);
  REQUIRE(m.size() == once.size());
  for (std::size_t l = 0; l < m.size(); ++l) CHECK(m[l] == once[l]);
  cuda::CometGpuNets g{.widths = {12, 40, 30, 5}, .nets = 1, .k = {40, 30}};
  for (std::size_t l = 1; l < 4; ++l) {
    const std::size_t size = std::size_t(g.widths[l]) * g.widths[l - 1];
    if (l < 3) g.V.emplace_back(size, 0.5);
    g.W.emplace_back(size, 0.25);
  }
  cuda::CometGpuPlan plan(g);
  const cuda::CometGpuOutput o = plan.run(X, {4, 3}, {.masks = true, .x = false, .output = false});
  CHECK(o.mask(0, 1).rows() == 40);
  CHECK(o.x(0, 1).size() == 0);
  CHECK(o.output(0).size() == 0);
  // Named layers: only hidden layer 2 comes back, equal to the same layer of a full run.
  const cuda::CometGpuOutput full = plan.run(X, {4, 3});
  const cuda::CometGpuOutput second = plan.run(X, {4, 3}, {.masks = true, .x = true, .output = false, .kept = true, .layers = {2}});
  CHECK(second.mask(0, 1).size() == 0);
  CHECK(second.x(0, 1).size() == 0);
  CHECK(second.kept_count(0, 1).size() == 0);
  CHECK(second.mask(0, 2) == full.mask(0, 2));
  CHECK(second.x(0, 2) == full.x(0, 2));
  CHECK(second.kept_count(0, 2).size() == X.cols());
  CHECK_THROWS_WITH(plan.run(X, {0, 3}), Catch::Contains("k ≥ 1"));
  CHECK(plan.run(X, {4, 3}).output(0).rows() == 5);
  // The kept units compacted on the card equal the dense masks and x read column by column, under every tie rule
  // (inclusive can keep more than k: the second, wider pass), on inputs with ties (V = 0.5 everywhere ties every unit).
  for (int rule : {0, 1, 2}) {
    CAPTURE(rule);
    g.tie_rule = rule;
    cuda::CometGpuPlan tied(g);
    const cuda::CometGpuOutput d = tied.run(X, {4, 3}, {.masks = true, .x = true, .output = true, .kept = true});
    for (int l = 1; l <= 2; ++l) {
      const Eigen::MatrixXd& mask = d.mask(0, l);
      const Eigen::VectorXi count = (mask.array() != 0).cast<int>().colwise().sum().transpose();
      CHECK(d.kept_count(0, l) == count);
      CHECK(d.kept_index(0, l).rows() == count.maxCoeff());
      for (Eigen::Index j = 0; j < mask.cols(); ++j)
        for (Eigen::Index i = 0, t = 0; i < mask.rows(); ++i)
          if (mask(i, j) != 0) {
            CHECK(d.kept_index(0, l)(t, j) == i);
            CHECK(d.kept_value(0, l)(t, j) == d.x(0, l)(i, j));
            ++t;
          }
    }
  }
}

}  // namespace

TEST_CASE("A COMET plan on the stand-in: weights once, many runs, the same results as one-shot calls", "[standin][comet_plan]") {
  const StandinOn on;
  plan_matches_one_shot();
}

TEST_CASE("A COMET plan on the card: weights once, many runs, the same results as one-shot calls", "[cuda][routing][comet_plan]") {
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible: the resident plan is not tested on a card here");
    return;
  }
  plan_matches_one_shot();
}
