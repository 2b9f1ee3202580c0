// comet_vs_torch — benchmark of paper 002's two computations against PyTorch on the same weights:
//   (1) forward: B random COMET nets 784–512×4–10 (p_k = 0.1) over 2048 Fashion-MNIST images, masks and
//       activations. Ours: routing::comet_forward_batch (dense first layer, then only the kept units, A.8;
//       nets in parallel). Peer: eqs. (4)–(8) densely with torch.topk, as A.8's code.
//   (2) NTK: the full empirical NTK Gram (eq. (10)) of one COMET MLP 100–256×3–10 over 128 inputs. Ours:
//       routing::ntk_gram (eq. (11)'s blocks, ops::KhatriRaoGramOp) made dense. Peer: functorch / torch.func,
//       the faster of jacrev+vmap Jacobian contraction and NTK-vector products.
// float64 on both sides, the same thread count. Checks: agreement (masks identical, activations and the
// Gram to 1e-10 relative) and speed (ratio of medians ≥ 1.5 on the CPU).
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <omp.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/nn/data.hpp>
#include <sparseact/routing/comet_batch.hpp>
#include <sparseact/routing/ntk.hpp>

#include "peer.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::routing;
using namespace sparseact::bench;
namespace fs = std::filesystem;

namespace {

constexpr double kTarget = 1.5, kAgreeTol = 1e-10;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Row-major for numpy: inputs as rows.
void save_rows(const fs::path& p, const Eigen::MatrixXd& columns) { save_npy(p, columns.transpose()); }

/// W_ℓ of a backbone without biases.
Eigen::MatrixXd layer_weights(const CometNet& n, std::size_t l) {
  Eigen::Index at = 0;
  for (std::size_t j = 1; j < l; ++j) at += Eigen::Index(n.backbone.widths[j]) * n.backbone.widths[j - 1];
  return Eigen::Map<const Eigen::MatrixXd>(n.theta.data() + at, n.backbone.widths[l], n.backbone.widths[l - 1]);
}

json run_peer(const std::string& python, const fs::path& script, const fs::path& dir, const std::string& part, int repeats,
              double budget, const std::vector<std::string>& env) {
  const auto [rc, out] = run_capture({python, script.string(), "--dir", dir.string(), "--part", part, "--repeats", std::to_string(repeats),
                                      "--budget-s", fmt::format("{}", budget)}, env);
  if (rc != 0) throw std::runtime_error(fmt::format("PyTorch peer ({}) failed (exit {})", part, rc));
  const json j = json::parse(out.substr(0, out.find('\n')), nullptr, false);
  if (j.is_discarded() || !j.contains("times_s")) throw std::runtime_error("PyTorch peer: unreadable output");
  return j;
}

template <class F>
std::vector<double> time_ours(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "comet_vs_torch", .paper = "002", .claims = {"§4", "eqs. (4)–(11)", "A.8"},
                     .description = "Benchmark: batched COMET forward passes and the empirical NTK Gram, ours against PyTorch (topk, functorch)",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  int nets = 0, width = 0, depth = 4, images = 0, gram_inputs = 0, gram_width = 256, gram_depth = 3, repeats = 0;
  double pk = 0.1, peer_budget = 120;
  std::string python = "/usr/bin/python3";
  analysis.scaled_option("--nets", nets, 4, 16, "COMET nets of part (1)")->check(CLI::Range(1, 1000));
  analysis.scaled_option("--width", width, 128, 512, "hidden width of part (1)")->check(CLI::Range(2, 8192));
  analysis.scaled_option("--images", images, 256, 2048, "Fashion-MNIST images of part (1)")->check(CLI::Range(1, 60000));
  analysis.scaled_option("--gram-inputs", gram_inputs, 32, 128, "inputs of part (2)")->check(CLI::Range(2, 4096));
  analysis.scaled_option("--repeats", repeats, 2, 3, "timing repeats (medians compared)")->check(CLI::Range(1, 100));
  app.add_option("--depth", depth, "hidden layers of part (1)")->check(CLI::Range(1, 20))->capture_default_str();
  app.add_option("--gram-width", gram_width, "hidden width of part (2)")->check(CLI::Range(2, 4096))->capture_default_str();
  app.add_option("--gram-depth", gram_depth, "hidden layers of part (2)")->check(CLI::Range(1, 20))->capture_default_str();
  app.add_option("--pk", pk, "p_k of both parts")->check(CLI::Range(1e-6, 1.0))->capture_default_str();
  app.add_option("--python", python, "Python with numpy and torch (Debian's python3-torch)")->capture_default_str();
  app.add_option("--peer-budget", peer_budget, "seconds per part for PyTorch's repeats beyond the first")->check(CLI::Range(0.0, 1e6))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    if (run_capture({python, "-c", "import numpy, torch"}, {}, true).first != 0)
      throw InputError(fmt::format("--python {}: cannot import torch; install python3-torch (apt-get install python3-torch)", python));
    const fs::path script = peer_script("comet_vs_torch.py");
    const int threads = a.common.threads > 0 ? a.common.threads : omp_get_num_procs();
    omp_set_num_threads(threads);
    blas_threads(threads);
    const std::vector<std::string> env = {fmt::format("OMP_NUM_THREADS={}", threads), fmt::format("OPENBLAS_NUM_THREADS={}", threads),
                                          fmt::format("MKL_NUM_THREADS={}", threads)};
    const TempDir tmp("comet_vs_torch");
    auto& r = a.result;

    // --- (1) B nets' forward passes -------------------------------------------------------------------
    const CometNetSpec spec{.widths = [&] { std::vector<int> w{784}; for (int l = 0; l < depth; ++l) w.push_back(width); w.push_back(10); return w; }(),
                            .f = nn::PlainActivation::relu, .biases = false, .rule = TieRule::exact};  // torch.topk keeps exactly k
    std::vector<CometNet> batch;
    std::vector<const CometNet*> ptrs;
    for (int b = 0; b < nets; ++b) batch.push_back(make_comet_net(spec, a.common.seed, std::uint64_t(b)));
    for (const CometNet& n : batch) ptrs.push_back(&n);
    const Eigen::MatrixXd X = nn::fashion_mnist("train", images, 1).x;
    save_rows(tmp.path / "X.npy", X);
    std::vector<int> ks;
    for (int l = 1; l <= depth; ++l) ks.push_back(active_units(pk, width));
    for (int b = 0; b < nets; ++b) {
      for (int l = 1; l <= depth; ++l) save_npy(tmp.path / fmt::format("net{}_V{}.npy", b, l), batch[std::size_t(b)].router.V[std::size_t(l - 1)]);
      for (int l = 1; l <= depth + 1; ++l) save_npy(tmp.path / fmt::format("net{}_W{}.npy", b, l), layer_weights(batch[std::size_t(b)], std::size_t(l)));
    }
    std::ofstream(tmp.path / "meta.json") << json{{"nets", nets}, {"depth", depth}, {"k", ks}}.dump();
    std::vector<CometBatchForward> fwd;
    comet_forward_batch(ptrs, X.leftCols(std::min<Eigen::Index>(8, X.cols())), pk, threads);  // warm-up
    const std::vector<double> ours_fwd = time_ours(repeats, [&] { fwd = comet_forward_batch(ptrs, X, pk, threads); });
    const json peer_fwd = run_peer(python, script, tmp.path, "forward", repeats, peer_budget, env);
    long mask_mismatch = 0;
    double fwd_err = 0;
    for (int b = 0; b < nets; ++b) {
      const SparseColumns& last = fwd[std::size_t(b)].hidden.back();
      const Eigen::MatrixXd win = load_npy(tmp.path / fmt::format("win_torch{}.npy", b)).transpose();  // k × M
      const Eigen::MatrixXd val = load_npy(tmp.path / fmt::format("val_torch{}.npy", b)).transpose();
      const Eigen::MatrixXd out = load_npy(tmp.path / fmt::format("out_torch{}.npy", b)).transpose();
      mask_mismatch += (win.cast<int>().array() != last.index.array()).count();
      fwd_err = std::max({fwd_err, (val - last.value).cwiseAbs().maxCoeff() / std::max(val.cwiseAbs().maxCoeff(), 1e-300),
                          (out - fwd[std::size_t(b)].output).cwiseAbs().maxCoeff() / std::max(out.cwiseAbs().maxCoeff(), 1e-300)});
    }
    const std::vector<double> peer_fwd_times = peer_fwd["times_s"].get<std::vector<double>>();

    // --- (2) the NTK Gram of one net ---------------------------------------------------------------
    CometNetSpec gspec{.widths = {100}, .f = nn::PlainActivation::relu, .biases = false, .rule = TieRule::exact};
    for (int l = 0; l < gram_depth; ++l) gspec.widths.push_back(gram_width);
    gspec.widths.push_back(10);
    const CometNet gnet = make_comet_net(gspec, a.common.seed, 1000);
    const Eigen::MatrixXd GX = paper002_pair_inputs(gram_inputs / 2 + 1, 100, a.common.seed).leftCols(gram_inputs);
    const std::vector<Eigen::MatrixXd> gmasks = comet_masks(gnet.router, GX, std::vector<double>(std::size_t(GX.cols()), pk));
    save_rows(tmp.path / "G_X.npy", GX);
    for (int l = 1; l <= gram_depth; ++l) save_rows(tmp.path / fmt::format("G_mask{}.npy", l), gmasks[std::size_t(l - 1)]);
    for (int l = 1; l <= gram_depth + 1; ++l) save_npy(tmp.path / fmt::format("G_W{}.npy", l), layer_weights(gnet, std::size_t(l)));
    std::ofstream(tmp.path / "meta.json") << json{{"depth", gram_depth}}.dump();
    Eigen::MatrixXd gram;
    const std::vector<double> ours_ntk = time_ours(repeats, [&] { gram = ntk_gram(gnet.backbone, gnet.theta, GX, gmasks).dense(); });
    const json peer_ntk = run_peer(python, script, tmp.path, "ntk", repeats, peer_budget, env);
    const Eigen::MatrixXd gram_torch = load_npy(tmp.path / "gram_torch.npy");
    const double ntk_err = (gram - gram_torch).cwiseAbs().maxCoeff() / gram_torch.cwiseAbs().maxCoeff();

    // --- Checks ---------------------------------------------------------------------------------------
    const std::string fshape = fmt::format("{} nets 784–{}×{}–10, p_k = {:g}, {} images", nets, width, depth, pk, images);
    const std::string gshape = fmt::format("100–{}×{}–10, p_k = {:g}, {} inputs ({}×{} Gram)", gram_width, gram_depth, pk, gram_inputs,
                                           10 * gram_inputs, 10 * gram_inputs);
    equals(a, {.id = "agree_forward_masks", .claim = "eqs. (4)–(6)", .statement = "the same weights give identical masks: winners of the last hidden layer differing from torch.topk's",
               .note = fshape},
           mask_mismatch, 0);
    at_most(a, {.id = "agree_forward", .claim = "eqs. (7)–(8)", .statement = "activations and outputs agree: max |ours − torch| / max |torch| ≤ 1e-10", .note = fshape},
            fwd_err, kAgreeTol);
    at_most(a, {.id = "agree_ntk", .claim = "eqs. (10)–(11)", .statement = "the NTK Gram agrees with torch's J Jᵀ: max |ours − torch| / max |torch| ≤ 1e-10",
                .note = fmt::format("{}; torch's two variants differ by {:.3g} (absolute).", gshape, peer_ntk.value("variants_max_abs_diff", 0.0))},
            ntk_err, kAgreeTol);
    speedup_at_least(a, {.id = "speedup_forward", .claim = "A.8 (masked forward)",
                         .statement = "ours ≥ 1.5× faster than dense PyTorch with torch.topk: t_torch / t_ours ≥ 1.5 (ratio of medians)",
                         .note = fmt::format("{}; {} threads each, float64.", fshape, threads)},
                     ours_fwd, peer_fwd_times, kTarget);
    speedup_at_least(a, {.id = "speedup_ntk", .claim = "eqs. (10)–(11) (NTK Gram)",
                         .statement = "ours ≥ 1.5× faster than functorch (the faster of Jacobian contraction and NTK-vector products)",
                         .note = fmt::format("{}; torch's faster variant: {}; {} threads each, float64.", gshape, peer_ntk.value("variant", "?"), threads)},
                     ours_ntk, peer_ntk["times_s"].get<std::vector<double>>(), kTarget);
    r.data["forward"] = {{"ours_s", ours_fwd}, {"peer", peer_fwd}, {"mask_mismatch", mask_mismatch}, {"max_rel_err", fwd_err}};
    r.data["ntk"] = {{"ours_s", ours_ntk}, {"peer", peer_ntk}, {"max_rel_err", ntk_err}};
    r.data["threads"] = threads;
    r.data["device"] = "cpu";
    Table t{"timings", {"part", "ours_median_s", "peer_median_s", "ratio"}, {}};
    t.add_row({1, median(ours_fwd), median(peer_fwd_times), median(peer_fwd_times) / median(ours_fwd)});
    const std::vector<double> pn = peer_ntk["times_s"].get<std::vector<double>>();
    t.add_row({2, median(ours_ntk), median(pn), median(pn) / median(ours_ntk)});
    a.add_table(std::move(t));
  });
}
