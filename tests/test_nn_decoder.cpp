// Paper 004's decoder (nn/decoder): parameter counts by hand, the whole model's gradient of the masked token
// cross-entropy against central finite differences (dense and top-2 MoE), the loss by hand, the linear-decay
// schedule, and training a one-block model with nn/train to recall 20 strings by greedy decoding.
#include <catch2/catch.hpp>

#include <cmath>

#include <sparseact/core/rng.hpp>
#include <sparseact/nn/decoder.hpp>
#include <sparseact/nn/train.hpp>

using namespace sparseact;
using namespace sparseact::nn;

TEST_CASE("decoder: parameter counts as built", "[nn][decoder]") {
  const DecoderShape dense{.vocab = 10, .d = 8, .heads = 2, .layers = 2, .max_len = 6, .inner = 8, .experts = 1};
  // E 8·10, P 8·6; per block g₁ 8, attention 4·64, g₂ 8, FFN 2·64; final gain 8; W_out 10·8
  CHECK(dense.parameter_count() == 80 + 48 + 2 * (8 + 256 + 8 + 128) + 8 + 80);
  CHECK(dense.non_embedding_count() == 2 * (8 + 256 + 8 + 128) + 8);
  CHECK(dense.active_count() == dense.non_embedding_count());
  const DecoderShape moe{.vocab = 10, .d = 8, .heads = 2, .layers = 2, .max_len = 6, .inner = 8, .experts = 4, .top = 2};
  CHECK(moe.non_embedding_count() == 2 * (8 + 256 + 8 + 4 * 8 + 4 * 128) + 8);
  CHECK(moe.active_count() == 2 * (8 + 256 + 8 + 4 * 8 + 2 * 128) + 8);
  CHECK(init_decoder(moe, 1, 2).size() == moe.parameter_count());
}

TEST_CASE("decoder: ∇θ of the masked token cross-entropy equals finite differences, dense and MoE", "[nn][decoder]") {
  for (const int experts : {1, 4}) {
    CAPTURE(experts);
    const DecoderShape s{.vocab = 7, .d = 6, .heads = 2, .layers = 2, .max_len = 5, .inner = 5, .experts = experts, .top = 2};
    Eigen::VectorXd theta = init_decoder(s, 3, 4);
    for (auto& v : theta) v *= 10;  // away from the 0.02-scale start, so every part matters
    Batch batch;
    batch.x.resize(4, 2), batch.y.resize(4, 2);
    batch.x << 1, 2, 3, 4, 5, 6, 0, 1;
    batch.y << -1, 3, 4, -1, 2, 0, 6, 5;  // −1: masked
    DecoderModel model(s);
    Eigen::MatrixXd dF;
    const double L = loss_value(LossKind::token_cross_entropy, model.forward(theta, batch.x), batch, &dF);
    CHECK(std::isfinite(L));
    Eigen::VectorXd grad;
    model.backward(theta, dF, grad);
    const auto loss = [&](const Eigen::VectorXd& t) {
      DecoderModel m(s);
      return loss_value(LossKind::token_cross_entropy, m.forward(t, batch.x), batch);
    };
    const double h = 1e-6;
    for (Eigen::Index i = 0; i < theta.size(); i += 3) {  // every third parameter keeps the test quick
      Eigen::VectorXd up = theta, down = theta;
      up(i) += h, down(i) -= h;
      CHECK(grad(i) == Approx((loss(up) - loss(down)) / (2 * h)).margin(2e-6));
    }
  }
}

TEST_CASE("token cross-entropy by hand: the mean over unmasked positions", "[nn][loss]") {
  Batch b;
  b.y.resize(2, 1);
  b.y << 1, -1;
  Eigen::MatrixXd F(2, 2);
  F << 0, 5, 0, 7;  // position 0: logits (0, 0), target 1 → log 2; position 1 masked
  Eigen::MatrixXd dF;
  CHECK(loss_value(LossKind::token_cross_entropy, F, b, &dF) == Approx(std::log(2.0)).epsilon(1e-15));
  CHECK(dF(0, 0) == Approx(0.5));
  CHECK(dF(1, 0) == Approx(-0.5));
  CHECK(dF.col(1).isZero());
  b.y << -1, -1;
  CHECK_THROWS(loss_value(LossKind::token_cross_entropy, F, b));
  CHECK(parse_loss("token_cross_entropy") == LossKind::token_cross_entropy);
}

TEST_CASE("linear decay after warmup (paper 004 §4: 20% warmup, then linear decay)", "[nn][optim]") {
  const LrSchedule s = linear_decay_schedule(1.0, 20, 100);
  CHECK(s(0) == 0.0);
  CHECK(s(10) == Approx(0.5));
  CHECK(s(20) == Approx(1.0));
  CHECK(s(60) == Approx(0.5));
  CHECK(s(100) == Approx(0.0).margin(1e-15));
  CHECK(s(150) == Approx(0.0).margin(1e-15));
}

TEST_CASE("a one-block decoder trained by nn/train recalls 20 strings by greedy decoding", "[nn][decoder]") {
  // Sequence i: key token 8 + i, then four letters from {0 … 7} drawn at random; the loss covers the letters.
  const int strings = 20, letters = 4;
  const DecoderShape s{.vocab = 8 + strings, .d = 32, .heads = 2, .layers = 1, .max_len = 5, .inner = 32, .experts = 1};
  Dataset data;
  data.x.resize(letters, strings), data.y.resize(letters, strings);
  std::vector<std::vector<int>> text(strings);
  Rng rng(9, 9);
  for (int i = 0; i < strings; ++i) {
    text[std::size_t(i)].push_back(8 + i);
    for (int j = 0; j < letters; ++j) text[std::size_t(i)].push_back(int(rng.below(8)));
    for (int t = 0; t < letters; ++t) data.x(t, i) = text[std::size_t(i)][std::size_t(t)], data.y(t, i) = text[std::size_t(i)][std::size_t(t + 1)];
  }
  DecoderModel model(s);
  Eigen::VectorXd theta = init_decoder(s, 1, 1);
  AdamW adam;
  adam.lr = 1e-2, adam.weight_decay = 0.1;
  BatchStream batches(data, 10, 1, 2);
  const long steps = 400;
  train(model, theta, adam, linear_decay_schedule(1e-2, steps / 5, steps), batches, {.steps = steps, .loss = LossKind::token_cross_entropy});
  int recalled = 0;
  for (int i = 0; i < strings; ++i) {
    const std::vector<int>& want = text[std::size_t(i)];
    recalled += greedy_decode(s, theta, {want[0]}, -1, letters) == std::vector<int>(want.begin() + 1, want.end());
  }
  CHECK(recalled == strings);
}
