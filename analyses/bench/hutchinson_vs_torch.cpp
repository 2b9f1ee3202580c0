// hutchinson_vs_torch — benchmark: Hutchinson's estimate of the Hessian trace tr(H_θ) of an MLP's
// batch loss (paper 001 §3.4: flatness is measured by the trace), ours against PyTorch on the same
// network, the same batch and the same probe vectors in one run (docs/DESIGN.md, Benchmarks).
//
// The network is the "784-256-256-10 LayerNorm MLP" mapped onto nn::Mlp: d_in = 784, d = 256, one
// block of width n = 256 with LayerNorm (affine γ and shift β, ε = 1e-5) before it, ReLU, the value
// layer and the residual connection, no zeroth bias, d_out = 10, mean cross-entropy:
//   h0 = W_in x + b_in;  u = LN(h0);  h1 = h0 + V relu(K u + b_K) + b_V;  logits = W_out h1 + b_out.
// The batch is the first --batch images of Fashion-MNIST's training split with their labels. θ is
// nn::init_params moved by a few SGD steps on the batch and then by small Gaussian noise on every
// entry (LayerNorm's γ, β and all biases included), so that no block of H_θ is trivially zero.
//
// Ours: nn::HessianOperator (forward + backward once, then the R-operator) with the probes in batches
// of --block columns through quadratic_forms_block, as estimators::hutchinson does for the operator's
// own layers (flatness_bounds' per-layer traces): z_lᵀ(H z)_l per layer from the stacked R-pass without
// forming H z, so without its parameter-gradient GEMMs; zᵀHz is their sum. Timed: the operator's
// construction and the quadratic forms. H z of probe 0 is formed once, untimed, for the comparison.
// PyTorch (hutchinson_vs_torch.py under Debian's /usr/bin/python3, float64): the same network
// rebuilt from the tensors we export as .npy, torch.autograd.grad(loss, params, create_graph=True)
// once, then one double-backward product torch.autograd.grad(grads, params, grad_outputs=v,
// retain_graph=True) per probe — PyHessian's way; timed: the forward pass, the gradient and the
// products.
// Target (issue 15): ours ≥ 4× faster (ratio of median times over --repeats, PyTorch / ours). The
// repeats are interleaved, ours then PyTorch (one peer process per repeat), so that a change of the
// machine's load hits both alike.
//
// Same probes: the --probes Rademacher vectors are estimators::rademacher_columns, exactly the
// probes estimators::hutchinson draws (probe j from Rng(seed, stream_id(stream, j))), handed over as
// one P×k .npy; PyTorch splits each into per-tensor pieces of θ's column-major layout. Both HVPs
// are exact, so every single zᵀHz must agree up to rounding: max_j |q_j − q_j^torch| / max_j |q_j|
// ≤ 1e-12, and with it the estimates. H z of probe 0 is compared entry by entry too.
//
// Threads: both sides use --threads (0, the contract's default, means 2 here: a fixed count keeps
// runs comparable between machines): OpenMP's team and OpenBLAS's pool here, torch.set_num_threads
// and OMP/OPENBLAS/MKL_NUM_THREADS for the peer. HessianOperator::perform_op_block splits a block's
// probes over OpenMP's team, each thread one stacked R-pass over its probes with OpenBLAS serial for
// the call (the library sets and restores it). As information, the same run one probe per R-pass
// (perform_op per column over the team, serial BLAS: the library's former way) is timed too, and
// the GFLOP/s of the products are set against a large dgemm's (2048³, OpenBLAS at --threads) on
// the same machine in the same run.
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
#include <sparseact/core/blas_threads.hpp>
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

constexpr double kAgreeTol = 1e-12;  // max_j |Δq_j| / max_j |q_j|, and the same for H z₀
constexpr double kTarget = 4.0;      // ours ≥ 4× faster than PyTorch (issue 15)
constexpr int kDefaultThreads = 2;
constexpr double kNoiseSd = 0.01;   // the perturbation of θ after the SGD steps
constexpr double kSgdLr = 0.1;
constexpr double kLnEps = 1e-5;
// Streams of the seed: θ's init, its perturbation and the probes draw from unrelated streams.
constexpr std::uint64_t kInitStream = 0x496e697400000000ULL;   // "Init"
constexpr std::uint64_t kNoiseStream = 0x4e6f697365000000ULL;  // "Noise"
constexpr std::uint64_t kProbeStream = 0x50726f6265000000ULL;  // "Probe"

/// Parameters of the 784-w-w-10 network (make_mlp's count, before it is built).
constexpr long nn_params_estimate(long w) { return w * 784 + w + 2 * w + (w * w + w) * 2 + 10 * w + 10; }

