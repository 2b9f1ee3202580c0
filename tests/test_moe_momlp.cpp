// Algorithm 2 of paper 003 (moe/momlp): eq. (39)'s soft-prototype model against finite differences and a
// forward pass by hand, deepening that leaves the function unchanged at σ = 0, eq. (40)'s cells by eq. (5),
// and a MoMLP that fits a step function a single small net cannot.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/momlp.hpp>
#include <sparseact/moe/regression_study.hpp>
#include <sparseact/moe/voronoi.hpp>

using namespace sparseact;
using namespace sparseact::moe;

TEST_CASE("eq. (39): the soft-prototype output by hand", "[moe][momlp]") {
  // K = 2 constant experts (all weights 0, output biases 1 and 3), prototypes 0 and 1, x = 0.25:
  // d = (0.25, 0.75), s = softmax(−d) = (e^{−0.25}, e^{−0.75})/Σ, F = s₁·1 + s₂·3.
  SoftPrototypeModel model(2, nn::PreluMlp{{1, 2, 1}});
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(model.parameter_count());
  theta(0) = 0, theta(1) = 1;
  const Eigen::Index e = nn::parameter_count(model.expert());
  theta(2 + e - 1) = 1, theta(2 + 2 * e - 1) = 3;
  const double a = std::exp(-0.25), b = std::exp(-0.75);
  CHECK(model.forward(theta, Eigen::MatrixXd::Constant(1, 1, 0.25))(0, 0) == Approx((a + 3 * b) / (a + b)).epsilon(1e-14));
}

TEST_CASE("eq. (39): gradients in θ (prototypes and experts) equal central finite differences", "[moe][momlp]") {
  SoftPrototypeModel model(3, nn::PreluMlp{{2, 4, 2}});
  Rng rng(5, 5);
  Eigen::MatrixXd X(2, 7), G(2, 7);
  for (auto& v : X.reshaped()) v = rng.normal();
  for (auto& v : G.reshaped()) v = rng.normal();
  const Eigen::VectorXd theta = model.init(X, 3, 4, 0.3);
  model.forward(theta, X);
  Eigen::VectorXd grad;
  model.backward(theta, G, grad);
  const auto value = [&](const Eigen::VectorXd& t) { return (model.forward(t, X).array() * G.array()).sum(); };
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < theta.size(); ++i) {
    Eigen::VectorXd tp = theta, tm = theta;
    tp(i) += h, tm(i) -= h;
    CHECK(grad(i) == Approx((value(tp) - value(tm)) / (2 * h)).margin(1e-7));
  }
}

TEST_CASE("deepening: σ = 0 leaves the function unchanged, σ > 0 only perturbs it", "[moe][momlp]") {
  const nn::PreluMlp net{{2, 5, 1}};
  const PreluNet shallow{net, nn::init_prelu_mlp(net, 1, 2, 0.25)};
  Rng rng(9, 9);
  Eigen::MatrixXd X(2, 20);
  for (auto& v : X.reshaped()) v = rng.normal();
  const PreluNet same = deepen(shallow, 2, 0.0, 1, 3);
  CHECK(same.net.widths == std::vector<int>{2, 5, 5, 5, 1});
  CHECK((predict(same, X) - predict(shallow, X)).cwiseAbs().maxCoeff() < 1e-14);
  const PreluNet noisy = deepen(shallow, 2, 1e-3, 1, 3);
  const double moved = (predict(noisy, X) - predict(shallow, X)).cwiseAbs().maxCoeff();
  CHECK(moved > 0);
  CHECK(moved < 0.05);
  CHECK_THROWS(deepen({nn::PreluMlp{{2, 1}}, Eigen::VectorXd::Zero(3)}, 1, 0, 1, 1));
}

