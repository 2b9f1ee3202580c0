// flatness/records and nn/data_cache: what paper 001's training analyses send as sweep items
// (app/sweep.hpp) comes back bit for bit, through the one serialisation; the per-process data
// cache hands every thread the same copy, equal to a fresh load.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include <sparseact/app/sweep.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/flatness/bound_run.hpp>
#include <sparseact/flatness/checkpoint.hpp>
#include <sparseact/flatness/records.hpp>
#include <sparseact/flatness/sparsity_log.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/data_cache.hpp>
#include <sparseact/nn/mlp.hpp>

using namespace sparseact;
using namespace sparseact::flatness;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same(const BlockStats& a, const BlockStats& b) {
  const double BlockStats::*fields[] = {&BlockStats::activation_density, &BlockStats::gradient_density, &BlockStats::flat_fraction,
                                        &BlockStats::zero_fraction, &BlockStats::eta_sq, &BlockStats::x_sq, &BlockStats::x_eta,
                                        &BlockStats::eta_KKt_eta, &BlockStats::grad_x_sq, &BlockStats::gV_alpha, &BlockStats::gV_sq,
                                        &BlockStats::trace_KKt, &BlockStats::trace_M, &BlockStats::gK_sq_active, &BlockStats::active_count,
                                        &BlockStats::zeroth_bias_norm, &BlockStats::ln_scale_min};
  for (auto f : fields)
    if (!same_bits(a.*f, b.*f)) return false;
  return a.zeroth_bias == b.zeroth_bias;
}

/// Every field distinct and awkward: NaN, −0, ±inf, subnormals among ordinary values.
BlockStats odd_block(int k) {
  BlockStats b;
  double* fields[] = {&b.activation_density, &b.gradient_density, &b.flat_fraction, &b.zero_fraction, &b.eta_sq, &b.x_sq, &b.x_eta,
                      &b.eta_KKt_eta, &b.grad_x_sq, &b.gV_alpha, &b.gV_sq, &b.trace_KKt, &b.trace_M, &b.gK_sq_active, &b.active_count,
                      &b.zeroth_bias_norm, &b.ln_scale_min};
  int i = 0;
  for (double* f : fields) *f = std::ldexp(1.0 + 0.1 * k, i++) / 3.0;
  b.eta_KKt_eta = std::numeric_limits<double>::quiet_NaN();
  b.x_sq = -0.0;
  b.trace_M = k % 2 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  b.gV_alpha = std::numeric_limits<double>::denorm_min() * (k + 1);
  b.zeroth_bias = k % 2 == 1;
  return b;
}

app::Record through_bytes(const app::Record& r) { return app::deserialize(app::serialize(r)); }

}  // namespace

TEST_CASE("block statistics round-trip through a record, ragged rows included", "[flatness_items]") {
  const std::vector<std::vector<BlockStats>> rows = {{odd_block(0), odd_block(1), odd_block(2)}, {}, {odd_block(3)}};
  app::Record r;
  put_blocks(r, "b", rows);
  const auto back = get_blocks(through_bytes(r), "b");
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(back[i].size() == rows[i].size());
    for (std::size_t l = 0; l < rows[i].size(); ++l) CHECK(same(back[i][l], rows[i][l]));
  }
  CHECK(get_blocks(through_bytes(r), "b").size() == 3);
  app::Record broken = r;
  broken.set("b.sizes", std::vector<double>{3, 0, 2});  // promises more than the arrays hold
  CHECK_THROWS(get_blocks(broken, "b"));
  CHECK_THROWS(get_blocks(r, "absent"));
}