struct Params {
  std::string python = "/usr/bin/python3";
  int batch_size = 0, probes = 0, width = 0, repeats = 0, block = 8, sgd_steps = 5;
  double peer_budget = 600;
  int threads = kDefaultThreads;  // resolved from --threads
  std::uint64_t seed = 1;
};

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

/// The benchmark's problem: the batch, the network and θ (init, SGD steps on the batch, noise).
struct Problem {
  std::filesystem::path images_file;
  nn::Batch batch;
  nn::Mlp net;
  Eigen::VectorXd theta;
  double loss_init = 0;
};

Problem make_problem(const Params& p) {
  Problem pr;
  // The batch: the first images of Fashion-MNIST's training split, real labels.
  {
    const nn::FashionMnist fm = nn::load_fashion_mnist("train");
    pr.images_file = fm.images_file;
    pr.batch.x = fm.images.leftCols(p.batch_size);
    pr.batch.labels.assign(fm.labels.begin(), fm.labels.begin() + p.batch_size);
  }
  nn::BlockConfig bc;
  bc.n = p.width;
  bc.activation = {.kind = nn::ActivationKind::relu};
  bc.layernorm = bc.ln_affine = bc.ln_bias = true;
  bc.ln_eps = kLnEps;
  bc.zeroth_bias = false;
  bc.residual = bc.value_layer = true;
  pr.net = nn::make_mlp({.d_in = pr.batch.x.rows(), .d = p.width, .d_out = 10, .blocks = {bc}});
  pr.theta = nn::init_params(pr.net, p.seed, kInitStream);
  pr.loss_init = nn::loss(pr.net, pr.theta, pr.batch, nn::LossKind::cross_entropy);
  nn::Sgd sgd;
  sgd.lr = kSgdLr;
  Eigen::VectorXd g;
  for (int s = 0; s < p.sgd_steps; ++s) {
    nn::loss_and_gradient(pr.net, pr.theta, pr.batch, nn::LossKind::cross_entropy, g);
    sgd.step(pr.theta, g);
  }
  Eigen::VectorXd noise(pr.net.num_params);
  fill_random(noise.data(), static_cast<std::size_t>(pr.net.num_params), Distribution::normal, kNoiseSd, p.seed, kNoiseStream);
  pr.theta += noise;
  return pr;
}

/// Hand-over: every tensor as its rows×cols matrix (numpy reads it row-major in that shape), the
/// batch, the probes, and the layout of θ.
void export_for_peer(const fs::path& dir, const Problem& pr, const Eigen::MatrixXd& Z, int width) {
  json layout = {{"d", width}, {"ln_eps", kLnEps}, {"num_params", pr.net.num_params}, {"blocks", json::array({"block1"})}, {"params", json::array()}};
  for (std::size_t i = 0; i < pr.net.params.size(); ++i) {
    const nn::ParamInfo& p = pr.net.params[i];
    save_npy(dir / (p.name + ".npy"), nn::param_view(pr.net, pr.theta, static_cast<int>(i)));
    const bool vector = p.kind != nn::ParamKind::weight;  // biases, γ, β: 1-d tensors in torch
    layout["params"].push_back({{"name", p.name}, {"offset", p.offset}, {"rows", p.rows}, {"cols", p.cols},
                                {"shape", vector ? json::array({p.rows}) : json::array({p.rows, p.cols})}});
  }
  std::ofstream(dir / "layout.json") << layout.dump(1) << '\n';
  save_npy(dir / "x.npy", pr.batch.x);
  Eigen::MatrixXd labels(1, pr.batch.size());
  for (Eigen::Index s = 0; s < pr.batch.size(); ++s) labels(0, s) = pr.batch.labels[static_cast<std::size_t>(s)];
  save_npy(dir / "labels.npy", labels);
  save_npy(dir / "Z.npy", Z);
}

/// One run of ours: the operator at θ, then the k probes in batches of `block` columns; returns the
/// per-probe zᵀHz, H z₀, the loss, and how the time splits between the operator and the products.
struct OursRun {
  Eigen::VectorXd quad, hz0;
  double loss = 0, construct_s = 0, products_s = 0;
};

