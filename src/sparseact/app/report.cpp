// The report's model and REPORT.md (app/report.hpp). The helpers below read one check's JSON; build_report decides
// every claim and fills the model; report_markdown prints it. app/report_html.cpp prints the same model as a page.
#include <sparseact/app/report.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include <sparseact/app/checks.hpp>
#include <sparseact/app/forest.hpp>
#include <sparseact/app/lint.hpp>
#include <sparseact/app/paper_summary.hpp>
#include <sparseact/app/report_text.hpp>
#include <sparseact/app/trend.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/core/version.hpp>

namespace sparseact::app {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Results come from a build of a committed tree (docs/DESIGN.md): a result's `version` ends in -dirty when the tree
/// that built it had uncommitted changes. A build of a committed tree refuses such results (at-scale runs aside, which
/// are listed unread); a development build, itself dirty, may read its own.
bool written_by_uncommitted_tree(const json& r) { return r.value("version", std::string()).find("-dirty") != std::string::npos; }
std::optional<std::string> refuse_uncommitted(const std::string& name, const json& r) {
  if (!written_by_uncommitted_tree(r) || std::string(sparseact::version()).find("-dirty") != std::string::npos) return std::nullopt;
  return fmt::format("{}: written by sparseact {}, a build of an uncommitted tree: regenerate it from a committed one", name,
                     r.value("version", "?"));
}

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
    r["file"] = file.filename().string();
    const std::string analysis = r.value("analysis", folder);
    out[at != std::string::npos || folder != analysis ? folder : analysis] = r;
  }
  return out;
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

/// The paper's forest plot (app/forest.hpp) drawn into FIGURES/report/: its image line for REPORT.md, or a line saying
/// why where gnuplot cannot draw it.
void draw_forest(const fs::path& root, ReportPaper& paper, const std::vector<ForestRow>& rows) {
  if (rows.empty()) return;
  std::map<std::string, int> by_verdict;
  for (const auto& r : rows) ++by_verdict[r.verdict];
  std::string counts;
  for (const auto& [v, n] : by_verdict) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, v);
  paper.forest_alt = fmt::format("Paper {}: {} claims, each θ̂ and its interval divided by the threshold that decided it "
                                 "(0: no effect, 1: the effect that counts), each exact comparison as its deciding margin over its bound: {}",
                                 paper.id, rows.size(), counts);
  try {
    const plot::Figure fig = forest_figure(paper.id, rows);
    plot::render(fig, root / "report");
    paper.forest_name = fig.name;
    paper.forest_md = fmt::format("![{}](report/{}.png)\n\n", paper.forest_alt, fig.name);
  } catch (const std::exception& e) {
    paper.forest_md = fmt::format("Forest plot not drawn ({}): {}\n\n", paper.forest_alt, e.what());
  }
}

/// One reading of a claim: its check in one run, and how that run relates to the paper's setup.
struct Reading {
  json check;
  std::string run;     // "default" or "at-scale/<folder>"
  std::string folder;  // the analysis folder, for links
  double elapsed_s = 0;
  RunInfo info;        // the default run: {"default run", protocol, 0}
  std::string file;    // its JSON, relative to FIGURES
};

double n_of(const json& c) {
  const json& p = c.value("power", json());
  return p.is_object() && p.value("n", json()).is_number() ? p["n"].get<double>() : -1.0;
}

/// The reading that decides (issue 47): never a run outside the paper's protocol while a protocol run exists; then the
/// run closest to the paper's setup (at-scale/runs.json; the default run is 0); then the larger run. Power never chooses.
const Reading& decisive(const std::vector<Reading>& all) {
  const bool any_protocol = std::any_of(all.begin(), all.end(), [](const Reading& x) { return x.info.protocol; });
  const Reading* best = nullptr;
  for (const Reading& x : all) {
    if (any_protocol && !x.info.protocol) continue;
    if (!best || x.info.closeness > best->info.closeness || (x.info.closeness == best->info.closeness && n_of(x.check) >= n_of(best->check)))
      best = &x;
  }
  return *best;
}

