// Tests of nn/data and nn/train: the training loop on a model that is not an nn::Mlp (a linear model
// under MSE) reaches the least-squares optimum that Eigen's QR and the normal equations give; the
// callbacks see the batches the stream hands out and the gradient of each step (against central
// differences and nn's own backward pass); nn::Mlp through the loop takes the same iterates as the loop
// it replaced; and the batch stream's permutations are pinned to the values the code gave before it
// moved into nn/ (so every analysis keeps its numbers).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/recipes.hpp>
#include <sparseact/nn/idx.hpp>
#include <sparseact/nn/train.hpp>

namespace nn = sparseact::nn;
using sparseact::InputError;
using sparseact::Rng;

namespace {

// F = W x + b, θ = (vec W, b) with W ∈ R^{d_out×d_in} column-major.
struct LinearModel {
  Eigen::Index d_in = 0, d_out = 0;
  Eigen::MatrixXd x;  // the last forward's input

  Eigen::Index num_params() const { return d_out * d_in + d_out; }
  Eigen::MatrixXd forward(const Eigen::VectorXd& theta, const Eigen::MatrixXd& in) {
    x = in;
    const Eigen::Map<const Eigen::MatrixXd> W(theta.data(), d_out, d_in);
    Eigen::MatrixXd F = W * in;
    F.colwise() += theta.tail(d_out);
    return F;
  }
  // ∂L/∂W = G xᵀ, ∂L/∂b = G 1
  void backward(const Eigen::VectorXd&, const Eigen::MatrixXd& G, Eigen::VectorXd& grad) {
    grad.resize(num_params());
    Eigen::Map<Eigen::MatrixXd>(grad.data(), d_out, d_in) = G * x.transpose();
    grad.tail(d_out) = G.rowwise().sum();
  }
};

// y = A x + c + 0.3·noise, x standard normal: N samples, d_in = 3, d_out = 2.
nn::Dataset regression_data(Eigen::Index N) {
  Rng rng(5, 1);
  nn::Dataset d;
  d.x.resize(3, N);
  d.y.resize(2, N);
  Eigen::MatrixXd A(2, 3);
  A << 1.0, -2.0, 0.5, 0.3, 0.0, -1.5;
  const Eigen::Vector2d c(0.7, -0.2);
  for (Eigen::Index s = 0; s < N; ++s) {
    for (int i = 0; i < 3; ++i) d.x(i, s) = rng.normal();
    d.y.col(s) = A * d.x.col(s) + c;
    for (int i = 0; i < 2; ++i) d.y(i, s) += 0.3 * rng.normal();
  }
  d.description = "synthetic linear regression";
  return d;
}

// The least-squares θ* by Householder QR on the design matrix [xᵀ 1] (N × 4), one column per output.
Eigen::VectorXd least_squares_qr(const nn::Dataset& d) {
  const Eigen::Index N = d.x.cols();
  Eigen::MatrixXd Phi(N, 4);
  Phi.leftCols(3) = d.x.transpose();
  Phi.col(3).setOnes();
  const Eigen::MatrixXd beta = Phi.colPivHouseholderQr().solve(d.y.transpose());  // 4 × 2
  Eigen::VectorXd theta(8);
  Eigen::Map<Eigen::MatrixXd>(theta.data(), 2, 3) = beta.topRows(3).transpose();
  theta.tail(2) = beta.row(3).transpose();
  return theta;
}

nn::Dataset classification_data(Eigen::Index N) {
  Rng rng(9, 2);
  nn::Dataset d;
  d.x.resize(4, N);
  for (Eigen::Index s = 0; s < N; ++s) {
    for (int i = 0; i < 4; ++i) d.x(i, s) = rng.normal();
    d.labels.push_back(static_cast<int>(rng.below(3)));
  }
  return d;
}

nn::Mlp small_mlp() {
  nn::BlockConfig b;
  b.activation.kind = nn::ActivationKind::j_squared_relu;
  b.zeroth_bias = true;
  return nn::make_mlp(nn::uniform_mlp_config(4, 6, 8, 2, b, 3));
}

}  // namespace

