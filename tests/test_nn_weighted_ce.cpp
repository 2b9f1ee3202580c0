// Weighted cross-entropy (nn/loss; paper 003 §6.2's "weighted" loss, torch's CrossEntropyLoss(weight=w)): the value
// and gradient by hand and by central finite differences, equal weights give the unweighted loss, empty weights
// give its very bits, bad weights are refused, and nn::train passes TrainOptions::class_weights through.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/prelu_mlp.hpp>
#include <sparseact/nn/train.hpp>

using namespace sparseact;
using namespace sparseact::nn;

namespace {

Batch labelled(std::vector<int> labels) {
  Batch b;
  b.labels = std::move(labels);
  return b;
}

Eigen::MatrixXd logits() {
  Rng rng(5, 1);
  Eigen::MatrixXd F(3, 4);
  for (auto& v : F.reshaped()) v = 2 * rng.normal();
  return F;
}

}  // namespace

TEST_CASE("weighted cross-entropy: Σ w_y ℓ / Σ w_y and its gradient, by hand", "[nn][loss]") {
  const Eigen::MatrixXd F = logits();
  const Batch b = labelled({0, 2, 2, 1});
  const Eigen::Vector3d w(0.5, 3.0, 1.25);
  double num = 0, den = 0;
  Eigen::MatrixXd want(3, 4);
  for (int s = 0; s < 4; ++s) {
    const double z = std::exp(F(0, s)) + std::exp(F(1, s)) + std::exp(F(2, s));
    const int y = b.labels[std::size_t(s)];
    num += w(y) * (std::log(z) - F(y, s)), den += w(y);
    for (int i = 0; i < 3; ++i) want(i, s) = w(y) * (std::exp(F(i, s)) / z - (i == y));
  }
  want /= den;
  Eigen::MatrixXd dF;
  CHECK(loss_value(LossKind::cross_entropy, F, b, &dF, w) == Approx(num / den).epsilon(1e-14));
  for (Eigen::Index i = 0; i < dF.size(); ++i) CHECK(dF.reshaped()(i) == Approx(want.reshaped()(i)).margin(1e-15));
  const double h = 1e-6;  // and by central differences
  for (Eigen::Index i = 0; i < F.size(); ++i) {
    Eigen::MatrixXd Fp = F, Fm = F;
    Fp.reshaped()(i) += h, Fm.reshaped()(i) -= h;
    const double fd = (loss_value(LossKind::cross_entropy, Fp, b, nullptr, w) - loss_value(LossKind::cross_entropy, Fm, b, nullptr, w)) / (2 * h);
    CHECK(dF.reshaped()(i) == Approx(fd).margin(1e-9));
  }
}

TEST_CASE("equal class weights give the unweighted loss, and empty weights its very bits", "[nn][loss]") {
  const Eigen::MatrixXd F = logits();
  const Batch b = labelled({1, 1, 0, 2});
  Eigen::MatrixXd d0, d1, d2;
  const double plain = loss_value(LossKind::cross_entropy, F, b, &d0);
  CHECK(loss_value(LossKind::cross_entropy, F, b, &d1, Eigen::Vector3d::Constant(2.5)) == Approx(plain).epsilon(1e-15));
  CHECK(d1.isApprox(d0, 1e-14));
  CHECK(loss_value(LossKind::cross_entropy, F, b, &d2, Eigen::VectorXd()) == plain);
  CHECK(d2 == d0);
}

TEST_CASE("bad class weights are refused", "[nn][loss]") {
  const Eigen::MatrixXd F = logits();
  const Batch b = labelled({0, 0, 1, 1});
  CHECK_THROWS_AS(loss_value(LossKind::cross_entropy, F, b, nullptr, Eigen::Vector2d(1, 1)), std::invalid_argument);
  CHECK_THROWS_AS(loss_value(LossKind::cross_entropy, F, b, nullptr, Eigen::Vector3d(1, -1, 1)), std::invalid_argument);
  CHECK_THROWS_AS(loss_value(LossKind::cross_entropy, F, b, nullptr, Eigen::Vector3d(1, NAN, 1)), std::invalid_argument);
  CHECK_THROWS_AS(loss_value(LossKind::cross_entropy, F, b, nullptr, Eigen::Vector3d(0, 0, 1)), std::invalid_argument);  // Σ w_y = 0
  Batch m;
  m.y = F;
  CHECK_THROWS_AS(loss_value(LossKind::mse, F, m, nullptr, Eigen::Vector3d(1, 1, 1)), std::invalid_argument);
}

TEST_CASE("nn::train minimises the weighted loss of TrainOptions::class_weights", "[nn][loss][train]") {
  Dataset d;
  Rng rng(9, 2);
  d.x.resize(2, 8);
  for (auto& v : d.x.reshaped()) v = rng.normal();
  d.labels = {0, 1, 2, 0, 1, 2, 0, 0};
  PreluModel model(PreluMlp{{2, 4, 3}});
  Eigen::VectorXd theta = init_prelu_mlp(model.net(), 1, 1);
  BatchStream stream(d, 4, 1, 1);
  Sgd sgd;
  const Eigen::Vector3d w(0.25, 1.0, 4.0);
  PreluModel probe(model.net());
  long steps = 0;
  train(model, theta, sgd, constant_schedule(0.1), stream, TrainOptions{.steps = 3, .class_weights = w}, [&](const TrainStep& s) {
    Eigen::MatrixXd dF;
    CHECK(s.loss == loss_value(LossKind::cross_entropy, probe.forward(s.theta, s.batch.x), s.batch, &dF, w));
    Eigen::VectorXd g;
    probe.backward(s.theta, dF, g);
    CHECK(s.grad == g);
    ++steps;
  });
  CHECK(steps == 3);
}
