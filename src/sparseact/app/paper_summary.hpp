#pragma once
// The report's short answer per paper (issue 48): one paragraph, generated from the checks, that says what
// was tested at the paper's own setup and with what result, what only in miniature, which claims were run
// at several setups, the errata, and how many checks are self-checks, own questions or observations (never
// counted for or against the paper). REPORT.md opens with the five paragraphs and each paper's section
// repeats its own, so a researcher can read the verdict on a paper in a minute.
//
// And ERRATA.md's entries per paper, which list 1 counts and links.
#include <map>
#include <string>
#include <vector>

namespace sparseact::app {

/// One claim of a paper as the report decided it: from the run closest to the paper's setup.
struct SummaryClaim {
  std::string analysis, id;
  std::string claim;         ///< the paper's numbering as the check cites it ("§5.2.1, Figure 4")
  std::string verdict;       ///< "holds", "not refuted", "contradicted", "not reproduced", "direction only", "erratum", "inconclusive"
  bool at_setup = true;      ///< the deciding run records no departure from the paper's setup
  std::string across = {};   ///< the claim's runs at other setups on one line ("holds at w = 16, …"), empty for one run
  std::string trend = {};    ///< its trend along a designed sweep toward the paper's setting (app::trend_brief), or empty
};
struct PaperCounts {
  int own_questions = 0, observations = 0, self_checks = 0, self_checks_failing = 0;
};

/// "**Paper 002** (analyses): 14 claims, 5 at the paper's own setup …; then, by the paper's numbering, each
/// verdict with its checks (so a section's halves read side by side: "§5.2.1: holds smaller_matches_standard;
/// not reproduced comet_beats_standard_large"); the claims run at several setups; the trends toward the paper's
/// setting; what is not counted.
/// One paragraph, ending in a blank line.
std::string paper_paragraph(const std::string& paper, const std::vector<SummaryClaim>& claims, const PaperCounts& counts,
                            const std::vector<std::string>& analyses);

/// ERRATA.md's sections "## 000 (…)": per paper, the number of entries (top-level "- " items of the
/// section) and the section's anchor as GitHub renders it ("000-lsh--dsm").
struct ErrataSection {
  int entries = 0;
  std::string anchor;
};
std::map<std::string, ErrataSection> errata_sections(const std::string& errata_md);

}  // namespace sparseact::app
