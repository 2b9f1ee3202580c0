#pragma once
// Checks: one comparison of what this run measured with what a paper states (DESIGN.md, the
// analysis contract). Each helper derives `predicted`, `holds` and `tolerance` from the same
// comparison, prefixes the claim with the analysis's paper id ("Theorem 5" → "paper 001 Theorem
// 5"), and keeps `measured` readable at a glance; per-point data go into `detail`.
//
//   app::at_most(a, {.id = "thm5_ratio", .claim = "Theorem 5",
//                    .statement = "λ_max/λ_min⁺ ≤ ((1+√c)/(1−√c))² + Tracy–Widom allowance"},
//                ratio, bound);
//   app::for_all(a, {...}, app::Relation::at_most, points, "K values");
//       // measured "8 of 8 K values; worst margin 1.8e-05", detail: every point
//
// Speed checks (benchmarks) hold only when the ratio of median times reaches the target with the
// repeats' spread taken against it; a spread too large to decide makes them "inconclusive", and an
// inconclusive check does not hold.
#include <cstddef>
#include <string>
#include <vector>

#include <sparseact/app/analysis.hpp>
#include <sparseact/core/result.hpp>

namespace sparseact::app {

/// What the paper claims, in words; a helper adds the comparison.
struct Claim {
  std::string id;         ///< short stable identifier, e.g. "thm5_ratio"
  std::string claim;      ///< the paper's numbering, e.g. "Theorem 5"
  std::string statement;  ///< the inequality or equality in words and symbols
  std::string note = {};  ///< setting, caveats, what else the run saw
  json detail = nullptr;  ///< per-point data
};

enum class Relation {
  less,      ///< measured <  bound + tolerance
  at_most,   ///< measured ≤ bound + tolerance
  greater,   ///< measured >  bound − tolerance
  at_least,  ///< measured ≥ bound − tolerance
};

/// measured ⋈ bound, allowing `tolerance` (≥ 0) in the claim's favour.
Check& compare(Analysis& a, Claim c, double measured, Relation rel, double bound, double tolerance = 0.0);
Check& at_most(Analysis& a, Claim c, double measured, double bound, double tolerance = 0.0);
Check& at_least(Analysis& a, Claim c, double measured, double bound, double tolerance = 0.0);
Check& less_than(Analysis& a, Claim c, double measured, double bound, double tolerance = 0.0);
Check& greater_than(Analysis& a, Claim c, double measured, double bound, double tolerance = 0.0);

/// |measured − predicted| ≤ abs_tol + rel_tol·|predicted|.
Check& close_to(Analysis& a, Claim c, double measured, double predicted, double abs_tol, double rel_tol = 0.0);
/// lo ≤ measured ≤ hi (the paper's range, or a range derived from it).
Check& within(Analysis& a, Claim c, double measured, double lo, double hi);
/// The paper's value lies in this run's interval [lo, hi] (e.g. a 95% confidence interval).
Check& interval_contains(Analysis& a, Claim c, double lo, double hi, double predicted);
/// An exact count or integer equals the paper's.
Check& equals(Analysis& a, Claim c, long long measured, long long predicted);
/// A one-sided statistical test: holds when its p-value < α. `test` says which ("paired t-test, H₁: ...").
Check& significant(Analysis& a, Claim c, double p_value, double alpha, const std::string& test);

/// One point of a per-point claim ("for every K", "in every layer").
struct Point {
  std::string label;  ///< "K = 64", "layer 3"
  double measured = 0.0;
  double bound = 0.0;
};

/// A per-point claim: holds when at least `required` points satisfy measured ⋈ bound (every point
/// when required is npos). measured reads "7 of 8 <unit>; worst margin −0.02" (margin > 0 is in
/// the claim's favour); detail lists every point.
Check& count(Analysis& a, Claim c, Relation rel, const std::vector<Point>& points, const std::string& unit,
             std::size_t required = static_cast<std::size_t>(-1), double tolerance = 0.0);
/// Every point: count(..., npos).
Check& for_all(Analysis& a, Claim c, Relation rel, const std::vector<Point>& points, const std::string& unit,
               double tolerance = 0.0);
/// A strict majority of the points (more than half).
Check& for_most(Analysis& a, Claim c, Relation rel, const std::vector<Point>& points, const std::string& unit,
                double tolerance = 0.0);

/// The verdict of a speed comparison from repeated timings (seconds) of ours and a peer.
struct SpeedVerdict {
  double ratio = 0.0;            ///< median(peer) / median(ours): > 1 means we are faster
  double spread = 0.0;           ///< the larger relative interquartile range of the two sets of repeats
  double ratio_lo = 0.0, ratio_hi = 0.0;  ///< ratio / (1 + spread), ratio · (1 + spread)
  bool holds = false;            ///< ratio ≥ target and ratio_lo ≥ target, with ≥ 3 repeats on each side
  bool inconclusive = false;     ///< the target lies inside [ratio_lo, ratio_hi): the spread decides
  std::string verdict;           ///< "holds", "does not hold" or "inconclusive: machine too noisy"
};
SpeedVerdict speed_verdict(const std::vector<double>& ours_s, const std::vector<double>& peer_s, double target);
/// A benchmark's speed target: holds only when speed_verdict says so.
Check& speedup_at_least(Analysis& a, Claim c, const std::vector<double>& ours_s, const std::vector<double>& peer_s,
                        double target);

/// A check's value as a person reads it: numbers with 6 significant digits, lists joined by ", ",
/// strings as they are. Used by the console summary and REPORT.md.
std::string format_value(const json& value);

const char* to_symbol(Relation rel);

}  // namespace sparseact::app
