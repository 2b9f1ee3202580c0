// python_overhead — benchmark: what the C++ estimator adds when driven from Python (issue 31). Hutchinson's
// Hessian trace of a torch MLP (paper 001 §3.4: flatness measured by tr H), once through
// sparseact.hutchinson_trace with a Python HVP closure (ours: the C++ estimator draws the probes, calls the
// closure through pybind11 for each, keeps the running mean), once as a plain PyTorch loop over the same
// probes (PyHessian's way, the peer). Both sides run in one Python process, python_overhead.py under
// Debian's /usr/bin/python3, interleaved repeats, the same network, batch, device (CPU) and threads.
//
// Target (issue 31): the C++ estimator adds < 5 % to the run, i.e. t_peer / t_ours ≥ 1/1.05 (ratio of
// median times; the spread of the repeats decides "inconclusive" as in every benchmark). Self-check: the
// two estimates agree to rounding (the same probes through the same products). Informational, in the
// same rounds: PyHessian's loop drawing its own probes inside the loop (torch.randint_like), which is what a
// plain-PyTorch user pays for probes; the target compares with the stricter loop over ready-made probes.
//
// Without torch or without the Python module (pybind11-dev absent at configure time) the benchmark is
// skipped cleanly: exit 0, no speed check, data.skipped says why.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/errors.hpp>

#include "peer.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::bench;