TEST_CASE("the loop trains a linear model under MSE to the least-squares optimum", "[nn][train]") {
  const nn::Dataset data = regression_data(200);
  const Eigen::VectorXd star = least_squares_qr(data);
  // A second method: the normal equations (ΦᵀΦ) β = Φᵀ Y by Cholesky.
  {
    Eigen::MatrixXd Phi(200, 4);
    Phi.leftCols(3) = data.x.transpose();
    Phi.col(3).setOnes();
    const Eigen::MatrixXd beta = (Phi.transpose() * Phi).llt().solve(Phi.transpose() * data.y.transpose());
    CHECK((beta.topRows(3).transpose() - Eigen::Map<const Eigen::MatrixXd>(star.data(), 2, 3)).norm() < 1e-12);
  }
  LinearModel model{3, 2, {}};

  SECTION("full batch, SGD with momentum: θ* to rounding") {
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(8);
    nn::Sgd opt;
    opt.momentum = 0.5;
    nn::BatchStream stream(data, 200, 1, 0);
    const double L = nn::train(model, theta, opt, nn::constant_schedule(0.3), stream,
                               {.steps = 400, .log_every = 0, .loss = nn::LossKind::mse});
    CHECK((theta - star).norm() < 1e-10 * star.norm());
    CHECK(std::isfinite(L));
  }

  SECTION("minibatches of 20, AdamW without decay annealed to 0: close to θ*") {
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(8);
    nn::AdamW opt;
    opt.weight_decay = 0.0;
    nn::BatchStream stream(data, 20, 1, 0);
    nn::train(model, theta, opt, nn::cosine_schedule(0.05, 0, 3000), stream,
              {.steps = 3000, .log_every = 0, .loss = nn::LossKind::mse});
    CHECK((theta - star).norm() < 1e-2 * star.norm());
  }
}

TEST_CASE("the step callback sees each step's batch, loss and gradient; on_log sees θ after t steps", "[nn][train]") {
  SECTION("linear model: the gradient is a central difference of the batch loss") {
    const nn::Dataset data = regression_data(50);
    LinearModel model{3, 2, {}};
    Eigen::VectorXd theta = Eigen::VectorXd::LinSpaced(8, -0.5, 0.5);
    nn::Sgd opt;
    nn::BatchStream stream(data, 8, 3, 4), reference(data, 8, 3, 4);
    Eigen::VectorXd previous;
    double previous_lr = 0;
    Eigen::VectorXd prev_grad;
    long calls = 0;
    nn::train(model, theta, opt, nn::constant_schedule(0.05), stream, {.steps = 15, .log_every = 0, .loss = nn::LossKind::mse},
              [&](const nn::TrainStep& s) {
                CHECK(s.t == calls++);
                const nn::Batch& expected = reference.next();
                CHECK(s.batch.x == expected.x);
                CHECK(s.batch.y == expected.y);
                // θ_t = θ_{t−1} − η g_{t−1}: the callback runs before the update
                if (s.t > 0) CHECK((s.theta - (previous - previous_lr * prev_grad)).norm() < 1e-15);
                LinearModel probe{3, 2, {}};
                const double h = 1e-5;
                for (Eigen::Index i = 0; i < 8; ++i) {
                  Eigen::VectorXd tp = s.theta, tm = s.theta;
                  tp(i) += h;
                  tm(i) -= h;
                  const double fd = (nn::loss_value(nn::LossKind::mse, probe.forward(tp, s.batch.x), s.batch) -
                                     nn::loss_value(nn::LossKind::mse, probe.forward(tm, s.batch.x), s.batch)) /
                                    (2 * h);
                  CHECK(s.grad(i) == Approx(fd).epsilon(1e-7).margin(1e-9));
                }
                CHECK(s.loss == nn::loss_value(nn::LossKind::mse, probe.forward(s.theta, s.batch.x), s.batch));
                previous = s.theta;
                previous_lr = s.lr;
                prev_grad = s.grad;
              });
    CHECK(calls == 15);
  }

  SECTION("nn::Mlp: loss and gradient equal nn::loss_and_gradient; logs at 0, every k and the last step") {
    const nn::Dataset data = classification_data(60);
    const nn::Mlp net = small_mlp();
    Eigen::VectorXd theta = nn::init_params(net, 4, 0);
    nn::AdamW opt = nn::adamw_weights_only(net, 1e-2, 0.1);
    nn::BatchStream stream(data, 8, 2, 7), reference(data, 8, 2, 7);
    std::vector<nn::Batch> trained;
    std::vector<long> logged;
    std::vector<Eigen::MatrixXd> logged_x;
    nn::MlpModel model(net);
    nn::train(
        model, theta, opt, nn::constant_schedule(1e-2), stream, {.steps = 25, .log_every = 10},
        [&](const nn::TrainStep& s) {
          const nn::Batch& expected = reference.next();
          CHECK(s.batch.x == expected.x);
          CHECK(s.batch.labels == expected.labels);
          Eigen::VectorXd g;
          const double L = nn::loss_and_gradient(net, s.theta, s.batch, nn::LossKind::cross_entropy, g);
          CHECK(s.loss == L);
          CHECK(s.grad == g);
          // the model's caches are this step's pass: ∂L/∂F = (π − onehot)/B, columns sum to 0
          CHECK(model.signals().dlogits.colwise().sum().cwiseAbs().maxCoeff() < 1e-15);
          CHECK(model.cache().x == s.batch.x);
          trained.push_back(s.batch);
        },
        [&](long t, const nn::Batch& b) {
          logged.push_back(t);
          logged_x.push_back(b.x);
        });
    REQUIRE(trained.size() == 25);
    CHECK(logged == std::vector<long>{0, 10, 20, 25});
    CHECK(logged_x[0] == trained[0].x);   // before step 0: the batch it trains on
    CHECK(logged_x[1] == trained[9].x);   // after 10 steps: the batch of step 9
    CHECK(logged_x[2] == trained[19].x);
    CHECK(logged_x[3] == trained[24].x);
  }
}

