#pragma once
// Claims about probabilities read from counts of independent trials (lsh_buckets, parrots_memorize).
//
// wilson_evidence: "P ≥ p₀", θ = P − p₀ > 0, read from the Wilson score interval. The estimate is
// p̂ − p₀ and the two-sided (1 − 2α) Wilson interval's ends, less p₀, are app::direction()'s one-sided
// (1 − α) bounds exactly (Evidence::lower/upper: the interval is asymmetric about p̂), so "holds" means
// the Wilson lower end clears p₀; everything is clipped to θ's range [−p₀, 1 − p₀]. The standard
// error (the interval's half-width over z) sets the power only.
//
// uniform_categories: "every one of K categories has probability 1/K" (a router that splits its
// inputs evenly, paper 004 Lemma D.6), shown as equivalence rather than as a χ² test that fails to
// reject: per category j, θ_j = K·p_j − 1 (the deviation relative to 1/K) with its (1 − 2α) Wilson
// interval, and the claim holds when every interval, over every group, lies inside (−Δ, Δ). That is
// an intersection–union test: each TOST at level α gives the family level α without correction.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/checks.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::app {

inline Evidence wilson_evidence(std::int64_t hits, std::int64_t trials, double p0, double alpha, std::string unit) {
  const stats::Interval w = stats::wilson_interval(hits, trials, 2 * alpha);
  const double p_hat = double(hits) / double(trials);
  Evidence e = evidence_from_interval(p_hat - p0, {w.lo - p0, w.hi - p0}, 2 * alpha, std::size_t(trials), std::move(unit),
                                      "Wilson score interval (p̂ − p₀)");
  e.lower = w.lo - p0, e.upper = w.hi - p0;
  e.range_lo = -p0, e.range_hi = 1 - p0;
  return e;
}

/// "P ≥ p₀ at every point" is an intersection: shown when every point's one-sided (1 − α) Wilson lower end clears
/// p₀ (no multiplicity correction: all must pass), refuted when some point's upper end falls below it. The point
/// that decides it, among `points` (Point::measured the hits, Point::bound the trials): the one with the lowest
/// upper end if any falls below p₀, else the one with the lowest lower end (the first such in order); beside it,
/// per point {point, hits, trials, wilson90: the two-sided (1 − 2α) interval}. Needs a point.
struct DecidingPoint {
  std::size_t index = 0;
  json per_point;
};
inline DecidingPoint deciding_binomial_point(const std::vector<Point>& points, double p0, double alpha) {
  if (points.empty()) throw std::invalid_argument("deciding_binomial_point: no points");
  DecidingPoint out{0, json::array()};
  stats::Interval deciding{};
  bool refuting = false;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const stats::Interval w = stats::wilson_interval(long(p.measured), long(p.bound), 2 * alpha);
    out.per_point.push_back({{"point", p.label}, {"hits", p.measured}, {"trials", p.bound}, {"wilson90", {w.lo, w.hi}}});
    const bool refutes = w.hi < p0;
    if (i == 0 || (refutes && (!refuting || w.hi < deciding.hi)) || (!refuting && !refutes && w.lo < deciding.lo))
      out.index = i, deciding = w, refuting = refuting || refutes;
  }
  return out;
}

/// One group of counts over K = counts.size() categories (e.g. one K's expert loads).
struct CategoryCounts {
  std::string label;
  std::vector<std::int64_t> counts;
};