/// "holds at w = 16 (3 runs), w = 64 (3 runs); inconclusive at w = 32 (80 runs, θ̂ 0.0365 [−0.579, 0.652])": every run
/// of a claim whose runs differ in setup, by verdict, the decisive one first. brief: the setups alone ("holds at
/// w = 256, w = 128; inconclusive at default run"), for the papers in brief.
std::string across_runs(const std::vector<Reading>& all, const Reading& d, bool brief = false) {
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
}

std::string run_text(const Reading& d) { return d.run == "default" ? std::string("default run") : "`" + d.run + "`, " + d.info.setup; }

/// A list's line: a default run links to its section, an at-scale run to its JSON (it has no section of its own).
std::string line_of(const Reading& d) {
  const std::string target = d.run == "default" ? "#" + d.folder : fmt::format("{}/{}.json", d.run, d.folder.substr(0, d.folder.find('@')));
  return fmt::format("[{} › {}]({}) ({}; {})", d.folder, cell(d.check.value("id", json())), target, cell(d.check.value("claim", json())), run_text(d));
}

void add(ReportTally& t, const std::string& verdict) {
  if (verdict == "holds") ++t.holds;
  else if (verdict == "not refuted") ++t.not_refuted;
  else if (verdict == "contradicted") ++t.contradicted;
  else if (verdict == "not reproduced") ++t.not_reproduced;
  else if (verdict == "direction only") ++t.direction_only;
  else if (verdict == "erratum") ++t.erratum;
  else if (verdict == "inconclusive") ++t.inconclusive;
  else ++t.unclassified;
}

void add(ReportTally& all, const ReportTally& t) {
  all.holds += t.holds, all.not_refuted += t.not_refuted, all.contradicted += t.contradicted, all.not_reproduced += t.not_reproduced;
  all.direction_only += t.direction_only, all.erratum += t.erratum, all.inconclusive += t.inconclusive, all.own += t.own;
  all.observations += t.observations, all.self_checks += t.self_checks, all.self_checks_failing += t.self_checks_failing;
  all.unclassified += t.unclassified;
}

std::string lines_of(const std::vector<ReportItem>& items) {
  std::string out;
  for (const ReportItem& x : items) out += x.md;
  return out;
}

}  // namespace

