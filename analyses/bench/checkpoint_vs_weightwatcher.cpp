// checkpoint_vs_weightwatcher — benchmark: the whole `checkpoint_spectra MODEL` process against the whole
// WeightWatcher process a user would run on the same checkpoint, analyze() and analyze(mp_fit=True)
// (issue 16; docs/DESIGN.md, Benchmarks). Default model: all-MiniLM-L6-v2 (examples/fetch_minilm.sh).
//
// Ours: the checkpoint_spectra executable built beside this benchmark (bin/checkpoint_spectra), run as a
// subprocess `checkpoint_spectra MODEL --esd-figures 0 --out TMP --threads T --device cpu`; it writes
// TMP/layers.csv (one row per layer, named by tensor), its JSON, checks and summary figure, and says its
// peak memory on stderr ("peak memory: N MiB"). No per-layer ESD figures: WeightWatcher's analyze()
// draws none by default (plot=False), and the targets are for the same per-layer quantities.
// The peer, checkpoint_vs_weightwatcher.py under the Python of a virtual environment made by
// checkpoint_vs_weightwatcher_venv.sh (Debian's torch + pip's weightwatcher, safetensors, numpy<2):
// safetensors.numpy.load_file(MODEL) handed to weightwatcher.WeightWatcher(model=...), then analyze()
// (one process per repeat) or analyze(mp_fit=True) (a process of its own, fewer repeats: it is slow).
// The .py's docstring says what WeightWatcher does (which layers, its unnormalised σ² eigenvalues,
// its x_min rule, its MP fit, conv2d pooling).
//
// All three are timed from outside as whole processes (std::chrono::steady_clock around spawn and
// wait: interpreter start, imports and loading the checkpoint included), alternating within each
// repeat so that a change of load hits all alike, with OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = the
// benchmark's thread count in every environment. Peak memory: each process's ru_maxrss as wait4
// reports it (the same measure for both sides), and what each says of itself.
//
// Targets (issue 16): ours ≥ 10× faster than analyze(), ≥ 30× faster than analyze(mp_fit=True).
// Agreement, on the layers both analyse (matched by tensor name: WeightWatcher's layer name + ".weight"):
// α within 2% of WeightWatcher's on ≥ 90% of them (each layer that differs gets a line saying why:
// a different x_min and which side's KS distance is smaller, a different tail, WeightWatcher's
// small-N fit or fingers), and λ_max and the stable rank equal to 1e-6 relative. The per-layer
// comparison goes to layers_compare.csv; the 1-, 5- and 15-minute load averages into the JSON.
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
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
namespace fs = std::filesystem;

namespace {

constexpr double kTargetAnalyze = 10.0;  // ours ≥ 10× faster than analyze(), whole process against whole process
constexpr double kTargetMpFit = 30.0;    // ours ≥ 30× faster than analyze(mp_fit=True)
constexpr double kAlphaTol = 0.02;       // |α − α_WW| / α_WW
constexpr double kAlphaShare = 0.90;     // of the layers both analyse
constexpr double kExactTol = 1e-6;       // λ_max and stable rank, relative
constexpr double kWwEvalsThresh = 1e-5;  // WeightWatcher drops eigenvalues ≤ this before its power-law fit
constexpr int kWwSmallN = 20;            // below this many eigenvalues WeightWatcher fits differently

/// One subprocess with stderr to `stderr_file` (to read what the process said of itself, or why it failed).
Finished timed(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env, const fs::path& stderr_file) {
  return run_process(argv, extra_env, stderr_file.string());
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The last `lines` lines of a file (why a subprocess failed).
std::string tail_of(const fs::path& file, int lines = 5) {
  const std::string text = read_text(file);
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n')) --pos;
  for (int k = 0; k < lines && pos != std::string::npos && pos > 0; ++k) pos = text.rfind('\n', pos - 1);
  return text.substr(pos == std::string::npos ? 0 : pos + 1);
}

/// "peak memory: N MiB" on checkpoint_spectra's stderr, NaN when absent.
double said_peak_memory(const fs::path& stderr_file) {
  std::istringstream in(read_text(stderr_file));
  std::string line;
  double mib = NAN;
  while (std::getline(in, line))
    if (const auto at = line.find("peak memory:"); at != std::string::npos) mib = std::strtod(line.c_str() + at + 12, nullptr);
  return mib;
}

/// One CSV record (RFC 4180: quoted fields, "" inside quotes; no newline inside a field).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cells.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else cells.back() += c;
    } else if (c == '"') quoted = true;
    else if (c == ',') cells.emplace_back();
    else if (c != '\r') cells.back() += c;
  }
  return cells;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// A CSV file with a header, rows keyed by the `key` column.
