#pragma once
// The report's forest plot per paper (issue 49): one line per statistical claim, θ̂ with its interval divided by
// the threshold that decided it, so that 0 sits at 0 and the effect that counts at 1 on every line, whatever the
// claim's units. A direction is scaled by its effect that counts (the paper's effect, its spread's lower end or a
// prefixed threshold) or, where only the sign decides, by the effect its power is reported at (a smallest effect of
// interest), and its interval is the one-sided 95 % bounds; an equivalence is scaled by its margin Δ, so ±Δ sit at
// ±1. A deterministic comparison (an exact check: a count over points, or a number against a printed bound) shows
// its deciding margin on the same footing: the margin by which the deciding point passes its bound, divided by the
// larger of |bound| and |measured|, a diamond at 0 when exactly at the bound, right of 0 when it passes, left when it
// fails (in [−2, 2]). For a count that needs k of n points the deciding point is the k-th best; for all points, the
// worst. Colour comes from the verdict (Okabe–Ito, safe for colour-blind readers); a claim decided by a larger run than
// the default is marked in its label.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <sparseact/plot/figure.hpp>

namespace sparseact::app {

struct ForestRow {
  std::string label;    ///< "comet_beats_standard_large (at scale)"
  std::string verdict;  ///< the decided verdict
  double estimate = 0, lo = 0, hi = 0;  ///< θ̂ and its interval, in units of the threshold
  double scale = 0;                     ///< the threshold they were divided by, in the claim's units
  bool equivalence = false;             ///< thresholds at ±1 (else at 0 and 1)
  bool exact = false;                   ///< a deterministic comparison: estimate = lo = hi = its relative deciding margin
};

/// The check's row, or nothing for a check with neither an interval and a threshold to scale it by, nor a comparison
/// whose relation and bound its JSON states (`predicted` "≤ 9", or app::count's "measured < bound at …" with
/// detail.points). `label` is printed as given.
std::optional<ForestRow> forest_row(const nlohmann::json& check, std::string label);

/// "#009e73" for holds, … (Okabe–Ito); gray for anything else.
std::string verdict_color(const std::string& verdict);

/// The forest plot of one paper's rows (top to bottom in the given order): each interval a horizontal segment, θ̂ a
/// point, reference lines at 0 and 1 (and −1 when an equivalence is among them), the labels at the left.
plot::Figure forest_figure(const std::string& paper, const std::vector<ForestRow>& rows);

}  // namespace sparseact::app
