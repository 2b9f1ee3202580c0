// sparseact_report FIGURES_DIR — writes FIGURES_DIR/REPORT.md and FIGURES_DIR/report/index.html from every
// FIGURES_DIR/*/<name>.json (and FIGURES_DIR/at-scale/<name>[@variant]/<name>.json), every verdict re-derived under the
// current rules (app::reverdict, DESIGN.md's verdicts): the counts per paper, each claim read from the run closest to
// the paper's setup; then four lists (what the papers get wrong; what did not reproduce in our setups, with the
// departure; what holds; what this scale cannot settle, with the job that would); our own questions; the departures;
// the at-scale table and the prices; one row per check and the figures, by paper; and the verdicts that re-deriving
// changed. Both files are printed from one model (app/report.hpp). A report the lint refuses is not written (exit 1).
// sparseact_report --bench BENCH_DIR — prints one table of every speed check in BENCH_DIR/*/<name>.json
// (benchmark, ours, peer, ratio, target, spread, verdict; the bench command's summary) and writes it to
// BENCH_DIR/BENCH.md; a build of a committed tree refuses (exit 1) results written by a build of an uncommitted one.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <sparseact/app/report.hpp>
#include <sparseact/core/result.hpp>

namespace fs = std::filesystem;

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
  if (bench) {
    int rows = 0;
    std::vector<std::string> offences;
    const std::string md = sparseact::app::bench_table(root, rows, offences);
    if (!offences.empty()) {  // results come from a build of a committed tree (docs/DESIGN.md)
      for (const std::string& line : offences) std::fprintf(stderr, "sparseact_report: %s\n", line.c_str());
      std::fprintf(stderr, "sparseact_report: %zu benchmark results from uncommitted trees; BENCH.md not written\n", offences.size());
      return 1;
    }
    std::fputs(md.c_str(), stdout);
    sparseact::write_file_atomic(root / "BENCH.md", "# sparseact benchmarks\n\nRatio = median peer time / median ours; spread = the larger "
                                                     "relative interquartile range of the two sets of repeats.\n\n" + md);
    std::printf("sparseact_report: %d speed checks; wrote %s\n", rows, (root / "BENCH.md").c_str());
    return 0;
  }

  std::vector<std::string> offences;  // the lint (issue 47, app/lint.hpp): a report that would count what is not evidence
  const sparseact::app::ReportModel model = sparseact::app::build_report(root, offences);
  if (!offences.empty()) {
    for (const std::string& line : offences) std::fprintf(stderr, "sparseact_report: lint: %s\n", line.c_str());
    std::fprintf(stderr, "sparseact_report: %zu lint offences (docs/DESIGN.md, what a report may count); no report written\n", offences.size());
    return 1;
  }
  sparseact::write_file_atomic(root / "REPORT.md", sparseact::app::report_markdown(model));
  fs::create_directories(root / "report");
  sparseact::write_file_atomic(root / "report" / "index.html", sparseact::app::report_html(model));
  const auto& all = model.all;
  std::printf("sparseact_report: %d claims hold, %d not refuted, %d contradicted, %d not reproduced, %d direction only, %d errata, "
              "%d inconclusive; %d own questions, %d observations, %d self-checks (%d failing); wrote %s\n",
              all.holds, all.not_refuted, all.contradicted, all.not_reproduced, all.direction_only, all.erratum, all.inconclusive, all.own,
              all.observations, all.self_checks, all.self_checks_failing, (root / "REPORT.md").c_str());
  std::printf("sparseact_report: wrote %s\n", (root / "report" / "index.html").c_str());
  return 0;
}
