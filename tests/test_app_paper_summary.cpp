// The report's paragraph per paper and ERRATA.md's entries per paper (app/paper_summary), on hand cases.
#include <catch2/catch.hpp>

#include <sparseact/app/paper_summary.hpp>

using namespace sparseact::app;
using Catch::Matchers::Contains;

TEST_CASE("paper_paragraph: counts by setup, a section's verdicts side by side, runs at several setups, what is not counted",
          "[app][report]") {
  const std::vector<SummaryClaim> claims{
      {"comet_train", "smaller_matches_standard", "§5.2.1, Figure 4", "holds", false, ""},
      {"comet_train", "comet_beats_standard_large", "§5.2.1, Figure 4", "not reproduced", false, "not reproduced at width 500; inconclusive at default run"},
      {"comet_utilization", "dead_count_forced_by_protocol", "§5.1.2", "erratum", true, ""},
  };
  const std::string p = paper_paragraph("002", claims, {2, 0, 5, 1}, {"comet_train", "comet_utilization"});
  CHECK_THAT(p, Contains("**Paper 002** (comet_train, comet_utilization). 3 claims: 1 tested at the paper's own setup (1 erratum); "
                         "2 only in a run that departs from it (1 holds, 1 not reproduced)."));
  CHECK_THAT(p, Contains("§5.2.1, Figure 4: holds `smaller_matches_standard`†; not reproduced `comet_beats_standard_large`†. "
                         "§5.1.2: erratum `dead_count_forced_by_protocol`."));
  CHECK_THAT(p, Contains("Run at several setups: `comet_beats_standard_large` not reproduced at width 500; inconclusive at default run."));
  CHECK_THAT(p, Contains("2 own questions, 0 observations, 5 self-checks (1 failing)."));
  CHECK(p.substr(p.size() - 2) == "\n\n");
  CHECK_THAT(p, !Contains("Trends toward"));
  const std::string none = paper_paragraph("004", {}, {0, 1, 0, 0}, {"parrots_length2"});
  CHECK_THAT(none, Contains("0 claims: 0 tested at the paper's own setup (none); 0 only in a run that departs from it (none)."));
  CHECK_THAT(none, Contains("1 observation,"));
}

TEST_CASE("paper_paragraph: errata in the plural, and the trends toward the paper's setting", "[app][report]") {
  const std::vector<SummaryClaim> claims{
      {"momlp_regression", "momlp_beats_baseline_ackley2", "§6.1, Table 4", "not reproduced", false, "",
       "per doubling of w 0.1 [0.073, 0.13]: toward the paper's effect"},
      {"momlp_trees", "eq21_depth_term", "Theorem 5.3", "erratum", true, ""},
      {"momlp_trees", "step_28_29", "Theorem 4.2", "erratum", true, ""},
  };
  const std::string p = paper_paragraph("003", claims, {}, {"momlp_regression", "momlp_trees"});
  CHECK_THAT(p, Contains("2 tested at the paper's own setup (2 errata)"));
  CHECK_THAT(p, Contains(" Trends toward the paper's setting: `momlp_beats_baseline_ackley2` per doubling of w 0.1 [0.073, 0.13]: "
                         "toward the paper's effect."));
}

TEST_CASE("errata_sections: top-level entries per paper section and GitHub's anchor", "[app][report]") {
  const std::string md = "# Errata\n\n- not a paper's entry\n\n## 000 (LSH / DSM)\n\n### Listed with the papers' texts\n\n- one\n- two\n"
                         "  continued, not an entry\n  - nested, not an entry\n\n## 002 (COMET)\n\n### Found while implementing\n\n- three\n\n"
                         "## Notes\n\n- not counted\n";
  const auto s = errata_sections(md);
  REQUIRE(s.size() == 2);
  CHECK(s.at("000").entries == 2);
  CHECK(s.at("000").anchor == "000-lsh--dsm");
  CHECK(s.at("002").entries == 1);
  CHECK(s.at("002").anchor == "002-comet");
  CHECK(errata_sections("").empty());
}
