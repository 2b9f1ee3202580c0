#pragma once
// The lists' headings and introductions, which REPORT.md (app/report.cpp) and the page (app/report_html.cpp) both
// print: one copy, so the two say the same words.
#include <cstddef>
#include <string>

#include <fmt/format.h>

namespace sparseact::app::report_text {

struct List {
  const char* heading;
  const char* intro;  ///< empty: none
  const char* none;   ///< what the list says when it is empty
};

inline constexpr List wrong{"1. What the papers get wrong", "Errata, and claims contradicted at the paper's own setup.", "Nothing at this scale."};
inline constexpr List not_reproduced{"2. What did not reproduce in our setups", "Each with the way its run departs from the paper's setup.", "Nothing."};
inline constexpr List holds{"3. What holds", "", "Nothing."};
inline constexpr List unsettled{
    "4. What this scale cannot settle, and the job that would",
    "Only claims still undecided in the run closest to the paper's setup. The job is the run size n′ = n·(q·se / |θ̂ − threshold|)² at which "
    "this interval, its spread shrinking as √(n/n′), would clear the threshold nearest its estimate; where θ̂ sits at a threshold, more runs "
    "may never settle it.",
    "Every statistical claim was settled."};
inline constexpr List own_questions{"Our own questions", "The papers state none of these; they are never counted for or against a paper.", ""};

/// The sentence after list 1's introduction that links ERRATA.md's entries per paper; empty without ERRATA.md.
inline std::string errata_sentence(const std::string& errata_line) {
  return errata_line.empty() ? std::string() : " ERRATA.md lists, besides the checks below, every slip found while implementing: " + errata_line + ".";
}

/// What holds, per paper: the line before its claims.
inline std::string holding_intro(const std::string& paper, std::size_t claims) {
  return fmt::format("Paper {} ({} claims; closest to the paper's setup first, then the interval furthest inside its threshold, in standard "
                     "errors; exact comparisons after the intervals):",
                     paper, claims);
}

}  // namespace sparseact::app::report_text