ReportModel build_report(const fs::path& root, std::vector<std::string>& offences) {
  ReportModel model;
  model.version = sparseact::version();
  const std::map<std::string, json> results = read_results(root);
  std::map<std::string, json> larger;  // at-scale runs, by folder (<name> or <name>@<variant>)
  if (fs::is_directory(root / "at-scale")) larger = read_results(root / "at-scale", true);
  // Results come from a build of a committed tree (docs/DESIGN.md). An at-scale run built from an uncommitted one is not
  // read (it took hours; it is listed with the command that regenerates it); a default run is refused outright by a
  // report built from a committed tree (a development build may read its own results).
  std::map<std::string, json> unread;
  for (auto it = larger.begin(); it != larger.end();)
    if (written_by_uncommitted_tree(it->second)) unread.insert(*it), it = larger.erase(it);
    else ++it;

  // The lint (issue 47, app/lint.hpp): a report that would count what is not evidence is not written.
  const std::map<std::string, RunInfo> runs = read_runs(root, offences);
  const std::map<std::string, TrendAxis> trends = read_trends(root, larger, offences);
  for (const auto& [name, r] : results) {
    for (auto& line : lint_result(r, name)) offences.push_back(std::move(line));
    if (auto line = refuse_uncommitted(name, r)) offences.push_back(std::move(*line));
  }
  for (const auto& [folder, r] : larger) {
    for (auto& line : lint_result(r, "at-scale/" + folder)) offences.push_back(std::move(line));
    if (!runs.count(folder))
      offences.push_back(fmt::format("at-scale/{}: no entry in at-scale/runs.json (its setup, whether it follows the paper's protocol, "
                                     "its closeness to the paper's setup)", folder));
  }
  if (!offences.empty()) return model;

  model.at_scale_md = at_scale_section(larger, results);
  if (!unread.empty()) {
    model.at_scale_md += "### At-scale results not read\n\nBuilt from an uncommitted tree, so not evidence until regenerated from a committed "
                         "one (the same command with `--resume` reuses nothing from them: a checkpoint belongs to the build that wrote it).\n\n";
    for (const auto& [folder, r] : unread)
      model.at_scale_md += fmt::format("- `at-scale/{}` (sparseact {}): `{}`\n", folder, r.value("version", "?"), command_of(folder, r));
    model.at_scale_md += "\n";
  }
  model.pricing_md = pricing_section(root);
  std::map<std::string, json> prices;  // at-scale/pricing/<name>/price.json: the job that would decide
  if (fs::is_directory(root / "at-scale" / "pricing"))
    for (const auto& entry : fs::directory_iterator(root / "at-scale" / "pricing")) {
      std::ifstream in(entry.path() / "price.json");
      json p = json::parse(in, nullptr, false);
      if (in && !p.is_discarded() && p.value("core_hours", json()).is_number()) prices[entry.path().filename().string()] = p;  // the CPU job
    }
  std::map<std::string, std::map<std::string, json>> by_paper;  // paper → analysis (folder) → result
  for (const auto& [name, r] : results) by_paper[r.value("paper", "?")][name] = r;

  // Every run of a claim: the default one first, then the at-scale runs of the same check (an older run's other kind is
  // not a reading). A second default run (MiniLM) stands alone.
  const auto readings_of = [&](const std::string& name, const json& r, const json& c) {
    std::vector<Reading> all{{c, "default", name, r.value("elapsed_s", 0.0), {"default run", true, 0, {}}, name + "/" + r.value("file", "")}};
    if (name != r.value("analysis", name)) return all;
    for (const auto& [folder, big] : larger) {
      if (big.value("analysis", folder) != name) continue;
      for (const auto& b : big["checks"])
        if (b.value("id", "") == c.value("id", "") && kind_of(b) == kind_of(c))
          all.push_back({b, "at-scale/" + folder, folder, big.value("elapsed_s", 0.0), runs.at(folder), "at-scale/" + folder + "/" + big.value("file", "")});
    }
    return all;
  };
  // The claim's trend along its analysis's designed sweep (trends.json), toward the paper's effect or, for a claim the
  // paper gives no size, toward its threshold: printed beside the claim, never deciding it.
  const auto trend_of = [&](const std::string& analysis, const json& c) -> std::optional<Trend> {
    const auto axis = trends.find(analysis);
    if (axis == trends.end()) return std::nullopt;
    std::vector<TrendPoint> points;
    for (const std::string& folder : axis->second.runs) {
      const json& big = larger.at(folder);
      for (const auto& b : big["checks"])
        if (b.value("id", "") == c.value("id", "") && kind_of(b) == kind_of(c) && interval_of(b).statistical)
          points.push_back({big["params"][axis->second.param].get<double>(), interval_of(b).estimate});
    }
    const json& t = c.value("tolerance", json());
    const bool papers = t.is_object() && t.value("effect_papers", false) && std::isfinite(number_in(t, "effect_value"));
    return fit_trend(points, axis->second.symbol, papers ? t["effect_value"].get<double>() : 0.0, papers, axis->second.paper);
  };

  std::map<std::string, std::string> departures;  // analysis → its departures
  for (const auto& [paper_id, analyses] : by_paper) {
    ReportPaper& paper = model.papers.emplace_back();
    paper.id = paper_id;
    ReportTally& t = paper.tally;
    std::vector<SummaryClaim> summary;
    std::vector<ForestRow> forest;
    std::vector<std::pair<std::pair<double, double>, ReportItem>> holding;  // ((closeness, strength), line)
    for (const auto& [name, r] : analyses) {
      ReportAnalysis& section = paper.analyses.emplace_back();
      section.name = name;
      section.meta_md = fmt::format("seed {}, device {}, {:.1f} s, version {}\n\n", r.value("seed", 0), r.value("device", "?"),
                                    r.value("elapsed_s", 0.0), r.value("version", "?"));
      for (const auto& f : r.value("figures", json::array())) section.figures.push_back(f.get<std::string>());
      if (r.contains("data") && r["data"].contains("figure_error")) section.figure_error = cell(r["data"]["figure_error"]);
      for (const auto& c : r["checks"]) {
        const std::string kind = kind_of(c), v = verdict_of(c);
        ReportCheck& row = section.checks.emplace_back();
        row.paper = paper_id, row.analysis = name, row.id = cell(c.value("id", json())), row.kind = kind;
        row.statement = cell(c.value("statement", json()));
        row.table_row_md = fmt::format("| {} | {} | {} | {} | {} | {} |\n", paper_id, cell(c.value("claim", json())), row.statement,
                                       cell(c.value("predicted", json())), cell(c.value("measured", json())), verdict_cell(c));
        if (c.contains("stored_verdict"))
          model.rederived_md += fmt::format("- [{} › {}](#{}): {} → {}\n", name, row.id, name, c.value("stored_verdict", "—"), v);
        if (!c.value("departure", "").empty()) {
          std::string& d = departures[name];
          const std::string text = cell(c["departure"]);
          if (d.find(text) == std::string::npos) d += (d.empty() ? "" : "; ") + text;
        }
        // The row reads the decisive run for a claim, the default run for any other kind.
        const bool decided = kind != "self-check" && kind != "own-question" && kind != "observation";
        const std::vector<Reading> all = decided ? readings_of(name, r, c) : std::vector<Reading>{};
        const Reading d = decided ? decisive(all)
                                          : Reading{c, "default", name, r.value("elapsed_s", 0.0), {"default run", true, 0, {}}, name + "/" + r.value("file", "")};
        const json& dc = d.check;
        const std::string dv = verdict_of(dc);
        row.claim = cell(dc.value("claim", json())), row.predicted = cell(dc.value("predicted", json()));
        row.measured = cell(dc.value("measured", json())), row.note = dc.value("note", ""), row.departure = dc.value("departure", "");
        row.verdict = dv, row.verdict_md = verdict_cell(dc), row.run = d.run, row.run_setup = d.info.setup, row.json_path = d.file;
        row.at_setup = row.departure.empty() && d.info.protocol;
        row.tolerance = dc.value("tolerance", json()), row.power = dc.value("power", json());
        if (kind == "self-check") {
          ++t.self_checks;
          t.self_checks_failing += v == "fails";
          continue;
        }
        if (kind == "own-question") {
          ++t.own;
          model.own_questions.push_back(
              {paper_id, name, row.id, v, fmt::format("- [{} › {}](#{}): {} — {}\n", name, row.id, name, row.statement, verdict_cell(c)), kind});
          continue;
        }
        if (kind == "observation") {
          ++t.observations;
          continue;
        }
        const auto trend = trend_of(name, dc);
        const std::string runs_line =
            across_runs(all, d) + (trend ? fmt::format(" — {} ({}: {} = {:g})", trend_text(*trend), trends.at(name).source, trend->axis, trend->x_paper)
                                         : std::string());
        row.across = all.size() < 2 ? "" : across_runs(all, d).substr(std::string(" — across runs: ").size());
        add(t, dv);
        const std::string note = dc.value("note", "");
        {
          std::string numbering = row.claim;
          if (numbering.rfind("paper " + paper_id + " ", 0) == 0) numbering = numbering.substr(paper_id.size() + 7);
          summary.push_back({name, row.id, numbering, dv, row.departure.empty(),
                             all.size() < 2 ? "" : across_runs(all, d, true).substr(std::string(" — across runs: ").size()),
                             trend ? trend_brief(*trend) : std::string()});
        }
        if (auto f = forest_row(dc, row.id + (d.run == "default" ? "" : " (at scale)"))) forest.push_back(std::move(*f));
        const ReportItem item{paper_id, name, row.id, dv, {}};
        if (dv == "contradicted" || dv == "erratum") {
          model.wrong.push_back(item);
          model.wrong.back().md = fmt::format("- {}: {} — **{}**{}{}\n", line_of(d), row.measured, dv, note.empty() ? "" : ". " + shortened(cell(dc["note"])), runs_line);
        }
        if (dv == "not reproduced" || dv == "direction only") {
          model.not_reproduced.push_back(item);
          model.not_reproduced.back().md =
              fmt::format("- {}: {} — **{}**; {}{}\n", line_of(d), row.measured, dv,
                          row.departure.empty() ? std::string("at the paper's setup: the direction holds, the paper's size does not") : "departs: " + cell(dc["departure"]),
                          runs_line);
        }
        if (dv == "holds" || dv == "not refuted") {
          // Order: the run's closeness to the paper's setup, then how far the interval lies inside its threshold
          // (standard errors); a deterministic comparison after the intervals of its closeness.
          const double s = strength(dc);
          holding.push_back({{d.info.closeness, std::isfinite(s) ? s : -1e300}, item});
          holding.back().second.md = fmt::format("- {}: {}{}{}{}\n", line_of(d), row.measured, dv == "not refuted" ? " — *not refuted* (a check that can only refute)" : "",
                                                 row.departure.empty() ? "" : " (departs: " + cell(dc["departure"]) + ")", runs_line);
        }
        if (dv == "inconclusive") {
          std::string job = deciding_job(dc, d.elapsed_s);
          if (job.empty()) job = power_text(dc);
          const auto price = prices.find(r.value("analysis", name));
          if (price != prices.end())
            job += fmt::format("; the paper-scale grid is priced at {:.3g} core-hours: `{}`", price->second.value("core_hours", 0.0), price->second.value("sbatch", ""));
          model.unsettled.push_back(item);
          model.unsettled.back().md = fmt::format("- {}: {}{}\n", line_of(d), job, runs_line);
        }
      }
    }
    std::stable_sort(holding.begin(), holding.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (auto& [key, item] : holding) paper.holding.push_back(std::move(item));
    std::vector<std::string> names;
    for (const auto& [name, r] : analyses) names.push_back(name);
    paper.brief_md = paper_paragraph(paper_id, summary, {t.own, t.observations, t.self_checks, t.self_checks_failing}, names);
    draw_forest(root, paper, forest);
    add(model.all, t);
  }
  // The at-scale runs' own re-derived verdicts.
  for (const auto& [folder, big] : larger)
    for (const auto& c : big["checks"])
      if (c.contains("stored_verdict"))
        model.rederived_md += fmt::format("- [at-scale/{} › {}](at-scale/{}/{}.json): {} → {}\n", folder, cell(c.value("id", json())), folder,
                                          big.value("analysis", folder), c.value("stored_verdict", "—"), verdict_of(c));
  for (const auto& [name, text] : departures) model.departures_md += fmt::format("- [{}](#{}): {}\n", name, name, text);
  // ERRATA.md beside figures/: how many entries each paper has there, linked.
  if (std::ifstream in(root / ".." / "ERRATA.md"); in) {
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& [paper, section] : errata_sections(text))
      model.errata_line += fmt::format("{}paper {}: [{} entries](../ERRATA.md#{})", model.errata_line.empty() ? "" : "; ", paper, section.entries, section.anchor);
  }
  return model;
}

