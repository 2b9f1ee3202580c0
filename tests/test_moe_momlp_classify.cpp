// Paper 003 §6.2's MoMLP classifier (moe/momlp_classify): the weighted loss's class weights by hand, routing by
// eq. (5), a tiny run deterministic and routed as voronoi_cell says, parameter counts, a one-point cell answering
// its majority class, bad configurations refused.
#include <catch2/catch.hpp>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/momlp_classify.hpp>
#include <sparseact/moe/voronoi.hpp>

using namespace sparseact;
using namespace sparseact::moe;

namespace {

/// Four blobs at ±4 e₁, ±4 e₂ in R⁵, two classes per blob split by the sign of the third coordinate
/// (labels 0–7), plus optional extra points.
nn::Dataset blobs(int per, std::uint64_t stream) {
  Rng rng(2, stream);
  nn::Dataset d;
  d.x.resize(5, 4 * per);
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < per; ++j) {
      const Eigen::Index c = k * per + j;
      for (Eigen::Index i = 0; i < 5; ++i) d.x(i, c) = rng.normal();
      d.x(k % 2, c) += k < 2 ? 4 : -4;
      d.labels.push_back(2 * k + (d.x(2, c) > 0));
    }
  return d;
}

void append(nn::Dataset& d, const Eigen::VectorXd& x, int label) {
  d.x.conservativeResize(Eigen::NoChange, d.x.cols() + 1);
  d.x.col(d.x.cols() - 1) = x;
  d.labels.push_back(label);
}

ClassifyConfig tiny() { return {.K = 4, .width = 8, .epochs = 3, .batch = 16, .seed = 5, .replicate = 1}; }

}  // namespace

TEST_CASE("weighted loss: class weights inversely proportional to the cell's class frequencies", "[moe][momlp_classify]") {
  const Eigen::VectorXd w = cell_class_weights({0, 0, 0, 1}, 3);  // n = 4, C = 2 classes present
  CHECK(w(0) == Approx(4.0 / 6));
  CHECK(w(1) == Approx(2.0));
  CHECK(w(2) == 0);
  CHECK(3 * w(0) == Approx(1 * w(1)));  // each present class carries the same total weight
}

TEST_CASE("route is eq. (5) column by column, lowest index on ties", "[moe][momlp_classify]") {
  const Eigen::MatrixXd P = (Eigen::MatrixXd(2, 3) << 0, 2, 0, 0, 0, 2).finished();
  const Eigen::MatrixXd X = (Eigen::MatrixXd(2, 4) << 1, 2, 0.1, 1, 0, 0.1, 1.9, 1).finished();  // (1, 0) and (1, 1) are ties
  const std::vector<Eigen::Index> cells = route(P, X);
  CHECK(cells == std::vector<Eigen::Index>{0, 1, 2, 0});
  for (Eigen::Index i = 0; i < X.cols(); ++i) CHECK(cells[std::size_t(i)] == voronoi_cell(X.col(i), P));
}

TEST_CASE("a tiny MoMLP run is deterministic, routes by voronoi_cell, and counts its parameters", "[moe][momlp_classify]") {
  const nn::Dataset train = blobs(40, 1), test = blobs(20, 2);
  for (const bool weighted : {false, true}) {
    CAPTURE(weighted);
    ClassifyConfig cfg = tiny();
    cfg.weighted = weighted;
    const ClassifyRun a = train_momlp_classifier(cfg, train, test), b = train_momlp_classifier(cfg, train, test);
    CHECK(a.test_acc == b.test_acc);
    CHECK(a.train_acc == b.train_acc);
    CHECK(a.prototypes == b.prototypes);
    CHECK(a.cell_test_acc.size() == 4);
    REQUIRE(a.prototypes.cols() == 4);
    std::vector<double> train_sizes(4, 0), test_sizes(4, 0);
    for (Eigen::Index i = 0; i < train.size(); ++i) ++train_sizes[std::size_t(voronoi_cell(train.x.col(i), a.prototypes))];
    for (Eigen::Index i = 0; i < test.size(); ++i) ++test_sizes[std::size_t(voronoi_cell(test.x.col(i), a.prototypes))];
    CHECK(a.cell_train == train_sizes);
    CHECK(a.cell_test == test_sizes);
    CHECK(a.degenerate_cells == 0);
    CHECK(a.params_expert == nn::parameter_count(classify_net(cfg, 5, 8, 8)));
    CHECK(a.params_total == 4 * a.params_expert);
    CHECK(a.params_baseline == nn::parameter_count(classify_net(cfg, 5, 8, 16)));  // w√K = 2w
  }
  const ClassifyRun base = train_classify_baseline(tiny(), train, test), again = train_classify_baseline(tiny(), train, test);
  CHECK(base.test_acc == again.test_acc);
  const ClassifyRun momlp = train_momlp_classifier(tiny(), train, test);
  CHECK(base.prototypes == momlp.prototypes);  // the baseline is scored on the same replicate's cells
  CHECK(base.cell_test == momlp.cell_test);
  CHECK(base.params_total == nn::parameter_count(classify_net(tiny(), 5, 8, 16)));
  ClassifyConfig longer = tiny();  // trained long enough for BatchNorm's running statistics to settle
  longer.epochs = 40;
  CHECK(train_momlp_classifier(longer, train, test).test_acc > 0.6);  // eight nearly separable classes, chance 1/8
  CHECK(baseline_width(64, 4) == 128);
  CHECK(baseline_width(10, 2) == 14);
}

TEST_CASE("a cell with one training point answers its label, and bad configurations are refused", "[moe][momlp_classify]") {
  nn::Dataset train = blobs(40, 3), test = blobs(10, 4);
  const Eigen::VectorXd far = Eigen::VectorXd::Constant(5, 100.0);
  append(train, far, 7), append(test, far.array() + 0.5, 7);
  ClassifyConfig cfg = tiny();
  cfg.K = 5;  // k-means++ takes the far point as a centre (its D² dwarfs every other)
  const ClassifyRun r = train_momlp_classifier(cfg, train, test);
  CHECK(r.degenerate_cells == 1);
  for (std::size_t k = 0; k < r.cell_train.size(); ++k)
    if (r.cell_train[k] == 1) {
      CHECK(r.cell_test[k] == 1);
      CHECK(r.cell_test_acc[k] == 1);
    }
  for (const auto& bad : {ClassifyConfig{.K = 0}, ClassifyConfig{.width = 0}, ClassifyConfig{.hidden_layers = 0}, ClassifyConfig{.epochs = -1},
                          ClassifyConfig{.batch = 1}, ClassifyConfig{.lr = 0}, ClassifyConfig{.K = 1000}})
    CHECK_THROWS_AS(train_momlp_classifier(bad, train, test), InputError);
}