TEST_CASE("a sparsity log measured on a network round-trips and gives the same averages", "[flatness_items]") {
  nn::MlpConfig c;
  c.d_in = 5, c.d = 6, c.d_out = 3;
  for (int l = 0; l < 3; ++l) {
    nn::BlockConfig b;
    b.n = 9;
    b.activation = {nn::ActivationKind::weird_j_squared_relu, 0.5, 0.2, -0.3};
    b.zeroth_bias = true;
    c.blocks.push_back(b);
  }
  const nn::Mlp net = nn::make_mlp(c);
  SparsityLog log;
  for (long t : {0L, 5L, 10L}) {
    const Eigen::VectorXd theta = nn::init_params(net, 3, stream_id(1, static_cast<std::uint64_t>(t)));
    Eigen::MatrixXd x(5, 7);
    fill_random(x.data(), static_cast<std::size_t>(x.size()), Distribution::normal, 1.0, 4, static_cast<std::uint64_t>(t));
    log.record(t, net, theta, x);
  }
  app::Record r;
  put_sparsity_log(r, "log", log);
  const SparsityLog back = get_sparsity_log(through_bytes(r), "log");
  CHECK(back.steps == log.steps);
  REQUIRE(back.blocks.size() == log.blocks.size());
  for (std::size_t i = 0; i < log.size(); ++i)
    for (std::size_t l = 0; l < log.blocks[i].size(); ++l) CHECK(same(back.blocks[i][l], log.blocks[i][l]));
  CHECK(same_bits(back.integrated(&BlockStats::flat_fraction), log.integrated(&BlockStats::flat_fraction)));
  CHECK(back.layer_mean_curve(&BlockStats::activation_density) == log.layer_mean_curve(&BlockStats::activation_density));
}

TEST_CASE("checkpoints round-trip through a record, everything but the batch gradient", "[flatness_items]") {
  nn::MlpConfig c;
  c.d_in = 4, c.d = 5, c.d_out = 3;
  for (int l = 0; l < 2; ++l) {
    nn::BlockConfig b;
    b.n = 7;
    b.activation = {nn::ActivationKind::j_squared_relu};
    b.ln_affine = b.ln_bias = false;
    b.zeroth_bias = true;
    c.blocks.push_back(b);
  }
  const nn::Mlp net = nn::make_mlp(c);
  nn::Batch samples;
  samples.x.resize(4, 12);
  fill_random(samples.x.data(), static_cast<std::size_t>(samples.x.size()), Distribution::normal, 1.0, 9, 1);
  for (int s = 0; s < 12; ++s) samples.labels.push_back(s % 3);
  std::vector<Checkpoint> cps;
  for (long t : {0L, 20L}) {
    estimators::TraceOptions opt{.seed = 5, .stream = stream_id(3, static_cast<std::uint64_t>(t)), .batch = 4};
    opt.stop.min_samples = 4, opt.stop.max_samples = 12, opt.keep_history = true;
    cps.push_back(measure_checkpoint(net, nn::init_params(net, 2, stream_id(1, static_cast<std::uint64_t>(t))), samples, opt, t));
  }
  cps[1].bounds.theorem3_relu = std::numeric_limits<double>::quiet_NaN();
  app::Record r;
  put_checkpoints(r, "cp", cps);
  const std::vector<Checkpoint> back = get_checkpoints(through_bytes(r), "cp");
  REQUIRE(back.size() == cps.size());
  for (std::size_t i = 0; i < cps.size(); ++i) {
    const Checkpoint &a = cps[i], &b = back[i];
    CHECK(a.step == b.step);
    CHECK(same_bits(a.stats.loss, b.stats.loss));
    CHECK(same_bits(a.stats.accuracy, b.stats.accuracy));
    CHECK(same_bits(a.stats.grad_sq, b.stats.grad_sq));
    CHECK(a.stats.layer_grad_sq == b.stats.layer_grad_sq);
    CHECK(b.stats.batch_gradient.size() == 0);  // not sent
    REQUIRE(a.stats.blocks.size() == b.stats.blocks.size());
    for (std::size_t l = 0; l < a.stats.blocks.size(); ++l) CHECK(same(a.stats.blocks[l], b.stats.blocks[l]));
    for (auto f : {&BoundTerms::lemma4, &BoundTerms::lemma5, &BoundTerms::theorem2, &BoundTerms::corollary1, &BoundTerms::theorem3, &BoundTerms::theorem3_relu})
      CHECK(same_bits(a.bounds.*f, b.bounds.*f));
    CHECK(same_bits(a.traces.estimate, b.traces.estimate));
    CHECK(same_bits(a.traces.std_error, b.traces.std_error));
    CHECK(same_bits(a.traces.half_width, b.traces.half_width));
    CHECK(same_bits(a.traces.exact_part, b.traces.exact_part));
    CHECK(same_bits(a.traces.sample_variance, b.traces.sample_variance));
    CHECK(a.traces.probes == b.traces.probes);
    CHECK(a.traces.matvecs == b.traces.matvecs);
    CHECK(a.traces.converged == b.traces.converged);
    REQUIRE(a.traces.history.size() == b.traces.history.size());
    CHECK(!a.traces.history.empty());
    for (std::size_t k = 0; k < a.traces.history.size(); ++k) {
      CHECK(a.traces.history[k].probes == b.traces.history[k].probes);
      CHECK(same_bits(a.traces.history[k].estimate, b.traces.history[k].estimate));
      CHECK(same_bits(a.traces.history[k].half_width, b.traces.history[k].half_width));
    }
    REQUIRE(a.traces.segments.size() == b.traces.segments.size());
    CHECK(a.traces.segments.size() > 2);
    for (std::size_t k = 0; k < a.traces.segments.size(); ++k) {
      CHECK(a.traces.segments[k].name == b.traces.segments[k].name);
      CHECK(same_bits(a.traces.segments[k].estimate, b.traces.segments[k].estimate));
      CHECK(same_bits(a.traces.segments[k].std_error, b.traces.segments[k].std_error));
    }
    CHECK(same_bits(a.trace(), b.trace()));
    CHECK(same_bits(a.lemma4_gap(), b.lemma4_gap()));
  }
}

