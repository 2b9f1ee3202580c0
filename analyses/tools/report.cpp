// sparseact_report FIGURES_DIR — writes FIGURES_DIR/REPORT.md from every FIGURES_DIR/*/<name>.json:
// a summary per paper (claims that hold, are contradicted, are errata, are inconclusive; observations;
// self-checks), what the papers get wrong, what this scale cannot settle and what would, where we
// depart from the papers' setups; then one table row per check (paper, claim, statement, predicted,
// measured, verdict) and the figures under each analysis, grouped by paper (docs/DESIGN.md, the main
// command).
// sparseact_report --bench BENCH_DIR — prints one table of every speed check in BENCH_DIR/*/<name>.json
// (benchmark, ours, peer, ratio, target, spread, verdict; the bench command's summary) and writes it to
// BENCH_DIR/BENCH.md.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sparseact/app/checks.hpp>
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
  out += n80.is_number() ? fmt::format("; {} {} reach 80 % (this run: {})", cell(n80), cell(p.value("unit", json())), cell(p.value("n", json())))
                         : "; no run size up to 10⁶ reaches 80 %";
  return out;
}

/// The verdict cell: an inconclusive claim never reads like a failure.
std::string verdict_cell(const json& check) {
  const std::string v = verdict_of(check);
  if (v == "contradicted" || v == "erratum" || v == "fails") return "**" + v + "**";
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
    const fs::path file = entry.path() / (folder.substr(0, at) + ".json");
    if (!fs::exists(file)) continue;
    std::ifstream in(file);
    json r = json::parse(in, nullptr, false);
    if (r.is_discarded() || !r.contains("checks")) {
      std::fprintf(stderr, "sparseact_report: warning: %s is not a result file; skipped\n", file.c_str());
      continue;
    }
    out[at == std::string::npos ? r.value("analysis", folder) : folder] = r;
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
    const bool unset = was.is_null() || (was.is_string() && was.get<std::string>().empty());  // "": the analysis's own default
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

/// "At larger scale": every claim of FIGURES/at-scale/<name>/<name>.json beside the default run's
/// verdict of the same check (matched by id): the larger run's flags, size, wall time, power and
/// verdict, and what the paper states.
std::string at_scale_section(const fs::path& root, const std::map<std::string, json>& defaults) {
  const fs::path dir = root / "at-scale";
  if (!fs::is_directory(dir)) return {};
  std::string rows;
  for (const auto& [name, r] : read_results(dir, true)) {
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
    if (!in || p.is_discarded() || !p.contains("core_hours")) continue;
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
    rows += fmt::format("| {} | {} | {} | {:.3g} ({:.2f}×) | {:.3g} | {:.3g} h | {:.0f} MiB | {} | {} |\n", name, p.value("items", 0), timed,
                        p.value("seconds_per_cost", 0.0), p.value("rate_spread", 1.0), p.value("core_hours", 0.0),
                        p.value("longest_item_hours", 0.0), p.value("peak_rss_mib", 0.0),
                        p.value("gpu_path", false) ? "`--device cuda` path; GPU-hours not measured" : "CPU only",
                        "`" + p.value("sbatch", "") + "`" + (p.contains("warning") ? " — **" + p.value("warning", "") + "**" : ""));
  }
  return "### What does not fit here: the cluster job and its price\n\nEach row times real items of the paper-scale grid on this "
         "machine (`--price-items`: the cheapest, then up to the median cost, one at a time on serial BLAS) and projects the whole "
         "grid through the sweep's cost model (where a paper-scale item takes hours, a slice of it is timed, e.g. one epoch of "
         "100, and its seconds multiplied: \"× 100\"); the spread of seconds per unit of cost across the timed items shows how far to trust "
         "it. Memory is the timing process's peak, i.e. per rank. GPU-hours are not measured.\n\n| analysis | items | timed "
         "items | seconds per unit of cost (spread) | core-hours | longest item | memory per rank | GPU | sbatch |\n"
         "|---|---|---|---|---|---|---|---|---|\n" + rows + "\n";
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
  std::map<std::string, std::map<std::string, json>> by_paper;  // paper → analysis → result
  const std::map<std::string, json> results = read_results(root);
  const std::string at_scale = at_scale_section(root, results);
  for (auto [name, r] : results) {
    const std::string paper = r.value("paper", "?");  // before the move: `=` evaluates its right side first
    by_paper[paper][name] = std::move(r);
  }

  // The summary per paper and the three lists come first; they are built while the per-analysis
  // tables are.
  struct Tally {
    int holds = 0, contradicted = 0, erratum = 0, inconclusive = 0, unclassified = 0, observations = 0;
    int self_checks = 0, self_checks_failing = 0;
  };
  std::map<std::string, Tally> tally;
  std::string wrong, unsettled, departures, body;
  for (const auto& [paper, analyses] : by_paper) {
    Tally& t = tally[paper];
    body += fmt::format("## Paper {}\n\n", paper);
    for (const auto& [name, r] : analyses) {
      body += fmt::format("### {}\n\n", name);
      body += fmt::format("seed {}, device {}, {:.1f} s, version {}\n\n", r.value("seed", 0), r.value("device", "?"),
                          r.value("elapsed_s", 0.0), r.value("version", "?"));
      std::string rows, self_rows;
      for (const auto& c : r["checks"]) {
        const std::string kind = kind_of(c), v = verdict_of(c);
        const std::string row = fmt::format("| {} | {} | {} | {} | {} | {} |\n", paper, cell(c.value("claim", json())),
                                            cell(c.value("statement", json())), cell(c.value("predicted", json())),
                                            cell(c.value("measured", json())), verdict_cell(c));
        if (kind == "self-check") {
          ++t.self_checks;
          t.self_checks_failing += v != "holds";
          self_rows += row;
          continue;
        }
        rows += row;
        if (kind == "observation") ++t.observations;
        else if (v == "holds") ++t.holds;
        else if (v == "contradicted") ++t.contradicted;
        else if (v == "erratum") ++t.erratum;
        else if (v == "inconclusive") ++t.inconclusive;
        else ++t.unclassified;
        const std::string note = c.value("note", "");
        const bool departs = note.find("depart") != std::string::npos || note.find("Depart") != std::string::npos;
        if (kind == "claim" && (v == "contradicted" || v == "erratum"))
          wrong += fmt::format("- {} ({}): {} — **{}**{}{}\n", link(name, c), cell(c.value("claim", json())),
                               cell(c.value("measured", json())), v,
                               departs ? " at a setup that departs from the paper's (see the check's note and the departures below)" : "",
                               note.empty() ? "" : ". " + shortened(cell(c["note"])));
        if (kind == "claim" && v == "inconclusive") {
          const std::string line = fmt::format("- {} ({})", link(name, c), cell(c.value("claim", json())));
          const json& p = c.value("power", json());
          std::string cost;
          if (p.is_object() && p.value("n_for_80", json()).is_number() && p.value("n", json()).is_number() && p["n"].get<double>() > 0) {
            // The analysis's time scales with the run size it repeats (seeds, nets): an estimate, not a promise.
            const double hours = r.value("elapsed_s", 0.0) * p["n_for_80"].get<double>() / p["n"].get<double>() / 3600;
            cost = fmt::format("; about {:.2g} h on this 2-core machine, {:.2g} h on 32 nodes under mpirun (the runs are independent)",
                               hours, hours / 32);
          }
          unsettled += line + ": " + power_text(c) + cost + "\n";
        }
        if (departs) departures += fmt::format("- {}: {}\n", link(name, c), cell(c["note"]));
      }
      if (!rows.empty()) body += "| paper | claim | statement | predicted | measured | verdict |\n|---|---|---|---|---|---|\n" + rows + "\n";
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

  std::string md = "# sparseact verification report\n\n";
  md += fmt::format("Generated by `sparseact_report` from the analyses' JSON (sparseact {}). Each row compares what the run "
                    "measured with what the paper states; see each analysis's JSON for the tolerance, its derivation and, "
                    "for a statistical claim, its power.\n\n",
                    sparseact::version());
  md += "A claim **holds**, is **contradicted** (the data exclude it), is an **erratum** (a deterministic statement false as "
        "printed; see ERRATA.md) or is *inconclusive* (this run is too small to tell: its power and the run size that would "
        "settle it are given). Observations are what a paper reports seeing: the paper's value beside ours, no verdict. "
        "Self-checks test our own construction and are never evidence about a paper.\n\n";
  md += "| paper | holds | contradicted | errata | inconclusive | observations | self-checks (failing) |\n|---|---|---|---|---|---|---|\n";
  Tally all;
  for (const auto& [paper, t] : tally) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} ({}) |\n", paper, t.holds, t.contradicted, t.erratum, t.inconclusive,
                      t.observations, t.self_checks, t.self_checks_failing);
    all.holds += t.holds, all.contradicted += t.contradicted, all.erratum += t.erratum, all.inconclusive += t.inconclusive;
    all.observations += t.observations, all.self_checks += t.self_checks, all.self_checks_failing += t.self_checks_failing;
    all.unclassified += t.unclassified;
  }
  md += fmt::format("| all | {} | {} | {} | {} | {} | {} ({}) |\n\n", all.holds, all.contradicted, all.erratum, all.inconclusive,
                    all.observations, all.self_checks, all.self_checks_failing);
  if (all.unclassified > 0)
    md += fmt::format("{} checks come from JSON written before verdicts existed and fail without a verdict: regenerate them.\n\n",
                      all.unclassified);
  md += "### What the papers get wrong\n\n" + (wrong.empty() ? std::string("Nothing at this scale.\n") : wrong) + "\n";
  md += "### What this scale cannot settle, and what would\n\n" +
        (unsettled.empty() ? std::string("Every statistical claim was settled at this scale.\n") : unsettled) + "\n";
  md += "### Where we depart from the paper's setup\n\n" +
        (departures.empty() ? std::string("No departure is stated in a check's note.\n") : departures) + "\n";
  md += at_scale;
  md += pricing_section(root);
  md += body;
  sparseact::write_file_atomic(root / "REPORT.md", md);
  std::printf("sparseact_report: %d claims hold, %d contradicted, %d errata, %d inconclusive; %d observations, %d self-checks "
              "(%d failing); wrote %s\n",
              all.holds, all.contradicted, all.erratum, all.inconclusive, all.observations, all.self_checks,
              all.self_checks_failing, (root / "REPORT.md").c_str());
  return 0;
}
