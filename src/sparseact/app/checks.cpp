#include <sparseact/app/checks.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/stats.hpp>

namespace sparseact::app {
namespace {

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "∞" : "−∞";
  return fmt::format("{:.6g}", v);
}

/// The Check every helper starts from: the claim's words, prefixed with the paper.
Check base(const Analysis& a, Claim c) {
  Check out;
  out.id = std::move(c.id);
  out.claim = "paper " + a.info().paper + " " + c.claim;
  out.statement = std::move(c.statement);
  out.note = std::move(c.note);
  out.detail = std::move(c.detail);
  return out;
}

bool satisfies(double measured, Relation rel, double bound, double tolerance) {
  switch (rel) {
    case Relation::less: return measured < bound + tolerance;
    case Relation::at_most: return measured <= bound + tolerance;
    case Relation::greater: return measured > bound - tolerance;
    case Relation::at_least: return measured >= bound - tolerance;
  }
  return false;
}

/// How far the measurement is on the claim's side of the bound (negative: on the wrong side).
double margin(double measured, Relation rel, double bound) {
  return (rel == Relation::less || rel == Relation::at_most) ? bound - measured : measured - bound;
}

json tolerance_json(double tolerance) {
  return tolerance == 0.0 ? json{{"abs", 0.0}} : json{{"abs", tolerance}};
}

void require_finite_tolerance(double tolerance) {
  if (!(tolerance >= 0.0)) throw std::logic_error("check tolerance must be ≥ 0");
}

}  // namespace

const char* to_symbol(Relation rel) {
  switch (rel) {
    case Relation::less: return "<";
    case Relation::at_most: return "≤";
    case Relation::greater: return ">";
    case Relation::at_least: return "≥";
  }
  return "?";
}

Check& compare(Analysis& a, Claim c, double measured, Relation rel, double bound, double tolerance) {
  require_finite_tolerance(tolerance);
  Check out = base(a, std::move(c));
  out.predicted = fmt::format("{} {}", to_symbol(rel), number(bound));
  out.measured = measured;
  // NaN never satisfies a comparison: a broken measurement fails the check.
  out.holds = satisfies(measured, rel, bound, tolerance);
  out.tolerance = tolerance_json(tolerance);
  return a.result.add_check(std::move(out));
}

Check& at_most(Analysis& a, Claim c, double measured, double bound, double tolerance) {
  return compare(a, std::move(c), measured, Relation::at_most, bound, tolerance);
}
Check& at_least(Analysis& a, Claim c, double measured, double bound, double tolerance) {
  return compare(a, std::move(c), measured, Relation::at_least, bound, tolerance);
}
Check& less_than(Analysis& a, Claim c, double measured, double bound, double tolerance) {
  return compare(a, std::move(c), measured, Relation::less, bound, tolerance);
}
Check& greater_than(Analysis& a, Claim c, double measured, double bound, double tolerance) {
  return compare(a, std::move(c), measured, Relation::greater, bound, tolerance);
}

Check& close_to(Analysis& a, Claim c, double measured, double predicted, double abs_tol, double rel_tol) {
  require_finite_tolerance(abs_tol);
  require_finite_tolerance(rel_tol);
  Check out = base(a, std::move(c));
  const double allowed = abs_tol + rel_tol * std::abs(predicted);
  out.predicted = predicted;
  out.measured = measured;
  out.holds = std::abs(measured - predicted) <= allowed;
  out.tolerance = {{"abs", abs_tol}, {"rel", rel_tol}, {"allowed_difference", allowed}};
  return a.result.add_check(std::move(out));
}

Check& within(Analysis& a, Claim c, double measured, double lo, double hi) {
  Check out = base(a, std::move(c));
  out.predicted = fmt::format("in [{}, {}]", number(lo), number(hi));
  out.measured = measured;
  out.holds = lo <= measured && measured <= hi;
  out.tolerance = {{"lo", lo}, {"hi", hi}};
  return a.result.add_check(std::move(out));
}

Check& interval_contains(Analysis& a, Claim c, double lo, double hi, double predicted) {
  Check out = base(a, std::move(c));
  out.predicted = predicted;
  out.measured = fmt::format("[{}, {}]", number(lo), number(hi));
  out.holds = lo <= predicted && predicted <= hi;
  out.tolerance = {{"interval", json::array({lo, hi})}};
  return a.result.add_check(std::move(out));
}

Check& equals(Analysis& a, Claim c, long long measured, long long predicted) {
  Check out = base(a, std::move(c));
  out.predicted = predicted;
  out.measured = measured;
  out.holds = measured == predicted;
  out.tolerance = {{"abs", 0}};
  return a.result.add_check(std::move(out));
}

Check& significant(Analysis& a, Claim c, double p_value, double alpha, const std::string& test) {
  Check out = base(a, std::move(c));
  out.predicted = fmt::format("p < {}", number(alpha));
  out.measured = fmt::format("p = {}", number(p_value));
  out.holds = p_value < alpha;
  out.tolerance = {{"alpha", alpha}, {"test", test}, {"p_value", p_value}};
  return a.result.add_check(std::move(out));
}

