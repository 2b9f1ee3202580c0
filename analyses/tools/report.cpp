// sparseact_report FIGURES_DIR — writes FIGURES_DIR/REPORT.md from every FIGURES_DIR/*/<name>.json (and
// FIGURES_DIR/at-scale/<name>[@variant]/<name>.json), every verdict re-derived under the current rules
// (app::reverdict, DESIGN.md's verdicts): the counts per paper, each claim read from its most decisive run;
// then four lists (what the papers get wrong; what did not reproduce in our setups, with the departure; what
// holds, strongest evidence first; what this scale cannot settle, with the job that would); our own questions;
// the departures; the at-scale table and the prices; one table row per check and the figures, by paper; and
// the verdicts that re-deriving changed.
// sparseact_report --bench BENCH_DIR — prints one table of every speed check in BENCH_DIR/*/<name>.json
// (benchmark, ours, peer, ratio, target, spread, verdict; the bench command's summary) and writes it to
// BENCH_DIR/BENCH.md.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sparseact/app/checks.hpp>
#include <sparseact/app/forest.hpp>
#include <sparseact/app/lint.hpp>
#include <sparseact/app/paper_summary.hpp>
#include <sparseact/app/trend.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/core/version.hpp>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// A table cell: the value as a person reads it (app::format_value), never raw JSON; pipes and
/// newlines escaped. Helpers keep `measured` short; anything longer is a bug in the analysis, and
/// the check's `detail` in the JSON has the per-point data.
std::string cell(const json& v) {
  std::string out;
  for (char ch : sparseact::app::format_value(v)) out += ch == '|' ? std::string("\\|") : ch == '\n' ? std::string(" ") : std::string(1, ch);
  return out;
}

/// A check's verdict (docs/DESIGN.md). A JSON written before verdicts existed has only `holds`; it
/// reads as "holds" or "not classified" (regenerate it), never as a refutation.
std::string verdict_of(const json& check) {
  if (check.contains("verdict") && check["verdict"].is_string() && !check["verdict"].get<std::string>().empty())
    return check["verdict"].get<std::string>();
  if (check.value("holds", false)) return "holds";
  // An older speed check said it in its tolerance: "does not hold" or "inconclusive: …".
  const json& tol = check.value("tolerance", json());
  if (tol.is_object() && tol.contains("verdict") && tol["verdict"].is_string()) {
    const std::string v = tol["verdict"].get<std::string>();
    if (v == "does not hold") return "contradicted";
    if (v.rfind("inconclusive", 0) == 0) return "inconclusive";
  }
  return "not classified";
}

std::string kind_of(const json& check) {
  return check.contains("kind") && check["kind"].is_string() ? check["kind"].get<std::string>() : "claim";
}

/// The power line of an inconclusive claim: "power 0.31 at θ = 0.02; 52 seeds per arm for 80 %".
std::string power_text(const json& check) {
  const json& p = check.value("power", json());
  if (!p.is_object()) return "power not computed";
  std::string out = fmt::format("power {:.2f} at {} {}", p.value("power", 0.0), cell(p.value("effect", json())),
                                p.value("effect_source", "") == "" ? "" : "(" + cell(p["effect_source"]) + ")");
  const json& n80 = p.value("n_for_80", json());
  out += n80.is_number() ? fmt::format("; {} {} give 80 % power at that effect (this run: {})", cell(n80), cell(p.value("unit", json())),
                                       cell(p.value("n", json())))
                         : "; no run size up to 10⁶ gives 80 % power at that effect";
  return out;
}

/// The verdict cell: an inconclusive claim never reads like a failure.
std::string verdict_cell(const json& check) {
  const std::string v = verdict_of(check);
  if (v == "contradicted" || v == "erratum" || v == "fails") return "**" + v + "**";
  if (v == "not reproduced" || v == "direction only") return "**" + v + "**" + (check.value("departure", "").empty() ? "" : " (departs: " + cell(check["departure"]) + ")");
  if (v == "inconclusive") {
    const json& tol = check.value("tolerance", json());
    if (tol.is_object() && tol.contains("verdict") && tol["verdict"].is_string()) return "*" + cell(tol["verdict"]) + "*";
    return "*inconclusive* (" + power_text(check) + ")";
  }
  return v;
}

/// A note cut to its first `length` characters (at a space) for the summary lists; the table row and
/// the JSON keep it whole.
std::string shortened(const std::string& text, std::size_t length = 300) {
  if (text.size() <= length) return text;
  std::size_t cut = text.rfind(' ', length);
  if (cut == std::string::npos || cut < 2 * length / 3) cut = length;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return text.substr(0, cut) + " …";
}

/// The link to an analysis's section (GitHub's heading anchors).
std::string link(const std::string& analysis, const json& check) {
  return fmt::format("[{} › {}](#{})", analysis, cell(check.value("id", json())), analysis);
}

/// Every FOLDER/*/<name>.json with checks, by name. With `variants`, a folder <name>@<variant> holds
/// one of several larger runs of <name> (at-scale/momlp_regression@w128/momlp_regression.json), keyed
/// by its folder.
std::map<std::string, json> read_results(const fs::path& root, bool variants = false) {
  std::map<std::string, json> out;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    const std::string folder = entry.path().filename().string();
    const std::size_t at = variants ? folder.find('@') : std::string::npos;
    fs::path file = entry.path() / (folder.substr(0, at) + ".json");
    if (!fs::exists(file)) {
      // A second run of an analysis beside the default one (checkpoint_spectra_minilm/checkpoint_spectra.json): the one
      // JSON in the folder that names its analysis.
      file.clear();
      for (const auto& f : fs::directory_iterator(entry.path()))
        if (f.path().extension() == ".json" && folder.rfind(f.path().stem().string(), 0) == 0) file = f.path();
      if (file.empty()) continue;
    }
    std::ifstream in(file);
    json r = json::parse(in, nullptr, false);
    if (r.is_discarded() || !r.contains("checks")) {
      std::fprintf(stderr, "sparseact_report: warning: %s is not a result file; skipped\n", file.c_str());
      continue;
    }
    // Every verdict under the current rules (app::reverdict), re-derived from the numbers the JSON stored; the
    // verdict it was written with is kept beside it, so the report can say which changed.
    for (auto& c : r["checks"]) {
      const std::string stored = c.value("verdict", std::string());
      sparseact::app::reverdict(c);
      if (!stored.empty() && c.value("verdict", std::string()) != stored) c["stored_verdict"] = stored;
    }
    r["folder"] = folder;
    const std::string analysis = r.value("analysis", folder);
    out[at != std::string::npos || folder != analysis ? folder : analysis] = r;
  }
  return out;
}