TEST_CASE("shared_fashion_mnist: one copy per process, equal to a fresh load, the same for every thread", "[flatness_items]") {
  const nn::Dataset* seen[4] = {};
  try {
    (void)nn::fashion_mnist("test", 150, 7);
  } catch (const InputError&) {
    WARN("Fashion-MNIST is not installed: nothing to check");
    return;
  }
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) threads.emplace_back([&, k] { seen[k] = &nn::shared_fashion_mnist("test", 150, 7); });
  for (auto& t : threads) t.join();
  for (int k = 1; k < 4; ++k) CHECK(seen[k] == seen[0]);
  const nn::Dataset fresh = nn::fashion_mnist("test", 150, 7);
  CHECK(seen[0]->x == fresh.x);
  CHECK(seen[0]->labels == fresh.labels);
  CHECK(seen[0]->description == fresh.description);
  CHECK(&nn::shared_fashion_mnist("test", 151, 7) != seen[0]);  // another subset, another copy
  CHECK_THROWS_AS(nn::shared_fashion_mnist("test", 20000, 7), InputError);  // failures are not cached: thrown each time
  CHECK_THROWS_AS(nn::shared_fashion_mnist("test", 20000, 7), InputError);
}

TEST_CASE("flatness_bounds' work item: checkpoints at step 0 and every `every`, the three bound identities agree, "
          "and the run repeats bit for bit", "[flatness][bound_run]") {
  const nn::Dataset data = nn::fashion_mnist("test", 150, 7);
  const nn::Batch eval = nn::make_batch(data, 0, 32);
  const BoundRunConfig cfg{.activation = nn::ActivationKind::j_squared_relu, .algorithm1 = true, .c = 0.1, .d = 4, .n = 8, .blocks = 1,
                           .batch = 16, .steps = 4, .every = 2, .max_probes = 10, .seed = 3, .stream = 1};
  const Record r = bound_run(cfg, data, eval);
  const std::vector<Checkpoint> cps = get_checkpoints(r, "cp");
  REQUIRE(cps.size() == 3);
  CHECK(cps[0].step == 0);
  CHECK(cps[2].step == 4);
  const std::vector<double>& l5 = r.arr("identities.lemma5");
  const std::vector<double>& t2 = r.arr("identities.theorem2");
  const std::vector<double>& c1 = r.arr("identities.corollary1");
  REQUIRE(t2.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {  // Lemma 5 summed = eq. (5) = eq. (6) for single-token features, from three formulas
    CHECK(l5[i] == Approx(t2[i]).epsilon(1e-10));
    CHECK(c1[i] == Approx(t2[i]).epsilon(1e-10));
    CHECK(cps[i].bounds.theorem2 == Approx(t2[i]).epsilon(1e-10));
  }
  CHECK(r.num("parameters") > 0);
  CHECK(bound_run(cfg, data, eval) == r);
  BoundRunConfig other = cfg;
  other.stream = 2;
  CHECK(bound_run(other, data, eval) != r);
}
