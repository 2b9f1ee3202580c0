// The plain MLP's training session on the GPU (cuda/plain_train.hpp) against independent ground truth:
// the loss and gradient of the CPU's MaskedMlp (nn/plain_mlp's backpropagation, routing's masks), SGD
// steps of nn::train, H v against central differences of the CPU gradient with the masks held fixed, and
// Hutchinson's probes against vᵀ(H v) and the exact trace Σ_i e_iᵀ H e_i. [standin] runs the session's
// host side and its CPU stand-in here; [cuda] runs the module where a GPU is present.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <vector>

#include <sparseact/core/device.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/core/version.hpp>
#include <sparseact/cuda/plain_train.hpp>
#include <sparseact/cuda/standin.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/moe/momlp.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/prelu_mlp.hpp>
#include <sparseact/nn/train.hpp>
#include <sparseact/routing/mask_policy.hpp>

using namespace sparseact;
using namespace sparseact::routing;

namespace {

constexpr std::uint64_t kSeed = 7, kStream = 11;

nn::Dataset toy_data(Eigen::Index n, int d, int classes, std::uint64_t stream) {
  Rng rng(kSeed, stream);
  nn::Dataset data;
  data.x.resize(d, n);
  for (auto& v : data.x.reshaped()) v = rng.normal();
  for (Eigen::Index j = 0; j < n; ++j) data.labels.push_back(int(rng.uniform() * classes) % classes);
  return data;
}

double relative(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return (a - b).norm() / std::max(1e-300, b.norm()); }

std::vector<Eigen::Index> first(Eigen::Index n) {
  std::vector<Eigen::Index> idx;
  for (Eigen::Index i = 0; i < n; ++i) idx.push_back((i * 7) % n);  // not in order: the gather must follow the indices
  return idx;
}

/// Whatever table is in force (stand-in or GPU) against the CPU's MaskedMlp, for every policy the GPU trains.
void session_matches_cpu(nn::PlainActivation f) {
  const nn::Dataset data = toy_data(48, 12, 4, 1);
  for (Policy p : {Policy::standard, Policy::smaller, Policy::topk, Policy::comet, Policy::layerwise}) {
    CAPTURE(to_string(p));
    const PolicyConfig cfg{.policy = p, .p_k = 0.4};
    const nn::PlainMlp net = policy_backbone({12, 20, 15, 4}, cfg, f, true);
    const Eigen::VectorXd theta0 = nn::init_plain_mlp(net, kSeed, 3);
    cuda::PlainTrainer gpu(gpu_spec(net, cfg, kSeed, kStream), theta0, data.x, data.labels);
    MaskedMlp cpu(net, cfg, kSeed, kStream);

    // Loss and gradient on one batch.
    const std::vector<Eigen::Index> idx = first(24);
    nn::Batch batch;
    batch.x.resize(12, 24);
    for (std::size_t j = 0; j < idx.size(); ++j) batch.x.col(Eigen::Index(j)) = data.x.col(idx[j]), batch.labels.push_back(data.labels[std::size_t(idx[j])]);
    batch.index = idx;
    Eigen::MatrixXd dF;
    const double L_cpu = nn::loss_value(nn::LossKind::cross_entropy, cpu.forward(theta0, batch), batch, &dF);
    Eigen::VectorXd g_cpu, g_gpu;
    cpu.backward(theta0, dF, g_cpu);
    const double L_gpu = gpu.gradient(idx, g_gpu);
    CHECK(std::abs(L_gpu - L_cpu) <= 1e-12 * std::abs(L_cpu));
    REQUIRE(g_gpu.size() == g_cpu.size());
    CHECK(relative(g_gpu, g_cpu) <= 1e-12);

    // Logits of unseen inputs under the policy's masks.
    const nn::Dataset other = toy_data(9, 12, 4, 2);
    const Eigen::MatrixXd logits = gpu.logits(other.x);
    REQUIRE(logits.rows() == 4);
    REQUIRE(logits.cols() == 9);
    CHECK(relative(logits, cpu.predict(theta0, other.x, 0, TestMasks::policy)) <= 1e-12);

    // Five SGD steps on nn::BatchStream's batches, as nn::train takes them.
    nn::BatchStream s_cpu(data, 16, kSeed, 5), s_gpu(data, 16, kSeed, 5);
    nn::Sgd sgd;
    sgd.lr = 0.1;
    Eigen::VectorXd theta = theta0;
    std::vector<double> losses;
    nn::train(cpu, theta, sgd, nn::constant_schedule(0.1), s_cpu, {.steps = 5, .loss = nn::LossKind::cross_entropy},
              [&](const nn::TrainStep& st) { losses.push_back(st.loss); });
    for (int t = 0; t < 5; ++t) CHECK(std::abs(gpu.sgd_step(s_gpu.next().index, 0.1) - losses[std::size_t(t)]) <= 1e-12 * losses[std::size_t(t)]);
    CHECK(relative(gpu.theta(), theta) <= 1e-12);
  }
}

/// H v against central differences of the CPU's gradient, the masks of the forward at θ held fixed
/// (nn::plain_forward with given masks), on a tanh net so that f″ contributes.
void hvp_matches_differences() {
  const nn::Dataset data = toy_data(30, 8, 3, 3);
  for (Policy p : {Policy::standard, Policy::comet, Policy::topk}) {
    CAPTURE(to_string(p));
    const PolicyConfig cfg{.policy = p, .p_k = 0.5};
    const nn::PlainMlp net = policy_backbone({8, 10, 9, 3}, cfg, nn::PlainActivation::tanh, true);
    const Eigen::VectorXd theta = nn::init_plain_mlp(net, kSeed, 4);
    cuda::PlainTrainer gpu(gpu_spec(net, cfg, kSeed, kStream), theta, data.x, data.labels);
    const std::vector<Eigen::Index> idx = first(30);
    nn::Batch batch;
    batch.x.resize(8, 30);
    for (std::size_t j = 0; j < idx.size(); ++j) batch.x.col(Eigen::Index(j)) = data.x.col(idx[j]), batch.labels.push_back(data.labels[std::size_t(idx[j])]);
    batch.index = idx;
    // The masks at θ, decided once by the policy's CPU rule (routing/kwta, routing/comet), then held.
    std::vector<Eigen::MatrixXd> fixed;
    nn::plain_forward(net, theta, batch.x,
                      [&](std::size_t l, const Eigen::MatrixXd& a, const Eigen::MatrixXd&) -> Eigen::MatrixXd {
                        if (p == Policy::standard) return Eigen::MatrixXd();
                        if (p == Policy::topk) return kwta_columns(a, active_units(0.5, int(a.rows())), cfg.rule);
                        return comet_masks(make_comet_router(net.widths, 0.5, kSeed, stream_id(kStream, 1), cfg.rule), batch.x)[l - 1];
                      },
                      fixed);
    const auto grad_at = [&](const Eigen::VectorXd& t) {
      const nn::PlainForward fwd = nn::plain_forward(net, t, batch.x, fixed);
      Eigen::MatrixXd dF;
      nn::loss_value(nn::LossKind::cross_entropy, fwd.a.back(), batch, &dF);
      return nn::plain_gradient(net, t, fwd, dF, fixed);
    };
    Rng rng(kSeed, 9);
    Eigen::VectorXd v(theta.size());
    for (auto& x : v) x = rng.normal();
    const double h = 1e-5;
    const Eigen::VectorXd fd = (grad_at(theta + h * v) - grad_at(theta - h * v)) / (2 * h);
    const Eigen::VectorXd Hv = gpu.hvp(idx, v);
    REQUIRE(Hv.size() == theta.size());
    CHECK(relative(Hv, fd) <= 1e-6);

    // Hutchinson: each probe's value is vᵀ(H v) for the documented probe, and their mean estimates Σ_i e_iᵀ H e_i.
    const Eigen::VectorXd q = gpu.hutchinson(idx, 3, 42);
    REQUIRE(q.size() == 3);
    for (int k = 0; k < 3; ++k) {
      Eigen::VectorXd probe(theta.size());
      for (Eigen::Index i = 0; i < probe.size(); ++i) probe(i) = cuda::rademacher(42, std::uint64_t(k), std::uint64_t(i));
      CHECK(std::abs(q(k) - probe.dot(gpu.hvp(idx, probe))) <= 1e-10 * std::max(1.0, std::abs(q(k))));
    }
    double trace = 0;
    for (Eigen::Index i = 0; i < theta.size(); ++i) trace += gpu.hvp(idx, Eigen::VectorXd::Unit(theta.size(), i))(i);
    const Eigen::VectorXd many = gpu.hutchinson(idx, 400, 5);
    const double mean = many.mean(), sd = std::sqrt((many.array() - mean).square().sum() / double(many.size() - 1));
    CHECK(std::abs(mean - trace) <= 5 * sd / std::sqrt(double(many.size())));
  }
}

/// Paper 003's PReLU nets (per-neuron and shared γ) with MSE and cross-entropy, and Adam, against nn::prelu_gradient,
/// nn::loss_value and nn::train with nn::AdamW (weight decay 0).
void prelu_session_matches_cpu() {
  nn::Dataset data = toy_data(40, 6, 3, 7);
  data.y.resize(2, data.size());
  Rng rng(kSeed, 8);
  for (auto& v : data.y.reshaped()) v = rng.normal();
  for (bool shared : {false, true})
    for (bool mse : {true, false}) {
      CAPTURE(shared, mse);
      const nn::PreluMlp net{{6, 9, 7, mse ? 2 : 3}, shared};
      Eigen::VectorXd theta0 = nn::init_prelu_mlp(net, kSeed, 2);
      for (Eigen::Index i = 0; i < theta0.size(); ++i) theta0(i) += 0.01 * double(i % 5);  // γ away from 0.25, unequal
      nn::Dataset d = data;
      if (mse) d.labels.clear();
      else d.y.resize(0, 0);
      const cuda::PlainTrainSpec spec{.widths = net.widths, .activation = cuda::kPrelu, .biases = true, .shared_gamma = shared,
                                      .loss = mse ? cuda::PlainLoss::mse : cuda::PlainLoss::cross_entropy};
      cuda::PlainTrainer gpu(spec, theta0, d.x, d.labels, d.y);
      const std::vector<Eigen::Index> idx = first(20);
      nn::Batch batch;
      batch.x = d.x(Eigen::all, idx);
      if (mse) batch.y = d.y(Eigen::all, idx);
      else
        for (Eigen::Index i : idx) batch.labels.push_back(d.labels[std::size_t(i)]);
      const nn::PreluForward fwd = nn::prelu_forward(net, theta0, batch.x);
      Eigen::MatrixXd dF;
      const double L_cpu = nn::loss_value(mse ? nn::LossKind::mse : nn::LossKind::cross_entropy, fwd.z.back(), batch, &dF);
      Eigen::VectorXd g_gpu;
      CHECK(std::abs(gpu.gradient(idx, g_gpu) - L_cpu) <= 1e-12 * L_cpu);
      const Eigen::VectorXd g_cpu = nn::prelu_gradient(net, theta0, fwd, dF);
      REQUIRE(g_gpu.size() == g_cpu.size());
      CHECK(relative(g_gpu, g_cpu) <= 1e-12);
      CHECK(relative(gpu.logits(d.x.leftCols(5)), nn::prelu_forward(net, theta0, d.x.leftCols(5)).z.back()) <= 1e-12);
      CHECK_THROWS_AS(gpu.hvp(idx, g_cpu), std::invalid_argument);  // no R-operator for PReLU
      // Six Adam steps, as moe::fit takes them.
      nn::PreluModel model(net);
      nn::BatchStream s_cpu(d, 8, kSeed, 5), s_gpu(d, 8, kSeed, 5);
      nn::AdamW adam;
      adam.lr = 1e-2, adam.weight_decay = 0;
      Eigen::VectorXd theta = theta0;
      std::vector<double> losses;
      nn::train(model, theta, adam, nn::constant_schedule(1e-2), s_cpu, {.steps = 6, .loss = mse ? nn::LossKind::mse : nn::LossKind::cross_entropy},
                [&](const nn::TrainStep& st) { losses.push_back(st.loss); });
      for (int t = 0; t < 6; ++t) CHECK(std::abs(gpu.adam_step(s_gpu.next().index, 1e-2) - losses[std::size_t(t)]) <= 1e-12 * losses[std::size_t(t)]);
      CHECK(relative(gpu.theta(), theta) <= 1e-12);
    }
}

/// H v of an MSE net against central differences of nn::plain_gradient.
void mse_hvp_matches_differences() {
  nn::Dataset data = toy_data(25, 5, 2, 9);
  data.labels.clear();
  data.y.resize(2, data.size());
  Rng rng(kSeed, 10);
  for (auto& v : data.y.reshaped()) v = rng.normal();
  const nn::PlainMlp net{{5, 8, 2}, nn::PlainActivation::tanh, true};
  const Eigen::VectorXd theta = nn::init_plain_mlp(net, kSeed, 3);
  cuda::PlainTrainer gpu({.widths = net.widths, .activation = 1, .loss = cuda::PlainLoss::mse}, theta, data.x, {}, data.y);
  const std::vector<Eigen::Index> idx = first(25);
  nn::Batch batch;
  batch.x = data.x(Eigen::all, idx), batch.y = data.y(Eigen::all, idx);
  const auto grad_at = [&](const Eigen::VectorXd& t) {
    const nn::PlainForward fwd = nn::plain_forward(net, t, batch.x);
    Eigen::MatrixXd dF;
    nn::loss_value(nn::LossKind::mse, fwd.a.back(), batch, &dF);
    return nn::plain_gradient(net, t, fwd, dF);
  };
  Eigen::VectorXd v(theta.size());
  for (auto& x : v) x = rng.normal();
  const double h = 1e-5;
  CHECK(relative(gpu.hvp(idx, v), (grad_at(theta + h * v) - grad_at(theta - h * v)) / (2 * h)) <= 1e-6);
}

}  // namespace

