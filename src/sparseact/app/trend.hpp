#pragma once
// A claim's trend toward the paper's setup (issue 48): when a claim was run at several values of one setting
// that departs from the paper (paper 003's expert width w, paper 002's epochs), does its estimate move toward
// the paper's effect as the setting approaches the paper's?
//
// Each run of the claim is one point (x, θ̂). The fit is ordinary least squares of θ̂ on log₂ x
// (stats::linear_fit: the slope is the change in θ̂ per doubling of the setting, its interval Student-t on
// n − 2 degrees of freedom), so the points' scatter, not their own standard errors, sets the spread: the
// runs differ in size and a few of them have 2 degrees of freedom each. The reading is fixed before the data:
//   toward  the slope's two-sided 95 % interval excludes 0 on the side of the paper's effect (seen from the
//           fit's value at the largest x run);
//   away    it excludes 0 on the other side;
//   flat    it includes 0: this sweep resolves no trend.
// With the paper's x, the fit's 95 % prediction interval there says where one run at the paper's setting
// would likely read, if the line held that far (an extrapolation, and said so).
// A trend never changes a verdict: it is printed beside the claim, so a "not reproduced" in miniature says
// whether its miniature points toward the paper or away from it.
#include <optional>
#include <string>
#include <vector>

namespace sparseact::app {

struct TrendPoint {
  double x = 0;         ///< the setting (w = 64), > 0
  double estimate = 0;  ///< θ̂ of the claim at that setting
};

enum class TrendReading { toward, away, flat };

struct Trend {
  std::string axis;           ///< the setting's symbol ("w", "epochs")
  std::vector<TrendPoint> points;
  double slope = 0, slope_lo = 0, slope_hi = 0;  ///< θ̂ per doubling of x, and its two-sided 95 % interval
  double target = 0;          ///< the paper's effect, or 0 for a direction the paper gives no size
  bool papers_effect = false; ///< target is the paper's effect
  double x_paper = 0;         ///< the paper's setting; 0 when not given
  double at_paper = 0, at_paper_lo = 0, at_paper_hi = 0;  ///< the fit's prediction there and its 95 % interval
  TrendReading reading = TrendReading::flat;
};

/// The trend of θ̂ on log₂ x; nothing with fewer than 3 distinct x (a line through 2 settings has no spread).
/// target: the paper's effect (papers_effect true) or the claim's threshold 0. x_paper ≤ 0: no extrapolation.
/// Throws std::invalid_argument for an x ≤ 0 or a non-finite point.
std::optional<Trend> fit_trend(std::vector<TrendPoint> points, const std::string& axis, double target, bool papers_effect,
                               double x_paper = 0);

/// "trend in w: θ̂ 0.186 (16), 0.0365 (32), …; per doubling of w 0.076 [0.021, 0.13]: toward the paper's 0.809;
/// one run at w = 1000 would read about 0.61 [0.21, 1.0] if the line held that far".
std::string trend_text(const Trend& trend);

/// "per doubling of w 0.1 [0.073, 0.13]: toward the paper's effect" (the papers in brief).
std::string trend_brief(const Trend& trend);

/// "toward the paper's effect", "away from the paper's effect", "no trend resolved" (or "the claim" for
/// a target that is not the paper's).
std::string reading_text(const Trend& trend);

}  // namespace sparseact::app
