// spectrum_stages — where spectrum_vs_numpy's time goes (issue 50), stage by stage, on this process's OpenBLAS kernel
// set (OPENBLAS_CORETYPE) and threads. Informational: it prints a table and writes stages.json; no verdict.
//
// K ∈ R^{n×d} (default 8192×2048, N(0, 1) entries), m = min(n, d). Ours, as kkt_spectrum runs it:
//   gram          the m×m Gram matrix by one syrk (spectral::small_gram_lower)
//   band          dense → band of width kd, dsytrd_sy2sb (level-3 BLAS, BLAS's threads)
//   tridiagonal   band → tridiagonal, dsytrd_sb2st (bulge chasing, one thread)
//   dsterf        the tridiagonal matrix's eigenvalues
// at LAPACK's kd (ilaenv2stage, what the library uses) and at each --kd. numpy's path, in this process with the
// same BLAS: dsyevd('N') on the same Gram matrix (what np.linalg.eigvalsh calls). And numpy itself
// (--python, Debian's python3-numpy): K.T @ K and np.linalg.eigvalsh on its own N(0, 1) matrix of the same shape.
// Each stage: the median of --repeats.
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sparseact/core/blas_info.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/spectral/spectrum.hpp>

#include "peer.hpp"

using namespace sparseact;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// numpy's two stages on its own matrix of the same shape, medians of `repeats`, as JSON on stdout.
constexpr const char* kNumpy = R"(
import json, sys, time
import numpy as np
n, d, repeats = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
K = np.random.default_rng(1).standard_normal((n, d))
gram, eig = [], []
for _ in range(repeats):
    t0 = time.perf_counter(); G = K.T @ K if n >= d else K @ K.T; t1 = time.perf_counter()
    np.linalg.eigvalsh(G); t2 = time.perf_counter()
    gram.append(t1 - t0); eig.append(t2 - t1)
print(json.dumps({"gram": sorted(gram)[len(gram) // 2], "eigvalsh": sorted(eig)[len(eig) // 2]}))
)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spectrum_stages: where spectrum_vs_numpy's time goes, stage by stage (issue 50; informational)"};
  int n = 8192, d = 2048, repeats = 3, threads = 0;
  std::vector<int> kds;
  std::string python = "/usr/bin/python3", out;
  app.add_option("--n", n, "rows of K")->check(CLI::Range(2, 20000))->capture_default_str();
  app.add_option("--d", d, "columns of K")->check(CLI::Range(2, 20000))->capture_default_str();
  app.add_option("--repeats", repeats, "repeats per stage; the median is reported")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--threads", threads, "BLAS threads (0: the cores of the affinity mask)")->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_option("--kd", kds, "band widths to time besides LAPACK's (e.g. --kd 32 64 128)")->check(CLI::Range(1, 1024));
  app.add_option("--python", python, "Python with numpy for numpy's own stages ('' to skip)")->capture_default_str();
  app.add_option("--out", out, "folder for stages.json (none: print only)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "spectrum_stages: error: %s\n", e.what());  // bad input: one line, exit 2
    return 2;
  }
  bench::blas_threads(threads);
  const BlasInfo blas = blas_info();
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd K(n, d);
  for (Eigen::Index j = 0; j < K.cols(); ++j)
    for (Eigen::Index i = 0; i < K.rows(); ++i) K(i, j) = normal(rng);
  const int m = std::min(n, d);
  const auto median = [](std::vector<double> v) { return stats::median(v); };

  json result = {{"n", n}, {"d", d}, {"m", m}, {"repeats", repeats}, {"openblas_core", blas.core}, {"blas_threads", bench::blas_threads(0)},
                 {"cpu_model", bench::cpu_model()}};
  Eigen::MatrixXd G;
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) t.push_back(seconds_of([&] { G = spectral::small_gram_lower(K); }));
  result["ours"]["gram"] = median(t);
  t.clear();
  for (int r = 0; r < repeats; ++r) {
    Eigen::MatrixXd A = G;
    t.push_back(seconds_of([&] { spectral::symmetric_eigenvalues(std::move(A), spectral::EigenSolver::one_stage); }));  // dsyevd
  }
  result["dsyevd"] = median(t);
  kds.insert(kds.begin(), 0);
  for (const int kd : kds) {
    std::vector<double> band, tri, sterf, total;
    int used = 0;
    for (int r = 0; r < repeats; ++r) {
      spectral::TwoStageSeconds s;
      spectral::two_stage_eigenvalues_timed(G, kd, s);
      band.push_back(s.band), tri.push_back(s.tridiagonal), sterf.push_back(s.dsterf), total.push_back(s.band + s.tridiagonal + s.dsterf);
      used = s.kd;
    }
    result["two_stage"].push_back({{"kd", used}, {"lapack_kd", kd == 0}, {"band", median(band)}, {"tridiagonal", median(tri)},
                                   {"dsterf", median(sterf)}, {"total", median(total)}});
  }
  if (!python.empty()) {
    const auto [code, text] = bench::run_capture({python, "-c", kNumpy, std::to_string(n), std::to_string(d), std::to_string(repeats)},
                                                 {fmt::format("OPENBLAS_NUM_THREADS={}", bench::blas_threads(0)), fmt::format("OMP_NUM_THREADS={}", bench::blas_threads(0))});
    const json numpy = code == 0 ? json::parse(text, nullptr, false) : json();
    if (numpy.is_object()) result["numpy"] = numpy;
    else std::fprintf(stderr, "spectrum_stages: warning: numpy's stages not timed (%s exited %d)\n", python.c_str(), code);
  }

  std::printf("K %dx%d, m = %d; OpenBLAS %s kernels, %d BLAS threads; %s; medians of %d\n\n", n, d, m, blas.core.c_str(), bench::blas_threads(0),
              result["cpu_model"].get<std::string>().c_str(), repeats);
  std::printf("| path | Gram | dense → band | band → tridiagonal | dsterf | eigenvalues | total |\n|---|---|---|---|---|---|---|\n");
  const double gram = result["ours"]["gram"];
  for (const auto& s : result["two_stage"])
    std::printf("| ours, kd = %d%s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", s["kd"].get<int>(), s["lapack_kd"].get<bool>() ? " (LAPACK's)" : "", gram,
                s["band"].get<double>(), s["tridiagonal"].get<double>(), s["dsterf"].get<double>(), s["total"].get<double>(),
                gram + s["total"].get<double>());
  std::printf("| syrk + dsyevd (numpy's eigensolver, here) | %.3f | — | — | — | %.3f | %.3f |\n", gram, result["dsyevd"].get<double>(),
              gram + result["dsyevd"].get<double>());
  if (result.contains("numpy"))
    std::printf("| numpy: K.T @ K, eigvalsh | %.3f | — | — | — | %.3f | %.3f |\n", result["numpy"]["gram"].get<double>(),
                result["numpy"]["eigvalsh"].get<double>(), result["numpy"]["gram"].get<double>() + result["numpy"]["eigvalsh"].get<double>());
  if (!out.empty()) {
    fs::create_directories(out);
    write_file_atomic(fs::path(out) / "stages.json", result.dump(2) + "\n");
  }
  return 0;
}