std::string report_markdown(const ReportModel& m) {
  std::string md = "# sparseact verification report\n\n";
  md += fmt::format("Generated by `sparseact_report` from the analyses' JSON (sparseact {}). Each row compares what the run "
                    "measured with what the paper states; see each analysis's JSON for the tolerance, its derivation and, "
                    "for a statistical claim, its power. Every verdict is re-derived from the numbers its JSON stored under the "
                    "current rules (DESIGN.md, the analysis contract); where that changed a stored verdict, the last section lists it.\n\n",
                    m.version);
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
  const auto counts_row = [](const std::string& label, const ReportTally& t) {
    return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} ({}) |\n", label, t.holds, t.not_refuted, t.contradicted,
                       t.not_reproduced, t.direction_only, t.erratum, t.inconclusive, t.own, t.observations, t.self_checks, t.self_checks_failing);
  };
  for (const ReportPaper& p : m.papers) md += counts_row(p.id, p.tally);
  md += counts_row("all", m.all) + "\n";
  if (m.all.unclassified > 0)
    md += fmt::format("{} checks come from JSON written before verdicts existed and fail without a verdict: regenerate them.\n\n", m.all.unclassified);
  md += "### The papers in brief\n\n";
  for (const ReportPaper& p : m.papers) md += p.brief_md;
  namespace text = report_text;
  const auto list = [](const text::List& l, const std::string& extra, const std::string& lines) {
    return fmt::format("### {}\n\n{}{}", l.heading, l.intro, extra) + (std::string(l.intro).empty() && extra.empty() ? "" : "\n\n") +
           (lines.empty() ? std::string(l.none) + "\n" : lines);
  };
  md += list(text::wrong, text::errata_sentence(m.errata_line), lines_of(m.wrong)) + "\n";
  md += list(text::not_reproduced, "", lines_of(m.not_reproduced)) + "\n";
  std::string holds_md;
  for (const ReportPaper& p : m.papers)
    if (!p.holding.empty()) holds_md += text::holding_intro(p.id, p.holding.size()) + "\n\n" + lines_of(p.holding) + "\n";
  md += list(text::holds, "", holds_md) + (holds_md.empty() ? "\n" : "");
  md += list(text::unsettled, "", lines_of(m.unsettled)) + "\n";
  if (!m.own_questions.empty()) md += list(text::own_questions, "", lines_of(m.own_questions)) + "\n";
  md += "### Where we depart from the paper's setup\n\n" + (m.departures_md.empty() ? std::string("No check records a departure.\n") : m.departures_md) + "\n";
  md += m.at_scale_md;
  md += m.pricing_md;
  for (const ReportPaper& p : m.papers) {
    md += fmt::format("## Paper {}\n\n", p.id) + p.brief_md + p.forest_md;
    for (const ReportAnalysis& a : p.analyses) {
      md += fmt::format("### {}\n\n", a.name) + a.meta_md;
      std::string rows, self_rows, own_rows;
      for (const ReportCheck& c : a.checks) (c.kind == "self-check" ? self_rows : c.kind == "own-question" ? own_rows : rows) += c.table_row_md;
      if (!rows.empty()) md += "| paper | claim | statement | predicted | measured | verdict |\n|---|---|---|---|---|---|\n" + rows + "\n";
      if (!own_rows.empty())
        md += "Our own questions (the paper states no such claim; never counted for or against it):\n\n"
              "| paper | claim | statement | predicted | measured | verdict |\n|---|---|---|---|---|---|\n" + own_rows + "\n";
      if (!self_rows.empty())
        md += "Self-checks of our own construction (not evidence about the paper):\n\n"
              "| paper | claim | statement | predicted | measured | verdict |\n|---|---|---|---|---|---|\n" + self_rows + "\n";
      for (const std::string& file : a.figures)
        if (file.size() > 4 && file.substr(file.size() - 4) == ".png") md += fmt::format("![{}]({}/{})\n\n", file, a.name, file);
      if (!a.figure_error.empty()) md += fmt::format("Figures missing: {}\n\n", a.figure_error);
    }
  }
  if (!m.rederived_md.empty())
    md += "## Verdicts re-derived from stored numbers\n\nThese JSON files were written under earlier rules; the report re-applies the "
          "current ones (app::reverdict) to the bounds, intervals and effects they stored: stored verdict → verdict now.\n\n" +
          m.rederived_md + "\n";
  return md;
}

