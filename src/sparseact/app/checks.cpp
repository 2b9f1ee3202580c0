#include <sparseact/app/checks.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::app {
namespace {

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "∞" : "−∞";
  return fmt::format("{:.6g}", v);
}

/// The Check every helper starts from: the claim's words, prefixed with the paper. c.erratum stays
/// in c for settle().
Check base(const Analysis& a, Claim& c) {
  Check out;
  out.id = std::move(c.id);
  out.kind = to_string(c.kind);
  out.claim = "paper " + a.info().paper + " " + c.claim;
  out.statement = std::move(c.statement);
  out.note = std::move(c.note);
  out.departure = c.departure;
  out.detail = std::move(c.detail);
  return out;
}

/// The rules every verdict passes last (DESIGN.md, the analysis contract): a kind's own vocabulary,
/// an exclusion in a departing setup reads `not reproduced`, a pass of a check that can only refute
/// reads `not refuted`; `holds` follows the verdict.
void finish(Check& out, bool can_only_refute) {
  if (out.kind == "observation") out.verdict = "observation";
  // A self-check holds or fails; one whose run is too small to tell (a statistical self-check) stays inconclusive.
  else if (out.kind == "self-check") out.verdict = out.verdict == "holds" || out.verdict == "inconclusive" ? out.verdict : "fails";
  else {
    if (!out.departure.empty() && out.verdict == "contradicted") out.verdict = "not reproduced";
    if (can_only_refute && out.verdict == "holds") out.verdict = "not refuted";
  }
  if (can_only_refute) {
    if (out.tolerance.is_null()) out.tolerance = json::object();
    if (out.tolerance.is_object()) out.tolerance["can_only_refute"] = true;
  }
  out.holds = out.verdict == "holds";
}

/// A deterministic comparison's verdict from its outcome (out.holds), then the check is added.
Check& settle(Analysis& a, Check out, const Claim& c) {
  out.verdict = out.holds ? "holds" : c.erratum.empty() ? "contradicted" : "erratum";
  if (!c.erratum.empty()) {
    if (out.tolerance.is_null()) out.tolerance = json::object();
    if (out.tolerance.is_object()) out.tolerance["erratum"] = c.erratum;
  }
  finish(out, c.can_only_refute);
  return a.result.add_check(std::move(out));
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

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::claim: return "claim";
    case Kind::observation: return "observation";
    case Kind::self_check: return "self-check";
    case Kind::own_question: return "own-question";
  }
  return "claim";
}

int verdict_exit_code(const Result& result) {
  bool inconclusive = false;
  for (const Check& c : result.checks) {
    if (c.kind == "own-question" || c.kind == "observation") continue;
    if (c.verdict == "contradicted" || c.verdict == "not reproduced" || c.verdict == "direction only" || c.verdict == "erratum" ||
        c.verdict == "fails")
      return exit_check_failed;
    if (c.verdict == "inconclusive") inconclusive = true;
  }
  return inconclusive ? exit_inconclusive : exit_ok;
}

Evidence evidence(const stats::TTest& t, std::size_t n, std::string unit, std::string method) {
  return {t.mean_difference, t.std_error, t.df, n, std::move(unit), std::move(method)};
}

Evidence evidence_from_interval(double estimate, stats::Interval interval, double alpha, std::size_t n, std::string unit,
                                std::string method) {
  const double z = stats::normal_quantile(1 - alpha / 2);
  return {estimate, (interval.hi - interval.lo) / (2 * z), std::numeric_limits<double>::infinity(), n, std::move(unit),
          std::move(method)};
}