TEST_CASE("nn::Mlp through the loop takes the iterates of the hand-written loop it replaced", "[nn][train]") {
  const nn::Dataset data = classification_data(64);
  const nn::Mlp net = small_mlp();
  const nn::LrSchedule schedule = nn::cosine_schedule(3e-2, 0, 30);
  Eigen::VectorXd a = nn::init_params(net, 1, 2), b = a;
  {
    nn::AdamW opt = nn::adamw_weights_only(net, 3e-2, 0.05);
    nn::BatchStream stream(data, 16, 5, 6);
    nn::MlpModel model(net);
    nn::train(model, a, opt, schedule, stream, {.steps = 30, .log_every = 7});
  }
  {
    // flatness::train before the move: forward, backward (cross-entropy), opt.step(θ, g, schedule(t))
    nn::AdamW opt = nn::adamw_weights_only(net, 3e-2, 0.05);
    nn::BatchStream stream(data, 16, 5, 6);
    nn::ForwardCache fwd;
    Eigen::VectorXd grad;
    for (long t = 0; t < 30; ++t) {
      const nn::Batch& batch = stream.next();
      nn::forward(net, b, batch.x, fwd);
      nn::backward(net, b, fwd, batch, nn::LossKind::cross_entropy, grad);
      opt.step(b, grad, schedule(t));
    }
  }
  CHECK(a == b);
}

TEST_CASE("the loop's edge cases: no steps, negative steps", "[nn][train]") {
  const nn::Dataset data = regression_data(10);
  LinearModel model{3, 2, {}};
  Eigen::VectorXd theta = Eigen::VectorXd::Ones(8);
  nn::Sgd opt;
  nn::BatchStream stream(data, 5, 1, 1);
  std::vector<long> logged;
  const double L = nn::train(model, theta, opt, nn::constant_schedule(0.1), stream, {.steps = 0, .loss = nn::LossKind::mse},
                             {}, [&](long t, const nn::Batch&) { logged.push_back(t); });
  CHECK(std::isnan(L));
  CHECK(logged == std::vector<long>{0});
  CHECK(theta == Eigen::VectorXd::Ones(8));
  CHECK_THROWS_AS(nn::train(model, theta, opt, nn::constant_schedule(0.1), stream, {.steps = -1}), InputError);
}