std::string bench_table(const fs::path& root, int& rows, std::vector<std::string>& offences) {
  // One row per kernel set (issue 50): OpenBLAS's kernels and the CPU, from the run's environment; "?" for a run that
  // did not record them (written before benchmarks did).
  std::string md = "| benchmark | kernels | CPU | check | ours (median s) | peer (median s) | ratio | target | spread | verdict |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n";
  rows = 0;
  // A benchmark rerun under other conditions sits beside it as <name>@<variant>/ (e.g. other OpenBLAS kernels).
  for (const auto& [name, r] : read_results(root, true)) {
    if (auto line = refuse_uncommitted(name, r)) offences.push_back(std::move(*line));
    for (const auto& c : r["checks"]) {
      const json& tol = c.value("tolerance", json());
      const json& detail = c.value("detail", json());
      if (!tol.is_object() || !tol.contains("target") || !detail.is_object() || !detail.contains("ours_s") || !detail.contains("peer_s")) continue;
      const double ours = stats::median(detail["ours_s"].get<std::vector<double>>());
      const double peer = stats::median(detail["peer_s"].get<std::vector<double>>());
      const json& env = r.value("environment", json::object());
      const auto recorded = [&](const char* key) {
        return env.is_object() && env.value(key, json()).is_string() && !env[key].get<std::string>().empty() ? env[key].get<std::string>() : std::string("?");
      };
      md += fmt::format("| {} | {} | {} | {} | {:.4g} | {:.4g} | {:.3g}× | {:g}× | {:.1f}% | {} |\n", name, recorded("openblas_core"),
                        recorded("cpu_model"), c.value("id", "?"), ours, peer, peer / ours,
                        tol["target"].get<double>(), 100 * tol.value("relative_spread", 0.0), verdict_cell(c));
      ++rows;
    }
  }
  return md;
}

}  // namespace sparseact::app