TEST_CASE("GPU training session on the CPU stand-in: PReLU nets, MSE and Adam equal nn::prelu_gradient and nn::AdamW", "[standin][plain_train]") {
  cuda::use_standin(cuda::Standin::exact);
  prelu_session_matches_cpu();
  mse_hvp_matches_differences();
  cuda::use_standin(cuda::Standin::off);
}

TEST_CASE("moe::fit and the MoMLP on the GPU path: the twin agrees on the stand-in and catches a wrong step size", "[standin][plain_train]") {
  nn::Dataset train = toy_data(120, 2, 2, 11);
  train.labels.clear();
  train.y = (train.x.row(0).array().sin() + 0.5 * train.x.row(1).array()).matrix();
  for (cuda::Standin mode : {cuda::Standin::exact, cuda::Standin::fault}) {
    cuda::use_standin(mode);
    twin::reset();
    const moe::MomlpSettings s{.K = 2, .width = 8, .hidden_layers = 2, .stage1_epochs = 1, .epochs = 2, .batch = 16, .lr = 1e-3, .device = Device::cuda};
    const moe::Momlp gpu = moe::train_momlp(train, s, 3, 4);
    const std::vector<twin::Agreement> log = twin::recorded();
    REQUIRE(log.size() == 1);  // once per process and path
    CHECK(log[0].path == "moe.fit");
    CHECK(log[0].agrees() == (mode == cuda::Standin::exact));
    if (mode == cuda::Standin::exact) {  // the CPU's MoMLP: the same experts to rounding
      moe::MomlpSettings on_cpu = s;
      on_cpu.device = Device::cpu;
      const moe::Momlp cpu = moe::train_momlp(train, on_cpu, 3, 4);
      REQUIRE(cpu.experts.size() == gpu.experts.size());
      for (std::size_t k = 0; k < cpu.experts.size(); ++k) CHECK(relative(gpu.experts[k].theta, cpu.experts[k].theta) <= 1e-10);
      const moe::PreluNet base_gpu = moe::train_prelu_mlp(train, 8, 2, 2, 16, 1e-3, 0.25, false, 3, 5, Device::cuda);
      const moe::PreluNet base_cpu = moe::train_prelu_mlp(train, 8, 2, 2, 16, 1e-3, 0.25, false, 3, 5);
      CHECK(relative(base_gpu.theta, base_cpu.theta) <= 1e-10);
    }
  }
  twin::reset();
  cuda::use_standin(cuda::Standin::off);
}