TEST_CASE("Algorithm 2: cells follow eq. (5); experts fit their cells; deterministic", "[moe][momlp]") {
  // y = sign-like step at 0.5 on [0, 1]: two cells split at their prototypes' bisector.
  nn::Dataset data;
  const int N = 200;
  data.x.resize(1, N), data.y.resize(1, N);
  for (int i = 0; i < N; ++i) data.x(0, i) = (i + 0.5) / N, data.y(0, i) = data.x(0, i) < 0.5 ? -1.0 : 1.0;
  MomlpSettings s{.K = 2, .width = 8, .hidden_layers = 2, .stage1_epochs = 20, .epochs = 200, .batch = 20, .lr = 1e-2, .sigma = 1e-2};
  const Momlp m = train_momlp(data, s, 7, 1);
  REQUIRE(m.experts.size() == 2);
  const std::vector<Eigen::Index> cells = route(m.prototypes, data.x);
  Eigen::Index counted = 0;
  for (int i = 0; i < N; ++i) CHECK(cells[std::size_t(i)] == voronoi_cell(data.x.col(i), m.prototypes));
  for (Eigen::Index c : m.cell_sizes) counted += c;
  CHECK(counted == N);
  const Eigen::MatrixXd F = predict(m, data.x);
  for (int i = 0; i < N; ++i) CHECK(F(0, i) == Approx(predict(m.experts[std::size_t(cells[std::size_t(i)])], data.x.col(i))(0, 0)).epsilon(1e-12));  // one column vs a batch: GEMM may round differently
  const double mse = (F - data.y).squaredNorm() / N;
  CHECK(mse < 0.05);
  const Momlp again = train_momlp(data, s, 7, 1);
  CHECK((predict(again, data.x) - F).cwiseAbs().maxCoeff() == 0.0);
  CHECK_THROWS(train_momlp(data, MomlpSettings{.K = 0}, 1, 1));
  nn::Dataset unlabelled;
  unlabelled.x = data.x;  // neither targets nor labels: refused, not read past an empty label list
  CHECK_THROWS_AS(train_momlp(unlabelled, s, 1, 1), InputError);
}

TEST_CASE("run_regression: standardised targets make every model's MSE shift- and scale-equivariant, in the targets' units",
          "[moe][momlp][regression_study]") {
  // Training on (y − μ)/s sees the same numbers for y and a + b·y, so the answers are a + b·(the same): test MSE × b².
  const Split split = split_80_20(grid_dataset(Target::ackley2, 8, 0.5, 3), 3, 7);
  Split moved = split;
  moved.train.y = (split.train.y.array() * 10.0 + 100.0).matrix();
  moved.test.y = (split.test.y.array() * 10.0 + 100.0).matrix();
  const MomlpSettings s{.K = 2, .width = 4, .hidden_layers = 2, .stage1_epochs = 1, .epochs = 2, .batch = 8};
  for (Model m : {Model::momlp, Model::baseline, Model::equal_active}) {
    CAPTURE(to_string(m));
    const RegressionResult a = run_regression({.model = m, .K = 2, .momlp = s}, split, 1, 2);
    const RegressionResult b = run_regression({.model = m, .K = 2, .momlp = s}, moved, 1, 2);
    CHECK(b.test_mse == Approx(100 * a.test_mse).epsilon(1e-6));
    CHECK(b.train_mse == Approx(100 * a.train_mse).epsilon(1e-6));
    // Without standardisation the same run sees other numbers, and Adam's bounded steps leave the +100 offset far away.
    const RegressionResult raw = run_regression({.model = m, .K = 2, .momlp = s, .standardize_targets = false}, moved, 1, 2);
    CHECK(raw.test_mse > 10 * b.test_mse);
  }
}

TEST_CASE("momlp_regression's items: Table 4 with a K sweep and a Hurst sweep, read back by target, model and K",
          "[moe][regression_study]") {
  // 2 targets × 2 runs × (3 K's + baseline + width-w MLP) = 20, then fBm at H = 0.3: 2 runs × (MoMLP, baseline) = 4;
  // H = 0.5 is the main comparison's and adds nothing.
  const std::vector<StudyItem> items = study_items({Target::fbm, Target::ackley2}, 2, {1, 2, 4}, 4, 0.5, {0.3, 0.5});
  REQUIRE(items.size() == 24);
  CHECK(items[3].model == Model::baseline);
  CHECK(items[3].K == 4);
  CHECK(items[20].hurst == 0.3);
  CHECK(sweep_key(items[1]) == "target=fbm hurst=0.5 run=0 model=momlp K=2");
  CHECK(study_items({Target::ackley2}, 2, {4}, 4, 0.5, {0.3}).size() == 6);  // no fBm: no Hurst sweep

  std::vector<Record> records;
  for (std::size_t i = 0; i < items.size(); ++i) {
    RegressionResult r;
    r.test_mse = double(i), r.train_mse = 0.5 * double(i);
    if (items[i].model == Model::momlp) r.cell_sizes = {7, 3, 5};
    records.push_back(to_record(r));
  }
  // The MoMLP at K = 2 on fBm, H = 0.5: items 1 (run 0) and 6 (run 1).
  CHECK(test_mses(items, records, Target::fbm, 0.5, Model::momlp, 2) == std::vector<double>{1, 6});
  CHECK(test_mses(items, records, Target::fbm, 0.3, Model::baseline, 4) == std::vector<double>{21, 23});
  const Table t = runs_table(items, records);
  REQUIRE(t.rows.size() == 24);
  CHECK(t.rows[1][9] == 3);             // the smallest cell
  CHECK(std::isnan(t.rows[3][9]));      // a baseline has no cells
  CHECK(t.rows[5][0] == double(Target::fbm));
  CHECK(t.rows[5][2] == 1);             // run 1
}