/// stacked: the library's perform_op_block; otherwise one probe per R-pass (perform_op per column,
/// the columns over OpenMP's team with serial BLAS), the library's former way, for comparison.
OursRun run_ours(const nn::Mlp& net, const Eigen::VectorXd& theta, const nn::Batch& batch, const Eigen::MatrixXd& Z,
                 Eigen::Index block, bool stacked = true) {
  OursRun r;
  const Eigen::Index P = Z.rows(), k = Z.cols();
  const auto t0 = std::chrono::steady_clock::now();
  const nn::HessianOperator op(net, theta, batch, nn::LossKind::cross_entropy);
  r.construct_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  r.quad.resize(k);
  Eigen::MatrixXd HZ(P, block);
  Eigen::MatrixXd Q(static_cast<Eigen::Index>(op.segments().size()), block);
  for (Eigen::Index first = 0; first < k; first += block) {
    const Eigen::Index count = std::min(block, k - first);
    if (stacked) {
      // What estimators::hutchinson does with the operator's own layers (flatness_bounds' per-layer traces):
      // z_lᵀ(Hz)_l per layer straight from the stacked R-pass, no parameter-gradient GEMMs.
      op.quadratic_forms_block(Z.col(first).data(), count, Q.data());  // Z's columns first.. are contiguous
      for (Eigen::Index j = 0; j < count; ++j) r.quad(first + j) = Q.col(j).sum();
    } else {
      const ScopedBlasThreads serial(1);
#pragma omp parallel for schedule(dynamic, 1)
      for (Eigen::Index j = 0; j < count; ++j) op.perform_op(Z.col(first + j).data(), HZ.col(j).data());
      for (Eigen::Index j = 0; j < count; ++j) r.quad(first + j) = Z.col(first + j).dot(HZ.col(j));
      if (first == 0) r.hz0 = HZ.col(0);
    }
  }
  r.products_s = seconds_since(t1);
  if (stacked) {  // untimed: one H z for the entry-by-entry comparison with PyTorch
    r.hz0.resize(P);
    op.perform_op(Z.col(0).data(), r.hz0.data());
  }
  r.loss = op.loss();
  return r;
}

/// The timed repeats and what the last of each side computed.
struct Timings {
  std::vector<double> ours, serial, torch;  // seconds per repeat
  std::vector<double> ours_products;        // of which ours's products (the operator built)
  OursRun ours_run, serial_run;
  json peer;  // the peer's last JSON line
  Table raw{"timings_raw", {"method", "repeat", "seconds"}, {}};  // method: 0 ours, 1 PyTorch, 2 ours one probe per R-pass
  int done() const { return static_cast<int>(ours.size()); }
};

/// The timed repeats, interleaved (ours, ours one probe per R-pass, PyTorch; one peer process per
/// repeat) so that a change of the machine's load hits all alike. PyTorch's repeats beyond the
/// first stop once the next would take its total past --peer-budget; ours stop with it.
/// "One probe per R-pass" (informational, `serial` below): OpenMP's team runs a block's columns
/// one perform_op each, OpenBLAS serial inside each — the library's way before the stacked pass.
Timings time_repeats(Analysis& a, const Params& p, const Problem& pr, const Eigen::MatrixXd& Z, const fs::path& script,
                     const fs::path& dir, const std::vector<std::string>& peer_env) {
  Timings tm;
  double peer_spent = 0;
  auto progress = a.progress("repeats", static_cast<std::size_t>(p.repeats));
  for (int rep = 0; rep < p.repeats; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    tm.ours_run = run_ours(pr.net, pr.theta, pr.batch, Z, p.block);
    tm.ours.push_back(seconds_since(t0));
    tm.ours_products.push_back(tm.ours_run.products_s);
    tm.raw.add_row({0, double(rep), tm.ours.back()});

    t0 = std::chrono::steady_clock::now();
    tm.serial_run = run_ours(pr.net, pr.theta, pr.batch, Z, p.block, /*stacked=*/false);
    tm.serial.push_back(seconds_since(t0));
    tm.raw.add_row({2, double(rep), tm.serial.back()});

    const auto [rc, out] = run_capture({p.python, script.string(), "--dir", dir.string(), "--threads", std::to_string(p.threads),
                                        "--repeats", "1"},
                                       peer_env);
    if (rc != 0) throw std::runtime_error(fmt::format("PyTorch peer failed (exit {})", rc));
    const std::string line = out.substr(0, out.find('\n'));
    tm.peer = json::parse(line, nullptr, false);
    if (tm.peer.is_discarded() || !tm.peer.contains("median_s") || !tm.peer.contains("times_s"))
      throw std::runtime_error(fmt::format("PyTorch peer: unreadable output '{}'", line));
    tm.torch.push_back(tm.peer["median_s"].get<double>());
    tm.raw.add_row({1, double(rep), tm.torch.back()});
    peer_spent += tm.torch.back();
    progress->advance();
    if (peer_spent + tm.torch.back() > p.peer_budget) break;
  }
  return tm;
}