TEST_CASE("GPU training session on the CPU stand-in: loss, gradient, logits and SGD equal the CPU's MaskedMlp", "[standin][plain_train]") {
  cuda::use_standin(cuda::Standin::exact);
  session_matches_cpu(nn::PlainActivation::relu);
  session_matches_cpu(nn::PlainActivation::tanh);
  cuda::use_standin(cuda::Standin::off);
}

TEST_CASE("GPU training session on the CPU stand-in: H v against central differences, Hutchinson against the exact trace",
          "[standin][plain_train]") {
  cuda::use_standin(cuda::Standin::exact);
  hvp_matches_differences();
  cuda::use_standin(cuda::Standin::off);
}

TEST_CASE("GPU training session: bad input is refused before any work", "[standin][plain_train]") {
  cuda::use_standin(cuda::Standin::exact);
  const nn::Dataset data = toy_data(10, 5, 3, 4);
  const PolicyConfig cfg{.policy = Policy::comet, .p_k = 0.5};
  const nn::PlainMlp net = policy_backbone({5, 6, 3}, cfg, nn::PlainActivation::relu, true);
  const cuda::PlainTrainSpec spec = gpu_spec(net, cfg, kSeed, kStream);
  const Eigen::VectorXd theta = nn::init_plain_mlp(net, kSeed, 1);
  CHECK_THROWS_AS(cuda::PlainTrainer(spec, Eigen::VectorXd(theta.size() + 1), data.x, data.labels), std::invalid_argument);
  std::vector<int> bad = data.labels;
  bad[3] = 3;
  CHECK_THROWS_AS(cuda::PlainTrainer(spec, theta, data.x, bad), std::invalid_argument);
  CHECK_THROWS_AS(gpu_spec(net, {.policy = Policy::dropout}, kSeed, kStream), std::invalid_argument);
  CHECK(spec.kwta_kernel == cuda::KwtaKernel::count);  // SPARSEACT_KWTA_KERNEL picks the k-WTA kernel, as for the COMET forward
  ::setenv("SPARSEACT_KWTA_KERNEL", "select", 1);
  CHECK(gpu_spec(net, cfg, kSeed, kStream).kwta_kernel == cuda::KwtaKernel::select);
  ::setenv("SPARSEACT_KWTA_KERNEL", "fast", 1);
  CHECK_THROWS_AS(gpu_spec(net, cfg, kSeed, kStream), std::invalid_argument);
  ::unsetenv("SPARSEACT_KWTA_KERNEL");
  cuda::PlainTrainer gpu(spec, theta, data.x, data.labels);
  CHECK_THROWS_AS(gpu.sgd_step({0, 10}, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(gpu.sgd_step({}, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(gpu.sgd_step({0, 1}, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(gpu.logits(Eigen::MatrixXd(4, 2)), std::invalid_argument);
  CHECK_THROWS_AS(gpu.hutchinson({0}, 0, 1), std::invalid_argument);
  CHECK(gpu.theta() == theta);  // nothing moved
  cuda::use_standin(cuda::Standin::off);
}

TEST_CASE("train_masked on the GPU path: the twin agrees on the stand-in and catches a wrong step size", "[standin][plain_train]") {
  const nn::Dataset train = toy_data(96, 10, 3, 5), test = toy_data(20, 10, 3, 6);
  for (cuda::Standin mode : {cuda::Standin::exact, cuda::Standin::fault}) {
    cuda::use_standin(mode);
    twin::reset();
    const TrainRunConfig cfg{.widths = {10, 16, 16, 3}, .policy = {.policy = Policy::comet, .p_k = 0.5}, .epochs = 2, .batch = 8, .lr = 0.05,
                             .seed = 3, .device = Device::cuda};
    const TrainRun gpu = train_masked(cfg, train, test);
    CHECK(gpu.device == Device::cuda);
    const std::vector<twin::Agreement> log = twin::recorded();
    REQUIRE(log.size() == 1);
    CHECK(log[0].path == "routing.train_masked");
    CHECK(log[0].agrees() == (mode == cuda::Standin::exact));
    if (mode == cuda::Standin::exact) {  // the same run on the CPU: the same curves to the twin's promise
      TrainRunConfig on_cpu = cfg;
      on_cpu.device = Device::cpu;
      const TrainRun cpu = train_masked(on_cpu, train, test);
      CHECK(cpu.device == Device::cpu);
      REQUIRE(cpu.train_loss.size() == gpu.train_loss.size());
      for (std::size_t e = 0; e < cpu.train_loss.size(); ++e) CHECK(std::abs(cpu.train_loss[e] - gpu.train_loss[e]) <= 1e-9);
      CHECK(cpu.test_acc == gpu.test_acc);
      // A policy without a GPU path trains on the CPU even when cuda is asked for.
      TrainRunConfig dropout = cfg;
      dropout.policy.policy = Policy::dropout;
      CHECK(train_masked(dropout, train, test).device == Device::cpu);
    }
  }
  twin::reset();
  cuda::use_standin(cuda::Standin::off);
}

TEST_CASE("GPU training session on the GPU: the same as the CPU", "[cuda][plain_train]") {
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible (built with CUDA: " << built_with_cuda() << "): GPU training not tested here");
    return;
  }
  // Summation order differs from the CPU's in cuBLAS: the 1e-12 bounds above hold with room at these sizes.
  session_matches_cpu(nn::PlainActivation::relu);
  session_matches_cpu(nn::PlainActivation::tanh);
  hvp_matches_differences();
  prelu_session_matches_cpu();
  mse_hvp_matches_differences();
}
