#include <sparseact/app/paper_summary.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

#include <fmt/format.h>

namespace sparseact::app {

namespace {
// The verdicts in the order a reader weighs them: what holds, then what goes against the paper, then the undecided.
constexpr const char* kOrder[] = {"holds", "not refuted", "direction only", "erratum", "contradicted", "not reproduced", "inconclusive"};

std::string counts_text(const std::vector<const SummaryClaim*>& claims) {
  std::string out;
  for (const char* v : kOrder) {
    const auto n = std::count_if(claims.begin(), claims.end(), [&](const SummaryClaim* c) { return c->verdict == v; });
    if (n > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, n > 1 && std::string(v) == "erratum" ? "errata" : v);
  }
  return out.empty() ? "none" : out;
}
}  // namespace

std::string paper_paragraph(const std::string& paper, const std::vector<SummaryClaim>& claims, const PaperCounts& counts,
                            const std::vector<std::string>& analyses) {
  std::vector<const SummaryClaim*> at_setup, miniature;
  for (const SummaryClaim& c : claims) (c.at_setup ? at_setup : miniature).push_back(&c);
  std::string analyses_text;
  for (const std::string& a : analyses) analyses_text += (analyses_text.empty() ? "" : ", ") + a;
  std::string out = fmt::format("**Paper {}** ({}). {} claims: {} tested at the paper's own setup ({}); {} only in a run that departs "
                                "from it ({}).",
                                paper, analyses_text, claims.size(), at_setup.size(), counts_text(at_setup), miniature.size(),
                                counts_text(miniature));
  // By the paper's numbering, in order of first appearance: each verdict with its checks, the miniature ones marked.
  std::vector<std::string> numbering;
  for (const SummaryClaim& c : claims)
    if (std::find(numbering.begin(), numbering.end(), c.claim) == numbering.end()) numbering.push_back(c.claim);
  std::string by_claim;
  for (const std::string& n : numbering) {
    std::string parts;
    for (const char* v : kOrder) {
      std::string ids;
      for (const SummaryClaim& c : claims)
        if (c.claim == n && c.verdict == v) ids += fmt::format("{}`{}`{}", ids.empty() ? "" : ", ", c.id, c.at_setup ? "" : "†");
      if (!ids.empty()) parts += fmt::format("{}{} {}", parts.empty() ? "" : "; ", v, ids);
    }
    by_claim += fmt::format("{}{}: {}", by_claim.empty() ? "" : ". ", n, parts);
  }
  if (!by_claim.empty()) out += " By claim († only in miniature): " + by_claim + ".";
  std::string across;
  for (const SummaryClaim& c : claims)
    if (!c.across.empty()) across += fmt::format("{}`{}` {}", across.empty() ? "" : "; ", c.id, c.across);
  if (!across.empty()) out += " Run at several setups: " + across + ".";
  std::string trends;
  for (const SummaryClaim& c : claims)
    if (!c.trend.empty()) trends += fmt::format("{}`{}` {}", trends.empty() ? "" : "; ", c.id, c.trend);
  if (!trends.empty()) out += " Trends toward the paper's setting: " + trends + ".";
  const auto n = [](int count, const char* one, const char* many) { return fmt::format("{} {}", count, count == 1 ? one : many); };
  out += fmt::format(" Not counted for or against the paper: {}, {}, {} ({} failing).\n\n", n(counts.own_questions, "own question", "own questions"),
                     n(counts.observations, "observation", "observations"), n(counts.self_checks, "self-check", "self-checks"),
                     counts.self_checks_failing);
  return out;
}

std::map<std::string, ErrataSection> errata_sections(const std::string& errata_md) {
  std::map<std::string, ErrataSection> out;
  std::istringstream in(errata_md);
  std::string line, paper;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      const std::string title = line.substr(3);
      paper = title.size() >= 3 && std::all_of(title.begin(), title.begin() + 3, [](unsigned char ch) { return std::isdigit(ch); })
                  ? title.substr(0, 3)
                  : std::string();
      if (paper.empty()) continue;
      // GitHub's anchor: lower case; letters, digits, spaces, hyphens and underscores kept; each space a hyphen.
      std::string anchor;
      for (unsigned char ch : title) {
        if (std::isalnum(ch) || ch == '-' || ch == '_') anchor += char(std::tolower(ch));
        else if (ch == ' ') anchor += '-';
        else if (ch >= 0x80) anchor += char(ch);  // UTF-8 letters stay
      }
      out[paper].anchor = anchor;
    } else if (!paper.empty() && line.rfind("- ", 0) == 0) {
      ++out[paper].entries;
    }
  }
  return out;
}

}  // namespace sparseact::app
