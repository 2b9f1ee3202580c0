#pragma once
// Checks: one comparison of what this run measured with what a paper states (docs/DESIGN.md, the
// analysis contract). Each helper derives `predicted`, `verdict`, `holds` and `tolerance` from the
// same comparison, prefixes the claim with the analysis's paper id ("Theorem 5" → "paper 001 Theorem
// 5"), and keeps `measured` readable at a glance; per-point data go into `detail`.
//
//   app::at_most(a, {.id = "thm5_ratio", .claim = "Theorem 5",
//                    .statement = "λ_max/λ_min⁺ ≤ ((1+√c)/(1−√c))² + Tracy–Widom allowance"},
//                ratio, bound);
//   app::for_all(a, {...}, app::Relation::at_most, points, "K values");
//       // measured "8 of 8 K values; worst margin 1.8e-05", detail: every point
//
// Verdicts (DESIGN.md, the analysis contract; issue 38). A check's `kind` is
//   claim          the paper asserts it;
//   own-question   a question of ours that the paper does not state (no such row, no such number):
//                  decided by the same rules, reported apart, never counted for or against a paper;
//   observation    the paper reports seeing it: no verdict, the paper's value beside ours;
//   self-check     an invariant of our own construction, or a check that cannot fail (identities,
//                  bounds with orders of slack, counts that hold by construction, a comparison of a
//                  number with itself, TOST on deterministic numbers, a synthetic model standing in
//                  for a trained one): shown apart, never evidence about a paper.
// A claim's (or own question's) verdict comes from one comparison of its interval with the effect
// that counts, in one pass:
//   holds           the interval supports the claim and is consistent with the paper's effect;
//   not refuted     a check that can refute the claim but never establish it (Claim::can_only_refute:
//                   one model family against a bound over all models) found no counterexample;
//   direction only  the paper states an effect: the interval lies above 0 but wholly below the
//                   paper's effect (its lower end where the paper prints a spread, Effect::spread);
//   contradicted    the interval excludes the effect that counts (a direction's upper bound below it;
//                   an equivalence interval entirely outside the margin; a deterministic comparison
//                   that fails), at the paper's own setup;
//   not reproduced  the same exclusion in a run whose setup departs from the paper's
//                   (Claim::departure, a field of its own): evidence about our miniature, not an error
//                   of the paper;
//   inconclusive    anything else that does not hold, with its power at the effect that counts and
//                   the run size that reaches 80 %; power never decides a verdict (no post-hoc power);
//   erratum         a deterministic statement false as printed, explained in ERRATA.md.
// The effect that counts is the paper's (Effect::papers) or fixed before the data (Effect::prefixed:
// a rule in DESIGN.md or a committed pre-registration). A smallest effect of interest chosen any other
// way sets the power and nothing else: only the interval against 0 can then contradict.
// The comparison helpers (at_most, for_all, close_to, ...) are for deterministic quantities and
// for statistics whose allowance is already in the bound; a statistical claim uses direction(),
// equivalent() or rate(), which fit the claim's form and report power.
//
// Speed checks (benchmarks) hold only when the ratio of median times reaches the target with the
// repeats' spread taken against it; a spread too large to decide makes them "inconclusive".
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <sparseact/app/analysis.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::app {

enum class Kind {
  claim,        ///< the paper asserts it
  observation,  ///< the paper reports seeing it: no verdict, the paper's value beside ours
  self_check,   ///< an invariant of our own construction: shown apart, never evidence about a paper
  own_question, ///< our question, not the paper's claim: same rules, reported apart, never counted for a paper
};
const char* to_string(Kind kind);

/// What the paper claims, in words; a helper adds the comparison.
struct Claim {
  std::string id;         ///< short stable identifier, e.g. "thm5_ratio"
  std::string claim;      ///< the paper's numbering, e.g. "Theorem 5"
  std::string statement;  ///< the inequality or equality in words and symbols
  std::string note = {};  ///< setting, caveats, departures from the paper's setup, what else the run saw
  json detail = nullptr;  ///< per-point data
  Kind kind = Kind::claim;
  /// For a deterministic statement the paper prints wrongly: the ERRATA.md entry ("ERRATA 003-4")
  /// that explains why it fails. A failing comparison is then the verdict `erratum`, not
  /// `contradicted`; it still holds where the statement is true.
  std::string erratum = {};
  /// How this run's setup departs from the paper's model, data or scale ("Fashion-MNIST for
  /// CIFAR-10; width 32, not 1000"); empty at the paper's own setup. An exclusion then reads
  /// `not reproduced`, never `contradicted`.
  std::string departure = {};
  /// The check can refute the claim but never establish it (one model family against a lower bound
  /// over all models): passing reads `not refuted`, not `holds`.
  bool can_only_refute = false;
  /// The numbers a statistical helper (direction, equivalent, rate) tests come from a computation with
  /// no random draw (a seedless construction, a deterministic net): their "standard error" measures
  /// curvature, not sampling, so the test says nothing about the paper. Recorded as
  /// tolerance.deterministic_data; such a check must be a self-check (the report's lint refuses a
  /// claim or own question that carries it).
  bool deterministic_data = false;
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

// --- Statistical claims --------------------------------------------------------------------------

/// The estimate of an effect θ in the claim's favour (the claim says θ > 0, or θ ≈ 0 for an
/// equality), its standard error and degrees of freedom (∞: normal), and the run size it came from.
/// n_for_80 rescales it to another size n′ as se·√(n/n′), df·n′/n (runs that add seeds or nets
/// of the same kind).
struct Evidence {
  double estimate = 0.0;
  double std_error = 0.0;
  double df = 0.0;
  std::size_t n = 0;   ///< the run size, in `unit`s
  std::string unit;    ///< "seeds per arm", "nets", "paired runs"
  std::string method;  ///< "Welch t", "paired t", "bootstrap over nets (normal)", ...
  /// The parameter's range (a difference of proportions lies in [−1, 1]): printed and stored bounds
  /// are clipped to it, so no bound lies outside what the parameter can take.
  double range_lo = -std::numeric_limits<double>::infinity();
  double range_hi = std::numeric_limits<double>::infinity();
  /// Explicit one-sided (1 − α) bounds where the interval is not estimate ± q·se (a Wilson interval
  /// about p̂ − p₀ is asymmetric); NaN: estimate ± q·se. direction() uses them as they are (clipped to
  /// the range), so the printed estimate p̂ − p₀ always lies inside its own bounds.
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
};
/// From a t-test of mean(x) − mean(y); `n` is the size that scales (seeds per arm, pairs).
Evidence evidence(const stats::TTest& t, std::size_t n, std::string unit, std::string method);
/// From a percentile-bootstrap (1 − α) interval of a statistic: se = width / (2 z_{1−α/2}), df = ∞.
Evidence evidence_from_interval(double estimate, stats::Interval interval, double alpha, std::size_t n, std::string unit,
                                std::string method);

/// The effect that counts: the paper's own (cited), a threshold fixed before the data (a DESIGN.md
/// rule or a committed pre-registration), or a smallest effect of interest that sets power only.
struct Effect {
  double value = 0.0;  ///< > 0, in the estimate's units
  std::string source;  ///< "paper 002 Table 2: +1.9 points", "smallest effect of interest: 1 point"
  bool papers = false;
  /// The paper's own standard error of `value` where it prints a spread (same units), else 0. The
  /// size test then uses the lower end of the paper's one-sided (1 − α) interval, value − z·spread
  /// (at least 0), not the point value.
  double spread = 0.0;
  /// Fixed before the data (DESIGN.md rule or pre-registration): the interval may exclude it.
  bool prefixed = false;
};

/// The smallest effect the claim allows, which the interval must exclude to contradict it: the
/// paper's (value − z_{1−α}·spread, at least 0), a prefixed threshold's value, else 0.
double effect_that_counts(const Effect& effect, double alpha = 0.05);

/// "A beats B": θ > 0. One-sided (1 − α) bounds [lo, ∞) and (−∞, hi], E = effect_that_counts, in one pass:
///   lo > 0: holds, or `direction only` when the paper states the effect and hi < E;
///   lo ≤ 0: contradicted when hi < E (E = 0 unless the effect is the paper's or prefixed),
///           inconclusive otherwise, with the power at effect.value.
Check& direction(Analysis& a, Claim c, const Evidence& e, const Effect& effect, double alpha = 0.05);

/// "A and B are the same": −Δ < θ < Δ by TOST at level α, Δ from the paper's spread or stated:
///   holds when the (1 − 2α) interval lies inside (−Δ, Δ); contradicted when it lies entirely
///   outside; inconclusive otherwise (power at θ = 0 reported, never deciding).
///
/// The margin must be fixed before the data (DESIGN.md, margins): `margin_source` begins with
/// "paper " (the paper's own number, cited), "DESIGN.md" (a rule written there) or "pre-registration"
/// (committed before the run). Any other margin (stated by us, derived from this run's estimates)
/// cannot decide: the verdict is `inconclusive`, and tolerance.margin_fixed says so.
Check& equivalent(Analysis& a, Claim c, const Evidence& e, double margin, const std::string& margin_source,
                  double alpha = 0.05);
/// Whether an equivalence or non-inferiority margin's source fixes it before the data (above).
bool margin_fixed_before_data(const std::string& margin_source);

/// A direction's `predicted`, naming the effect the verdict used (issue 47): the paper's value (and its
/// spread's lower end), a prefixed threshold ("the effect that counts"), or a smallest effect of
/// interest, which "sets power only".
std::string direction_predicted(double value, double counts, bool papers, bool prefixed, double spread);
/// The power clause of a direction's `measured`: "power 0.31 at the paper's θ = 0.8", "… at the
/// effect that counts θ = 0.1", "… at the smallest effect of interest θ = 0.1".
std::string direction_power_text(double power, double value, bool papers, bool prefixed);

/// The form of a rate claim, fitted as log y = b + s·log x with the theorem's stated log factors
/// already divided out of y.
enum class RateForm {
  upper,  ///< O(x^p): s ≤ p; one-sided: holds when s's upper bound < p + slack, contradicted when its lower bound > p,
          ///< inconclusive otherwise
  tight,  ///< Θ(x^p): |s − p| < slack by TOST
};
/// A rate claim on a log–log fit (stats::loglog_fit). `slack` > 0 is the exponent allowance that
/// counts (finite-n curvature, constants), stated in the note; `local_slopes` (consecutive points'
/// slopes) go into detail so a reader sees whether they approach p.
Check& rate(Analysis& a, Claim c, const stats::LinearFit& fit, RateForm form, double exponent, double slack,
            const std::string& slack_source, const std::vector<double>& local_slopes, const std::string& unit,
            double alpha = 0.05);

/// An observation the paper reports: the paper's value beside ours, no verdict.
Check& observation(Analysis& a, Claim c, json papers_value, json measured);

/// The exit code of the analysis contract from a result's verdicts: 3 when a claim is contradicted,
/// not reproduced, direction only or an erratum, or a self-check fails; otherwise 4 when a claim is
/// inconclusive; otherwise 0. Own questions and observations never set it.
int verdict_exit_code(const Result& result);

/// Re-derives a stored check's (JSON) verdict and labels under the rules above from the numbers it stored: a
/// direction's one-sided bounds against the effect that counts (tolerance.effect_that_counts; in a
/// JSON written before it existed, the power's effect when its source cites the paper ("paper …"),
/// the exponent slack of a rate, else 0), an equivalence's interval against its margin; then kind,
/// departure and can_only_refute. Deterministic checks keep their comparison. A direction's `predicted`
/// and the power clause of its `measured` are rewritten by direction_predicted/direction_power_text, and
/// an equivalence whose margin was not fixed before the data reads inconclusive. Returns the verdict
/// the check had before; `check` gets the new one (and `holds`).
std::string reverdict(json& check);

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
