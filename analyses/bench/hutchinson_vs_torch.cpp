// hutchinson_vs_torch — benchmark: Hutchinson's estimate of the Hessian trace tr(H_θ) of an MLP's
// batch loss (paper 001 §3.4: flatness is measured by the trace), ours against PyTorch on the same
// network, the same batch and the same probe vectors in one run (DESIGN.md, Benchmarks).
//
// The network is the "784-256-256-10 LayerNorm MLP" mapped onto nn::Mlp: d_in = 784, d = 256, one
// block of width n = 256 with LayerNorm (affine γ and shift β, ε = 1e-5) before it, ReLU, the value
// layer and the residual connection, no zeroth bias, d_out = 10, mean cross-entropy:
//   h0 = W_in x + b_in;  u = LN(h0);  h1 = h0 + V relu(K u + b_K) + b_V;  logits = W_out h1 + b_out.
// The batch is the first --batch images of Fashion-MNIST's training split with their labels. θ is
// nn::init_params moved by a few SGD steps on the batch and then by small Gaussian noise on every
// entry (LayerNorm's γ, β and all biases included), so that no block of H_θ is trivially zero.
//
// Ours: nn::HessianOperator (forward + backward once, then exact H·v by the R-operator) with the
// probes applied through perform_op_block in batches of --block columns, as estimators::hutchinson
// does; timed: the operator's construction, the products and the zᵀHz dots.
// PyTorch (hutchinson_vs_torch.py under Debian's /usr/bin/python3, float64): the same network
// rebuilt from the tensors we export as .npy, torch.autograd.grad(loss, params, create_graph=True)
// once, then one double-backward product torch.autograd.grad(grads, params, grad_outputs=v,
// retain_graph=True) per probe — PyHessian's way; timed: the forward pass, the gradient and the
// products.
// Target: ours ≥ 2× faster (ratio of median times over --repeats, PyTorch / ours). The repeats are
// interleaved, ours then PyTorch (one peer process per repeat), so that a change of the machine's
// load hits both alike.
//
// Same probes: the --probes Rademacher vectors are estimators::rademacher_columns, exactly the
// probes estimators::hutchinson draws (probe j from Rng(seed, stream_id(stream, j))), handed over as
// one P×k .npy; PyTorch splits each into per-tensor pieces of θ's column-major layout. Both HVPs
// are exact, so every single zᵀHz must agree up to rounding: max_j |q_j − q_j^torch| / max_j |q_j|
// ≤ 1e-9, and with it the estimates. H z of probe 0 is compared entry by entry too.
//
// Threads: both sides use --threads (0, the contract's default, means 2 here: a fixed count keeps
// runs comparable between machines): OpenMP's team and OpenBLAS's pool here (HessianOperator runs a
// block's columns in parallel; its products are OpenBLAS dgemm), torch.set_num_threads and
// OMP/OPENBLAS/MKL_NUM_THREADS for the peer. With both at --threads, every OpenMP thread of a block
// calls into the same OpenBLAS pool; the same run with OpenBLAS serial inside each OpenMP thread
// (the same cores, no nested pool) is timed too, as information next to the target's ratio.
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/core/estimators/probes.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/hvp.hpp>
#include <sparseact/nn/idx.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>
#include <sparseact/nn/optim.hpp>

#include "peer.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::bench;
namespace fs = std::filesystem;

namespace {

constexpr double kAgreeTol = 1e-9;  // max_j |Δq_j| / max_j |q_j|, and the same for H z₀
constexpr double kTarget = 2.0;     // ours ≥ 2× faster than PyTorch
constexpr int kDefaultThreads = 2;
constexpr double kNoiseSd = 0.01;   // the perturbation of θ after the SGD steps
constexpr double kSgdLr = 0.1;
// Streams of the seed: θ's init, its perturbation and the probes draw from unrelated streams.
constexpr std::uint64_t kInitStream = 0x496e697400000000ULL;   // "Init"
constexpr std::uint64_t kNoiseStream = 0x4e6f697365000000ULL;  // "Noise"
constexpr std::uint64_t kProbeStream = 0x50726f6265000000ULL;  // "Probe"

/// Parameters of the 784-w-w-10 network (make_mlp's count, before it is built).
constexpr long nn_params_estimate(long w) { return w * 784 + w + 2 * w + (w * w + w) * 2 + 10 * w + 10; }

/// OpenBLAS's kernel set ("SkylakeX", "Haswell", "Prescott", …) and build configuration, through
/// the already-loaded library; empty where it is not OpenBLAS. Recorded because a DYNAMIC_ARCH build
/// that does not recognise the CPU falls back to slow generic kernels, on both sides alike (the peer
/// loads the same libopenblas; OPENBLAS_CORETYPE overrides the choice for both).
std::pair<std::string, std::string> openblas_info() {
  using namer = char* (*)();
  auto core = reinterpret_cast<namer>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  auto config = reinterpret_cast<namer>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  return {core ? std::string(core()) : std::string(), config ? std::string(config()) : std::string()};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Median wall time of `reps` calls of fn.
double median_time(int reps, const std::function<void()>& fn) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(seconds_since(t0));
  }
  return median(t);
}