/// The machine's DGEMM rate: C = A B with A, B, C 2048×2048 (float64) through OpenBLAS's
/// cblas_dgemm (looked up in the already-loaded library, as openblas_info does) at the pool's
/// current size, best of 3 after a warm-up; 0 where cblas_dgemm is not found.
double dgemm_peak_gflops() {
  using dgemm_fn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
  auto dgemm = reinterpret_cast<dgemm_fn>(dlsym(RTLD_DEFAULT, "cblas_dgemm"));
  if (!dgemm) return 0.0;
  const int N = 2048;
  Eigen::MatrixXd A = Eigen::MatrixXd::Constant(N, N, 0.5), B = Eigen::MatrixXd::Constant(N, N, 0.25), C(N, N);
  auto run = [&] { dgemm(102 /*CblasColMajor*/, 111 /*CblasNoTrans*/, 111, N, N, N, 1.0, A.data(), N, B.data(), N, 0.0, C.data(), N); };
  run();
  double t = 1e300;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    t = std::min(t, seconds_since(t0));
  }
  return 2.0 * double(N) * N * N / t / 1e9;
}

/// Where our time goes (informational): a gradient, the operator's construction, one product
/// alone (its BLAS calls use the pool), one block of products as the library runs it (stacked
/// R-passes, the probes over OpenMP's team with serial BLAS), the same block one probe per R-pass;
/// GFLOP/s against the machine's DGEMM rate.
json profile_ours(const Params& p, const Problem& pr, const Eigen::MatrixXd& Z, const OursRun& last, double products_s) {
  const int reps = 3;
  const nn::Mlp& net = pr.net;
  Eigen::VectorXd g;
  const double grad_s = median_time(reps, [&] { nn::loss_and_gradient(net, pr.theta, pr.batch, nn::LossKind::cross_entropy, g); });
  const double construct_s = median_time(reps, [&] { nn::HessianOperator op(net, pr.theta, pr.batch, nn::LossKind::cross_entropy); });
  const nn::HessianOperator op(net, pr.theta, pr.batch, nn::LossKind::cross_entropy);
  Eigen::VectorXd hv(net.num_params);
  const double single_s = median_time(reps, [&] { op.perform_op(Z.col(0).data(), hv.data()); });
  const Eigen::Index cols = std::min<Eigen::Index>(p.block, p.probes);
  Eigen::MatrixXd HZ(net.num_params, cols);
  const double block_s = median_time(reps, [&] { op.perform_op_block(Z.data(), HZ.data(), cols); });
  const double block_unstacked_s = median_time(reps, [&] {
    const ScopedBlasThreads serial(1);
#pragma omp parallel for schedule(dynamic, 1)
    for (Eigen::Index j = 0; j < cols; ++j) op.perform_op(Z.col(j).data(), HZ.col(j).data());
  });
  const double peak = dgemm_peak_gflops();
  // Multiply–adds of one product, counted from hvp.cpp's matrix products: 2 with W_in's shape
  // (R{h0} and H v's W_in part), 10 with K's or V's (n·d·B each), 4 with W_out's.
  const double B = p.batch_size, d = p.width, n = p.width, din = double(pr.batch.x.rows()), dout = 10;
  const double gflop = 2.0 * (2 * d * din * B + 10 * n * d * B + 4 * dout * d * B) / 1e9;
  // The timed repeats form quadratic forms (quadratic_forms_block): without the parameter-gradient GEMMs,
  // 1 product with W_in's shape, 6 with K's or V's, 2 with W_out's.
  const double gflop_quadratic = 2.0 * (1 * d * din * B + 6 * n * d * B + 2 * dout * d * B) / 1e9;
  const double timed_rate = gflop_quadratic * double(p.probes) / products_s;
  return {{"gradient_s", grad_s},
          {"operator_construction_s", construct_s},
          {"one_perform_op_s", single_s},
          {"perform_op_block_s", block_s},
          {"perform_op_block_columns", cols},
          {"per_product_in_block_s", block_s / double(cols)},
          {"block_one_probe_per_pass_s", block_unstacked_s},
          {"per_product_one_probe_per_pass_s", block_unstacked_s / double(cols)},
          {"last_repeat_construction_s", last.construct_s},
          {"last_repeat_products_s", last.products_s},
          {"gflop_per_product_estimate", gflop},
          {"gflop_per_quadratic_form_estimate", gflop_quadratic},
          {"gflops_in_block", gflop * double(cols) / block_s},
          {"gflops_in_block_one_probe_per_pass", gflop * double(cols) / block_unstacked_s},
          {"dgemm_2048_gflops", peak},
          {"dgemm_what", fmt::format("cblas_dgemm 2048³ float64, OpenBLAS at {} threads, best of 3", blas_threads(0))},
          {"products_median_s", products_s},
          {"gflops_products_median", timed_rate},
          {"fraction_of_dgemm_products", peak > 0 ? timed_rate / peak : 0.0},
          {"fraction_of_dgemm_in_block", peak > 0 ? gflop * double(cols) / block_s / peak : 0.0}};
}