/// The speed checks (app::speedup_at_least: a target in `tolerance`, the repeats in `detail`) as one table.
int bench_table(const fs::path& root) {
  std::string md = "| benchmark | check | ours (median s) | peer (median s) | ratio | target | spread | verdict |\n|---|---|---|---|---|---|---|---|\n";
  int rows = 0;
  // A benchmark rerun under other conditions sits beside it as <name>@<variant>/ (e.g. other OpenBLAS kernels).
  for (const auto& [name, r] : read_results(root, true))
    for (const auto& c : r["checks"]) {
      const json& tol = c.value("tolerance", json());
      const json& detail = c.value("detail", json());
      if (!tol.is_object() || !tol.contains("target") || !detail.is_object() || !detail.contains("ours_s") || !detail.contains("peer_s")) continue;
      const double ours = sparseact::stats::median(detail["ours_s"].get<std::vector<double>>());
      const double peer = sparseact::stats::median(detail["peer_s"].get<std::vector<double>>());
      md += fmt::format("| {} | {} | {:.4g} | {:.4g} | {:.3g}× | {:g}× | {:.1f}% | {} |\n", name, c.value("id", "?"), ours, peer, peer / ours,
                        tol["target"].get<double>(), 100 * tol.value("relative_spread", 0.0), verdict_cell(c));
      ++rows;
    }
  std::fputs(md.c_str(), stdout);
  sparseact::write_file_atomic(root / "BENCH.md", "# sparseact benchmarks\n\nRatio = median peer time / median ours; " +
                                                     std::string("spread = the larger relative interquartile range of the two sets of repeats.\n\n") + md);
  std::printf("sparseact_report: %d speed checks; wrote %s\n", rows, (root / "BENCH.md").c_str());
  return 0;
}

/// The flags in which a larger run departs from the default one ("trials 30 → 120").
std::string params_changed(const json& defaults, const json& larger) {
  std::string out;
  if (!larger.is_object()) return out;
  for (const auto& [key, value] : larger.items()) {
    const json was = defaults.is_object() && defaults.contains(key) ? defaults[key] : json();
    if (was == value || key == "out" || key == "resume" || key == "threads") continue;
    // "" or null: resolved by scale in a run that did not record the value (written before scaled flags
    // recorded what ran). Unknown for the larger run, so not shown; "(default)" for the default run.
    const auto unrecorded = [](const json& v) { return v.is_null() || (v.is_string() && v.get<std::string>().empty()); };
    if (unrecorded(value)) continue;
    // Those runs also recorded "quick" for a run without --scale; their other flags say what ran.
    if (key == "scale" && was == "default" && value == "quick") continue;
    const bool unset = unrecorded(was);
    out += fmt::format("{}--{} {} → {}", out.empty() ? "" : ", ", key, unset ? "(default)" : cell(was), cell(value));
  }
  return out.empty() ? "the default flags" : out;
}

/// The size a statistical verdict rests on: "120 trials per grid point".
std::string size_of(const json& check) {
  const json& p = check.value("power", json());
  if (!p.is_object() || !p.value("n", json()).is_number()) return "—";
  return fmt::format("{} {}", cell(p["n"]), cell(p.value("unit", json())));
}

