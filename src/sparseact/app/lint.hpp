#pragma once
// The report's lint (issue 47): what may never count as evidence about a paper, found by rule in a
// result's JSON, so that sparseact_report refuses to write a report that would count it. One line per
// offence, "<where> › <id>: <rule>: <what was found>"; an empty list means the result may be reported.
//
// The rules (DESIGN.md, the analysis contract, "What a report may count"), on checks of kind claim or
// own-question (self-checks and observations are never evidence, so they may say anything):
//   beyond-paper     the claim field says "beyond the paper": a question the paper does not ask is an
//                    own-question;
//   cannot-fail      the note says the statement is always true, holds by construction or cannot fail:
//                    a self-check;
//   deterministic    a statistical test on numbers with no random draw (tolerance.deterministic_data):
//                    its interval measures curvature, not sampling: a self-check;
//   duplicate        two checks of one result with the same measured and the same predicted values: one
//                    comparison counted twice;
//   stand-in         the note names a stand-in ("stands in", "in place of", "instead of", "X for Y" data)
//                    while `departure` is empty: a departure written only in prose;
//   outside-bounds   the printed estimate lies outside its own interval, or a bound or the estimate
//                    outside the parameter's range (tolerance.range);
//   unused-effect    `predicted` names an effect the verdict did not use ("the effect that counts: 0.1"
//                    where the verdict used 0; "the paper's" for an effect that is not the paper's).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sparseact::app {

/// The offences of one result (its JSON as written, after reverdict), each "<where> › <id>: <rule>: …".
std::vector<std::string> lint_result(const nlohmann::json& result, const std::string& where);

}  // namespace sparseact::app