/// Agreement of the two sides and of the library's own call. Rounding in zᵀHz scales with the size
/// of the terms, not with |zᵀHz| (a sum of terms of both signs), so the per-probe differences are
/// measured against the largest |q_j|.
struct Agreement {
  Eigen::VectorXd quad_torch;
  double ours_estimate = 0, torch_estimate = 0, std_error = 0, torch_loss = 0;
  double err_quad = 0, err_quad_each = 0, err_estimate = 0, err_hz0 = 0, err_lib = 0, err_serial = 0, err_loss = 0;
  Eigen::Index lib_probes = 0;
  double lib_estimate = 0, loop_head_mean = 0;
  double worst() const { return std::max({err_quad, err_hz0, err_lib}); }
};

Agreement agreement(const Params& p, const Problem& pr, const Timings& tm, const fs::path& dir) {
  Agreement g;
  const OursRun& ours = tm.ours_run;
  g.quad_torch = load_npy(dir / "quad_torch.npy").row(0).transpose();
  const Eigen::VectorXd hz0_torch = load_npy(dir / "hz0_torch.npy").row(0).transpose();
  if (g.quad_torch.size() != p.probes || hz0_torch.size() != pr.net.num_params)
    throw std::runtime_error(fmt::format("PyTorch peer: {} probe values and H z₀ of size {}, expected {} and {}", g.quad_torch.size(),
                                         hz0_torch.size(), p.probes, pr.net.num_params));
  g.ours_estimate = ours.quad.mean();
  g.torch_estimate = g.quad_torch.mean();
  // The library's own call draws the same probes: estimators::hutchinson stopped after the first
  // block must give the mean of the timed loop's first block (untimed; it is what the loop reproduces).
  g.lib_probes = std::min<Eigen::Index>(std::max(p.block, 2), p.probes);
  estimators::TraceOptions topt{.seed = p.seed, .stream = kProbeStream, .batch = p.block};
  topt.stop.min_samples = topt.stop.max_samples = g.lib_probes;
  topt.stop.rel_tol = 0.0;
  const estimators::TraceEstimate lib = estimators::hutchinson(nn::HessianOperator(pr.net, pr.theta, pr.batch, nn::LossKind::cross_entropy), topt);
  g.lib_estimate = lib.estimate;
  g.loop_head_mean = ours.quad.head(g.lib_probes).mean();

  const Eigen::VectorXd dq = ours.quad - g.quad_torch;
  g.err_quad = dq.cwiseAbs().maxCoeff() / g.quad_torch.cwiseAbs().maxCoeff();
  g.err_quad_each = (dq.array().abs() / g.quad_torch.array().abs()).maxCoeff();
  g.err_estimate = std::abs(g.ours_estimate - g.torch_estimate) / std::abs(g.torch_estimate);
  g.err_hz0 = (ours.hz0 - hz0_torch).cwiseAbs().maxCoeff() / hz0_torch.cwiseAbs().maxCoeff();
  g.err_lib = std::abs(g.lib_estimate - g.loop_head_mean) / ours.quad.head(g.lib_probes).cwiseAbs().maxCoeff();
  g.err_serial = (tm.serial_run.quad - ours.quad).cwiseAbs().maxCoeff() / ours.quad.cwiseAbs().maxCoeff();
  g.torch_loss = tm.peer.value("loss", std::nan(""));
  g.err_loss = std::abs(ours.loss - g.torch_loss) / std::abs(g.torch_loss);
  // The estimate's standard error over the probes (Hutchinson's own noise; the benchmark is about
  // agreement and time, not about the value of tr H_θ).
  stats::RunningMean quad_mean;
  for (Eigen::Index j = 0; j < ours.quad.size(); ++j) quad_mean.push(ours.quad(j));
  g.std_error = quad_mean.std_error();
  return g;
}