struct CsvTable {
  std::vector<std::string> columns;
  std::map<std::string, std::map<std::string, std::string>> rows;
  std::vector<std::string> order;  ///< keys in file order

  bool has(const std::string& key) const { return rows.count(key) > 0; }
  std::string text(const std::string& key, const std::string& column) const {
    const auto& row = rows.at(key);
    const auto it = row.find(column);
    return it == row.end() ? std::string() : it->second;
  }
  /// A number; NaN when the column is absent or the cell empty or unreadable; true/false as 1/0.
  double num(const std::string& key, const std::string& column) const {
    const std::string s = text(key, column);
    if (s == "true" || s == "True") return 1;
    if (s == "false" || s == "False") return 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return s.empty() || end == s.c_str() ? NAN : v;
  }
};

CsvTable read_csv(const fs::path& file, const std::string& key, const std::vector<std::string>& required) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read", file.string()));
  CsvTable t;
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(fmt::format("{}: empty", file.string()));
  t.columns = split_csv(line);
  for (const std::string& c : required)
    if (std::find(t.columns.begin(), t.columns.end(), c) == t.columns.end())
      throw std::runtime_error(fmt::format("{}: no column '{}'", file.string(), c));
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv(line);
    std::map<std::string, std::string> row;
    for (std::size_t j = 0; j < t.columns.size() && j < cells.size(); ++j) row[t.columns[j]] = cells[j];
    const std::string k = row[key];
    t.order.push_back(k);
    t.rows[k] = std::move(row);
  }
  return t;
}

double rel_diff(double ours, double peer) { return std::abs(ours - peer) / std::abs(peer); }

std::string g(double v) { return fmt::format("{:.6g}", v); }