/// The command line that reruns a result: its analysis with every parameter it recorded (booleans as bare flags when
/// true), into its own folder, with --resume.
std::string command_of(const std::string& folder, const json& r) {
  std::string cmd = "build/bin/" + r.value("analysis", folder);
  const json params = r.value("params", json::object());
  for (const auto& [key, value] : params.items()) {
    if (key == "out" || key == "resume" || key == "threads" || value.is_null() || (value.is_string() && value.get<std::string>().empty())) continue;
    if (value.is_boolean()) {
      if (value.get<bool>()) cmd += " --" + key;
      continue;
    }
    cmd += " --" + key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return cmd + " --out figures/at-scale/" + folder + " --resume";
}

/// "At larger scale": every claim of FIGURES/at-scale/<name>/<name>.json beside the default run's
/// verdict of the same check (matched by id): the larger run's flags, size, wall time, power and
/// verdict, and what the paper states.
std::string at_scale_section(const std::map<std::string, json>& larger, const std::map<std::string, json>& defaults) {
  std::string rows;
  for (const auto& [name, r] : larger) {
    const auto d = defaults.find(r.value("analysis", name));
    for (const auto& c : r["checks"]) {
      if (kind_of(c) != "claim") continue;
      json before;
      if (d != defaults.end())
        for (const auto& b : d->second["checks"])
          if (b.value("id", "") == c.value("id", "")) before = b;
      const json& p = c.value("power", json());
      rows += fmt::format("| [{} › {}](at-scale/{}/{}.json) | {} | {} | {} | {} | {:.0f} s | {} | {} | {} | {} | {} |\n", name, cell(c.value("id", json())),
                          name, r.value("analysis", name), before.is_null() ? "—" : verdict_of(before), before.is_null() ? "—" : size_of(before),
                          params_changed(d != defaults.end() ? d->second.value("params", json()) : json(), r.value("params", json())),
                          size_of(c), r.value("elapsed_s", 0.0),
                          p.is_object() && p.value("power", json()).is_number() ? fmt::format("{:.2f}", p["power"].get<double>()) : "—",
                          verdict_cell(c), shortened(cell(c.value("measured", json())), 120), cell(c.value("predicted", json())),
                          cell(shortened(c.value("statement", ""), 160)));
    }
  }
  if (rows.empty()) return {};
  return "### At larger scale\n\nClaims rerun beyond the default scale (`figures/at-scale/`), beside the default run's verdict. "
         "Wall time on this 2-core machine.\n\n| check | default verdict | default size | larger run | its size | wall time | power | "
         "verdict | measured at the larger scale | the paper's (predicted) | the claim as stated |\n|---|---|---|---|---|---|---|---|---|---|---|\n" +
         rows + "\n";
}

/// "What does not fit": every FIGURES/at-scale/pricing/<name>/price.json (an analysis run with
/// --price-items, app/price.hpp) as one row: items, the timed items, core-hours projected from them,
/// the longest item, memory per rank and the sbatch line.
std::string pricing_section(const fs::path& root) {
  const fs::path dir = root / "at-scale" / "pricing";
  if (!fs::is_directory(dir)) return {};
  std::map<std::string, json> prices;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path() / "price.json");
    json p = json::parse(in, nullptr, false);
    if (!in || p.is_discarded() || !(p.contains("core_hours") || p.contains("gpu_hours"))) continue;
    prices[entry.path().filename().string()] = p;
  }
  if (prices.empty()) return {};
  std::string rows;
  for (const auto& [name, p] : prices) {
    std::string timed;
    const double length = p.value("length_factor", 1.0);
    for (const auto& t : p.value("samples", json::array()))
      timed += length == 1 ? fmt::format("{}{} ({:.3g} s)", timed.empty() ? "" : "; ", t.value("key", "?"), t.value("seconds", 0.0))
                           : fmt::format("{}{} ({:.3g} s × {:g})", timed.empty() ? "" : "; ", t.value("key", "?"), t.value("seconds", 0.0), length);
    if (p.contains("timed_flags")) timed += fmt::format(", timed with `{}`", p.value("timed_flags", ""));
    const bool gpu = p.contains("gpu_hours") && p["gpu_hours"].is_number();  // priced on a GPU: GPU-hours, one GPU per rank
    const std::string hours = gpu ? "—" : fmt::format("{:.3g}", p.value("core_hours", 0.0));
    const double longest = gpu ? p.value("longest_item_gpu_hours", 0.0) : p.value("longest_item_hours", 0.0);
    const std::string gpu_column = gpu ? fmt::format("{:.3g} GPU-hours on {}", p.value("gpu_hours", 0.0), p.value("gpu", "a GPU"))
                                   : p.value("gpu_path", false) ? "`--device cuda` path; GPU-hours not priced yet" : "CPU only";
    rows += fmt::format("| {} | {} | {} | {:.3g} ({:.2f}×) | {} | {:.3g} h | {:.0f} MiB | {} | {} |\n", name, p.value("items", 0), timed,
                        p.value("seconds_per_cost", 0.0), p.value("rate_spread", 1.0), hours, longest, p.value("peak_rss_mib", 0.0), gpu_column,
                        "`" + p.value("sbatch", "") + "`" + (p.contains("warning") ? " — **" + p.value("warning", "") + "**" : ""));
  }
  return "### What does not fit here: the cluster job and its price\n\nEach row times real items of the paper-scale grid on this "
         "machine (`--price-items`: the cheapest, then up to the median cost, one at a time on serial BLAS) and projects the whole "
         "grid through the sweep's cost model (where a paper-scale item takes hours, a slice of it is timed, e.g. one epoch of "
         "100, and its seconds multiplied: \"× 100\"); the spread of seconds per unit of cost across the timed items shows how far to trust "
         "it. Memory is the timing process's peak, i.e. per rank. A row priced on a GPU (`--device cuda`, `<name>@gpu`) counts GPU-hours, one GPU per rank.\n\n| analysis | items | timed "
         "items | seconds per unit of cost (spread) | core-hours | longest item | memory per rank | GPU | sbatch |\n"
         "|---|---|---|---|---|---|---|---|---|\n" + rows + "\n";
}

/// How an at-scale run's setup relates to the paper's (FIGURES/at-scale/runs.json, one entry per run folder,
/// written with the run): a short label ("w = 128"), whether it follows the paper's protocol apart from
/// scale (a run that changes the protocol, e.g. another sampling range, never decides a claim while a
/// protocol run exists), and its closeness to the paper's setup, an order fixed with the run (the default
/// run is 0; larger is closer; e.g. a wider expert, nearer the paper's width).
struct RunInfo {
  std::string setup;
  bool protocol = true;
  double closeness = 0;
  std::string why;  ///< why a run is outside the protocol
};

/// An at-scale description file (runs.json, trends.json) as a JSON object: an empty object when there is none, and
/// one lint offence when it is not an object.
json read_object(const fs::path& file, std::vector<std::string>& offences) {
  if (!fs::exists(file)) return json::object();
  std::ifstream in(file);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    offences.push_back(file.string() + ": not a JSON object");
    return json::object();
  }
  return j;
}

std::map<std::string, RunInfo> read_runs(const fs::path& root, std::vector<std::string>& offences) {
  std::map<std::string, RunInfo> runs;
  const json j = read_object(root / "at-scale" / "runs.json", offences);
  for (const auto& [folder, e] : j.items()) {
    if (!e.is_object() || !e.value("setup", json()).is_string() || !e.value("closeness", json()).is_number()) {
      offences.push_back(fmt::format("at-scale/runs.json › {}: needs \"setup\" (text) and \"closeness\" (a number)", folder));
      continue;
    }
    RunInfo r{e["setup"].get<std::string>(), e.value("protocol", true), e["closeness"].get<double>(), e.value("why", std::string())};
    if (!r.protocol && r.why.empty())
      offences.push_back(fmt::format("at-scale/runs.json › {}: a run outside the paper's protocol must say why (\"why\")", folder));
    runs[folder] = r;
  }
  return runs;
}

/// A designed sweep of one setting toward the paper's (figures/at-scale/trends.json, issue 48): the analysis, the
/// parameter swept, its symbol, the paper's value and where the paper states it, and the at-scale folders of the
/// sweep. The folders' parameters must agree except the swept one and the replicate counts, so a trend compares
/// runs that differ in that setting alone.
struct TrendAxis {
  std::string param, symbol, source;
  double paper = 0;
  std::vector<std::string> runs;
};