/// The running means of zᵀHz over the probes, both sides, and their table.
plot::Figure estimate_figure(const Params& p, const Timings& tm, const Agreement& g, const std::string& shape, Table& per_probe) {
  std::vector<double> xs, ours_est, torch_est;
  double s_ours = 0, s_torch = 0;
  for (Eigen::Index j = 0; j < p.probes; ++j) {
    per_probe.add_row({double(j), tm.ours_run.quad(j), g.quad_torch(j)});
    s_ours += tm.ours_run.quad(j);
    s_torch += g.quad_torch(j);
    xs.push_back(double(j + 1));
    ours_est.push_back(s_ours / double(j + 1));
    torch_est.push_back(s_torch / double(j + 1));
  }
  const double ours_s = median(tm.ours), torch_s = median(tm.torch);
  plot::Figure fig{.name = "hutchinson_vs_torch",
                   .title = fmt::format("Hutchinson estimate of tr H_θ, {} ({} threads)", shape, p.threads),
                   .xlabel = "probes",
                   .ylabel = "running mean of zᵀHz"};
  fig.series.push_back({.x = xs, .y = torch_est, .label = "PyTorch double backward", .style = plot::Style::lines, .width = 4});
  fig.series.push_back({.x = xs, .y = ours_est, .label = "sparseact HessianOperator", .style = plot::Style::lines, .dashed = true});
  fig.annotations.push_back({.x = 0.05, .y = 0.92,
                             .text = fmt::format("ours {:.3g} s, PyTorch {:.3g} s: {:.2f}x", ours_s, torch_s, torch_s / ours_s), .graph = true});
  fig.annotations.push_back({.x = 0.05, .y = 0.86, .text = fmt::format("max rel diff of zᵀHz {:.2g}", g.err_quad), .graph = true});
  {  // room above the curves for the legend and the annotations
    const auto [lo, hi] = std::minmax_element(ours_est.begin(), ours_est.end());
    const double span = std::max(*hi - *lo, 1e-12 * std::max(1.0, std::abs(*hi)));
    fig.yrange = std::make_pair(*lo - 0.1 * span, *hi + 0.4 * span);
  }
  return fig;
}