Check& count(Analysis& a, Claim c, Relation rel, const std::vector<Point>& points, const std::string& unit,
             std::size_t required, double tolerance) {
  require_finite_tolerance(tolerance);
  if (points.empty()) throw std::logic_error("check " + c.id + ": no points to compare");
  const std::size_t n = points.size();
  const bool every = required == static_cast<std::size_t>(-1);
  if (every) required = n;
  std::size_t good = 0;
  double worst = std::numeric_limits<double>::infinity();
  std::string worst_label;
  json per_point = json::array();
  for (const Point& p : points) {
    const bool ok = satisfies(p.measured, rel, p.bound, tolerance);
    const double m = margin(p.measured, rel, p.bound);
    good += ok;
    if (!(m >= worst)) {  // NaN margins count as the worst
      worst = m;
      worst_label = p.label;
    }
    per_point.push_back({{"point", p.label}, {"measured", p.measured}, {"bound", p.bound}, {"holds", ok}});
  }
  Check out = base(a, std::move(c));
  out.predicted = every ? fmt::format("measured {} bound at all {} {}", to_symbol(rel), n, unit)
                        : fmt::format("measured {} bound at ≥ {} of {} {}", to_symbol(rel), required, n, unit);
  out.measured = fmt::format("{} of {} {}; worst margin {} ({})", good, n, unit, number(worst), worst_label);
  out.holds = good >= required;
  out.tolerance = {{"abs", tolerance}, {"required", required}};
  if (out.detail.is_null()) out.detail = json::object();
  if (out.detail.is_object()) out.detail["points"] = per_point;
  return a.result.add_check(std::move(out));
}

Check& for_all(Analysis& a, Claim c, Relation rel, const std::vector<Point>& points, const std::string& unit,
               double tolerance) {
  return count(a, std::move(c), rel, points, unit, static_cast<std::size_t>(-1), tolerance);
}

Check& for_most(Analysis& a, Claim c, Relation rel, const std::vector<Point>& points, const std::string& unit,
                double tolerance) {
  return count(a, std::move(c), rel, points, unit, points.size() / 2 + 1, tolerance);
}

SpeedVerdict speed_verdict(const std::vector<double>& ours_s, const std::vector<double>& peer_s, double target) {
  if (ours_s.empty() || peer_s.empty()) throw std::logic_error("speed_verdict: no timings");
  SpeedVerdict v;
  const double ours = stats::median(ours_s), peer = stats::median(peer_s);
  v.ratio = peer / ours;
  v.spread = std::max(stats::interquartile_range(ours_s) / ours, stats::interquartile_range(peer_s) / peer);
  v.ratio_lo = v.ratio / (1 + v.spread);
  v.ratio_hi = v.ratio * (1 + v.spread);
  // Fewer than three repeats on either side say nothing about the noise: never enough to hold.
  const bool too_few = ours_s.size() < 3 || peer_s.size() < 3;
  v.holds = !too_few && v.ratio >= target && v.ratio_lo >= target;
  v.inconclusive = !v.holds && v.ratio_hi >= target;
  v.verdict = v.holds ? "holds"
              : v.inconclusive ? (too_few ? "inconclusive: too few repeats to judge the noise" : "inconclusive: machine too noisy")
                               : "does not hold";
  return v;
}

Check& speedup_at_least(Analysis& a, Claim c, const std::vector<double>& ours_s, const std::vector<double>& peer_s,
                        double target) {
  const SpeedVerdict v = speed_verdict(ours_s, peer_s, target);
  Check out = base(a, std::move(c));
  out.predicted = fmt::format("≥ {}× (median peer / median ours)", number(target));
  out.measured = v.inconclusive ? json(fmt::format("{}× ({})", number(v.ratio), v.verdict)) : json(v.ratio);
  out.holds = v.holds;
  out.tolerance = {{"target", target},
                   {"relative_spread", v.spread},
                   {"ratio_range", json::array({v.ratio_lo, v.ratio_hi})},
                   {"verdict", v.verdict},
                   {"rule", "holds when median ratio ≥ target and ratio/(1 + spread) ≥ target; spread = larger relative "
                            "interquartile range of the two sets of repeats; inconclusive (not holding) when the target "
                            "lies within the ratio's spread"}};
  out.detail = {{"ours_s", ours_s}, {"peer_s", peer_s}};
  return a.result.add_check(std::move(out));
}

std::string format_value(const json& value) {
  if (value.is_null()) return "—";
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number_unsigned()) return std::to_string(value.get<unsigned long long>());
  if (value.is_number()) return number(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  std::string out;
  if (value.is_array()) {
    for (const auto& item : value) out += (out.empty() ? "" : ", ") + format_value(item);
    return out;
  }
  for (const auto& [key, item] : value.items()) out += (out.empty() ? "" : "; ") + key + ": " + format_value(item);
  return out;
}

}  // namespace sparseact::app