std::map<std::string, TrendAxis> read_trends(const fs::path& root, const std::map<std::string, json>& larger,
                                             std::vector<std::string>& offences) {
  std::map<std::string, TrendAxis> out;
  const json j = read_object(root / "at-scale" / "trends.json", offences);
  // Bookkeeping and replicate counts: the only parameters besides the swept one that may differ along a sweep.
  const std::vector<std::string> free = {"out", "threads", "resume", "pdf", "device", "runs", "seeds"};
  for (const auto& [analysis, e] : j.items()) {
    const std::string where = "at-scale/trends.json › " + analysis;
    if (!e.is_object() || !e.value("param", json()).is_string() || !e.value("symbol", json()).is_string() ||
        !e.value("source", json()).is_string() || !e.value("paper", json()).is_number() || !e.value("runs", json()).is_array()) {
      offences.push_back(where + ": needs \"param\", \"symbol\", \"source\" (text), \"paper\" (a number) and \"runs\" (folders)");
      continue;
    }
    TrendAxis axis{e["param"].get<std::string>(), e["symbol"].get<std::string>(), e["source"].get<std::string>(), e["paper"].get<double>(), {}};
    json first;
    for (const auto& f : e["runs"]) {
      const std::string folder = f.is_string() ? f.get<std::string>() : std::string();
      const auto it = larger.find(folder);
      if (it == larger.end() || it->second.value("analysis", "") != analysis) {
        offences.push_back(fmt::format("{}: \"{}\" is not an at-scale run of {}", where, folder, analysis));
        continue;
      }
      json params = it->second.value("params", json::object());
      if (!params.contains(axis.param) || !params[axis.param].is_number()) {
        offences.push_back(fmt::format("{}: at-scale/{} has no number \"{}\" in its params", where, folder, axis.param));
        continue;
      }
      for (const std::string& k : free) params.erase(k);
      params.erase(axis.param);
      if (first.is_null()) first = params;
      else if (params != first)
        offences.push_back(fmt::format("{}: at-scale/{} differs from the sweep's first run in more than {}: {} against {}", where, folder,
                                       axis.param, params.dump(), first.dump()));
      axis.runs.push_back(folder);
    }
    out[analysis] = axis;
  }
  return out;
}

double number_in(const json& j, const char* key, double otherwise = NAN) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : otherwise;
}

/// A statistical check's interval, its threshold and how far the interval is from deciding, from the
/// numbers its JSON stores: a direction's one-sided bounds against 0 and the effect that counts, an
/// equivalence's (1 − 2α) interval against ±Δ.
struct Interval {
  bool statistical = false, equivalence = false;
  double estimate = NAN, se = NAN, lo = NAN, hi = NAN, counts = 0, margin = NAN, alpha = 0.05, n = NAN;
  std::string unit;
};

Interval interval_of(const json& c) {
  Interval iv;
  const json& t = c.value("tolerance", json());
  const json& p = c.value("power", json());
  if (!t.is_object() || !std::isfinite(number_in(t, "estimate")) || !std::isfinite(number_in(t, "std_error"))) return iv;
  iv.estimate = t["estimate"].get<double>(), iv.se = t["std_error"].get<double>(), iv.alpha = number_in(t, "alpha", 0.05);
  iv.n = number_in(p, "n"), iv.unit = p.is_object() ? p.value("unit", std::string()) : std::string();
  if (std::isfinite(number_in(t, "lower_bound")) && std::isfinite(number_in(t, "upper_bound"))) {
    iv.statistical = true, iv.lo = t["lower_bound"].get<double>(), iv.hi = t["upper_bound"].get<double>();
    iv.counts = number_in(t, "effect_that_counts", 0.0);
  } else if (t.contains("interval") && t["interval"].is_array() && t["interval"].size() == 2 && std::isfinite(number_in(t, "margin"))) {
    iv.statistical = iv.equivalence = true, iv.lo = t["interval"][0].get<double>(), iv.hi = t["interval"][1].get<double>();
    iv.margin = t["margin"].get<double>();
  }
  return iv;
}

/// How far a holding claim's interval lies inside its threshold, in standard errors: a direction's lower
/// bound above 0, an equivalence's interval inside ±Δ. −∞ for a deterministic comparison.
double strength(const json& c) {
  const Interval iv = interval_of(c);
  if (!iv.statistical || !(iv.se > 0)) return -INFINITY;
  return iv.equivalence ? std::min(iv.margin - iv.hi, iv.lo + iv.margin) / iv.se : iv.lo / iv.se;
}

/// The job that would decide an inconclusive claim (issue 47): the run size n′ at which the current
/// interval, its standard error shrinking as √(n/n′), would clear the threshold nearest the estimate —
/// n′ = n·(q·se / |θ̂ − threshold|)² — never a size the run already had. Empty when the JSON does not
/// store what it needs.
std::string deciding_job(const json& c, double elapsed_s) {
  const Interval iv = interval_of(c);
  const json& t = c.value("tolerance", json());
  // reverdict (read_results) records margin_fixed for stored JSON too: one rule, in app/checks.
  if (t.is_object() && !t.value("margin_fixed", true))
    return "the margin was not fixed before the data (not the paper's number, a DESIGN.md rule or a pre-registration): no run size "
           "settles it until one is";
  if (t.is_object() && t.value("model_did_not_train", json()).is_string())
    return "a compared model did not train (" + t["model_did_not_train"].get<std::string>() + "): rerun it where the model trains";
  if (!iv.statistical || !(iv.se > 0) || !(iv.n > 0)) return {};
  // The quantile the interval uses: one-sided (1 − α) for a direction, (1 − 2α) two-sided for TOST, i.e. z_{1−α} either way.
  const double q = sparseact::stats::normal_quantile(1 - iv.alpha);
  struct Target {
    double threshold;
    std::string reading;
  };
  std::vector<Target> targets;
  const double th = iv.estimate;
  if (iv.equivalence) {
    const double a = std::abs(th);
    targets.push_back(a < iv.margin ? Target{iv.margin, fmt::format("inside ±Δ = ±{:.4g} (holds)", iv.margin)}
                                    : Target{iv.margin, fmt::format("outside ±Δ = ±{:.4g} (contradicted)", iv.margin)});
  } else {
    if (th > 0) targets.push_back({0.0, "above 0 (holds)"});
    if (th < iv.counts || (iv.counts == 0 && th < 0))
      targets.push_back({iv.counts, fmt::format("below the effect that counts, {:.4g} ({})", iv.counts,
                                                c.value("departure", "").empty() ? "contradicted" : "not reproduced")});
  }
  double best = INFINITY;
  std::string reading;
  for (const Target& x : targets) {
    const double gap = iv.equivalence ? std::abs(std::abs(th) - x.threshold) : std::abs(th - x.threshold);
    if (!(gap > 0)) continue;
    const double n_prime = iv.n * std::pow(q * iv.se / gap, 2);
    if (n_prime < best) best = n_prime, reading = x.reading;
  }
  const double n_prime = std::max(std::ceil(best), iv.n + 1);  // undecided now, so more than this run had
  if (!std::isfinite(best) || n_prime > 100 * iv.n)
    return fmt::format("θ̂ = {:.4g} sits within {:.2g} standard errors of its threshold: more {} may never settle it (this run: {:g})", th,
                       std::isfinite(best) ? q * std::sqrt(iv.n / best) : 0.0, iv.unit.empty() ? "runs" : iv.unit, iv.n);
  const double hours = elapsed_s * n_prime / iv.n / 3600;
  return fmt::format("θ̂ = {:.4g} with the same spread would put the interval {} at about {:g} {} (this run: {:g}); about {:.2g} h on "
                     "this 2-core machine, {:.2g} h on 32 nodes under mpirun",
                     th, reading, n_prime, iv.unit.empty() ? "runs" : iv.unit, iv.n, hours, hours / 32);
}

