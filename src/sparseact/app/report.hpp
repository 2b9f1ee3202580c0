#pragma once
// The verification report as one model (issue 49): sparseact_report reads every FIGURES/*/<name>.json (and the
// at-scale runs beside them), re-derives every verdict under the current rules (app::reverdict), decides each claim
// from the run closest to the paper's setup, and fills a ReportModel. REPORT.md (report_markdown) and
// figures/report/index.html (report_html, app/report_html.cpp) are both rendered from it, so the page and the
// markdown cannot disagree: the prose (the counts, the four lists, the papers in brief, the at-scale tables) is
// stored once, as markdown, and the page converts it; the checks are stored as fields, one row each.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sparseact::app {

/// The report's counts for one paper (its row of the counts table).
struct ReportTally {
  int holds = 0, not_refuted = 0, contradicted = 0, not_reproduced = 0, direction_only = 0, erratum = 0, inconclusive = 0;
  int unclassified = 0, own = 0, observations = 0, self_checks = 0, self_checks_failing = 0;
};

/// One check as the page shows it. A claim is read from its decisive run (the run closest to the paper's
/// setup); any other kind from the default run.
struct ReportCheck {
  std::string paper, analysis, id, claim, kind, statement, predicted, measured, note, departure;
  std::string verdict;     ///< the decided verdict ("holds", …, "fails" for a self-check)
  std::string verdict_md;  ///< the verdict as REPORT.md prints it (app::verdict_cell)
  std::string run;         ///< "default" or "at-scale/<folder>"
  std::string run_setup;   ///< "default run" or runs.json's setup of the at-scale run
  std::string across;      ///< the claim's runs at other setups on one line, or empty
  std::string json_path;   ///< its JSON, relative to FIGURES ("comet_train/comet_train.json")
  bool at_setup = true;    ///< no recorded departure from the paper's setup, in a run inside its protocol
  nlohmann::json tolerance, power;
  std::string table_row_md;  ///< the default run's row in REPORT.md's table of the analysis
};

/// One analysis's section: its default run's line, its checks, its figures.
struct ReportAnalysis {
  std::string name, meta_md;
  std::vector<ReportCheck> checks;
  std::vector<std::string> figures;  ///< the figure files it wrote (relative to its folder), in order
  std::string figure_error;          ///< why figures are missing, or empty
};

/// A line of one of the lists (what is wrong, what did not reproduce, what holds, what cannot be settled, our own
/// questions), with the fields a filter needs.
struct ReportItem {
  std::string paper, analysis, id, verdict, md;
  std::string kind = "claim";  ///< "own-question" in our own questions' list
};

struct ReportPaper {
  std::string id;
  ReportTally tally;
  std::string brief_md;   ///< its paragraph in "The papers in brief" (app::paper_paragraph)
  std::string forest_md;  ///< the forest plot's image line (figures/report/forest_<paper>.png), or why not drawn
  std::string forest_alt;
  std::string forest_name;  ///< "forest_003", empty when not drawn
  std::vector<ReportAnalysis> analyses;
  std::vector<ReportItem> holding;  ///< "What holds", in its order
};

struct ReportModel {
  std::string version;  ///< the sparseact that wrote the report
  std::vector<ReportPaper> papers;
  ReportTally all;
  std::string errata_line;  ///< ERRATA.md's entries per paper, linked (relative to FIGURES), or empty
  std::vector<ReportItem> wrong, not_reproduced, unsettled, own_questions;
  std::string departures_md, at_scale_md, pricing_md, rederived_md;
};

/// Reads FIGURES and decides every claim. Lint offences (app/lint.hpp, runs.json, trends.json, results from an
/// uncommitted tree) are appended to `offences`; the model is a report only when there are none. Draws the forest
/// plots into FIGURES/report/.
ReportModel build_report(const std::filesystem::path& figures, std::vector<std::string>& offences);

/// REPORT.md.
std::string report_markdown(const ReportModel& model);

/// figures/report/index.html: the same sections and words as REPORT.md, every check one expandable row, filters by
/// paper, kind, verdict, setup and text kept in the URL's fragment, the figures inline. One static page, no network.
std::string report_html(const ReportModel& model);

/// The speed checks of BENCH (BENCH/*/<name>.json) as one markdown table (benchmark, ours, peer, ratio, target,
/// spread, verdict); `rows` is set to their number. Like build_report, a build of a committed tree refuses a result
/// written by a build of an uncommitted one: one line each in `offences`, and the table is not to be written.
std::string bench_table(const std::filesystem::path& bench, int& rows, std::vector<std::string>& offences);

}  // namespace sparseact::app