/// Uniformity over the categories of every group, |K p_j − 1| < Δ for all j, as above. The check is
/// app::equivalent() on the deciding category (one whose interval lies entirely outside (−Δ, Δ), else
/// the one reaching furthest from 0), with the family's verdict and power put in its place:
///   holds: every interval inside (−Δ, Δ);
///   contradicted: some interval entirely outside;
///   inconclusive otherwise (the family's power at uniformity reported, never deciding: DESIGN.md).
/// The deciding category's equivalence verdict is the family's: when none lies outside, it is the one
/// reaching furthest, inside (−Δ, Δ) exactly when every category is.
/// The family's power is the product of the per-category TOST powers at θ = 0 (categories treated as
/// independent; the multinomial's are weakly negatively correlated), and n_for_80 scales every
/// group's trials alike.
inline Check& uniform_categories(Analysis& a, Claim c, const std::vector<CategoryCounts>& groups, double margin,
                                 const std::string& margin_source, double alpha = 0.05) {
  struct Cell {
    std::string label;
    Evidence e;
    double lo, hi;
  };
  std::vector<Cell> cells;
  json per_group = json::array();
  std::size_t trials_total = 0;
  for (const CategoryCounts& g : groups) {
    const auto K = static_cast<double>(g.counts.size());
    std::int64_t n = 0;
    for (std::int64_t k : g.counts) n += k;
    if (g.counts.size() < 2 || n <= 0) throw std::logic_error("check " + c.id + ": a group needs ≥ 2 categories and ≥ 1 trial");
    trials_total += std::size_t(n);
    double worst = 0;
    for (std::size_t j = 0; j < g.counts.size(); ++j) {
      const stats::Interval w = stats::wilson_interval(g.counts[j], n, 2 * alpha);
      const double lo = K * w.lo - 1, hi = K * w.hi - 1;
      const std::string label = fmt::format("{}, category {}", g.label, j);
      cells.push_back({label, evidence_from_interval(0.5 * (lo + hi), {lo, hi}, 2 * alpha, std::size_t(n), "trials", "Wilson score interval (normal)"),
                       lo, hi});
      worst = std::max({worst, hi, -lo});
    }
    per_group.push_back({{"group", g.label}, {"categories", g.counts.size()}, {"trials", n}, {"furthest_interval_end", worst}});
  }
  if (cells.empty()) throw std::logic_error("check " + c.id + ": no groups");
  const auto outside = [&](const Cell& x) { return x.lo >= margin || x.hi <= -margin; };
  const auto reach = [](const Cell& x) { return std::max(x.hi, -x.lo); };
  auto decider = std::find_if(cells.begin(), cells.end(), outside);
  if (decider == cells.end())
    decider = std::max_element(cells.begin(), cells.end(), [&](const Cell& x, const Cell& y) { return reach(x) < reach(y); });
  const bool all_inside = std::all_of(cells.begin(), cells.end(), [&](const Cell& x) { return x.lo > -margin && x.hi < margin; });
  // Power of the family at uniformity with every group's trials scaled by f (se by 1/√f).
  const auto family_power = [&](double f) {
    double p = 1;
    for (const Cell& x : cells) p *= stats::tost_power(margin, x.e.std_error / std::sqrt(f), x.e.df, 0.0, alpha);
    return p;
  };
  const double power = family_power(1);
  const std::size_t n80 = stats::smallest_n_for_power(
      [&](std::size_t n) { return family_power(double(n) / double(trials_total)); }, 1, 0.8, trials_total * 1000);
  if (c.detail.is_null()) c.detail = json::object();
  if (c.detail.is_object()) c.detail["groups"] = per_group, c.detail["deciding"] = decider->label;
  const std::string deciding = decider->label;
  Check& out = equivalent(a, std::move(c), decider->e, margin, margin_source, alpha);
  out.measured = fmt::format("{} categories; the deciding one ({}): K·p̂ − 1 = {:.4g}, {:.0f}% interval [{:.4g}, {:.4g}]; {}; family power "
                             "{:.2f} at uniformity",
                             cells.size(), deciding, decider->e.estimate, 100 * (1 - 2 * alpha), decider->lo, decider->hi,
                             all_inside ? "every interval inside (−Δ, Δ)" : "not every interval inside (−Δ, Δ)", power);
  out.predicted = fmt::format("|K p_j − 1| < Δ = {:g} for every category", margin);
  out.power["power"] = power;
  out.power["n"] = trials_total;
  out.power["n_for_80"] = n80 == 0 ? json(nullptr) : json(n80);
  out.power["unit"] = "trials (summed over the groups)";
  out.power["effect_source"] = "uniformity (θ = 0 in every category), margin " + margin_source;
  out.power["rule"] = "every group's trials scaled by n′/n; family power = product of the categories' TOST powers";
  if (out.tolerance.is_object())
    out.tolerance["rule"] = "intersection–union: holds when every category's (1 − 2α) interval lies inside (−Δ, Δ); contradicted when one "
                            "lies entirely outside; inconclusive otherwise (power reported, never deciding)";
  return out;
}

}  // namespace sparseact::app