/// The JSON's data: timings, the setting on both sides, agreement, our profile.
json record(const Params& p, const Problem& pr, const Timings& tm, const Agreement& g, const json& profile,
            const fs::path& script, const std::vector<std::string>& peer_env, const std::string& blas_core,
            const std::string& blas_config) {
  const double ours_s = median(tm.ours), serial_s = median(tm.serial), torch_s = median(tm.torch);
  const char* coretype_env = std::getenv("OPENBLAS_CORETYPE");
  json d;
  d["ours_s"] = ours_s;
  d["peer_s"] = torch_s;
  d["ratio"] = torch_s / ours_s;
  d["ratio_best_of_repeats"] = best(tm.torch) / best(tm.ours);
  d["ours_times_s"] = tm.ours;
  d["peer_times_s"] = tm.torch;
  d["ours_one_probe_per_pass"] = {{"median_s", serial_s}, {"times_s", tm.serial}, {"ratio", torch_s / serial_s},
                                  {"ratio_best_of_repeats", best(tm.torch) / best(tm.serial)},
                                  {"max_rel_diff_quad_vs_ours", g.err_serial},
                                  {"what", "the same timed run one probe per R-pass: perform_op per column, the block's columns over "
                                           "OpenMP's team with openblas_set_num_threads(1) (the library's way before the stacked pass)"}};
  d["repeats"] = tm.done();
  d["threads"] = p.threads;
  d["openblas"] = {{"core", blas_core}, {"config", blas_config}, {"OPENBLAS_CORETYPE", coretype_env ? coretype_env : ""}};
  d["network"] = {{"shape", fmt::format("784-{}-{}-10", p.width, p.width)}, {"num_params", pr.net.num_params}, {"d_in", pr.batch.x.rows()},
                  {"d", p.width}, {"n", p.width}, {"d_out", 10}, {"activation", "relu"}, {"layernorm", "affine γ and β, eps 1e-5"},
                  {"residual", true}, {"value_layer", true}, {"zeroth_bias", false}, {"loss", "cross_entropy (mean)"}};
  d["theta"] = {{"init", "nn::init_params"}, {"sgd_steps", p.sgd_steps}, {"sgd_lr", kSgdLr}, {"noise_sd", kNoiseSd},
                {"loss_init", pr.loss_init}, {"loss", tm.ours_run.loss}};
  d["batch"] = {{"data", "Fashion-MNIST train, first images, real labels"}, {"size", p.batch_size}, {"file", pr.images_file.string()}};
  d["probes"] = {{"count", p.probes}, {"block", p.block}, {"kind", "Rademacher, estimators::rademacher_columns"},
                 {"seed", p.seed}, {"stream", kProbeStream}};
  d["estimate"] = {{"ours", g.ours_estimate}, {"peer", g.torch_estimate}, {"std_error", g.std_error},
                   {"sparseact_hutchinson_first_probes", g.lib_probes}, {"sparseact_hutchinson", g.lib_estimate},
                   {"timed_loop_first_probes", g.loop_head_mean}};
  d["agreement"] = {{"max_rel_diff_quad", g.err_quad}, {"max_rel_diff_quad_each", g.err_quad_each},
                    {"max_rel_diff_hz0", g.err_hz0}, {"rel_diff_estimate", g.err_estimate},
                    {"rel_diff_library_call", g.err_lib}, {"rel_diff_loss", g.err_loss}};
  d["profile_ours"] = profile;
  d["peer"] = {{"python", p.python}, {"script", script.string()}, {"torch", tm.peer.value("torch", "")},
               {"numpy", tm.peer.value("numpy", "")}, {"torch_threads", tm.peer.value("torch_threads", 0)},
               {"env", peer_env}, {"last_repeat_split_s", tm.peer.value("last_repeat_split_s", json::object())},
               {"method", "torch.autograd.grad(loss, params, create_graph=True) once, then per probe "
                          "torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True) (PyHessian)"},
               {"timer", "time.perf_counter, forward pass, gradient and products included; one process per repeat"}};
  d["ours"] = {{"call", "nn::HessianOperator construction + perform_op_block in blocks of --block"},
               {"threads", "OpenMP team of --threads splits each block's probes, one stacked R-pass per thread; OpenBLAS serial "
                           "inside the team (set and restored by perform_op_block), its pool at --threads outside"},
               {"timer", "std::chrono::steady_clock, construction, products and zᵀHz dots included"}};
  d["peer_budget_s"] = p.peer_budget;
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3) d["load_average_at_end"] = {load[0], load[1], load[2]};
  return d;
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
  Params p;
  analysis.scaled_option("--batch", p.batch_size, 256, 1024, "samples in the batch (the first of Fashion-MNIST's training split)")
      ->check(CLI::Range(2, 60000));
  analysis.scaled_option("--probes", p.probes, 20, 100, "Rademacher probes (Hessian-vector products)")->check(CLI::Range(2, 10000));
  analysis.scaled_option("--width", p.width, 64, 256, "hidden width d and block width n (784-d-d-10)")->check(CLI::Range(2, 4096));
  analysis.scaled_option("--repeats", p.repeats, 1, 3, "timing repeats; the median is reported")->check(CLI::Range(1, 1000));
  app.add_option("--block", p.block, "probes per perform_op_block call (estimators::hutchinson's TraceOptions::batch)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--sgd-steps", p.sgd_steps, "SGD steps (lr 0.1) on the batch from the initialisation, before the noise")
      ->check(CLI::Range(0, 10000))->capture_default_str();
  app.add_option("--python", p.python, "Python with numpy and torch (Debian's python3-torch)")->capture_default_str();
  app.add_option("--peer-budget", p.peer_budget, "seconds for PyTorch's timed runs; repeats beyond the first stop (on every side) once the next would exceed it")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    // The peer must be there before anything runs.
    if (run_capture({p.python, "-c", "import numpy, torch"}, {}, true).first != 0)
      throw InputError(fmt::format("--python {}: cannot import torch; install python3-torch (apt-get install python3-torch)", p.python));
    const fs::path script = peer_script("hutchinson_vs_torch.py");
    p.seed = a.common.seed;
    p.threads = a.common.threads > 0 ? a.common.threads : kDefaultThreads;
    omp_set_num_threads(p.threads);
    blas_threads(p.threads);
    const std::vector<std::string> peer_env = {fmt::format("OMP_NUM_THREADS={}", p.threads),
                                               fmt::format("OPENBLAS_NUM_THREADS={}", p.threads),
                                               fmt::format("MKL_NUM_THREADS={}", p.threads)};
    if (double(nn_params_estimate(p.width)) * p.probes > 2.5e8)
      throw InputError(fmt::format("--probes × parameters = {} × {} exceeds 2.5e8 (2 GB of float64 probes, held on both sides)",
                                   p.probes, nn_params_estimate(p.width)));
    const TempDir tmp("hutchinson_vs_torch");

    // --- Setup: the problem, the probes (hutchinson's: column j from Rng(seed, stream_id(kProbeStream, j))), the hand-over
    const Problem pr = make_problem(p);
    Eigen::MatrixXd Z;
    estimators::rademacher_columns(Z, pr.net.num_params, 0, p.probes, p.seed, kProbeStream);
    export_for_peer(tmp.path, pr, Z, p.width);
    {  // ours: an untimed warm-up (thread pools, first touch of the caches' buffers; the peer warms up in each of its runs)
      const nn::HessianOperator op(pr.net, pr.theta, pr.batch, nn::LossKind::cross_entropy);
      Eigen::MatrixXd HZ(pr.net.num_params, std::min(p.block, p.probes));
      op.perform_op_block(Z.data(), HZ.data(), HZ.cols());
    }

    // --- Run: the timed repeats, our profile, the agreement --------------------------------------------
    Timings tm = time_repeats(a, p, pr, Z, script, tmp.path, peer_env);
    const json profile = profile_ours(p, pr, Z, tm.ours_run, median(tm.ours_products));
    const Agreement g = agreement(p, pr, tm, tmp.path);
    const double ours_s = median(tm.ours), serial_s = median(tm.serial), torch_s = median(tm.torch);

    // --- Checks ---------------------------------------------------------------------------------------
    const auto [blas_core, blas_config] = openblas_info();
    const std::string shape = fmt::format("784-{}-{}-10, batch {}, {} probes", p.width, p.width, p.batch_size, p.probes);
    at_most(a, {.id = "agree",
                .claim = "§3.4 (tr H_θ as the flatness measure)",
                .statement = "the same probes through two exact HVPs give the same zᵀHz: max_j |q_j − q_j^torch| / max_j |q_j^torch| "
                             "≤ 1e-12, likewise ‖H z₀ − H z₀^torch‖_∞ / ‖H z₀^torch‖_∞, and estimators::hutchinson draws the "
                             "probes the timed loop uses",
                .note = fmt::format("{}: per-probe zᵀHz {:.3g} (relative to each value {:.3g}), H z₀ {:.3g}; estimate ours "
                                    "{:.12g} vs PyTorch {:.12g} (relative {:.3g}; Hutchinson's standard error {:.3g}); "
                                    "estimators::hutchinson over the first {} probes {:.12g} vs the loop's {:.12g} ({:.3g}); "
                                    "loss ours {:.12g} vs PyTorch {:.12g} (relative {:.3g}).",
                                    shape, g.err_quad, g.err_quad_each, g.err_hz0, g.ours_estimate, g.torch_estimate, g.err_estimate,
                                    g.std_error, g.lib_probes, g.lib_estimate, g.loop_head_mean, g.err_lib, tm.ours_run.loss, g.torch_loss,
                                    g.err_loss)},
            g.worst(), kAgreeTol)
        .tolerance["norm"] = "differences divided by the largest magnitude of the compared quantity (rounding in a sum of terms of both signs scales with the terms, not with the sum)";
    speedup_at_least(a, {.id = "speedup",
                         .claim = "benchmark target (§3.4: Hessian trace by Hutchinson's estimator)",
                         .statement = "ours ≥ 4× faster than PyTorch double-backward HVPs (PyHessian's way) on the CPU: t_torch / t_ours ≥ 4 (issue 15)",
                         .note = fmt::format("{}: ours {:.4g} s (median of {}; range {:.4g}–{:.4g}; last: operator {:.3g} s + products "
                                             "{:.3g} s in blocks of {}), PyTorch {:.4g} s (range {:.4g}–{:.4g}), {} threads each "
                                             "(ours: OpenMP at {}, the library runs OpenBLAS serial inside its team); OpenBLAS kernels '{}', both sides. Ratio of best times {:.3g}. "
                                             "Informational: ours one probe per R-pass (the former way) {:.4g} s, ratio {:.3g}.",
                                             shape, ours_s, tm.done(), best(tm.ours), worst(tm.ours), tm.ours_run.construct_s,
                                             tm.ours_run.products_s, p.block, torch_s, best(tm.torch), worst(tm.torch), p.threads, p.threads,
                                             blas_core, best(tm.torch) / best(tm.ours), serial_s, torch_s / serial_s)},
                     tm.ours, tm.torch, kTarget);
    fmt::print(stderr, "hutchinson_vs_torch: {}: ours {:.4g} s, PyTorch {:.4g} s ({:.2f}x; one probe per R-pass {:.4g} s, {:.2f}x); "
                       "tr H ≈ {:.8g} ± {:.3g} (PyTorch {:.8g}), max rel diff zᵀHz {:.2g}; {} threads, OpenBLAS kernels '{}'\n",
               shape, ours_s, torch_s, torch_s / ours_s, serial_s, torch_s / serial_s, g.ours_estimate, g.std_error, g.torch_estimate,
               g.err_quad, p.threads, blas_core);

    // --- Data, tables, figure -------------------------------------------------------------------------
    a.result.data = record(p, pr, tm, g, profile, script, peer_env, blas_core, blas_config);
    Table timings{"timings",
                  {"batch", "width", "params", "probes", "ours_s", "peer_s", "ratio", "ours_one_probe_per_pass_s", "ratio_one_probe_per_pass",
                   "max_rel_err_quad", "max_rel_err_hz0", "estimate_ours", "estimate_torch", "repeats"},
                  {}};
    timings.add_row({double(p.batch_size), double(p.width), double(pr.net.num_params), double(p.probes), ours_s, torch_s, torch_s / ours_s,
                     serial_s, torch_s / serial_s, g.err_quad, g.err_hz0, g.ours_estimate, g.torch_estimate, double(tm.done())});
    Table per_probe{"probes", {"probe", "quad_ours", "quad_torch"}, {}};
    a.add_figure(estimate_figure(p, tm, g, shape, per_probe));
    a.add_table(std::move(timings));
    a.add_table(std::move(tm.raw));
    a.add_table(std::move(per_probe));
  });
}
