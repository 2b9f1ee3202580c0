// Training the top layer (paper 000 §5, App. D.1): RMSProp against a hand-computed step and nn::RmsProp
// stepped densely, convergence to the least-squares optimum, thread independence, and the dsm_vs_dense smoke test.
#include <catch2/catch.hpp>

#include <algorithm>

#include <cmath>
#include <numeric>
#include <omp.h>

#include <Eigen/QR>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/dsm.hpp>
#include <sparseact/lsh/train.hpp>
#include <sparseact/nn/optim.hpp>

#include "support.hpp"

using namespace sparseact;
using namespace sparseact::lsh;
using namespace test_support;

namespace {

Eigen::MatrixXd cube(Eigen::Index d, Eigen::Index n, std::uint64_t stream) {
  Eigen::MatrixXd M(d, n);
  fill_random(M.data(), static_cast<std::size_t>(M.size()), Distribution::uniform, 1.0 / std::sqrt(3.0), 13, stream);
  return M;
}

Eigen::VectorXd target(const Eigen::MatrixXd& X) {
  return (X.row(0).array() * X.row(1).array() + X.row(2).array().square() - 0.3 * X.row(0).array().sin()).matrix().transpose();
}

}  // namespace

TEST_CASE("The trainer's first full-batch step matches a hand computation", "[lsh][dsm][train]") {
  // From θ = 0: g = (2/N) Σ (0 − y_n) φ_n, E[g²] = 0.1 g², θ = −lr g/(√(0.1 g²) + ε).
  ActiveFeatures F;
  F.width = 2;
  F.all = true;
  F.val.resize(2, 3);
  F.val << 1, 2, 0, 0.5, 0, 1;
  Eigen::VectorXd y(3);
  y << 1, -1, 2;
  Eigen::VectorXd th = Eigen::VectorXd::Zero(2);
  TopLayerTraining opt;
  opt.optimizer.lr = 0.01;
  opt.batch = 3;
  opt.epochs = 1;
  train_rmsprop(th, F, y, opt, 1, 0);
  const double g0 = (2.0 / 3) * (-(1 * 1) - (2 * -1) - 0), g1 = (2.0 / 3) * (-(0.5 * 1) - 0 - (1 * 2));
  CHECK(th(0) == Approx(-0.01 * g0 / (std::sqrt(0.1 * g0 * g0) + 1e-7)).epsilon(1e-14));
  CHECK(th(1) == Approx(-0.01 * g1 / (std::sqrt(0.1 * g1 * g1) + 1e-7)).epsilon(1e-14));
  CHECK(paper_rmsprop().lr == 1e-5);  // App. D.1, with Keras's ρ and ε
  CHECK(paper_rmsprop().alpha == 0.9);
  CHECK(paper_rmsprop().eps == 1e-7);
}