namespace {

void require_evidence(const Evidence& e, const std::string& id) {
  if (!(e.std_error >= 0) || !(e.df > 0) || e.n == 0 || std::isnan(e.estimate))
    throw std::logic_error("check " + id + ": evidence needs an estimate, se ≥ 0, df > 0 and n ≥ 1");
}

/// The run size n′ that brings `power_at(se′, df′)` to 0.8, scaling se and df with n (Evidence).
json power_json(const Evidence& e, double effect, const std::string& effect_source, double power,
                const std::function<double(double, double)>& power_at) {
  const auto at_n = [&](std::size_t n) {
    const double f = double(n) / double(e.n);
    return power_at(e.std_error / std::sqrt(f), std::isinf(e.df) ? e.df : std::max(1.0, e.df * f));
  };
  const std::size_t n80 = stats::smallest_n_for_power(at_n, 1, 0.8, 1000000);
  return {{"effect", effect},
          {"effect_source", effect_source},
          {"power", power},
          {"n", e.n},
          {"unit", e.unit},
          {"n_for_80", n80 == 0 ? json(nullptr) : json(n80)},
          {"rule", "se and df scaled by n′/n (more " + e.unit + " of the same kind)"}};
}

std::string interval_text(double lo, double hi) { return fmt::format("[{}, {}]", number(lo), number(hi)); }

/// The local slopes as a reader scans them: the last three (where the rate has settled, if it does);
/// every one is in detail.
std::string local_slopes_text(const std::vector<double>& slopes) {
  if (slopes.size() <= 3) return format_value(json(slopes));
  const std::vector<double> last(slopes.end() - 3, slopes.end());
  return fmt::format("…, {} (last 3 of {})", format_value(json(last)), slopes.size());
}

}  // namespace