/// One run of ours: the operator at θ, then the k probes in batches of `block` columns; returns the
/// per-probe zᵀHz, H z₀, the loss, and how the time splits between the operator and the products.
struct OursRun {
  Eigen::VectorXd quad, hz0;
  double loss = 0, construct_s = 0, products_s = 0;
};

OursRun run_ours(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& batch, const Eigen::MatrixXd& Z,
                 Eigen::Index block) {
  OursRun r;
  const Eigen::Index P = Z.rows(), k = Z.cols();
  const auto t0 = std::chrono::steady_clock::now();
  const nn::HessianOperator op(net, theta, batch, nn::LossKind::cross_entropy);
  r.construct_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  r.quad.resize(k);
  Eigen::MatrixXd HZ(P, block);
  for (Eigen::Index first = 0; first < k; first += block) {
    const Eigen::Index count = std::min(block, k - first);
    op.perform_op_block(Z.col(first).data(), HZ.data(), count);  // Z's columns first.. are contiguous
    for (Eigen::Index j = 0; j < count; ++j) r.quad(first + j) = Z.col(first + j).dot(HZ.col(j));
    if (first == 0) r.hz0 = HZ.col(0);
  }
  r.products_s = seconds_since(t1);
  r.loss = op.loss();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "hutchinson_vs_torch",
                     .paper = "001",
                     .claims = {"§3.4"},
                     .description = "Benchmark: Hutchinson Hessian trace of a LayerNorm MLP, ours (R-operator HVPs) against "
                                    "PyTorch double-backward HVPs (PyHessian's way) on the same batch and probes",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  std::string python = "/usr/bin/python3";
  int batch_size = 0, probes = 0, width = 0, repeats = 0, block = 8, sgd_steps = 5;
  double peer_budget = 600;
  analysis.scaled_option("--batch", batch_size, 256, 1024, "samples in the batch (the first of Fashion-MNIST's training split)")
      ->check(CLI::Range(2, 60000));
  analysis.scaled_option("--probes", probes, 20, 100, "Rademacher probes (Hessian-vector products)")->check(CLI::Range(2, 10000));
  analysis.scaled_option("--width", width, 64, 256, "hidden width d and block width n (784-d-d-10)")->check(CLI::Range(2, 4096));
  analysis.scaled_option("--repeats", repeats, 1, 3, "timing repeats; the median is reported")->check(CLI::Range(1, 1000));
  app.add_option("--block", block, "probes per perform_op_block call (estimators::hutchinson's TraceOptions::batch)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--sgd-steps", sgd_steps, "SGD steps (lr 0.1) on the batch from the initialisation, before the noise")
      ->check(CLI::Range(0, 10000))->capture_default_str();
  app.add_option("--python", python, "Python with numpy and torch (Debian's python3-torch)")->capture_default_str();
  app.add_option("--peer-budget", peer_budget, "seconds for PyTorch's timed runs; repeats beyond the first stop (on every side) once the next would exceed it")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    // The peer must be there before anything runs.
    if (run_capture({python, "-c", "import numpy, torch"}, {}, true).first != 0)
      throw InputError(fmt::format("--python {}: cannot import torch; install python3-torch (apt-get install python3-torch)", python));
    const fs::path script = peer_script("hutchinson_vs_torch.py");
    const int threads = a.common.threads > 0 ? a.common.threads : kDefaultThreads;
    omp_set_num_threads(threads);
    blas_threads(threads);
    const std::vector<std::string> peer_env = {fmt::format("OMP_NUM_THREADS={}", threads),
                                               fmt::format("OPENBLAS_NUM_THREADS={}", threads),
                                               fmt::format("MKL_NUM_THREADS={}", threads)};
    if (double(nn_params_estimate(width)) * probes > 2.5e8)
      throw InputError(fmt::format("--probes × parameters = {} × {} exceeds 2.5e8 (2 GB of float64 probes, held on both sides)",
                                   probes, nn_params_estimate(width)));
    const TempDir tmp("hutchinson_vs_torch");
    const fs::path& dir = tmp.path;

    // The batch: the first images of Fashion-MNIST's training split, real labels.
    const nn::FashionMnist fm = nn::load_fashion_mnist("train");
    nn::Batch batch;
    batch.x = fm.images.leftCols(batch_size);
    batch.labels.assign(fm.labels.begin(), fm.labels.begin() + batch_size);

    // The network and θ.
    nn::BlockConfig bc;
    bc.n = width;
    bc.activation = {.kind = nn::ActivationKind::relu};
    bc.layernorm = bc.ln_affine = bc.ln_bias = true;
    bc.ln_eps = 1e-5;
    bc.zeroth_bias = false;
    bc.residual = bc.value_layer = true;
    const nn::Mlp net = nn::make_mlp({.d_in = batch.x.rows(), .d = width, .d_out = 10, .blocks = {bc}});
    const Eigen::Index P = net.num_params;
    Eigen::VectorXd theta = nn::init_params(net, a.common.seed, kInitStream);
    const double loss_init = nn::loss(net, theta, batch, nn::LossKind::cross_entropy);
    {
      nn::Sgd sgd;
      sgd.lr = kSgdLr;
      Eigen::VectorXd g;
      for (int s = 0; s < sgd_steps; ++s) {
        nn::loss_and_gradient(net, theta, batch, nn::LossKind::cross_entropy, g);
        sgd.step(theta, g);
      }
      Eigen::VectorXd noise(P);
      fill_random(noise.data(), static_cast<std::size_t>(P), Distribution::normal, kNoiseSd, a.common.seed, kNoiseStream);
      theta += noise;
    }

    // The probes: hutchinson's, column j from Rng(seed, stream_id(kProbeStream, j)).
    Eigen::MatrixXd Z;
    estimators::rademacher_columns(Z, P, 0, probes, a.common.seed, kProbeStream);

    // Hand-over: every tensor as its rows×cols matrix (numpy reads it row-major in that shape), the
    // batch, the probes, and the layout of θ.
    json layout = {{"d", width}, {"ln_eps", bc.ln_eps}, {"num_params", P}, {"blocks", json::array({"block1"})}, {"params", json::array()}};
    for (std::size_t i = 0; i < net.params.size(); ++i) {
      const nn::ParamInfo& p = net.params[i];
      save_npy(dir / (p.name + ".npy"), nn::param_view(net, theta, static_cast<int>(i)));
      const bool vector = p.kind != nn::ParamKind::weight;  // biases, γ, β: 1-d tensors in torch
      layout["params"].push_back({{"name", p.name}, {"offset", p.offset}, {"rows", p.rows}, {"cols", p.cols},
                                  {"shape", vector ? json::array({p.rows}) : json::array({p.rows, p.cols})}});
    }
    std::ofstream(dir / "layout.json") << layout.dump(1) << '\n';
    save_npy(dir / "x.npy", batch.x);
    Eigen::MatrixXd labels(1, batch_size);
    for (int s = 0; s < batch_size; ++s) labels(0, s) = batch.labels[static_cast<std::size_t>(s)];
    save_npy(dir / "labels.npy", labels);
    save_npy(dir / "Z.npy", Z);

    // Ours: an untimed warm-up (OpenBLAS's and OpenMP's thread pools, first-touch of the caches'
    // buffers; the peer warms up the same way in each of its runs).
    {
      const nn::HessianOperator op(net, theta, batch, nn::LossKind::cross_entropy);
      Eigen::MatrixXd HZ(P, std::min<Eigen::Index>(block, probes));
      op.perform_op_block(Z.data(), HZ.data(), HZ.cols());
    }

    // The timed repeats, interleaved (ours, ours with serial BLAS, PyTorch; one peer process per
    // repeat) so that a change of the machine's load hits all alike. PyTorch's repeats beyond the
    // first stop once the next would take its total past --peer-budget; ours stop with it.
    // "Serial BLAS" (informational): OpenMP's team runs a block's columns, OpenBLAS runs one thread
    // inside each — the same cores, without a BLAS pool nested in the OpenMP team.
    Table raw{"timings_raw", {"method", "repeat", "seconds"}, {}};  // method: 0 ours, 1 PyTorch, 2 ours with serial BLAS
    std::vector<double> ours_times, serial_times, torch_times;
    OursRun ours, serial;
    json peer;
    double peer_spent = 0;
    auto progress = a.progress("repeats", static_cast<std::size_t>(repeats));
    for (int rep = 0; rep < repeats; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      ours = run_ours(net, theta, batch, Z, block);
      ours_times.push_back(seconds_since(t0));
      raw.add_row({0, double(rep), ours_times.back()});

      blas_threads(1);
      t0 = std::chrono::steady_clock::now();
      serial = run_ours(net, theta, batch, Z, block);
      serial_times.push_back(seconds_since(t0));
      blas_threads(threads);
      raw.add_row({2, double(rep), serial_times.back()});

      const auto [rc, out] = run_capture({python, script.string(), "--dir", dir.string(), "--threads", std::to_string(threads),
                                          "--repeats", "1"},
                                         peer_env);
      if (rc != 0) throw std::runtime_error(fmt::format("PyTorch peer failed (exit {})", rc));
      const std::string line = out.substr(0, out.find('\n'));
      peer = json::parse(line, nullptr, false);
      if (peer.is_discarded() || !peer.contains("median_s") || !peer.contains("times_s"))
        throw std::runtime_error(fmt::format("PyTorch peer: unreadable output '{}'", line));
      torch_times.push_back(peer["median_s"].get<double>());
      raw.add_row({1, double(rep), torch_times.back()});
      peer_spent += torch_times.back();
      progress->advance();
      if (peer_spent + torch_times.back() > peer_budget) break;
    }
    const int reps_done = static_cast<int>(ours_times.size());
    const double ours_s = median(ours_times), serial_s = median(serial_times), torch_s = median(torch_times);
    const double ours_estimate = ours.quad.mean();
    const double ratio = torch_s / ours_s, ratio_serial = torch_s / serial_s;
    const Eigen::VectorXd quad_torch = load_npy(dir / "quad_torch.npy").row(0).transpose();
    const Eigen::VectorXd hz0_torch = load_npy(dir / "hz0_torch.npy").row(0).transpose();
    if (quad_torch.size() != probes || hz0_torch.size() != P)
      throw std::runtime_error(fmt::format("PyTorch peer: {} probe values and H z₀ of size {}, expected {} and {}", quad_torch.size(),
                                           hz0_torch.size(), probes, P));
    const double torch_estimate = quad_torch.mean();

    // The library's own call draws the same probes: estimators::hutchinson stopped after the first
    // block must give the mean of the timed loop's first block (untimed; it is what the loop reproduces).
    const Eigen::Index lib_probes = std::min<Eigen::Index>(std::max(block, 2), probes);
    const estimators::TraceOptions topt{.seed = a.common.seed, .stream = kProbeStream, .batch = block,
                                        .stop = {.min_samples = lib_probes, .max_samples = lib_probes, .rel_tol = 0.0}};
    const estimators::TraceEstimate lib = estimators::hutchinson(nn::HessianOperator(net, theta, batch, nn::LossKind::cross_entropy), topt);
    const double loop_head_mean = ours.quad.head(lib_probes).mean();

    // Where our time goes (informational): a gradient, the operator's construction, one product
    // alone (its BLAS calls use the pool), one block of products (columns over OpenMP's team), the
    // same block with serial BLAS.
    json profile;
    {
      const int reps = 3;
      Eigen::VectorXd g;
      const double grad_s = median_time(reps, [&] { nn::loss_and_gradient(net, theta, batch, nn::LossKind::cross_entropy, g); });
      const double construct_s = median_time(reps, [&] { nn::HessianOperator op(net, theta, batch, nn::LossKind::cross_entropy); });
      const nn::HessianOperator op(net, theta, batch, nn::LossKind::cross_entropy);
      Eigen::VectorXd hv(P);
      const double single_s = median_time(reps, [&] { op.perform_op(Z.col(0).data(), hv.data()); });
      const Eigen::Index cols = std::min<Eigen::Index>(block, probes);
      Eigen::MatrixXd HZ(P, cols);
      const double block_s = median_time(reps, [&] { op.perform_op_block(Z.data(), HZ.data(), cols); });
      blas_threads(1);
      const double block_serial_blas_s = median_time(reps, [&] { op.perform_op_block(Z.data(), HZ.data(), cols); });
      const double single_serial_s = median_time(reps, [&] { op.perform_op(Z.col(0).data(), hv.data()); });
      blas_threads(threads);
      // Multiply–adds of one product, counted from hvp.cpp's matrix products: 2 with W_in's shape
      // (R{h0} and H v's W_in part), 10 with K's or V's (n·d·B each), 4 with W_out's.
      const double B = batch_size, d = width, n = width, din = double(batch.x.rows()), dout = 10;
      const double gflop = 2.0 * (2 * d * din * B + 10 * n * d * B + 4 * dout * d * B) / 1e9;
      profile = {{"gradient_s", grad_s},
                 {"operator_construction_s", construct_s},
                 {"one_perform_op_s", single_s},
                 {"one_perform_op_serial_blas_s", single_serial_s},
                 {"perform_op_block_s", block_s},
                 {"perform_op_block_columns", cols},
                 {"per_product_in_block_s", block_s / double(cols)},
                 {"perform_op_block_serial_blas_s", block_serial_blas_s},
                 {"per_product_in_block_serial_blas_s", block_serial_blas_s / double(cols)},
                 {"last_repeat_construction_s", ours.construct_s},
                 {"last_repeat_products_s", ours.products_s},
                 {"gflop_per_product_estimate", gflop},
                 {"gflops_in_block", gflop * double(cols) / block_s},
                 {"gflops_in_block_serial_blas", gflop * double(cols) / block_serial_blas_s}};
    }

    // Agreement. Rounding in zᵀHz scales with the size of the terms, not with |zᵀHz| (a sum of
    // terms of both signs), so the per-probe differences are measured against the largest |q_j|.
    const Eigen::VectorXd dq = ours.quad - quad_torch;
    const double err_quad = dq.cwiseAbs().maxCoeff() / quad_torch.cwiseAbs().maxCoeff();
    const double err_quad_each = (dq.array().abs() / quad_torch.array().abs()).maxCoeff();
    const double err_estimate = std::abs(ours_estimate - torch_estimate) / std::abs(torch_estimate);
    const double err_hz0 = (ours.hz0 - hz0_torch).cwiseAbs().maxCoeff() / hz0_torch.cwiseAbs().maxCoeff();
    const double err_lib = std::abs(lib.estimate - loop_head_mean) / ours.quad.head(lib_probes).cwiseAbs().maxCoeff();
    const double err_serial = (serial.quad - ours.quad).cwiseAbs().maxCoeff() / ours.quad.cwiseAbs().maxCoeff();
    const double torch_loss = peer.value("loss", std::nan(""));
    const double err_loss = std::abs(ours.loss - torch_loss) / std::abs(torch_loss);
    const double err = std::max({err_quad, err_hz0, err_lib});
    // The estimate's standard error over the probes (Hutchinson's own noise; the benchmark is about
    // agreement and time, not about the value of tr H_θ).
    stats::RunningMean quad_mean;
    for (Eigen::Index j = 0; j < ours.quad.size(); ++j) quad_mean.push(ours.quad(j));
    const double std_error = quad_mean.std_error();

    Table timings{"timings",
                  {"batch", "width", "params", "probes", "ours_s", "peer_s", "ratio", "ours_serial_blas_s", "ratio_serial_blas",
                   "max_rel_err_quad", "max_rel_err_hz0", "estimate_ours", "estimate_torch", "repeats"},
                  {}};
    timings.add_row({double(batch_size), double(width), double(P), double(probes), ours_s, torch_s, ratio, serial_s, ratio_serial,
                     err_quad, err_hz0, ours_estimate, torch_estimate, double(reps_done)});
    Table per_probe{"probes", {"probe", "quad_ours", "quad_torch"}, {}};
    std::vector<double> xs, run_ours_est, run_torch_est;
    double s_ours = 0, s_torch = 0;
    for (Eigen::Index j = 0; j < probes; ++j) {
      per_probe.add_row({double(j), ours.quad(j), quad_torch(j)});
      s_ours += ours.quad(j);
      s_torch += quad_torch(j);
      xs.push_back(double(j + 1));
      run_ours_est.push_back(s_ours / double(j + 1));
      run_torch_est.push_back(s_torch / double(j + 1));
    }

    const auto [blas_core, blas_config] = openblas_info();
    const std::string shape = fmt::format("784-{}-{}-10, batch {}, {} probes", width, width, batch_size, probes);
    at_most(a, {.id = "agree",
                 .claim = "§3.4 (tr H_θ as the flatness measure)",
                 .statement = "the same probes through two exact HVPs give the same zᵀHz: max_j |q_j − q_j^torch| / max_j |q_j^torch| "
                              "≤ 1e-9, likewise ‖H z₀ − H z₀^torch‖_∞ / ‖H z₀^torch‖_∞, and estimators::hutchinson draws the "
                              "probes the timed loop uses",
                 .note = fmt::format("{}: per-probe zᵀHz {:.3g} (relative to each value {:.3g}), H z₀ {:.3g}; estimate ours "
                                     "{:.12g} vs PyTorch {:.12g} (relative {:.3g}; Hutchinson's standard error {:.3g}); "
                                     "estimators::hutchinson over the first {} probes {:.12g} vs the loop's {:.12g} ({:.3g}); "
                                     "loss ours {:.12g} vs PyTorch {:.12g} (relative {:.3g}).",
                                     shape, err_quad, err_quad_each, err_hz0, ours_estimate, torch_estimate, err_estimate, std_error,
                                     lib_probes, lib.estimate, loop_head_mean, err_lib, ours.loss, torch_loss, err_loss)},
            err, kAgreeTol)
        .tolerance["norm"] = "differences divided by the largest magnitude of the compared quantity (rounding in a sum of terms of both signs scales with the terms, not with the sum)";
    speedup_at_least(a, {.id = "speedup",
                 .claim = "benchmark target (§3.4: Hessian trace by Hutchinson's estimator)",
                 .statement = "ours ≥ 2× faster than PyTorch double-backward HVPs (PyHessian's way) on the CPU: t_torch / t_ours ≥ 2",
                 .note = fmt::format("{}: ours {:.4g} s (median of {}; range {:.4g}–{:.4g}; last: operator {:.3g} s + products "
                                     "{:.3g} s in blocks of {}), PyTorch {:.4g} s (range {:.4g}–{:.4g}), {} threads each "
                                     "(ours: OpenMP and OpenBLAS both at {}); OpenBLAS kernels '{}', both sides. Ratio of best times {:.3g}. "
                                     "Informational: ours with OpenBLAS serial inside the OpenMP team {:.4g} s, ratio {:.3g}.",
                                     shape, ours_s, reps_done, best(ours_times), worst(ours_times), ours.construct_s, ours.products_s,
                                     block, torch_s, best(torch_times), worst(torch_times), threads, threads, blas_core,
                                     best(torch_times) / best(ours_times), serial_s, ratio_serial)},
                     ours_times, torch_times, kTarget);
    fmt::print(stderr, "hutchinson_vs_torch: {}: ours {:.4g} s, PyTorch {:.4g} s ({:.2f}x; ours with serial BLAS {:.4g} s, {:.2f}x); "
                       "tr H ≈ {:.8g} ± {:.3g} (PyTorch {:.8g}), max rel diff zᵀHz {:.2g}; {} threads, OpenBLAS kernels '{}'\n",
               shape, ours_s, torch_s, ratio, serial_s, ratio_serial, ours_estimate, std_error, torch_estimate, err_quad, threads,
               blas_core);

    r.data["ours_s"] = ours_s;
    r.data["peer_s"] = torch_s;
    r.data["ratio"] = ratio;
    r.data["ratio_best_of_repeats"] = best(torch_times) / best(ours_times);
    r.data["ours_times_s"] = ours_times;
    r.data["peer_times_s"] = torch_times;
    r.data["ours_serial_blas"] = {{"median_s", serial_s}, {"times_s", serial_times}, {"ratio", ratio_serial},
                                  {"ratio_best_of_repeats", best(torch_times) / best(serial_times)},
                                  {"max_rel_diff_quad_vs_ours", err_serial},
                                  {"what", "the same timed run with openblas_set_num_threads(1): OpenMP's team runs the block's "
                                           "columns, one BLAS thread inside each"}};
    r.data["repeats"] = reps_done;
    r.data["threads"] = threads;
    const char* coretype_env = std::getenv("OPENBLAS_CORETYPE");
    r.data["openblas"] = {{"core", blas_core}, {"config", blas_config}, {"OPENBLAS_CORETYPE", coretype_env ? coretype_env : ""}};
    r.data["network"] = {{"shape", fmt::format("784-{}-{}-10", width, width)}, {"num_params", P}, {"d_in", batch.x.rows()},
                         {"d", width}, {"n", width}, {"d_out", 10}, {"activation", "relu"}, {"layernorm", "affine γ and β, eps 1e-5"},
                         {"residual", true}, {"value_layer", true}, {"zeroth_bias", false}, {"loss", "cross_entropy (mean)"}};
    r.data["theta"] = {{"init", "nn::init_params"}, {"sgd_steps", sgd_steps}, {"sgd_lr", kSgdLr}, {"noise_sd", kNoiseSd},
                       {"loss_init", loss_init}, {"loss", ours.loss}};
    r.data["batch"] = {{"data", "Fashion-MNIST train, first images, real labels"}, {"size", batch_size},
                       {"file", fm.images_file.string()}};
    r.data["probes"] = {{"count", probes}, {"block", block}, {"kind", "Rademacher, estimators::rademacher_columns"},
                        {"seed", a.common.seed}, {"stream", kProbeStream}};
    r.data["estimate"] = {{"ours", ours_estimate}, {"peer", torch_estimate}, {"std_error", std_error},
                          {"sparseact_hutchinson_first_probes", lib_probes}, {"sparseact_hutchinson", lib.estimate},
                          {"timed_loop_first_probes", loop_head_mean}};
    r.data["agreement"] = {{"max_rel_diff_quad", err_quad}, {"max_rel_diff_quad_each", err_quad_each},
                           {"max_rel_diff_hz0", err_hz0}, {"rel_diff_estimate", err_estimate},
                           {"rel_diff_library_call", err_lib}, {"rel_diff_loss", err_loss}};
    r.data["profile_ours"] = profile;
    r.data["peer"] = {{"python", python}, {"script", script.string()}, {"torch", peer.value("torch", "")},
                      {"numpy", peer.value("numpy", "")}, {"torch_threads", peer.value("torch_threads", 0)},
                      {"env", peer_env}, {"last_repeat_split_s", peer.value("last_repeat_split_s", json::object())},
                      {"method", "torch.autograd.grad(loss, params, create_graph=True) once, then per probe "
                                 "torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True) (PyHessian)"},
                      {"timer", "time.perf_counter, forward pass, gradient and products included; one process per repeat"}};
    r.data["ours"] = {{"call", "nn::HessianOperator construction + perform_op_block in blocks of --block"},
                      {"timer", "std::chrono::steady_clock, construction, products and zᵀHz dots included"}};
    r.data["peer_budget_s"] = peer_budget;
    {
      double load[3] = {0, 0, 0};
      if (getloadavg(load, 3) == 3) r.data["load_average_at_end"] = {load[0], load[1], load[2]};
    }
    a.add_table(std::move(timings));
    a.add_table(std::move(raw));
    a.add_table(std::move(per_probe));

    plot::Figure fig{.name = "hutchinson_vs_torch",
                     .title = fmt::format("Hutchinson estimate of tr H_θ, {} ({} threads)", shape, threads),
                     .xlabel = "probes",
                     .ylabel = "running mean of zᵀHz"};
    fig.series.push_back({.x = xs, .y = run_torch_est, .label = "PyTorch double backward", .style = plot::Style::lines, .width = 4});
    fig.series.push_back({.x = xs, .y = run_ours_est, .label = "sparseact HessianOperator", .style = plot::Style::lines, .dashed = true});
    fig.annotations.push_back({.x = 0.05, .y = 0.92,
                               .text = fmt::format("ours {:.3g} s, PyTorch {:.3g} s: {:.2f}x", ours_s, torch_s, ratio), .graph = true});
    fig.annotations.push_back({.x = 0.05, .y = 0.86, .text = fmt::format("max rel diff of zᵀHz {:.2g}", err_quad), .graph = true});
    {  // room above the curves for the legend and the annotations
      const auto [lo, hi] = std::minmax_element(run_ours_est.begin(), run_ours_est.end());
      const double span = std::max(*hi - *lo, 1e-12 * std::max(1.0, std::abs(*hi)));
      fig.yrange = std::make_pair(*lo - 0.1 * span, *hi + 0.4 * span);
    }
    a.add_figure(std::move(fig));
  });
}