namespace {
constexpr double kTarget = 1.0 / 1.05;  // ours at most 5 % slower than the plain loop
constexpr double kAgreeTol = 1e-10;     // |estimate_ours − estimate_peer| / |estimate_peer|
#ifdef SPARSEACT_PYTHON_DIR
const char* kPythonDir = SPARSEACT_PYTHON_DIR;
#else
const char* kPythonDir = "";
#endif
}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "python_overhead", .paper = "001", .claims = {"§3.4 (tr H_θ as the flatness measure)"},
                     .description = "Benchmark: sparseact.hutchinson_trace on a torch HVP closure vs the same probes in a plain PyTorch loop"});
  auto& app = analysis.app();
  std::string python = "/usr/bin/python3", pythonpath = kPythonDir;
  int width = 0, d_in = 0, batch = 0, probes = 0, repeats = 0, depth = 2;
  analysis.scaled_option("--width", width, 128, 256, "hidden width of the MLP")->check(CLI::Range(2, 8192));
  analysis.scaled_option("--d-in", d_in, 256, 784, "input dimension")->check(CLI::Range(1, 100000));
  analysis.scaled_option("--batch", batch, 128, 256, "inputs in the loss's batch")->check(CLI::Range(1, 100000));
  analysis.scaled_option("--probes", probes, 32, 64, "Rademacher probes (Hessian-vector products) per trace")->check(CLI::Range(2, 100000));
  analysis.scaled_option("--repeats", repeats, 5, 7, "timed repeats of each side, interleaved")->check(CLI::Range(1, 1000));
  app.add_option("--depth", depth, "hidden layers")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--python", python, "Python with torch (Debian's python3-torch)")->capture_default_str();
  app.add_option("--pythonpath", pythonpath, "folder holding the sparseact package (the build's python/)")->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    const int threads = a.common.threads > 0 ? a.common.threads : 2;  // a fixed count keeps runs comparable
    const std::vector<std::string> env = {"PYTHONPATH=" + pythonpath, fmt::format("OMP_NUM_THREADS={}", threads),
                                          fmt::format("OPENBLAS_NUM_THREADS={}", threads), fmt::format("MKL_NUM_THREADS={}", threads)};
    a.result.data["device"] = "cpu";
    a.result.data["threads"] = threads;
    // Skipped cleanly where a side cannot run: no torch, or no Python module in this build.
    std::string skipped;
    if (run_capture({python, "-c", "import torch, numpy"}, env, true).first != 0)
      skipped = fmt::format("{} cannot import torch and numpy (install python3-torch)", python);
    else if (run_capture({python, "-c", "import sparseact"}, env, true).first != 0)
      skipped = pythonpath.empty() ? "this build has no Python module (python3-dev and pybind11-dev were not found at configure time)"
                                   : fmt::format("{} cannot import sparseact from --pythonpath {}", python, pythonpath);
    if (!skipped.empty()) {
      fmt::print(stderr, "python_overhead: skipped: {}\n", skipped);
      a.result.data["skipped"] = skipped;
      return;
    }

    const std::vector<double> load_before = load_average();  // 1-, 5-, 15-minute: how quiet the machine was
    const auto [rc, out] = run_capture({python, peer_script("python_overhead.py").string(), "--threads", std::to_string(threads), "--repeats",
                                        std::to_string(repeats), "--width", std::to_string(width), "--depth", std::to_string(depth), "--d-in",
                                        std::to_string(d_in), "--batch", std::to_string(batch), "--probes", std::to_string(probes), "--seed",
                                        std::to_string(a.common.seed)},
                                       env);
    if (rc != 0) throw std::runtime_error(fmt::format("python_overhead.py failed (exit {})", rc));
    const std::string line = out.substr(0, out.find('\n'));
    const json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.contains("ours_s") || !r.contains("peer_s"))
      throw std::runtime_error(fmt::format("python_overhead.py: unreadable output '{}'", line));
    const std::vector<double> ours_s = r["ours_s"], peer_s = r["peer_s"];
    const double est_ours = r["estimate_ours"], est_peer = r["estimate_peer"];
    const double ours = median(ours_s), peer = median(peer_s);
    const std::string shape = fmt::format("{}-{}×{}-10 ReLU MLP, float64, {} parameters, batch {}, {} probes", d_in, width, depth,
                                          r["params"].get<long>(), batch, probes);

    at_most(a, {.id = "agree", .claim = "§3.4 (tr H_θ as the flatness measure)",
                .statement = "the same probes through the same torch products give the same estimate: |tr_ours − tr_peer| / |tr_peer| ≤ 1e-10",
                .note = fmt::format("{}: ours {:.15g}, peer {:.15g}", shape, est_ours, est_peer), .kind = Kind::self_check},
            std::abs(est_ours - est_peer) / std::max(std::abs(est_peer), 1e-300), kAgreeTol);
    speedup_at_least(a, {.id = "overhead",
                         .claim = "benchmark target (issue 31: the C++ estimator adds < 5 % to a Python HVP run)",
                         .statement = "sparseact.hutchinson_trace on a Python HVP closure takes at most 5 % longer than the same probes in "
                                      "a plain PyTorch loop: t_peer / t_ours ≥ 1/1.05",
                         .note = fmt::format("{}: ours {:.4g} s (median of {}; range {:.4g}–{:.4g}), plain loop {:.4g} s (range {:.4g}–{:.4g}), "
                                             "{:.3g} s per product; overhead {:+.2f} %. One process, {} threads (torch.set_num_threads and "
                                             "OMP/OpenBLAS/MKL), CPU, torch {}.",
                                             shape, ours, ours_s.size(), best(ours_s), worst(ours_s), peer, best(peer_s), worst(peer_s),
                                             r["hvp_s"].get<double>(), 100 * (ours / peer - 1), threads, r["torch"].get<std::string>())},
                     ours_s, peer_s, kTarget);
    const std::vector<double> drawing_s = r.value("peer_drawing_probes_s", std::vector<double>{});
    const double drawing = drawing_s.empty() ? NAN : median(drawing_s);
    a.result.data["informational"] = fmt::format("PyHessian's loop drawing its own probes inside the loop (torch.randint_like; other "
                                                 "probes, another estimate): {:.4g} s, ours / it = {:.3f}", drawing, ours / drawing);
    fmt::print(stderr, "python_overhead: {}: ours {:.4g} s, plain PyTorch {:.4g} s (overhead {:+.2f} %; against the loop drawing its own "
                       "probes {:.4g} s, {:+.2f} %), {} threads\n", shape, ours, peer, 100 * (ours / peer - 1), drawing,
               100 * (ours / drawing - 1), threads);
    a.result.data["peer"] = r;
    a.result.data["load_average_before"] = load_before;
    a.result.data["load_average_after"] = load_average();
    Table t{"timings", {"repeat", "ours_s", "peer_s"}, {}};
    for (std::size_t i = 0; i < ours_s.size(); ++i) t.add_row({double(i), ours_s[i], peer_s[i]});
    a.add_table(std::move(t));
  });
}
