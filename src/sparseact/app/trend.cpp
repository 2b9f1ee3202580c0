#include <sparseact/app/trend.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/stats.hpp>

namespace sparseact::app {

std::optional<Trend> fit_trend(std::vector<TrendPoint> points, const std::string& axis, double target, bool papers_effect,
                               double x_paper) {
  std::set<double> distinct;
  for (const TrendPoint& p : points) {
    if (!(p.x > 0 && std::isfinite(p.x) && std::isfinite(p.estimate)))
      throw std::invalid_argument(fmt::format("fit_trend: the point ({}, {}) needs a finite setting > 0 and a finite estimate", p.x, p.estimate));
    distinct.insert(p.x);
  }
  if (distinct.size() < 3) return std::nullopt;
  std::stable_sort(points.begin(), points.end(), [](const TrendPoint& a, const TrendPoint& b) { return a.x < b.x; });
  std::vector<double> lx, y;
  for (const TrendPoint& p : points) lx.push_back(std::log2(p.x)), y.push_back(p.estimate);
  const stats::LinearFit fit = stats::linear_fit(lx, y);
  const stats::Interval slope = fit.slope_interval(0.05);

  Trend t{.axis = axis, .points = points, .slope = fit.slope, .slope_lo = slope.lo, .slope_hi = slope.hi, .target = target,
          .papers_effect = papers_effect, .x_paper = x_paper};
  // Which way is "toward": from where the line stands at the largest setting run, to the target.
  const double gap = target - (fit.intercept + fit.slope * lx.back());
  const bool rising_is_toward = gap > 0;
  if (gap != 0 && (slope.lo > 0 || slope.hi < 0))
    t.reading = (slope.lo > 0) == rising_is_toward ? TrendReading::toward : TrendReading::away;
  if (x_paper > 0) {
    const stats::Interval at = fit.prediction_interval(std::log2(x_paper), 0.05);
    t.at_paper = fit.intercept + fit.slope * std::log2(x_paper), t.at_paper_lo = at.lo, t.at_paper_hi = at.hi;
  }
  return t;
}

std::string reading_text(const Trend& t) {
  const char* what = t.papers_effect ? "the paper's effect" : "the claim";
  switch (t.reading) {
    case TrendReading::toward: return fmt::format("toward {}", what);
    case TrendReading::away: return fmt::format("away from {}", what);
    case TrendReading::flat: break;
  }
  return "no trend resolved";
}

std::string trend_brief(const Trend& t) {
  return fmt::format("per doubling of {} {:.3g} [{:.3g}, {:.3g}]: {}", t.axis, t.slope, t.slope_lo, t.slope_hi, reading_text(t));
}

std::string trend_text(const Trend& t) {
  std::string points;
  for (const TrendPoint& p : t.points) points += fmt::format("{}{:.3g} ({:g})", points.empty() ? "" : ", ", p.estimate, p.x);
  std::string out = fmt::format("trend in {}: θ̂ {}; per doubling of {} {:.3g} [{:.3g}, {:.3g}] (least squares on log₂ {}, 95 %): {}",
                                t.axis, points, t.axis, t.slope, t.slope_lo, t.slope_hi, t.axis, reading_text(t));
  out += t.papers_effect ? fmt::format("; the paper's θ = {:.3g}", t.target) : std::string();
  if (t.x_paper > 0)
    out += fmt::format("; one run at the paper's {} = {:g} would read about {:.3g} [{:.3g}, {:.3g}] if the line held that far", t.axis, t.x_paper,
                       t.at_paper, t.at_paper_lo, t.at_paper_hi);
  return out;
}

}  // namespace sparseact::app