bool margin_fixed_before_data(const std::string& margin_source) {
  for (const char* prefix : {"paper ", "DESIGN.md", "pre-registration"})
    if (margin_source.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string direction_predicted(double value, double counts, bool papers, bool prefixed, double spread) {
  if (papers)
    return fmt::format("θ > 0 and consistent with the paper's {}{}", number(value),
                       spread > 0 ? fmt::format(" (its spread: ≥ {})", number(counts)) : "");
  if (prefixed) return fmt::format("θ > 0 (the effect that counts, fixed before the data: {})", number(counts));
  return fmt::format("θ > 0 (smallest effect of interest, sets power only: {})", number(value));
}

std::string direction_power_text(double power, double value, bool papers, bool prefixed) {
  return fmt::format("power {:.2f} at {} θ = {}", power,
                     papers ? "the paper's" : prefixed ? "the effect that counts," : "the smallest effect of interest,", number(value));
}

double effect_that_counts(const Effect& effect, double alpha) {
  if (effect.papers) return std::max(0.0, effect.value - (effect.spread > 0 ? stats::normal_quantile(1 - alpha) * effect.spread : 0.0));
  return effect.prefixed ? effect.value : 0.0;
}

namespace {

/// The one-pass rule of a direction claim from its one-sided bounds (checks.hpp, direction()).
std::string direction_verdict(double lo, double hi, double counts, bool papers) {
  if (lo > 0) return papers && hi < counts ? "direction only" : "holds";
  return hi < counts ? "contradicted" : "inconclusive";
}

/// The rule of an equivalence claim from its (1 − 2α) interval.
std::string equivalence_verdict(double lo, double hi, double margin) {
  if (lo > -margin && hi < margin) return "holds";
  return lo >= margin || hi <= -margin ? "contradicted" : "inconclusive";
}

}  // namespace

Check& direction(Analysis& a, Claim c, const Evidence& e, const Effect& effect, double alpha) {
  require_evidence(e, c.id);
  if (!(effect.value > 0)) throw std::logic_error("check " + c.id + ": the effect that counts must be > 0");
  if (!(effect.spread >= 0)) throw std::logic_error("check " + c.id + ": the paper's spread must be ≥ 0");
  const double q = std::isinf(e.df) ? stats::normal_quantile(1 - alpha) : stats::student_t_quantile(1 - alpha, e.df);
  // Bounds never leave the parameter's range; explicit bounds (Wilson) are taken as they are.
  const double lo = std::clamp(std::isnan(e.lower) ? e.estimate - q * e.std_error : e.lower, e.range_lo, e.range_hi);
  const double hi = std::clamp(std::isnan(e.upper) ? e.estimate + q * e.std_error : e.upper, e.range_lo, e.range_hi);
  if (!(e.range_lo <= e.estimate && e.estimate <= e.range_hi))
    throw std::logic_error("check " + c.id + ": the estimate lies outside the parameter's range");
  const double power = stats::one_sided_power(effect.value, e.std_error, e.df, alpha);
  const double counts = effect_that_counts(effect, alpha);
  const bool can_only_refute = c.can_only_refute;
  Check out = base(a, c);
  out.predicted = direction_predicted(effect.value, counts, effect.papers, effect.prefixed, effect.spread);
  out.measured = fmt::format("θ̂ = {}, one-sided {}% bounds {}; {}", number(e.estimate), number(100 * (1 - alpha)),
                             interval_text(lo, hi), direction_power_text(power, effect.value, effect.papers, effect.prefixed));
  out.tolerance = {{"alpha", alpha},
                   {"method", e.method},
                   {"estimate", e.estimate},
                   {"std_error", e.std_error},
                   {"df", std::isinf(e.df) ? json("inf") : json(e.df)},
                   {"lower_bound", lo},
                   {"upper_bound", hi},
                   {"effect_that_counts", counts},
                   {"effect_papers", effect.papers},
                   {"effect_prefixed", effect.prefixed},
                   {"effect_spread", effect.spread},
                   {"effect_value", effect.value},
                   {"rule", "one pass (DESIGN.md): lower bound > 0: holds, or 'direction only' when the paper states the effect and the "
                            "upper bound < the effect that counts; lower bound ≤ 0: contradicted when the upper bound < the effect that "
                            "counts (the paper's, its spread's lower end, or a prefixed threshold; else 0), inconclusive otherwise"}};
  if (c.deterministic_data) out.tolerance["deterministic_data"] = true;
  if (std::isfinite(e.range_lo) && std::isfinite(e.range_hi)) out.tolerance["range"] = json::array({e.range_lo, e.range_hi});
  out.power = power_json(e, effect.value, effect.source, power,
                         [&](double se, double df) { return stats::one_sided_power(effect.value, se, df, alpha); });
  out.verdict = direction_verdict(lo, hi, counts, effect.papers);
  finish(out, can_only_refute);
  return a.result.add_check(std::move(out));
}

Check& equivalent(Analysis& a, Claim c, const Evidence& e, double margin, const std::string& margin_source, double alpha) {
  require_evidence(e, c.id);
  if (!(margin > 0)) throw std::logic_error("check " + c.id + ": the equivalence margin must be > 0");
  const stats::TTest as_t{.mean_difference = e.estimate, .std_error = e.std_error, .t = 0, .df = e.df, .p_value = 1, .n = e.n};
  const stats::Tost t = stats::tost(as_t, margin, alpha);
  const double power = stats::tost_power(margin, e.std_error, e.df, 0.0, alpha);
  const bool can_only_refute = c.can_only_refute;
  Check out = base(a, c);
  out.predicted = fmt::format("|θ| < Δ = {}", number(margin));
  out.measured = fmt::format("θ̂ = {}, {}% interval {}; TOST p = {}; power {:.2f} at θ = 0", number(e.estimate),
                             number(100 * (1 - 2 * alpha)), interval_text(t.interval.lo, t.interval.hi),
                             number(t.p_value), power);
  out.tolerance = {{"alpha", alpha},
                   {"margin", margin},
                   {"margin_source", margin_source},
                   {"method", "TOST on " + e.method},
                   {"estimate", e.estimate},
                   {"std_error", e.std_error},
                   {"df", std::isinf(e.df) ? json("inf") : json(e.df)},
                   {"interval", json::array({t.interval.lo, t.interval.hi})},
                   {"p_value", t.p_value},
                   {"rule", "holds: the (1 − 2α) interval inside (−Δ, Δ); contradicted: entirely outside; inconclusive "
                            "otherwise (power reported, never deciding)"}};
  if (c.deterministic_data) out.tolerance["deterministic_data"] = true;
  out.power = power_json(e, 0.0, "θ = 0 (equal), margin " + margin_source, power,
                         [&](double se, double df) { return stats::tost_power(margin, se, df, 0.0, alpha); });
  out.verdict = equivalence_verdict(t.interval.lo, t.interval.hi, margin);
  // Evidence about a paper only: a self-check's margin is a tolerance of our own construction.
  if ((out.kind == "claim" || out.kind == "own-question") && !margin_fixed_before_data(margin_source)) {
    out.verdict = "inconclusive";
    out.tolerance["margin_fixed"] = false;
    out.tolerance["rule"] = out.tolerance["rule"].get<std::string>() + "; a margin not fixed before the data (not the paper's number, "
                            "a DESIGN.md rule or a pre-registration) cannot decide: inconclusive";
  }
  finish(out, can_only_refute);
  return a.result.add_check(std::move(out));
}

Check& rate(Analysis& a, Claim c, const stats::LinearFit& fit, RateForm form, double exponent, double slack,
            const std::string& slack_source, const std::vector<double>& local_slopes, const std::string& unit,
            double alpha) {
  if (!(slack > 0)) throw std::logic_error("check " + c.id + ": the exponent slack must be > 0");
  if (!(fit.dof > 0)) throw std::logic_error("check " + c.id + ": a rate needs a fit with residual degrees of freedom");
  if (c.detail.is_null()) c.detail = json::object();
  if (c.detail.is_object()) {
    c.detail["local_slopes"] = local_slopes;
    c.detail["fit"] = {{"slope", fit.slope}, {"slope_se", fit.slope_se}, {"intercept", fit.intercept},
                       {"dof", fit.dof}, {"r_squared", fit.r_squared}, {"points", fit.n}};
  }
  const std::string form_text = form == RateForm::upper ? fmt::format("O(x^{})", number(exponent))
                                                        : fmt::format("Θ(x^{})", number(exponent));
  if (form == RateForm::upper) {
    // s ≤ p read one-sidedly: θ = p + slack − s > 0, and the slack is the threshold fixed with the
    // check: the slope excluded above p itself (θ's upper bound < slack) contradicts it.
    const Evidence e{exponent + slack - fit.slope, fit.slope_se, fit.dof, fit.n, unit, "log–log least squares"};
    Check& out = direction(a, std::move(c), e, {.value = slack, .source = "exponent slack: " + slack_source, .prefixed = true}, alpha);
    const double q = stats::student_t_quantile(1 - alpha, fit.dof);
    const double s_lo = fit.slope - q * fit.slope_se, s_hi = fit.slope + q * fit.slope_se;
    out.predicted = fmt::format("{}: slope ≤ {} (+ slack {})", form_text, number(exponent), number(slack));
    out.measured = fmt::format("slope {} ± {} (one-sided {}%: {}); local slopes {}", number(fit.slope),
                               number(fit.slope_se), number(100 * (1 - alpha)), interval_text(s_lo, s_hi),
                               local_slopes_text(local_slopes));
    return out;
  }
  // A rate's exponent slack is fixed by DESIGN.md's rule (the theorem's log factors, or the finite-size
  // allowance stated with the check), so it may decide.
  const Evidence e{fit.slope - exponent, fit.slope_se, fit.dof, fit.n, unit, "log–log least squares"};
  Check& out = equivalent(a, std::move(c), e, slack, "DESIGN.md rule, a rate's exponent slack: " + slack_source, alpha);
  out.predicted = fmt::format("{}: |slope − {}| < {}", form_text, number(exponent), number(slack));
  const json& iv = out.tolerance["interval"];
  out.measured = fmt::format("slope {}, {}% interval {}; local slopes {}; power {:.2f}", number(fit.slope),
                             number(100 * (1 - 2 * alpha)),
                             interval_text(iv[0].get<double>() + exponent, iv[1].get<double>() + exponent),
                             local_slopes_text(local_slopes), out.power.value("power", 0.0));
  return out;
}

namespace {

/// A stored direction's labels under the current wording (direction_predicted, direction_power_text),
/// from the numbers it stored; a rate's "O(x^p)" labels and hand-written ones are left as they are.
void relabel_direction(json& check, double counts, bool papers) {
  const json& tol = check["tolerance"];
  const json& power = check.value("power", json());
  if (!power.is_object() || !power.value("effect", json()).is_number() || !power.value("power", json()).is_number()) return;
  const double value = tol.value("effect_value", power["effect"].get<double>());
  const std::string source = power.value("effect_source", std::string());
  const bool prefixed = tol.value("effect_prefixed", source.rfind("exponent slack", 0) == 0);
  if (check.value("predicted", json()).is_string() && check["predicted"].get<std::string>().rfind("θ > 0", 0) == 0)
    check["predicted"] = direction_predicted(value, counts, papers, prefixed, tol.value("effect_spread", 0.0));
  if (check.value("measured", json()).is_string()) {
    std::string m = check["measured"].get<std::string>();
    const std::size_t at = m.rfind("; power ");
    if (m.rfind("θ̂ = ", 0) == 0 && at != std::string::npos)
      check["measured"] = m.substr(0, at) + "; " + direction_power_text(power["power"].get<double>(), value, papers, prefixed);
  }
}

}  // namespace

std::string reverdict(json& check) {
  const std::string before = check.value("verdict", std::string(check.value("holds", false) ? "holds" : ""));
  const std::string kind = check.value("kind", std::string("claim"));
  json& tol = check["tolerance"];
  if (kind == "observation" || !tol.is_object()) return before;
  const std::string rule = tol.value("rule", std::string());
  const json& power = check.value("power", json());
  const std::string source = power.is_object() ? power.value("effect_source", std::string()) : std::string();
  std::string verdict = before;
  const auto number_at = [&](const json& j, const char* key) { return j.contains(key) && j[key].is_number(); };
  if (number_at(tol, "lower_bound") && number_at(tol, "upper_bound")) {
    // A direction (or a rate's upper form, which is one). JSON written before the effect that counts
    // was stored: the paper's effect when the source cites the paper, a rate's exponent slack (fixed
    // with the check), else 0.
    double counts = 0;
    bool papers = false;
    if (number_at(tol, "effect_that_counts")) {
      counts = tol["effect_that_counts"].get<double>();
      papers = tol.value("effect_papers", false);
    } else if (power.is_object() && number_at(power, "effect")) {
      papers = source.rfind("paper ", 0) == 0;
      const bool slack = source.rfind("exponent slack", 0) == 0;
      counts = papers || slack ? power["effect"].get<double>() : 0.0;
    }
    verdict = direction_verdict(tol["lower_bound"].get<double>(), tol["upper_bound"].get<double>(), counts, papers);
    relabel_direction(check, counts, papers);
  } else if (tol.contains("interval") && tol["interval"].is_array() && tol["interval"].size() == 2 && number_at(tol, "margin") &&
             (rule.rfind("holds: the (1 − 2α)", 0) == 0 || rule.rfind("intersection–union", 0) == 0)) {
    verdict = equivalence_verdict(tol["interval"][0].get<double>(), tol["interval"][1].get<double>(), tol["margin"].get<double>());
    // A rate's slack is DESIGN.md's rule (rate() above); any other margin must be fixed before the data.
    if ((kind == "claim" || kind == "own-question") && !margin_fixed_before_data(tol.value("margin_source", std::string())) &&
        tol.value("method", std::string()).find("log–log") == std::string::npos) {
      verdict = "inconclusive";
      tol["margin_fixed"] = false;  // as equivalent() records it, so readers need only this field
    }
  } else if (before == "not reproduced") {
    verdict = "contradicted";  // a deterministic comparison: finish() below maps it again
  } else if (before == "not refuted") {
    verdict = "holds";
  }
  // A comparison with a model that did not train is not evidence, whatever its interval says (DESIGN.md;
  // routing::not_evidence_untrained records why).
  if ((kind == "claim" || kind == "own-question") && tol.contains("model_did_not_train")) verdict = "inconclusive";
  Check c;
  c.kind = kind;
  c.verdict = verdict;
  c.departure = check.value("departure", std::string());
  c.tolerance = tol;
  finish(c, tol.value("can_only_refute", false) || before == "not refuted");
  check["verdict"] = c.verdict;
  check["holds"] = c.holds;
  return before;
}

Check& observation(Analysis& a, Claim c, json papers_value, json measured) {
  c.kind = Kind::observation;
  Check out = base(a, c);
  out.predicted = std::move(papers_value);
  out.measured = std::move(measured);
  out.verdict = "observation";
  out.holds = false;
  out.tolerance = {{"rule", "an observation of the paper: no verdict, the paper's value beside ours"}};
  return a.result.add_check(std::move(out));
}

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
  Check out = base(a, c);
  out.predicted = fmt::format("{} {}", to_symbol(rel), number(bound));
  out.measured = measured;
  // NaN never satisfies a comparison: a broken measurement fails the check.
  out.holds = satisfies(measured, rel, bound, tolerance);
  out.tolerance = tolerance_json(tolerance);
  return settle(a, std::move(out), c);
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
  Check out = base(a, c);
  const double allowed = abs_tol + rel_tol * std::abs(predicted);
  out.predicted = predicted;
  out.measured = measured;
  out.holds = std::abs(measured - predicted) <= allowed;
  out.tolerance = {{"abs", abs_tol}, {"rel", rel_tol}, {"allowed_difference", allowed}};
  return settle(a, std::move(out), c);
}

Check& within(Analysis& a, Claim c, double measured, double lo, double hi) {
  Check out = base(a, c);
  out.predicted = fmt::format("in [{}, {}]", number(lo), number(hi));
  out.measured = measured;
  out.holds = lo <= measured && measured <= hi;
  out.tolerance = {{"lo", lo}, {"hi", hi}};
  return settle(a, std::move(out), c);
}

Check& interval_contains(Analysis& a, Claim c, double lo, double hi, double predicted) {
  Check out = base(a, c);
  out.predicted = predicted;
  out.measured = fmt::format("[{}, {}]", number(lo), number(hi));
  out.holds = lo <= predicted && predicted <= hi;
  out.tolerance = {{"interval", json::array({lo, hi})}};
  return settle(a, std::move(out), c);
}

Check& equals(Analysis& a, Claim c, long long measured, long long predicted) {
  Check out = base(a, c);
  out.predicted = predicted;
  out.measured = measured;
  out.holds = measured == predicted;
  out.tolerance = {{"abs", 0}};
  return settle(a, std::move(out), c);
}

Check& significant(Analysis& a, Claim c, double p_value, double alpha, const std::string& test) {
  Check out = base(a, c);
  out.predicted = fmt::format("p < {}", number(alpha));
  out.measured = fmt::format("p = {}", number(p_value));
  out.holds = p_value < alpha;
  out.tolerance = {{"alpha", alpha}, {"test", test}, {"p_value", p_value}};
  Check& added = settle(a, std::move(out), c);
  // p ≥ α alone is absence of evidence, not evidence of absence: without a power the most it says
  // is "inconclusive". Claims that can be refuted use direction() or equivalent().
  if (added.verdict == "contradicted" || added.verdict == "not reproduced") added.verdict = "inconclusive";
  return added;
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
  Check out = base(a, c);
  out.predicted = every ? fmt::format("measured {} bound at all {} {}", to_symbol(rel), n, unit)
                        : fmt::format("measured {} bound at ≥ {} of {} {}", to_symbol(rel), required, n, unit);
  out.measured = fmt::format("{} of {} {}; worst margin {} ({})", good, n, unit, number(worst), worst_label);
  out.holds = good >= required;
  out.tolerance = {{"abs", tolerance}, {"required", required}};
  if (out.detail.is_null()) out.detail = json::object();
  if (out.detail.is_object()) out.detail["points"] = per_point;
  return settle(a, std::move(out), c);
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
  Check out = base(a, c);
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
  Check& added = settle(a, std::move(out), c);
  if (v.inconclusive && added.kind == "claim") added.verdict = "inconclusive";
  return added;
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