/// The paper's forest plot (app/forest.hpp) drawn into FIGURES/report/ and its line for REPORT.md; a line saying why
/// where gnuplot cannot draw it.
std::string forest_md(const fs::path& root, const std::string& paper, const std::vector<sparseact::app::ForestRow>& rows) {
  if (rows.empty()) return {};
  std::map<std::string, int> by_verdict;
  for (const auto& r : rows) ++by_verdict[r.verdict];
  std::string counts;
  for (const auto& [v, n] : by_verdict) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, v);
  const std::string alt = fmt::format("Paper {}: {} statistical claims, each θ̂ and its interval divided by the threshold that decided it "
                                      "(0: no effect, 1: the effect that counts): {}", paper, rows.size(), counts);
  try {
    const sparseact::plot::Figure fig = sparseact::app::forest_figure(paper, rows);
    sparseact::plot::render(fig, root / "report");
    return fmt::format("![{}](report/{}.png)\n\n", alt, fig.name);
  } catch (const std::exception& e) {
    return fmt::format("Forest plot not drawn ({}): {}\n\n", alt, e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool bench = argc == 3 && std::string(argv[1]) == "--bench";
  if (argc != 2 && !bench) {
    std::fprintf(stderr, "usage: sparseact_report FIGURES_DIR | sparseact_report --bench BENCH_DIR\n");
    return 2;
  }
  const fs::path root = argv[argc - 1];
  if (!fs::is_directory(root)) {
    std::fprintf(stderr, "sparseact_report: error: %s is not a folder\n", root.c_str());
    return 2;
  }
  if (bench) return bench_table(root);
  const std::map<std::string, json> results = read_results(root);
  std::map<std::string, json> larger;  // at-scale runs, by folder (<name> or <name>@<variant>)
  if (fs::is_directory(root / "at-scale")) larger = read_results(root / "at-scale", true);
  // Results come from a build of a committed tree (docs/DESIGN.md). An at-scale run built from an uncommitted one is not
  // read (it took hours; it is listed with the command that regenerates it); a default run is refused outright by a
  // report built from a committed tree (a development build may read its own results).
  const auto dirty = [](const json& r) { return r.value("version", std::string()).find("-dirty") != std::string::npos; };
  std::map<std::string, json> unread;
  for (auto it = larger.begin(); it != larger.end();)
    if (dirty(it->second)) unread.insert(*it), it = larger.erase(it);
    else ++it;

  // The lint (issue 47, app/lint.hpp): a report that would count what is not evidence is not written.
  std::vector<std::string> offences;
  const std::map<std::string, RunInfo> runs = read_runs(root, offences);
  const std::map<std::string, TrendAxis> trends = read_trends(root, larger, offences);
  for (const auto& [name, r] : results) {
    for (auto& line : sparseact::app::lint_result(r, name)) offences.push_back(std::move(line));
    if (dirty(r) && std::string(sparseact::version()).find("-dirty") == std::string::npos)
      offences.push_back(fmt::format("{}: written by sparseact {}, a build of an uncommitted tree: regenerate it from a committed one", name,
                                     r.value("version", "?")));
  }
  for (const auto& [folder, r] : larger) {
    for (auto& line : sparseact::app::lint_result(r, "at-scale/" + folder)) offences.push_back(std::move(line));
    if (!runs.count(folder))
      offences.push_back(fmt::format("at-scale/{}: no entry in at-scale/runs.json (its setup, whether it follows the paper's protocol, "
                                     "its closeness to the paper's setup)", folder));
  }
  if (!offences.empty()) {
    for (const std::string& line : offences) std::fprintf(stderr, "sparseact_report: lint: %s\n", line.c_str());
    std::fprintf(stderr, "sparseact_report: %zu lint offences (docs/DESIGN.md, what a report may count); no report written\n",
                 offences.size());
    return 1;
  }
  std::string at_scale = at_scale_section(larger, results);
  if (!unread.empty()) {
    at_scale += "### At-scale results not read\n\nBuilt from an uncommitted tree, so not evidence until regenerated from a committed "
                "one (the same command with `--resume` reuses nothing from them: a checkpoint belongs to the build that wrote it).\n\n";
    for (const auto& [folder, r] : unread)
      at_scale += fmt::format("- `at-scale/{}` (sparseact {}): `{}`\n", folder, r.value("version", "?"), command_of(folder, r));
    at_scale += "\n";
  }
  std::map<std::string, json> prices;  // at-scale/pricing/<name>/price.json: the job that would decide
  if (fs::is_directory(root / "at-scale" / "pricing"))
    for (const auto& entry : fs::directory_iterator(root / "at-scale" / "pricing")) {
      std::ifstream in(entry.path() / "price.json");
      json p = json::parse(in, nullptr, false);
      if (in && !p.is_discarded() && p.value("core_hours", json()).is_number()) prices[entry.path().filename().string()] = p;  // the CPU job
    }
  std::map<std::string, std::map<std::string, json>> by_paper;  // paper → analysis (folder) → result
  for (const auto& [name, r] : results) by_paper[r.value("paper", "?")][name] = r;

  // The summary reads each claim from the run closest to the paper's setup (issue 47): never a run outside the
  // paper's protocol while a protocol run exists; then the closest (at-scale/runs.json; the default run is 0);
  // then the larger run. Power never chooses. Every run of the claim is kept, so a line can show them all.
  struct Reading {
    json check;
    std::string run;     // "default" or "at-scale/<folder>"
    std::string folder;  // the analysis folder, for links
    double elapsed_s = 0;
    RunInfo info;        // the default run: {"default run", protocol, 0}
  };
  const auto n_of = [](const json& c) {
    const json& p = c.value("power", json());
    return p.is_object() && p.value("n", json()).is_number() ? p["n"].get<double>() : -1.0;
  };
  const auto readings_of = [&](const std::string& name, const json& r, const json& c) {
    std::vector<Reading> all{{c, "default", name, r.value("elapsed_s", 0.0), {"default run", true, 0, {}}}};
    if (name != r.value("analysis", name)) return all;  // a second default run (MiniLM) stands alone
    for (const auto& [folder, big] : larger) {
      if (big.value("analysis", folder) != name) continue;
      for (const auto& b : big["checks"])
        if (b.value("id", "") == c.value("id", "") && kind_of(b) == kind_of(c))  // an older run's other kind: not a reading
          all.push_back({b, "at-scale/" + folder, folder, big.value("elapsed_s", 0.0), runs.at(folder)});
    }
    return all;
  };
  const auto decisive = [&](const std::vector<Reading>& all) {
    const bool any_protocol = std::any_of(all.begin(), all.end(), [](const Reading& x) { return x.info.protocol; });
    const Reading* best = nullptr;
    for (const Reading& x : all) {
      if (any_protocol && !x.info.protocol) continue;
      if (!best || x.info.closeness > best->info.closeness ||
          (x.info.closeness == best->info.closeness && n_of(x.check) >= n_of(best->check)))
        best = &x;
    }
    return *best;
  };
  // "holds at w = 16 (3 runs), w = 64 (3 runs); inconclusive at w = 32 (80 runs, θ̂ 0.0365 [−0.579, 0.652])": every run
  // of a claim whose runs differ in setup, by verdict, the decisive one first.
  // brief: the setups alone ("holds at w = 256, w = 128; inconclusive at default run"), for the papers in brief.
  const auto across_runs = [&](const std::vector<Reading>& all, const Reading& d, bool brief = false) {
    if (all.size() < 2) return std::string();
    std::vector<const Reading*> order{&d};
    for (const Reading& y : all)
      if (y.run != d.run) order.push_back(&y);
    std::vector<std::pair<std::string, std::string>> parts;  // verdict → its runs
    for (const Reading* x : order) {
      const Interval iv = interval_of(x->check);
      std::string what = x->info.setup;
      if (brief) {
        if (what.find(", ") != std::string::npos) what = "(" + what + ")";  // setups are listed with commas
        if (!x->info.protocol) what += " (outside the paper's protocol)";
      } else {
        what = "(" + what + (size_of(x->check) == "—" ? "" : ", " + size_of(x->check));
        if (iv.statistical) what += fmt::format(", θ̂ {:.3g} [{:.3g}, {:.3g}]", iv.estimate, iv.lo, iv.hi);
        if (!x->info.protocol) what += "; outside the paper's protocol: " + x->info.why;
        what += ")";
      }
      const std::string v = verdict_of(x->check);
      auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == v; });
      if (it == parts.end()) parts.push_back({v, what});
      else it->second += ", " + what;
    }
    std::string out = " — across runs: ";
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i].first + " at " + parts[i].second;
    return out;
  };

  // The claim's trend along its analysis's designed sweep (trends.json), toward the paper's effect or, for a claim the
  // paper gives no size, toward its threshold: printed beside the claim, never deciding it.
  const auto trend_of = [&](const std::string& analysis, const json& c) -> std::optional<sparseact::app::Trend> {
    const auto axis = trends.find(analysis);
    if (axis == trends.end()) return std::nullopt;
    std::vector<sparseact::app::TrendPoint> points;
    for (const std::string& folder : axis->second.runs) {
      const json& big = larger.at(folder);
      for (const auto& b : big["checks"])
        if (b.value("id", "") == c.value("id", "") && kind_of(b) == kind_of(c) && interval_of(b).statistical)
          points.push_back({big["params"][axis->second.param].get<double>(), interval_of(b).estimate});
    }
    const json& t = c.value("tolerance", json());
    const bool papers = t.is_object() && t.value("effect_papers", false) && std::isfinite(number_in(t, "effect_value"));
    return sparseact::app::fit_trend(points, axis->second.symbol, papers ? t["effect_value"].get<double>() : 0.0, papers, axis->second.paper);
  };

  struct Tally {
    int holds = 0, not_refuted = 0, contradicted = 0, not_reproduced = 0, direction_only = 0, erratum = 0, inconclusive = 0;
    int unclassified = 0, own = 0, observations = 0, self_checks = 0, self_checks_failing = 0;
  };
  std::map<std::string, Tally> tally;
  std::string wrong, not_reproduced, unsettled, own_questions, rederived, body;
  std::map<std::string, std::vector<std::pair<std::pair<double, double>, std::string>>> holding;  // paper → ((closeness, strength), line)
  std::map<std::string, std::string> departures;                               // analysis → its departures
  std::map<std::string, std::vector<sparseact::app::SummaryClaim>> summary;     // paper → its claims as decided
  std::map<std::string, std::vector<sparseact::app::ForestRow>> forest;          // paper → its statistical claims, as decided
  const auto run_text = [](const Reading& d) {
    return d.run == "default" ? std::string("default run") : "`" + d.run + "`, " + d.info.setup;
  };
  const auto line_of = [&](const Reading& d) {
    // A default run links to its section; an at-scale run to its JSON (it has no section of its own).
    const std::string target = d.run == "default" ? "#" + d.folder
                                                  : fmt::format("{}/{}.json", d.run, d.folder.substr(0, d.folder.find('@')));
    return fmt::format("[{} › {}]({}) ({}; {})", d.folder, cell(d.check.value("id", json())), target, cell(d.check.value("claim", json())),
                       run_text(d));
  };
  for (const auto& [paper, analyses] : by_paper) {
    Tally& t = tally[paper];
    body += fmt::format("## Paper {}\n\n@@summary {}@@", paper, paper);
    for (const auto& [name, r] : analyses) {
      body += fmt::format("### {}\n\n", name);
      body += fmt::format("seed {}, device {}, {:.1f} s, version {}\n\n", r.value("seed", 0), r.value("device", "?"),
                          r.value("elapsed_s", 0.0), r.value("version", "?"));
      std::string rows, self_rows, own_rows;
      for (const auto& c : r["checks"]) {
        const std::string kind = kind_of(c), v = verdict_of(c);
        const std::string row = fmt::format("| {} | {} | {} | {} | {} | {} |\n", paper, cell(c.value("claim", json())),
                                            cell(c.value("statement", json())), cell(c.value("predicted", json())),
                                            cell(c.value("measured", json())), verdict_cell(c));
        if (c.contains("stored_verdict"))
          rederived += fmt::format("- [{} › {}](#{}): {} → {}\n", name, cell(c.value("id", json())), name, c.value("stored_verdict", "—"), v);
        if (!c.value("departure", "").empty()) {
          std::string& d = departures[name];
          const std::string text = cell(c["departure"]);
          if (d.find(text) == std::string::npos) d += (d.empty() ? "" : "; ") + text;
        }
        if (kind == "self-check") {
          ++t.self_checks;
          t.self_checks_failing += v == "fails";
          self_rows += row;
          continue;
        }
        if (kind == "own-question") {
          ++t.own;
          own_rows += row;
          own_questions += fmt::format("- [{} › {}](#{}): {} — {}\n", name, cell(c.value("id", json())), name, cell(c.value("statement", json())),
                                       verdict_cell(c));
          continue;
        }
        rows += row;
        if (kind == "observation") {
          ++t.observations;
          continue;
        }
        const std::vector<Reading> all = readings_of(name, r, c);
        const Reading d = decisive(all);
        const auto trend = trend_of(name, d.check);
        const std::string runs_line =
            across_runs(all, d) + (trend ? fmt::format(" — {} ({}: {} = {:g})", sparseact::app::trend_text(*trend), trends.at(name).source,
                                                       trend->axis, trend->x_paper)
                                         : std::string());
        const std::string dv = verdict_of(d.check);
        const json& dc = d.check;
        if (dv == "holds") ++t.holds;
        else if (dv == "not refuted") ++t.not_refuted;
        else if (dv == "contradicted") ++t.contradicted;
        else if (dv == "not reproduced") ++t.not_reproduced;
        else if (dv == "direction only") ++t.direction_only;
        else if (dv == "erratum") ++t.erratum;
        else if (dv == "inconclusive") ++t.inconclusive;
        else ++t.unclassified;
        const std::string note = dc.value("note", "");
        {
          std::string numbering = cell(dc.value("claim", json()));
          if (numbering.rfind("paper " + paper + " ", 0) == 0) numbering = numbering.substr(paper.size() + 7);
          summary[paper].push_back({name, cell(dc.value("id", json())), numbering, dv, dc.value("departure", "").empty(),
                                    all.size() < 2 ? "" : across_runs(all, d, true).substr(std::string(" — across runs: ").size()),
                                    trend ? sparseact::app::trend_brief(*trend) : std::string()});
        }
        if (auto row = sparseact::app::forest_row(dc, cell(dc.value("id", json())) + (d.run == "default" ? "" : " (at scale)")))
          forest[paper].push_back(std::move(*row));
        if (dv == "contradicted" || dv == "erratum")
          wrong += fmt::format("- {}: {} — **{}**{}{}\n", line_of(d), cell(dc.value("measured", json())), dv,
                               note.empty() ? "" : ". " + shortened(cell(dc["note"])), runs_line);
        if (dv == "not reproduced" || dv == "direction only")
          not_reproduced += fmt::format("- {}: {} — **{}**; {}{}\n", line_of(d), cell(dc.value("measured", json())), dv,
                                        dc.value("departure", "").empty()
                                            ? std::string("at the paper's setup: the direction holds, the paper's size does not")
                                            : "departs: " + cell(dc["departure"]),
                                        runs_line);
        if (dv == "holds" || dv == "not refuted") {
          // Order: the run's closeness to the paper's setup, then how far the interval lies inside its threshold
          // (standard errors); a deterministic comparison after the intervals of its closeness.
          const double s = strength(dc);
          holding[paper].push_back({{d.info.closeness, std::isfinite(s) ? s : -1e300},
                                    fmt::format("- {}: {}{}{}{}\n", line_of(d), cell(dc.value("measured", json())),
                                                dv == "not refuted" ? " — *not refuted* (a check that can only refute)" : "",
                                                dc.value("departure", "").empty() ? "" : " (departs: " + cell(dc["departure"]) + ")",
                                                runs_line)});
        }
        if (dv == "inconclusive") {
          std::string job = deciding_job(dc, d.elapsed_s);
          if (job.empty()) job = power_text(dc);
          const auto price = prices.find(r.value("analysis", name));
          if (price != prices.end())
            job += fmt::format("; the paper-scale grid is priced at {:.3g} core-hours: `{}`", price->second.value("core_hours", 0.0),
                               price->second.value("sbatch", ""));
          unsettled += fmt::format("- {}: {}{}\n", line_of(d), job, runs_line);
        }
      }
      if (!rows.empty()) body += "| paper | claim | statement | predicted | measured | verdict |\n|---|---|---|---|---|---|\n" + rows + "\n";
      if (!own_rows.empty())
        body += "Our own questions (the paper states no such claim; never counted for or against it):\n\n"
                "| paper | claim | statement | predicted | measured | verdict |\n|---|---|---|---|---|---|\n" + own_rows + "\n";
      if (!self_rows.empty())
        body += "Self-checks of our own construction (not evidence about the paper):\n\n"
                "| paper | claim | statement | predicted | measured | verdict |\n|---|---|---|---|---|---|\n" + self_rows + "\n";
      for (const auto& f : r.value("figures", json::array())) {
        const std::string file = f.get<std::string>();
        if (file.size() > 4 && file.substr(file.size() - 4) == ".png") body += fmt::format("![{}]({}/{})\n\n", file, name, file);
      }
      if (r.contains("data") && r["data"].contains("figure_error"))
        body += fmt::format("Figures missing: {}\n\n", cell(r["data"]["figure_error"]));
    }
  }
  // The at-scale runs' own re-derived verdicts.
  for (const auto& [folder, big] : larger)
    for (const auto& c : big["checks"])
      if (c.contains("stored_verdict"))
        rederived += fmt::format("- [at-scale/{} › {}](at-scale/{}/{}.json): {} → {}\n", folder, cell(c.value("id", json())), folder,
                                 big.value("analysis", folder), c.value("stored_verdict", "—"), verdict_of(c));

  std::string md = "# sparseact verification report\n\n";
  md += fmt::format("Generated by `sparseact_report` from the analyses' JSON (sparseact {}). Each row compares what the run "
                    "measured with what the paper states; see each analysis's JSON for the tolerance, its derivation and, "
                    "for a statistical claim, its power. Every verdict is re-derived from the numbers its JSON stored under the "
                    "current rules (DESIGN.md, the analysis contract); where that changed a stored verdict, the last section lists it.\n\n",
                    sparseact::version());
  md += "A claim **holds** (its interval supports it and is consistent with the paper's effect), is *not refuted* (a check that can "
        "only refute found no counterexample), holds in **direction only** (above 0, wholly below the paper's effect), is "
        "**contradicted** (the interval excludes the effect that counts, at the paper's setup), is **not reproduced** (the same "
        "exclusion in a run that departs from the paper's setup: evidence about our miniature), is an **erratum** (a deterministic "
        "statement false as printed; see ERRATA.md) or is *inconclusive* (the run size at which its interval would decide is "
        "given). Own questions are ours, not the paper's. Observations are what a paper reports seeing: no verdict. Self-checks "
        "test our own construction or cannot fail, and are never evidence about a paper. The counts read each claim from the run "
        "closest to the paper's setup (`figures/at-scale/runs.json` says how each larger run relates to it; a run outside the "
        "paper's protocol never decides while a protocol run exists; power never chooses); each list names that run and, where "
        "runs differ in setup, shows them all on one line.\n\n";
  md += "| paper | holds | not refuted | contradicted at the paper's setup | did not reproduce here | direction only | errata | "
        "inconclusive | our own questions | observations | self-checks (failing) |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  Tally all;
  for (const auto& [paper, t] : tally) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} ({}) |\n", paper, t.holds, t.not_refuted, t.contradicted,
                      t.not_reproduced, t.direction_only, t.erratum, t.inconclusive, t.own, t.observations, t.self_checks,
                      t.self_checks_failing);
    all.holds += t.holds, all.not_refuted += t.not_refuted, all.contradicted += t.contradicted, all.not_reproduced += t.not_reproduced;
    all.direction_only += t.direction_only, all.erratum += t.erratum, all.inconclusive += t.inconclusive, all.own += t.own;
    all.observations += t.observations, all.self_checks += t.self_checks, all.self_checks_failing += t.self_checks_failing;
    all.unclassified += t.unclassified;
  }
  md += fmt::format("| all | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} ({}) |\n\n", all.holds, all.not_refuted, all.contradicted,
                    all.not_reproduced, all.direction_only, all.erratum, all.inconclusive, all.own, all.observations, all.self_checks,
                    all.self_checks_failing);
  if (all.unclassified > 0)
    md += fmt::format("{} checks come from JSON written before verdicts existed and fail without a verdict: regenerate them.\n\n",
                      all.unclassified);
  // The papers in brief (issue 48): one generated paragraph each, here and at the head of each paper's section.
  std::string brief;
  for (const auto& [paper, analyses] : by_paper) {
    std::vector<std::string> names;
    for (const auto& [name, r] : analyses) names.push_back(name);
    const Tally& t = tally[paper];
    const std::string paragraph = sparseact::app::paper_paragraph(paper, summary[paper], {t.own, t.observations, t.self_checks, t.self_checks_failing}, names);
    brief += paragraph;
    const std::string mark = fmt::format("@@summary {}@@", paper);
    body.replace(body.find(mark), mark.size(), paragraph + forest_md(root, paper, forest[paper]));
  }
  md += "### The papers in brief\n\n" + brief;
  // ERRATA.md beside figures/: how many entries each paper has there, linked.
  std::string errata_line;
  if (std::ifstream in(root / ".." / "ERRATA.md"); in) {
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& [paper, section] : sparseact::app::errata_sections(text))
      errata_line += fmt::format("{}paper {}: [{} entries](../ERRATA.md#{})", errata_line.empty() ? "" : "; ", paper, section.entries, section.anchor);
  }
  md += "### 1. What the papers get wrong\n\nErrata, and claims contradicted at the paper's own setup." +
        (errata_line.empty() ? std::string() : " ERRATA.md lists, besides the checks below, every slip found while implementing: " + errata_line + ".") +
        "\n\n" + (wrong.empty() ? std::string("Nothing at this scale.\n") : wrong) + "\n";
  md += "### 2. What did not reproduce in our setups\n\nEach with the way its run departs from the paper's setup.\n\n" +
        (not_reproduced.empty() ? std::string("Nothing.\n") : not_reproduced) + "\n";
  std::string holds_md;
  for (auto& [paper, lines] : holding) {
    std::stable_sort(lines.begin(), lines.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    holds_md += fmt::format("Paper {} ({} claims; closest to the paper's setup first, then the interval furthest inside its threshold, "
                            "in standard errors; exact comparisons after the intervals):\n\n",
                            paper, lines.size());
    for (const auto& [strength, line] : lines) holds_md += line;
    holds_md += "\n";
  }
  md += "### 3. What holds\n\n" + (holds_md.empty() ? std::string("Nothing.\n\n") : holds_md);
  md += "### 4. What this scale cannot settle, and the job that would\n\nOnly claims still undecided in the run closest to the paper's "
        "setup. The job is the run size n′ = n·(q·se / |θ̂ − threshold|)² at which this interval, its spread shrinking as √(n/n′), "
        "would clear the threshold nearest its estimate; where θ̂ sits at a threshold, more runs may never settle it.\n\n" +
        (unsettled.empty() ? std::string("Every statistical claim was settled.\n") : unsettled) + "\n";
  if (!own_questions.empty()) md += "### Our own questions\n\nThe papers state none of these; they are never counted for or against a paper.\n\n" + own_questions + "\n";
  std::string dep;
  for (const auto& [name, text] : departures) dep += fmt::format("- [{}](#{}): {}\n", name, name, text);
  md += "### Where we depart from the paper's setup\n\n" + (dep.empty() ? std::string("No check records a departure.\n") : dep) + "\n";
  md += at_scale;
  md += pricing_section(root);
  md += body;
  if (!rederived.empty())
    md += "## Verdicts re-derived from stored numbers\n\nThese JSON files were written under earlier rules; the report re-applies the "
          "current ones (app::reverdict) to the bounds, intervals and effects they stored: stored verdict → verdict now.\n\n" +
          rederived + "\n";
  sparseact::write_file_atomic(root / "REPORT.md", md);
  std::printf("sparseact_report: %d claims hold, %d not refuted, %d contradicted, %d not reproduced, %d direction only, %d errata, "
              "%d inconclusive; %d own questions, %d observations, %d self-checks (%d failing); wrote %s\n",
              all.holds, all.not_refuted, all.contradicted, all.not_reproduced, all.direction_only, all.erratum, all.inconclusive, all.own,
              all.observations, all.self_checks, all.self_checks_failing, (root / "REPORT.md").c_str());
  return 0;
}