TEST_CASE("batch streams: the permutations of before the move, drop_last, labels and targets together", "[nn][data]") {
  // Pinned from flatness::BatchStream at commit 00e7118 (before it moved to nn/data): N = 10, b = 4,
  // seed 7, stream 3; sample i has x = i. Two full batches per epoch, the last two samples dropped.
  nn::Dataset d;
  d.x.resize(1, 10);
  d.y.resize(1, 10);
  for (int i = 0; i < 10; ++i) {
    d.x(0, i) = i;
    d.labels.push_back(9 - i);
    d.y(0, i) = 100.0 + i;
  }
  const std::vector<std::vector<int>> pinned{{4, 6, 2, 3}, {8, 0, 1, 9}, {5, 8, 2, 3}, {1, 0, 4, 7}, {7, 5, 4, 2}, {8, 1, 0, 9}};
  nn::BatchStream s(d, 4, 7, 3);
  CHECK(s.epoch() == -1);
  for (std::size_t k = 0; k < pinned.size(); ++k) {
    const nn::Batch& b = s.next();
    CHECK(s.epoch() == static_cast<long>(k / 2));
    for (int j = 0; j < 4; ++j) {
      INFO("batch " << k << ", position " << j);
      CHECK(b.x(0, j) == pinned[k][static_cast<std::size_t>(j)]);
      CHECK(b.labels[static_cast<std::size_t>(j)] == 9 - pinned[k][static_cast<std::size_t>(j)]);
      CHECK(b.y(0, j) == 100.0 + pinned[k][static_cast<std::size_t>(j)]);
    }
  }
  // epoch_permutation is the Fisher–Yates shuffle written out: i = N−1..1 swaps i with below(i + 1).
  std::vector<Eigen::Index> order;
  nn::epoch_permutation(order, 10, 7, 3, 1);
  std::vector<Eigen::Index> want(10);
  for (int i = 0; i < 10; ++i) want[static_cast<std::size_t>(i)] = i;
  Rng rng(7, sparseact::stream_id(3, 1));
  for (int i = 9; i > 0; --i) std::swap(want[static_cast<std::size_t>(i)], want[rng.below(static_cast<std::uint64_t>(i + 1))]);
  CHECK(order == want);
  CHECK(order[0] == 5);  // epoch 1's first batch above

  const nn::Batch eval = nn::make_batch(d, 2, 3);
  CHECK(eval.x(0, 0) == 2);
  CHECK(eval.labels == std::vector<int>{7, 6, 5});
  CHECK(eval.y(0, 2) == 104.0);

  CHECK_THROWS_AS(nn::BatchStream(d, 11, 1, 1), InputError);
  CHECK_THROWS_AS(nn::make_batch(d, 8, 3), InputError);
  nn::Dataset bad = d;
  bad.labels.pop_back();
  CHECK_THROWS_AS(nn::BatchStream(bad, 2, 1, 1), InputError);
}

TEST_CASE("recipes: a uniform block MLP, AdamW decaying weights only", "[nn][train]") {
  nn::BlockConfig b;
  b.n = 99;  // overwritten by n
  b.zeroth_bias = true;
  const nn::MlpConfig cfg = nn::uniform_mlp_config(5, 7, 11, 3, b, 4);
  CHECK(cfg.d_in == 5);
  CHECK(cfg.d == 7);
  CHECK(cfg.d_out == 4);
  REQUIRE(cfg.blocks.size() == 3);
  for (const auto& bc : cfg.blocks) {
    CHECK(bc.n == 11);
    CHECK(bc.zeroth_bias);
  }
  const nn::Mlp net = nn::make_mlp(cfg);
  const nn::AdamW opt = nn::adamw_weights_only(net, 2e-3, 0.1);
  CHECK(opt.lr == 2e-3);
  CHECK(opt.weight_decay == 0.1);
  REQUIRE(opt.decay_mask.size() == net.num_params);
  Eigen::Index weights = 0;
  for (const nn::ParamInfo& p : net.params) {
    const double want = p.kind == nn::ParamKind::weight ? 1.0 : 0.0;
    CHECK(opt.decay_mask.segment(p.offset, p.size()).cwiseEqual(want).all());
    if (p.kind == nn::ParamKind::weight) weights += p.size();
  }
  // W_in 7×5, K 11×7 and V 7×11 per block, W_out 4×7
  CHECK(weights == 35 + 3 * (77 + 77) + 28);
  CHECK(opt.decay_mask.sum() == weights);
}

TEST_CASE("fashion_mnist refuses more images than the split holds instead of clamping", "[nn][data]") {
  if (!std::filesystem::exists(nn::default_fashion_mnist_dir())) {
    WARN("dataset-fashion-mnist is not installed: skipped");
    return;
  }
  try {
    nn::fashion_mnist("test", 20000, 7);  // the test split holds 10000
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("20000") != std::string::npos);
    CHECK(msg.find("10000") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
  CHECK(nn::fashion_mnist("test", 10000, 7).size() == 10000);
}