TEST_CASE("Sparse RMSProp (lazy decay of E[g²]) equals nn::RmsProp stepped densely", "[lsh][dsm][train]") {
  const DsmModel m = make_dsm(3, 30, MaskKind::top_k, 3, BottomLayer{}, 4, 0);
  const Eigen::MatrixXd X = cube(3, 101, 1);
  const Eigen::VectorXd y = target(X);
  const ActiveFeatures F = features(m, X);
  TopLayerTraining opt;
  opt.optimizer.lr = 3e-3;
  opt.batch = 8;
  opt.epochs = 3;
  Eigen::VectorXd th = Eigen::VectorXd::Zero(30);
  const TrainLog log = train_rmsprop(th, F, y, opt, 21, 5);
  CHECK(log.steps == 3 * 13);
  // dense reference with the same minibatch order, written out (Fisher–Yates from Rng(21, stream_id(5, e)))
  Eigen::VectorXd ref = Eigen::VectorXd::Zero(30);
  nn::RmsProp dense = opt.optimizer;
  const Eigen::MatrixXd D = to_dense(F);
  std::vector<int> perm(101);
  for (int e = 0; e < 3; ++e) {
    std::iota(perm.begin(), perm.end(), 0);
    Rng rng(21, stream_id(5, e));
    for (int i = 100; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
    for (int b0 = 0; b0 < 101; b0 += 8) {
      const int nb = std::min(8, 101 - b0);
      Eigen::VectorXd g = Eigen::VectorXd::Zero(30);
      for (int i = 0; i < nb; ++i) {
        const int n = perm[b0 + i];
        g += (2.0 / nb) * (D.col(n).dot(ref) - y(n)) * D.col(n);
      }
      dense.step(ref, g);
    }
  }
  for (int j = 0; j < 30; ++j) CHECK(th(j) == Approx(ref(j)).margin(1e-12));

  // The lazy form holds for plain RMSProp only.
  for (int variant = 0; variant < 3; ++variant) {
    TopLayerTraining bad = opt;
    if (variant == 0) bad.optimizer.momentum = 0.9;
    if (variant == 1) bad.optimizer.centered = true;
    if (variant == 2) bad.optimizer.weight_decay = 0.1;
    Eigen::VectorXd t0 = Eigen::VectorXd::Zero(30);
    CHECK_THROWS_AS(train_rmsprop(t0, F, y, bad, 21, 5), std::invalid_argument);
  }
}

TEST_CASE("Least squares agrees with QR, and RMSProp converges to its optimum", "[lsh][dsm][train]") {
  const DsmModel m = make_dsm(3, 24, MaskKind::top_k, 8, BottomLayer{}, 6, 0);
  const Eigen::MatrixXd X = cube(3, 600, 2);
  const Eigen::VectorXd y = target(X);
  const ActiveFeatures F = features(m, X);
  const LeastSquaresFit fit = least_squares(F, y);
  // independent: Householder QR on the dense N × t design matrix (units never active dropped by QR's rank)
  const Eigen::MatrixXd Phi = to_dense(F).transpose();
  const Eigen::VectorXd qr = Phi.colPivHouseholderQr().solve(y);
  const double qr_mse = (Phi * qr - y).squaredNorm() / 600;
  CHECK(fit.train_mse == Approx(qr_mse).epsilon(1e-8));
  CHECK(fit.train_mse < 0.5 * y.squaredNorm() / 600);

  TopLayerTraining opt;
  opt.optimizer.lr = 1e-3;
  opt.batch = 600;  // full batch: RMSProp's only noise is its step size
  opt.epochs = 4000;
  opt.history = false;
  Eigen::VectorXd th = Eigen::VectorXd::Zero(24);
  const TrainLog log = train_rmsprop(th, F, y, opt, 1, 0);
  CHECK(log.train_mse.back() <= fit.train_mse * (1 + 1e-3));
  CHECK(log.train_mse.back() >= fit.train_mse * (1 - 1e-9));
}

TEST_CASE("Features and training give identical numbers for 1 and 2 threads", "[lsh][dsm][train][reproducible]") {
  const Eigen::MatrixXd X = cube(8, 3000, 3);
  const Eigen::VectorXd y = target(X);
  TopLayerTraining opt;
  opt.optimizer.lr = 1e-3;
  opt.epochs = 2;
  auto run_with = [&](int threads, MaskKind mask) {
    omp_set_num_threads(threads);
    const DsmModel m = make_dsm(8, 256, mask, 32, BottomLayer{}, 8, 0);
    const ActiveFeatures F = features(m, X);
    Eigen::VectorXd th = Eigen::VectorXd::Zero(256);
    const TrainLog log = train_rmsprop(th, F, y, opt, 3, 1, &F, &y);
    return std::make_pair(th, log.test_mse);
  };
  const int before = omp_get_max_threads();
  for (MaskKind mask : {MaskKind::top_k, MaskKind::random_hash, MaskKind::dense}) {
    const auto a = run_with(1, mask), b = run_with(2, mask);
    CHECK(a.first == b.first);
    CHECK(a.second == b.second);
  }
  omp_set_num_threads(before);
}

TEST_CASE("dsm_vs_dense --scale quick writes a complete JSON", "[lsh][dsm][analysis]") {
  const fs::path out = fresh_dir("dsm_vs_dense_quick");
  // Table 1 at small widths: the paper's (the default) take minutes.
  const Run r = run("dsm_vs_dense --scale quick --table1-units 32,64,128 --device cpu --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  const nlohmann::json j = read_json(out / "dsm_vs_dense.json");
  require_contract_fields(j, "dsm_vs_dense");
  CHECK(j["paper"] == "000");
  CHECK(j["params"]["scale"] == "quick");
  CHECK(j["checks"].size() >= 4);
  for (const auto& c : j["checks"]) {  // per-point claims: a short count in measured, every point in detail
    CAPTURE(c["id"]);
    CHECK((c["measured"].is_number() || c["measured"].is_string()));
    CHECK_FALSE(c["detail"].is_null());
  }
  CHECK(j["checks"][0]["id"] == "dsm_beats_dense_poly");
  // "beats at every K" is one paired direction over seeds of each seed's worst K: every K < T = 256 (8, 16, 32) in detail.
  CHECK(j["checks"][0]["detail"]["per_K"].size() == 3);
  CHECK(j["checks"][0]["detail"]["relative_gains"].size() == 3);
  CHECK(j["checks"][0]["detail"]["min_over_points_per_seed"].size() == j["params"]["seeds"].get<std::size_t>());
  CHECK(j["checks"][0]["power"]["unit"] == "paired seeds");
  CHECK(j["data"]["table1"]["paper"].size() == 3);
  // Statistical directions over paired seeds: a verdict of the contract and the power at the effect that counts.
  for (const char* id : {"dsm_beats_dense_poly", "lsh_beats_dense_poly", "random_hash_underperforms_poly", "random_hash_underperforms_hypercube",
                         "table1_dsm25_beats_dense", "table1_dsm_small_beats_dense_large", "table1_gain_grows_with_K"}) {
    CAPTURE(id);
    const auto c = std::find_if(j["checks"].begin(), j["checks"].end(), [&](const nlohmann::json& x) { return x["id"] == id; });
    REQUIRE(c != j["checks"].end());
    CHECK((*c)["kind"] == "claim");
    const std::string verdict = (*c)["verdict"];
    CHECK((verdict == "holds" || verdict == "not reproduced" || verdict == "direction only" || verdict == "inconclusive"));
    CHECK_THAT((*c)["departure"].get<std::string>(), Catch::Contains("bottom-layer biases 0"));
    CHECK((*c)["power"]["power"].is_number());
    CHECK((*c)["power"]["unit"] == "paired seeds");
  }
  // Table 1's trend across rows: per seed, the least-squares slope of the gain on log₂ K over K = 32, 64, 128, which for three
  // equally spaced points is (gain at 128 − gain at 32)/2, read from table1_dsm25_beats_dense's per-row gains.
  const auto by_id = [&](const char* id) -> const nlohmann::json& {
    return *std::find_if(j["checks"].begin(), j["checks"].end(), [&](const nlohmann::json& x) { return x["id"] == id; });
  };
  const auto& rows = by_id("table1_dsm25_beats_dense")["detail"]["relative_gains"];
  const auto& slopes = by_id("table1_gain_grows_with_K")["detail"]["slope_per_seed"];
  REQUIRE(rows.size() == 3);
  REQUIRE(slopes.size() == rows[0]["relative_gain_per_seed"].size());
  for (std::size_t r = 0; r < slopes.size(); ++r)
    CHECK(slopes[r].get<double>() == Approx((rows[2]["relative_gain_per_seed"][r].get<double>() -
                                             rows[0]["relative_gain_per_seed"][r].get<double>()) / 2).margin(1e-12));
  // Off the paper's widths, its slope is a smallest effect of interest, never the paper's effect.
  CHECK(by_id("table1_gain_grows_with_K")["tolerance"]["effect_papers"] == false);
  // The bottom layers start with zero biases (Keras's default), recorded as a departure (above): §5.1 says "random-initialized".
  CHECK(j["params"]["bias-range"] == 0.0);
  CHECK(fs::exists(out / "table1.csv"));
  CHECK(fs::exists(out / "sweep.csv"));
}

TEST_CASE("dsm_vs_dense rejects a bad flag with exit 2 and writes nothing", "[lsh][dsm][analysis][cli]") {
  const fs::path out = fresh_dir("dsm_vs_dense_bad");
  for (const std::string flags : {"--lr 0", "--epochs -1", "--no-such-flag", "--scale huge", "--widths 8 --units 8,16", "--seeds 1",
                                  "--table1-seeds 1"}) {
    CAPTURE(flags);
    const Run r = run("dsm_vs_dense " + flags + " --out " + out.string());
    CHECK(r.code == 2);
    CHECK_FALSE(fs::exists(out));
  }
}
