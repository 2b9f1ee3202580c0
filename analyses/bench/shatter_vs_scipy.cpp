// shatter_vs_scipy — benchmark of the shattering engine (paper 003, moe/shatter): every labeling of m Gaussian
// points in R³ decided by one separation LP each, ours (GLPK through core/lp, certificates checked in
// rationals) against scipy.optimize.linprog(method="highs"), answers compared; then Π(m') end to end, ours
// with hereditary pruning and inherited certificates against the peer's brute force over all 2^{m'} labelings.
// Targets: ratio ≥ 10 (one LP each), ratio_search ≥ 100 (Π end to end).
#include <chrono>
#include <fstream>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/moe/shatter.hpp>

#include "peer.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::bench;
using namespace sparseact::moe;

int main(int argc, char** argv) {
  Analysis analysis({.name = "shatter_vs_scipy", .paper = "003", .claims = {"§3 (VC dimension)", "Theorem 4.2"},
                     .description = "Benchmark: halfspace labelings decided by GLPK LPs (ours) vs scipy's HiGHS, and Π(m) end to end",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  int m_all = 0, m_search = 0, repeats = 0;
  std::string python = "/usr/bin/python3";
  analysis.scaled_option("--m-all", m_all, 9, 12, "points whose every labeling is decided")->check(CLI::Range(2, 16));
  analysis.scaled_option("--m-search", m_search, 10, 14, "points of the growth function Π(m)")->check(CLI::Range(2, 18));
  analysis.scaled_option("--repeats", repeats, 1, 3, "timing repeats (medians compared)")->check(CLI::Range(1, 20));
  app.add_option("--python", python, "Python with numpy and scipy")->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    if (run_capture({python, "-c", "import numpy, scipy.optimize"}, {}, true).first != 0)
      throw InputError(fmt::format("--python {}: cannot import numpy and scipy; install python3-scipy", python));
    const TempDir tmp("shatter_vs_scipy");
    FeatureClass c;
    c.kind = FixedClass::halfspace, c.n = 3;
    const Eigen::MatrixXd X = class_points(c, std::max(m_all, m_search), a.common.seed);
    save_npy(tmp.path / "X.npy", X.transpose());
    std::ofstream(tmp.path / "meta.json") << json{{"all", m_all}, {"search", m_search}}.dump();

    // --- Run: ours and the peer, interleaved -------------------------------------------------------------
    std::vector<double> ours_all, ours_search, peer_all, peer_search;
    std::vector<int> ours_flags;
    long ours_count = 0, peer_count = 0;
    for (int r = 0; r < repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      ours_flags.clear();
      const Eigen::MatrixXd Xa = X.leftCols(m_all);
      for (long bits = 0; bits < (1L << m_all); ++bits) {
        std::vector<int> y(static_cast<std::size_t>(m_all));
        for (int i = 0; i < m_all; ++i) y[std::size_t(i)] = int((bits >> i) & 1);
        const Decision d = decide(c, Xa, y);
        ours_flags.push_back(d.realized && verify(c, Xa, y, d.certificate));
      }
      ours_all.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      t0 = std::chrono::steady_clock::now();
      const Growth g = growth(c, X.leftCols(m_search), m_search);
      ours_search.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      ours_count = g.realized.back();
      const auto [rc, out] = run_capture({python, (peer_script("shatter_vs_scipy.py")).string(), "--dir", tmp.path.string(), "--repeats", "1",
                                          "--budget-s", "1000"}, {"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"});
      if (rc != 0) throw std::runtime_error(fmt::format("shatter_vs_scipy.py failed (exit {})", rc));
      const json peer = json::parse(out.substr(0, out.find('\n')));
      peer_all.push_back(peer["all_s"][0].get<double>()), peer_search.push_back(peer["search_s"][0].get<double>());
      peer_count = peer["search_count"].get<long>();
    }
    const Eigen::VectorXd flags = load_npy(tmp.path / "all_peer.npy").reshaped();
    long agree = 0;
    for (long b = 0; b < (1L << m_all); ++b) agree += (flags(b) == 1.0) == (ours_flags[std::size_t(b)] == 1);

    // --- Checks -----------------------------------------------------------------------------------------
    equals(a, {.id = "agree", .claim = "§3", .statement = fmt::format("every labeling of {} points in R³: ours and HiGHS give the same answer (labelings that agree)", m_all)},
           agree, 1L << m_all);
    equals(a, {.id = "agree_growth", .claim = "§3 (Cover 1965)",
               .statement = fmt::format("Π({}) ours (pruned) = the peer's brute force = Cover's count {}", m_search, cover_count(m_search, 3)),
               .note = fmt::format("peer {}", peer_count)},
           ours_count, peer_count == cover_count(m_search, 3) ? cover_count(m_search, 3) : -1);
    speedup_at_least(a, {.id = "ratio", .claim = "benchmark target", .statement = "one LP per labeling: t_scipy / t_ours ≥ 10", .note = "one thread each"},
                     ours_all, peer_all, 10.0);
    speedup_at_least(a, {.id = "ratio_search", .claim = "benchmark target",
                         .statement = fmt::format("Π({}) end to end: the peer's brute force / ours pruned ≥ 100", m_search)},
                     ours_search, peer_search, 100.0);
    a.result.data["ours_s"] = {{"all", ours_all}, {"search", ours_search}};
    a.result.data["peer_s"] = {{"all", peer_all}, {"search", peer_search}};
    a.result.data["labelings_per_second"] = {{"ours", double(1L << m_all) / median(ours_all)}, {"peer", double(1L << m_all) / median(peer_all)}};
    a.result.data["device"] = "cpu";
  });
}