/// Why α differs between ours (o) and WeightWatcher (w) on layer `k`: the first cause that applies.
std::string why_alpha_differs(const CsvTable& o, const CsvTable& w, const std::string& k, const std::string& wk) {
  const std::string kind = o.text(k, "kind");
  const double a_o = o.num(k, "alpha"), a_w = w.num(wk, "alpha");
  if (kind != "regular") return fmt::format("ours: {} spectrum, no power-law fit", kind);
  if (!std::isfinite(a_o)) return "ours: no power-law fit";
  if (w.text(wk, "status") != "success" || a_w == -1) return "WeightWatcher's power-law fit failed";
  std::string why;
  const double lmax_err = rel_diff(o.num(k, "lambda_max"), w.num(wk, "lambda_max"));
  if (lmax_err > kExactTol) why = fmt::format("the spectra differ (λ_max {} apart, relative); ", g(lmax_err));
  if (w.num(wk, "num_evals") < kWwSmallN)
    return why + fmt::format("WeightWatcher's small-N fit ({} eigenvalues < {}: bias-corrected α, tails ≥ 8, x_min minimising "
                             "D − 0.868/√n)", g(w.num(wk, "num_evals")), kWwSmallN);
  if (w.num(wk, "num_fingers") > 0)
    return why + fmt::format("WeightWatcher clipped {} fingers (fix_fingers='clip_xmax')", g(w.num(wk, "num_fingers")));
  const double x_o = o.num(k, "x_min"), x_w = w.num(wk, "xmin");
  const double n_o = o.num(k, "n_tail"), n_w = w.num(wk, "num_pl_spikes");
  const double d_o = o.num(k, "D"), d_w = w.num(wk, "D");
  if (rel_diff(x_o, x_w) > 1e-9) {
    why += fmt::format("different x_min: ours {} (tail {}, D {}), WeightWatcher's {} (tail {}, D {})", g(x_o), g(n_o), g(d_o), g(x_w),
                       g(n_w), g(d_w));
    if (d_w < d_o * (1 - 1e-9))
      why += n_w < n_o ? "; WeightWatcher's x_min has the smaller KS distance with a smaller tail: checkpoint_spectra did not take it "
                         "as a candidate (WeightWatcher accepts tails down to 2 values)"
                       : "; WeightWatcher's x_min has the smaller KS distance: checkpoint_spectra did not take it as a candidate";
    else if (d_o < d_w * (1 - 1e-9))
      why += x_o <= kWwEvalsThresh ? "; ours has the smaller KS distance at an x_min ≤ 1e-5, an eigenvalue WeightWatcher drops before fitting"
                                   : "; ours has the smaller KS distance: WeightWatcher did not try that x_min";
    else
      why += "; equal KS distances, the tie broken differently";
    return why;
  }
  if (n_o != n_w) return why + fmt::format("same x_min, different tail size: ours {}, WeightWatcher's {}", g(n_o), g(n_w));
  return why + fmt::format("same x_min and tail ({} values) but a different estimate: ours {}, WeightWatcher's {} "
                           "(ratio of (α − 1): {})",
                           g(n_o), g(a_o), g(a_w), g((a_o - 1) / (a_w - 1)));
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "checkpoint_vs_weightwatcher",
                     .paper = "001",
                     .claims = {"Theorem 5"},
                     .description = "Benchmark: the whole checkpoint_spectra process against the whole WeightWatcher process "
                                    "(analyze() and analyze(mp_fit=True)) on the same safetensors checkpoint",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  std::string model, venv;
  int repeats = 0, mp_fit_repeats = 0;
  double peer_budget = 600;
  app.add_option("--model", model, "safetensors checkpoint [default: models/minilm/model.safetensors in the source tree; "
                                   "examples/fetch_minilm.sh brings it]");
  app.add_option("--venv", venv, "virtual environment with weightwatcher (analyses/bench/checkpoint_vs_weightwatcher_venv.sh "
                                 "VENV makes it) [default: ww-venv in the build folder]");
  analysis.scaled_option("--repeats", repeats, 3, 5, "timed repeats of ours and of analyze(), each a whole process; medians compared")
      ->check(CLI::Range(1, 100));
  analysis.scaled_option("--mp-fit-repeats", mp_fit_repeats, 1, 3, "timed repeats of analyze(mp_fit=True) (0: not run)")
      ->check(CLI::Range(0, 100));
  app.add_option("--peer-budget", peer_budget, "seconds of analyze(mp_fit=True) processes; repeats beyond the first stop once "
                                               "the next would exceed it")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    auto& r = a.result;
    const std::vector<double> load_before = load_average();
    const fs::path bin = fs::read_symlink("/proc/self/exe").parent_path().parent_path();
    if (model.empty()) {
#ifdef SPARSEACT_SOURCE_DIR
      model = (fs::path(SPARSEACT_SOURCE_DIR) / "models" / "minilm" / "model.safetensors").string();
#endif
      if (model.empty() || !fs::exists(model))
        throw InputError(fmt::format("--model: {} is missing; run examples/fetch_minilm.sh to download all-MiniLM-L6-v2 "
                                     "(or pass --model PATH)", model.empty() ? "models/minilm/model.safetensors" : model));
    }
    if (!fs::is_regular_file(model)) throw InputError(fmt::format("--model {}: no such file", model));
    if (venv.empty()) venv = (bin.parent_path() / "ww-venv").string();
    const std::string python = (fs::path(venv) / "bin" / "python").string();
    if (!fs::exists(python) || run_capture({python, "-c", "import weightwatcher, safetensors.numpy"}, {}, true).first != 0)
      throw InputError(fmt::format("--venv {}: no Python with weightwatcher there; run analyses/bench/checkpoint_vs_weightwatcher_venv.sh {}",
                                   venv, venv));
    if (!fs::exists(bin / "checkpoint_spectra"))
      throw InputError(fmt::format("{}: needs checkpoint_spectra built beside it (cmake --build build --target checkpoint_spectra)",
                                   bin.string()));
    const fs::path script = peer_script("checkpoint_vs_weightwatcher.py");
    const int threads = blas_threads(a.common.threads);
    const std::vector<std::string> env = {fmt::format("OMP_NUM_THREADS={}", threads), fmt::format("OPENBLAS_NUM_THREADS={}", threads)};
    const TempDir tmp("checkpoint_vs_weightwatcher");

    const std::vector<std::string> ours_cmd = {(bin / "checkpoint_spectra").string(), model, "--esd-figures", "0", "--out", (tmp.path / "ours").string(),
                                               "--threads", std::to_string(threads), "--device", "cpu"};
    const auto peer_cmd = [&](const std::string& variant) {
      return std::vector<std::string>{python, script.string(), "--model", model, "--outdir", (tmp.path / "ww").string(), "--variant", variant};
    };
    /// The peer's JSON line: the last line of its stdout that parses (WeightWatcher may print on stdout).
    const auto peer_json = [](const Finished& p) {
      std::istringstream in(p.out);
      std::string line;
      json last;
      while (std::getline(in, line))
        if (json j = json::parse(line, nullptr, false); !j.is_discarded() && j.is_object()) last = std::move(j);
      if (last.is_null()) throw std::runtime_error("WeightWatcher peer: unreadable output '" + p.out + "'");
      return last;
    };

    std::vector<double> ours_s, analyze_s, mp_fit_s, ours_rss, analyze_rss, mp_fit_rss, ours_said_rss, analyze_said_rss, mp_fit_said_rss;
    std::vector<double> analyze_inner_s, mp_fit_inner_s;
    std::vector<std::vector<double>> load_per_repeat;
    json peer_info;
    double mp_fit_spent = 0;
    auto progress = a.progress("repeats", static_cast<std::size_t>(repeats));
    for (int k = 0; k < repeats; ++k) {
      fs::remove_all(tmp.path / "ours");
      const Finished o = timed(ours_cmd, env, tmp.path / "ours.err");
      if (o.rc != 0 && o.rc != 3)
        throw std::runtime_error(fmt::format("checkpoint_spectra failed (exit {}): {}", o.rc, tail_of(tmp.path / "ours.err")));
      ours_s.push_back(o.seconds);
      ours_rss.push_back(o.maxrss_mib);
      ours_said_rss.push_back(said_peak_memory(tmp.path / "ours.err"));

      const Finished p = timed(peer_cmd("analyze"), env, tmp.path / "ww.err");
      if (p.rc != 0) throw std::runtime_error(fmt::format("WeightWatcher peer failed (exit {}): {}", p.rc, tail_of(tmp.path / "ww.err")));
      peer_info = peer_json(p);
      analyze_s.push_back(p.seconds);
      analyze_rss.push_back(p.maxrss_mib);
      analyze_said_rss.push_back(peer_info.value("peak_rss_mib", NAN));
      analyze_inner_s.push_back(peer_info["analyze_s"].at(0).get<double>());

      if (k < mp_fit_repeats && (k == 0 || mp_fit_spent + mp_fit_s.back() <= peer_budget)) {
        const Finished m = timed(peer_cmd("mp_fit"), env, tmp.path / "ww.err");
        if (m.rc != 0)
          throw std::runtime_error(fmt::format("WeightWatcher peer (mp_fit) failed (exit {}): {}", m.rc, tail_of(tmp.path / "ww.err")));
        const json mj = peer_json(m);
        mp_fit_s.push_back(m.seconds);
        mp_fit_rss.push_back(m.maxrss_mib);
        mp_fit_said_rss.push_back(mj.value("peak_rss_mib", NAN));
        mp_fit_inner_s.push_back(mj["mp_fit_s"].at(0).get<double>());
        mp_fit_spent += m.seconds;
      }
      load_per_repeat.push_back(load_average());
      fmt::print(stderr, "checkpoint_vs_weightwatcher: repeat {}: checkpoint_spectra {:.3f} s, analyze() {:.3f} s{}, load {:.2f}\n", k,
                 ours_s.back(), analyze_s.back(),
                 static_cast<int>(mp_fit_s.size()) == k + 1 ? fmt::format(", analyze(mp_fit=True) {:.3f} s", mp_fit_s.back()) : "",
                 load_per_repeat.back().empty() ? -1.0 : load_per_repeat.back()[0]);
      progress->advance();
    }
    const std::vector<double> load_after = load_average();

    // Agreement, on the last runs' tables, layer by layer (WeightWatcher's name + ".weight" = our tensor name).
    const CsvTable ours = read_csv(tmp.path / "ours" / "layers.csv", "name",
                                   {"name", "rows", "cols", "kind", "lambda_max", "lambda_min_nonzero", "sum_lambda", "stable_rank",
                                    "alpha", "x_min", "n_tail", "D", "alpha_weighted", "spikes", "mp_soft_rank", "lambda_plus_fit"});
    const CsvTable ww = read_csv(tmp.path / "ww" / "ww_analyze.csv", "tensor",
                                 {"tensor", "alpha", "xmin", "D", "num_pl_spikes", "lambda_max", "stable_rank", "num_evals", "status"});
    std::optional<CsvTable> ww_mp;
    if (!mp_fit_s.empty())
      ww_mp = read_csv(tmp.path / "ww" / "ww_mp_fit.csv", "tensor", {"tensor", "num_spikes", "sigma_mp", "mp_softrank", "bulk_max"});

    std::vector<Point> alpha_points;
    std::vector<std::string> only_ours, only_ww;
    json differing = json::array();
    double lmax_err = 0, srank_err = 0;
    std::string lmax_worst, srank_worst;
    std::string csv =
        "tensor,rows,cols,kind,alpha_ours,alpha_ww,alpha_rel_diff,alpha_within_2pct,x_min_ours,xmin_ww,n_tail_ours,num_pl_spikes_ww,"
        "D_ours,D_ww,lambda_max_ours,lambda_max_ww,lambda_max_rel_diff,stable_rank_ours,stable_rank_ww,stable_rank_rel_diff,"
        "sum_lambda_ours,norm_ww,alpha_weighted_ours,alpha_weighted_ww,spikes_ours,num_spikes_ww,mp_soft_rank_ours,mp_softrank_ww,"
        "lambda_plus_fit_ours,bulk_max_ww,sigma_mp_ww,why\n";
    for (const std::string& k : ours.order) {
      if (!ww.has(k)) {
        only_ours.push_back(k);
        continue;
      }
      const double a_o = ours.num(k, "alpha"), a_w = ww.num(k, "alpha");
      const double a_err = rel_diff(a_o, a_w);
      const bool a_ok = a_err <= kAlphaTol;  // false for NaN
      // No α on one side (a degenerate layer, a failed fit) counts as a 100% difference.
      alpha_points.push_back({.label = k, .measured = std::isfinite(a_err) ? a_err : 1.0, .bound = kAlphaTol});
      const double l_err = rel_diff(ours.num(k, "lambda_max"), ww.num(k, "lambda_max"));
      const double s_err = rel_diff(ours.num(k, "stable_rank"), ww.num(k, "stable_rank"));
      // A NaN (a value missing on one side) counts as the worst difference there can be.
      if (const double e = std::isnan(l_err) ? INFINITY : l_err; e > lmax_err) lmax_err = e, lmax_worst = k;
      if (const double e = std::isnan(s_err) ? INFINITY : s_err; e > srank_err) srank_err = e, srank_worst = k;
      const std::string why = a_ok ? "" : why_alpha_differs(ours, ww, k, k);
      if (!a_ok) differing.push_back({{"layer", k}, {"alpha_ours", a_o}, {"alpha_ww", a_w}, {"why", why}});
      const auto mp = [&](const std::string& c) { return ww_mp && ww_mp->has(k) ? g(ww_mp->num(k, c)) : std::string("nan"); };
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_cell(k),
                         ours.text(k, "rows"), ours.text(k, "cols"), ours.text(k, "kind"), g(a_o), g(a_w), g(a_err), a_ok ? 1 : 0,
                         g(ours.num(k, "x_min")), g(ww.num(k, "xmin")), g(ours.num(k, "n_tail")), g(ww.num(k, "num_pl_spikes")),
                         g(ours.num(k, "D")), g(ww.num(k, "D")), fmt::format("{:.17g}", ours.num(k, "lambda_max")),
                         fmt::format("{:.17g}", ww.num(k, "lambda_max")), g(l_err), fmt::format("{:.17g}", ours.num(k, "stable_rank")),
                         fmt::format("{:.17g}", ww.num(k, "stable_rank")), g(s_err), g(ours.num(k, "sum_lambda")), g(ww.num(k, "norm")),
                         g(ours.num(k, "alpha_weighted")), g(ww.num(k, "alpha_weighted")), g(ours.num(k, "spikes")), mp("num_spikes"),
                         g(ours.num(k, "mp_soft_rank")), mp("mp_softrank"), g(ours.num(k, "lambda_plus_fit")), mp("bulk_max"),
                         mp("sigma_mp"), csv_cell(why));
    }
    for (const std::string& k : ww.order)
      if (!ours.has(k)) only_ww.push_back(k);
    const std::size_t both = alpha_points.size();
    if (both == 0)
      throw std::runtime_error(fmt::format("no layer in common: checkpoint_spectra {} layers, WeightWatcher {}", ours.order.size(),
                                           ww.order.size()));
    a.add_text_file("layers_compare.csv", csv);
    for (const json& d : differing)
      fmt::print(stderr, "checkpoint_vs_weightwatcher: α differs on {}: {}\n", d["layer"].get<std::string>(), d["why"].get<std::string>());

    const std::string setting = fmt::format("{}: {} layers analysed by both (checkpoint_spectra {}, WeightWatcher {}).",
                                            fs::path(model).filename().string(), both, ours.order.size(), ww.order.size());
    count(a, {.id = "alpha_agrees",
              .claim = "issue 16: agreement with WeightWatcher",
              .statement = "the power-law exponent α of checkpoint_spectra is within 2% of WeightWatcher's analyze() "
                           "(|α − α_WW|/α_WW ≤ 0.02) on at least 90% of the layers both analyse (no α on one side: a 100% difference)",
              .note = setting + fmt::format(" {} layers differ; why, for each, in detail and layers_compare.csv.", differing.size()),
              .detail = {{"differing", differing}}},
          Relation::at_most, alpha_points, "layers", static_cast<std::size_t>(std::ceil(kAlphaShare * static_cast<double>(both) - 1e-9)));
    at_most(a, {.id = "lambda_max_agrees",
                .claim = "issue 16: agreement with WeightWatcher",
                .statement = "λ_max = σ_max(W)² equals WeightWatcher's lambda_max (= its spectral_norm) on every layer both analyse: "
                             "max relative difference ≤ 1e-6",
                .note = setting + fmt::format(" Worst: {}.", lmax_worst.empty() ? "—" : lmax_worst)},
            lmax_err, kExactTol);
    at_most(a, {.id = "stable_rank_agrees",
                .claim = "issue 16: agreement with WeightWatcher",
                .statement = "the stable rank Σλ/λ_max equals WeightWatcher's stable_rank on every layer both analyse: "
                             "max relative difference ≤ 1e-6",
                .note = setting + fmt::format(" Worst: {}.", srank_worst.empty() ? "—" : srank_worst)},
            srank_err, kExactTol);

    const auto speed_note = [&](const std::string& peer, const std::vector<double>& peer_times, const std::vector<double>& inner) {
      return fmt::format("{}: checkpoint_spectra {:.3f} s (median of {}), {} {:.3f} s (median of {}; the call itself {:.3f} s), {} BLAS "
                         "threads each; 1-minute load average {:.2f} before, {:.2f} after.",
                         fs::path(model).filename().string(), median(ours_s), ours_s.size(), peer, median(peer_times),
                         peer_times.size(), median(inner), threads, load_before.empty() ? -1.0 : load_before[0],
                         load_after.empty() ? -1.0 : load_after[0]);
    };
    speedup_at_least(a, {.id = "speedup_vs_analyze",
                         .claim = "benchmark target (issue 16: checkpoint_spectra's whole process)",
                         .statement = "checkpoint_spectra, whole process, ≥ 10× faster than WeightWatcher analyze(), whole process",
                         .note = speed_note("analyze()", analyze_s, analyze_inner_s)},
                     ours_s, analyze_s, kTargetAnalyze);
    if (!mp_fit_s.empty())
      speedup_at_least(a, {.id = "speedup_vs_mp_fit",
                           .claim = "benchmark target (issue 16: checkpoint_spectra's whole process)",
                           .statement = "checkpoint_spectra, whole process (its MP fits included), ≥ 30× faster than WeightWatcher "
                                        "analyze(mp_fit=True), whole process",
                           .note = speed_note("analyze(mp_fit=True)", mp_fit_s, mp_fit_inner_s)},
                       ours_s, mp_fit_s, kTargetMpFit);
    fmt::print(stderr,
               "checkpoint_vs_weightwatcher: checkpoint_spectra {:.3f} s, analyze() {:.3f} s ({:.1f}x, target {}x){}; α within 2% on {} of "
               "{} layers; max rel diff λ_max {:.2g}, stable rank {:.2g}\n",
               median(ours_s), median(analyze_s), median(analyze_s) / median(ours_s), kTargetAnalyze,
               mp_fit_s.empty() ? std::string()
                                : fmt::format(", analyze(mp_fit=True) {:.3f} s ({:.1f}x, target {}x)", median(mp_fit_s),
                                              median(mp_fit_s) / median(ours_s), kTargetMpFit),
               both - differing.size(), both, lmax_err, srank_err);

    r.data["model"] = model;
    r.data["threads"] = threads;
    r.data["layers"] = {{"both", both}, {"ours", ours.order.size()}, {"weightwatcher", ww.order.size()}, {"only_ours", only_ours},
                        {"only_weightwatcher", only_ww}};
    r.data["ours_s"] = median(ours_s);
    r.data["peer_s"] = median(analyze_s);
    r.data["ratio"] = median(analyze_s) / median(ours_s);
    r.data["ours_times_s"] = ours_s;
    r.data["peer_times_s"] = analyze_s;
    r.data["analyze_call_s"] = analyze_inner_s;
    if (!mp_fit_s.empty()) {
      r.data["mp_fit_s"] = median(mp_fit_s);
      r.data["mp_fit_ratio"] = median(mp_fit_s) / median(ours_s);
      r.data["mp_fit_times_s"] = mp_fit_s;
      r.data["mp_fit_call_s"] = mp_fit_inner_s;
    }
    r.data["peak_memory_mib"] = {
        {"meaning", "ru_maxrss of each process as wait4 reports it (outside), and what each process says of itself (said): "
                    "checkpoint_spectra's 'peak memory: N MiB' line, the peer's getrusage(RUSAGE_SELF).ru_maxrss"},
        {"ours", {{"outside", ours_rss}, {"said", ours_said_rss}}},
        {"analyze", {{"outside", analyze_rss}, {"said", analyze_said_rss}}},
        {"mp_fit", {{"outside", mp_fit_rss}, {"said", mp_fit_said_rss}}}};
    r.data["max_rel_diff"] = {{"lambda_max", lmax_err}, {"stable_rank", srank_err}};
    r.data["alpha_differs"] = differing;
    r.data["load_average"] = {{"before", load_before}, {"after", load_after}, {"after_each_repeat", load_per_repeat},
                              {"cores", static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))},
                              {"meaning", "getloadavg(): 1-, 5- and 15-minute averages of runnable processes"}};
    r.data["ours"] = {{"command", ours_cmd}, {"timer", "std::chrono::steady_clock around posix_spawn and wait4"}};
    r.data["peer"] = {{"python", python}, {"script", script.string()}, {"versions", peer_info},
                      {"calls", {"weightwatcher.WeightWatcher(model=safetensors.numpy.load_file(MODEL)).analyze()",
                                 "... .analyze(mp_fit=True)"}},
                      {"timer", "std::chrono::steady_clock around posix_spawn and wait4 (interpreter start, imports and loading included)"}};
    r.data["env"] = env;
    r.data["peer_budget_s"] = peer_budget;
    Table table{"timings", {"repeat", "ours_s", "analyze_s", "mp_fit_s", "ours_rss_mib", "analyze_rss_mib", "load_1min"}, {}};
    for (std::size_t k = 0; k < ours_s.size(); ++k)
      table.add_row({double(k), ours_s[k], analyze_s[k], k < mp_fit_s.size() ? mp_fit_s[k] : NAN, ours_rss[k], analyze_rss[k],
                     load_per_repeat[k].empty() ? NAN : load_per_repeat[k][0]});
    a.add_table(std::move(table));
  });
}
