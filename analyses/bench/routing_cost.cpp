// routing_cost — benchmark of MoMLP routing (paper 003, eq. (5), §4.1): distance queries and nanoseconds per
// input of the scan, greedy descent and exact branch and bound on a ν = 2 routing tree (moe/routing_tree),
// against numpy's brute-force argmin and scipy's cKDTree on the same prototypes and inputs (answers compared).
// Target: the exact tree beats numpy's argmin at K ≥ 1024 in n = 2.
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/routing_tree.hpp>
#include <sparseact/moe/voronoi.hpp>

#include "peer.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::bench;
using namespace sparseact::moe;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  Analysis analysis({.name = "routing_cost", .paper = "003", .claims = {"§4.1 (L198)", "eq. (5)"},
                     .description = "Benchmark: routing to the nearest prototype — scan, greedy and exact trees vs numpy argmin and scipy cKDTree",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  int inputs = 0, k_max_log = 0, repeats = 0;
  std::string python = "/usr/bin/python3", n_text = "2,8";
  analysis.scaled_option("--inputs", inputs, 2000, 20000, "uniform inputs routed")->check(CLI::Range(10, 10000000));
  analysis.scaled_option("--k-max-log2", k_max_log, 12, 16, "K = 2^4 … 2^this")->check(CLI::Range(4, 20));
  analysis.scaled_option("--repeats", repeats, 1, 3, "timing repeats for the K ≥ 1024, n = 2 speed checks")->check(CLI::Range(1, 20));
  app.add_option("--n", n_text, "input dimensions")->capture_default_str();
  app.add_option("--python", python, "Python with numpy and scipy")->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    if (run_capture({python, "-c", "import numpy, scipy.spatial"}, {}, true).first != 0)
      throw InputError(fmt::format("--python {}: cannot import numpy and scipy; install python3-scipy", python));
    const fs::path script = peer_script("routing_cost.py");
    const TempDir tmp("routing_cost");
    Table t{"routing_cost", {"n", "K", "ours_scan_ns", "ours_greedy_ns", "ours_exact_ns", "numpy_ns", "kdtree_ns", "greedy_queries", "exact_queries",
                             "greedy_misroute", "agree_numpy", "agree_kdtree"}, {}};
    long disagreements = 0;
    for (double nd : parse_number_list("--n", n_text, 1, 64, true)) {
      const int n = int(nd);
      for (int lg = 4; lg <= k_max_log; lg += 2) {
        const int K = 1 << lg;
        Rng rng(a.common.seed, stream_id(0x003'0099, std::uint64_t(n * 100 + lg)));
        Eigen::MatrixXd P(n, K), X(n, inputs);
        for (auto& v : P.reshaped()) v = rng.uniform();
        for (auto& v : X.reshaped()) v = rng.uniform();
        save_npy(tmp.path / "P.npy", P.transpose());
        save_npy(tmp.path / "X.npy", X.transpose());
        const RoutingTree tree = build_routing_tree(P, 2);
        const bool timed = n == 2 && K >= 1024;
        const int reps = timed ? repeats : 1;
        std::vector<double> exact_s, brute_s, kd_s;
        std::vector<Eigen::Index> exact_cell(static_cast<std::size_t>(inputs)), greedy_cell(static_cast<std::size_t>(inputs));
        long qg = 0, qe = 0;
        double scan_s = 0, greedy_s = 0;
        for (int r = 0; r < reps; ++r) {
          auto t0 = std::chrono::steady_clock::now();
          qe = 0;
          for (int j = 0; j < inputs; ++j) exact_cell[std::size_t(j)] = route_exact(tree, P, X.col(j), &qe);
          exact_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          const auto [rc, out] = run_capture({python, script.string(), "--dir", tmp.path.string(), "--repeats", "1", "--budget-s", "600"},
                                             {"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"});
          if (rc != 0) throw std::runtime_error(fmt::format("routing_cost.py failed (exit {})", rc));
          const json peer = json::parse(out.substr(0, out.find('\n')));
          brute_s.push_back(peer["brute_s"][0].get<double>()), kd_s.push_back(peer["kdtree_s"][0].get<double>());
        }
        auto t0 = std::chrono::steady_clock::now();
        for (int j = 0; j < inputs; ++j) greedy_cell[std::size_t(j)] = route_greedy(tree, X.col(j), &qg);
        greedy_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (K <= 4096) {  // the scan is K distances per input: timed up to 4096
          t0 = std::chrono::steady_clock::now();
          for (int j = 0; j < inputs; ++j) voronoi_cell(X.col(j), P);
          scan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        const Eigen::VectorXd brute = load_npy(tmp.path / "brute.npy").reshaped(), kd = load_npy(tmp.path / "kdtree.npy").reshaped();
        long agree_b = 0, agree_k = 0, misroute = 0;
        for (int j = 0; j < inputs; ++j) {
          agree_b += Eigen::Index(brute(j)) == exact_cell[std::size_t(j)];
          agree_k += Eigen::Index(kd(j)) == exact_cell[std::size_t(j)];
          misroute += greedy_cell[std::size_t(j)] != exact_cell[std::size_t(j)];
        }
        disagreements += (inputs - agree_b) + (inputs - agree_k);
        const double per = 1e9 / inputs;
        t.add_row({double(n), double(K), K <= 4096 ? scan_s * per : NAN, greedy_s * per, median(exact_s) * per, median(brute_s) * per,
                   median(kd_s) * per, double(qg) / inputs, double(qe) / inputs, double(misroute) / inputs, double(agree_b) / inputs,
                   double(agree_k) / inputs});
        if (timed)
          speedup_at_least(a, {.id = fmt::format("exact_tree_vs_numpy_K{}", K), .claim = "§4.1 (logarithmic routing)",
                               .statement = fmt::format("routing {} inputs among K = {} prototypes in R²: the exact tree ≥ 1× numpy's brute-force argmin", inputs, K),
                               .note = "one thread each; the tree's construction not timed (built once per prototype set), numpy's chunked argmin includes nothing to build"},
                           exact_s, brute_s, 1.0);
      }
    }
    equals(a, {.id = "agree", .claim = "eq. (5)", .statement = "the exact tree's cells equal numpy's argmin and cKDTree's nearest neighbours (disagreements)",
               .note = "ties have probability 0 for these continuous inputs"},
           disagreements, 0);
    a.result.data["device"] = "cpu";
    a.add_table(std::move(t));
  });
}
