// app/checks: the verdict vocabulary (docs/DESIGN.md). Each rule on constructed cases: one clearly true,
// one clearly false, one too small to tell; kinds, errata and the exit codes that follow.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/binomial_evidence.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/stats.hpp>

using namespace sparseact;
using namespace sparseact::app;

namespace {

Analysis test_analysis() { return Analysis({.name = "unit", .paper = "042", .claims = {"Lemma 1"}}); }

/// n values with mean `mean` and sample standard deviation exactly `sd` (symmetric ± pairs).
std::vector<double> sample(double mean, double sd, int pairs) {
  // ±s around the mean, 2·pairs values: sample variance = 2·pairs·s²/(2·pairs − 1).
  const double s = sd * std::sqrt((2.0 * pairs - 1) / (2.0 * pairs));
  std::vector<double> v;
  for (int i = 0; i < pairs; ++i) v.insert(v.end(), {mean + s, mean - s});
  return v;
}

Evidence welch(double mean_a, double mean_b, double sd, int pairs) {
  const auto a = sample(mean_a, sd, pairs), b = sample(mean_b, sd, pairs);
  return evidence(stats::welch_t_test(a, b), a.size(), "seeds per arm", "Welch t");
}

}  // namespace

TEST_CASE("direction: holds when the lower bound clears 0, contradicted only when the interval excludes the effect that "
          "counts, inconclusive otherwise (no post-hoc power)", "[app][verdicts]") {
  Analysis a = test_analysis();
  const Effect effect{0.5, "smallest effect of interest: 0.5", false};
  const Check& yes = direction(a, {.id = "yes", .claim = "Lemma 1"}, welch(2.0, 0.0, 0.5, 10), effect);
  CHECK(yes.verdict == "holds");
  CHECK(yes.holds);
  const Check& no = direction(a, {.id = "no", .claim = "Lemma 1"}, welch(0.0, 2.0, 0.5, 10), effect);
  CHECK(no.verdict == "contradicted");
  CHECK_FALSE(no.holds);
  const Check& small = direction(a, {.id = "small", .claim = "Lemma 1"}, welch(0.3, 0.0, 1.0, 2), effect);
  CHECK(small.verdict == "inconclusive");
  CHECK(small.power["power"].get<double>() < 0.8);
  // The run size that reaches 80 % is larger than this one, and at it the power is ≥ 0.8.
  const auto n80 = small.power["n_for_80"].get<std::size_t>();
  CHECK(n80 > 4);
  // A null effect measured precisely, at power ≥ 0.8: the interval still reaches above 0 and the
  // smallest effect of interest was not fixed before the data, so power alone decides nothing.
  const Check& flat = direction(a, {.id = "flat", .claim = "Lemma 1"}, welch(0.0, 0.0, 0.2, 20), effect);
  CHECK(flat.power["power"].get<double>() >= 0.8);
  CHECK(flat.verdict == "inconclusive");
  // The same data against a threshold fixed before the data (DESIGN.md rule): its exclusion contradicts.
  const Check& fixed = direction(a, {.id = "fixed", .claim = "Lemma 1"}, welch(0.0, 0.0, 0.2, 20),
                                 {.value = 0.5, .source = "DESIGN.md rule", .prefixed = true});
  CHECK(fixed.verdict == "contradicted");
  CHECK(fixed.tolerance["effect_that_counts"].get<double>() == 0.5);
  // The paper's own effect excluded while the interval still reaches 0: contradicted.
  const Evidence half = welch(0.3, 0.0, 0.3, 3);
  const Check& own = direction(a, {.id = "own", .claim = "Lemma 1"}, half, {2.0, "paper 042 Table 1", true});
  CHECK(own.verdict == "contradicted");
  CHECK(verdict_exit_code(a.result) == exit_check_failed);
}

TEST_CASE("direction with the paper's effect, in one pass: consistent holds, wholly below but above 0 is 'direction only', "
          "the paper's printed spread widens what is consistent", "[app][verdicts]") {
  Analysis a = test_analysis();
  const Effect paper{1.0, "paper 042 Table 1: 1.0", true};
  // Clearly true: the interval covers the paper's 1.0 and clears 0.
  CHECK(direction(a, {.id = "true", .claim = "Lemma 1"}, welch(1.0, 0.0, 0.3, 10), paper).verdict == "holds");
  // The direction holds, the size does not: [0.18, 0.42]-ish, wholly below 1.0 and above 0.
  const Check& weak = direction(a, {.id = "weak", .claim = "Lemma 1"}, welch(0.3, 0.0, 0.2, 10), paper);
  CHECK(weak.verdict == "direction only");
  CHECK_FALSE(weak.holds);
  CHECK(verdict_exit_code(a.result) == exit_check_failed);
  // Too small to tell: the interval reaches both 0 and the paper's effect.
  CHECK(direction(a, {.id = "few", .claim = "Lemma 1"}, welch(0.5, 0.0, 1.0, 2), paper).verdict == "inconclusive");
  // Clearly false: below 0 altogether.
  CHECK(direction(a, {.id = "false", .claim = "Lemma 1"}, welch(-1.0, 0.0, 0.2, 10), paper).verdict == "contradicted");
  // The paper prints its own standard error 0.47 (Table 4's fbm on the log scale): its one-sided 95 %
  // interval reaches down to 1.0 − 1.645·0.47 < 0.3, so the same data are consistent with it.
  // Table 4's fbm row, 0.128 ± 0.012 over 0.057 ± 0.085 (sd over 10 runs): ln ratio's own SE by the delta method.
  CHECK(stats::log_ratio_std_error(0.128, 0.012, 10, 0.057, 0.085, 10) == Approx(0.4725).epsilon(1e-3));
  CHECK_THROWS_AS(stats::log_ratio_std_error(0.0, 0.1, 10, 1.0, 0.1, 10), std::invalid_argument);
  const Effect spread{1.0, "paper 042 Table 1: 1.0 ± 0.47", true, 0.47};
  CHECK(effect_that_counts(spread) == Approx(1.0 - stats::normal_quantile(0.95) * 0.47));
  const Check& within = direction(a, {.id = "spread", .claim = "Lemma 1"}, welch(0.3, 0.0, 0.2, 10), spread);
  CHECK(within.verdict == "holds");
  CHECK(within.tolerance["effect_spread"].get<double>() == 0.47);
}

TEST_CASE("kinds and departures: own questions are decided apart, a departing setup's exclusion is 'not reproduced', a check "
          "that can only refute passes as 'not refuted', bounds stay in the parameter's range", "[app][verdicts]") {
  Analysis a = test_analysis();
  const Effect effect{0.5, "smallest effect of interest: 0.5", false};
  // Our own question: the same rules, but it never sets the exit code.
  const Check& ours = direction(a, {.id = "ours", .claim = "no such row", .kind = Kind::own_question}, welch(0.0, 2.0, 0.5, 10), effect);
  CHECK(ours.kind == "own-question");
  CHECK(ours.verdict == "contradicted");
  CHECK(verdict_exit_code(a.result) == exit_ok);
  // A miniature that departs from the paper's setup: the departure is a field, and an exclusion is not a paper error.
  const Check& mini = direction(a, {.id = "mini", .claim = "Lemma 1", .departure = "width 32, not 1000"}, welch(0.0, 2.0, 0.5, 10), effect);
  CHECK(mini.verdict == "not reproduced");
  CHECK(mini.departure == "width 32, not 1000");
  CHECK(to_json(mini)["departure"] == "width 32, not 1000");
  const Check& mini_ok = direction(a, {.id = "mini_ok", .claim = "Lemma 1", .departure = "width 32"}, welch(2.0, 0.0, 0.5, 10), effect);
  CHECK(mini_ok.verdict == "holds");
  CHECK(at_least(a, {.id = "mini_det", .claim = "Lemma 1", .departure = "d = 2"}, 1.0, 2.0).verdict == "not reproduced");
  // One model family against a lower bound over all models: passing never reads "holds".
  const Check& lower = at_least(a, {.id = "lower", .claim = "Lemma 1", .can_only_refute = true}, 3.0, 2.0);
  CHECK(lower.verdict == "not refuted");
  CHECK(at_least(a, {.id = "counter", .claim = "Lemma 1", .can_only_refute = true}, 1.0, 2.0).verdict == "contradicted");
  CHECK(at_least(a, {.id = "tiny", .claim = "Lemma 1", .can_only_refute = true}, 2.0, 2.0).verdict == "not refuted");
  // A proportion's difference: the bounds never leave [−1, 1].
  Evidence p{0.95, 0.2, INFINITY, 10, "trials", "Wilson"};
  p.range_lo = -1, p.range_hi = 1;
  const Check& clipped = direction(a, {.id = "clipped", .claim = "Lemma 1"}, p, effect);
  CHECK(clipped.tolerance["upper_bound"].get<double>() == 1.0);
  CHECK(clipped.tolerance["lower_bound"].get<double>() > 0);
  CHECK(clipped.verdict == "holds");
}

TEST_CASE("equivalent (TOST): holds inside the margin, contradicted outside, inconclusive when the interval straddles",
          "[app][verdicts]") {
  Analysis a = test_analysis();
  CHECK(equivalent(a, {.id = "same", .claim = "Lemma 1"}, welch(1.0, 1.02, 0.05, 10), 0.1, "paper 042 Table 1: 0.1").verdict == "holds");
  CHECK(equivalent(a, {.id = "apart", .claim = "Lemma 1"}, welch(1.0, 2.0, 0.05, 10), 0.1, "paper 042 Table 1: 0.1").verdict ==
        "contradicted");
  const Check& wide = equivalent(a, {.id = "wide", .claim = "Lemma 1"}, welch(1.0, 1.0, 0.5, 2), 0.1, "paper 042 Table 1: 0.1");
  CHECK(wide.verdict == "inconclusive");
  CHECK(wide.power["power"].get<double>() < 0.8);
  CHECK(wide.power["n_for_80"].get<std::size_t>() > 4);
  // High power at θ = 0 decides nothing: an interval that straddles ±Δ is inconclusive.
  const Check& straddle = equivalent(a, {.id = "straddle", .claim = "Lemma 1"}, welch(1.0, 1.1, 0.01, 20), 0.1, "paper 042 Table 1: 0.1");
  CHECK(straddle.power["power"].get<double>() >= 0.8);
  CHECK(straddle.verdict == "inconclusive");
}

// The numbers are those of parrots_phonebook's retired at-scale moe_on_total_fit (now one finding, λ): an
// interval that straddles −Δ, with a margin read off the run's own fit.
TEST_CASE("equivalent: θ̂ = −0.36 inside ±0.477 with its interval crossing −Δ is not contradicted, fresh or re-derived "
          "from its stored JSON", "[app][verdicts]") {
  Analysis a = test_analysis();
  const Evidence e{-0.35973538288539453, 0.09437542738909066, 4.0, 6, "dense models (MoEs in proportion)", "dense fit"};
  const Check& total = equivalent(a, {.id = "moe_on_total_fit", .claim = "§4.2"}, e, 0.4772725921884084, "half the gap");
  CHECK(total.tolerance["interval"][0].get<double>() == Approx(-0.5609293344730315));
  CHECK(total.tolerance["interval"][1].get<double>() == Approx(-0.15854143129775755));
  CHECK(total.power["power"].get<double>() > 0.8);
  CHECK(total.verdict == "inconclusive");
  // The JSON the at-scale run wrote under the old rules said "contradicted"; its stored numbers say otherwise.
  json stored = to_json(total);
  stored["verdict"] = "contradicted";
  stored["tolerance"]["rule"] = "holds: the (1 − 2α) interval inside (−Δ, Δ); contradicted: entirely outside, or TOST power ≥ 0.8";
  CHECK(reverdict(stored) == "contradicted");
  CHECK(stored["verdict"] == "inconclusive");
}

TEST_CASE("reverdict: a stored direction is re-decided by its bounds against the paper's effect; kinds and departures follow",
          "[app][verdicts]") {
  // Written before the effect that counts was stored: the source cites the paper, so its effect counts.
  json old = {{"kind", "claim"}, {"verdict", "holds"}, {"holds", true},
              {"tolerance", {{"lower_bound", 0.0013}, {"upper_bound", 0.46}, {"rule", "holds: lower bound > 0"}}},
              {"power", {{"effect", 0.809}, {"effect_source", "paper 003 Table 4: 2.25×"}}}};
  CHECK(reverdict(old) == "holds");
  CHECK(old["verdict"] == "direction only");
  CHECK(old["holds"] == false);
  // A smallest effect of interest of our own choosing counts for power only.
  json sesoi = old;
  sesoi["power"]["effect_source"] = "smallest effect of interest: 10 %";
  sesoi["tolerance"]["lower_bound"] = -0.03, sesoi["tolerance"]["upper_bound"] = 0.079;
  reverdict(sesoi);
  CHECK(sesoi["verdict"] == "inconclusive");
  json departs = sesoi;
  departs["tolerance"]["upper_bound"] = -0.01;
  departs["departure"] = "ViT-Base → 2-layer MLP";
  reverdict(departs);
  CHECK(departs["verdict"] == "not reproduced");
  json self = departs;
  self["kind"] = "self-check";
  reverdict(self);
  CHECK(self["verdict"] == "fails");
  // A statistical self-check too small to tell is not our bug: it stays inconclusive.
  json small = sesoi;
  small["kind"] = "self-check";
  reverdict(small);
  CHECK(small["verdict"] == "inconclusive");
  // Deterministic checks keep their comparison.
  json det = {{"kind", "claim"}, {"verdict", "erratum"}, {"tolerance", {{"abs", 0}}}};
  reverdict(det);
  CHECK(det["verdict"] == "erratum");
}

TEST_CASE("uniform_categories: every share within Δ of 1/K holds, one share outside contradicts, few trials are inconclusive",
          "[app][verdicts]") {
  Analysis a = test_analysis();
  const auto claim = [](const char* id) { return Claim{.id = id, .claim = "Lemma 1"}; };
  // 10⁵ trials per group, split exactly evenly: every relative interval is about ±0.01 wide, inside ±0.1.
  const Check& even = uniform_categories(a, claim("even"), {{"K = 2", {50000, 50000}}, {"K = 4", {25000, 25000, 25000, 25000}}}, 0.1, "paper 042 Lemma 1: 0.1");
  CHECK(even.verdict == "holds");
  CHECK(even.power["power"].get<double>() > 0.99);
  // One of 4 categories at 0.3 instead of 0.25 (K p − 1 = 0.2): its interval lies entirely above Δ = 0.1.
  const Check& heavy = uniform_categories(a, claim("heavy"), {{"K = 4", {30000, 23334, 23333, 23333}}}, 0.1, "paper 042 Lemma 1: 0.1");
  CHECK(heavy.verdict == "contradicted");
  CHECK(heavy.detail["deciding"] == "K = 4, category 0");
  // 200 trials over 8 categories: each share's 90 % interval reaches ±30 % of 1/8, so nothing is shown either way.
  const Check& few = uniform_categories(a, claim("few"), {{"K = 8", {25, 25, 25, 25, 25, 25, 25, 25}}}, 0.1, "paper 042 Lemma 1: 0.1");
  CHECK(few.verdict == "inconclusive");
  const double p = few.power["power"].get<double>();
  CHECK(p < 0.8);
  // The family's power is the product over categories, so below any single category's TOST power; n_for_80 reaches 0.8.
  const double se = few.tolerance["std_error"].get<double>();
  CHECK(p <= stats::tost_power(0.1, se, INFINITY, 0.0, 0.05));
  CHECK(few.power["n_for_80"].get<std::size_t>() > 200);
}

TEST_CASE("rate: an upper bound holds below the exponent, is contradicted above it, inconclusive in between",
          "[app][verdicts]") {
  Analysis a = test_analysis();
  // y = x^s exactly plus a small alternating wobble: a fit with residual degrees of freedom.
  const auto fit = [](double s, double wobble) {
    std::vector<double> x, y;
    for (int i = 0; i < 8; ++i) {
      x.push_back(std::pow(2.0, i));
      y.push_back(std::pow(x.back(), s) * std::exp(i % 2 ? wobble : -wobble));
    }
    return stats::loglog_fit(x, y);
  };
  const std::vector<double> local{0.9, 0.92};
  CHECK(rate(a, {.id = "below", .claim = "Lemma 1"}, fit(0.9, 0.01), RateForm::upper, 1.0, 0.05, "stated", local, "n").verdict ==
        "holds");
  CHECK(rate(a, {.id = "above", .claim = "Lemma 1"}, fit(1.3, 0.01), RateForm::upper, 1.0, 0.05, "stated", local, "n").verdict ==
        "contradicted");
  CHECK(rate(a, {.id = "noisy", .claim = "Lemma 1"}, fit(1.0, 0.8), RateForm::upper, 1.0, 0.05, "stated", local, "n").verdict ==
        "inconclusive");
  const Check& tight = rate(a, {.id = "tight", .claim = "Lemma 1"}, fit(1.0, 0.01), RateForm::tight, 1.0, 0.05, "stated", local, "n");
  CHECK(tight.verdict == "holds");
  CHECK(tight.detail["local_slopes"].size() == 2);
}

TEST_CASE("kinds: observations have no verdict, self-checks never count as evidence, errata are their own verdict",
          "[app][verdicts]") {
  Analysis a = test_analysis();
  const Check& seen = observation(a, {.id = "seen", .claim = "§8.1"}, "rises (ViT)", "falls");
  CHECK(seen.kind == "observation");
  CHECK(seen.verdict == "observation");
  CHECK(verdict_exit_code(a.result) == exit_ok);
  CHECK(a.result.all_hold());

  const Check& self = at_most(a, {.id = "ours", .claim = "Lemma 1", .kind = Kind::self_check}, 1.0, 1.0);
  CHECK(self.kind == "self-check");
  CHECK(self.verdict == "holds");

  const Check& fine = at_most(a, {.id = "fine", .claim = "Lemma 1", .erratum = "ERRATA.md 042"}, 1.0, 2.0);
  CHECK(fine.verdict == "holds");  // the misprint does not bite here
  CHECK(verdict_exit_code(a.result) == exit_ok);

  const Check& slip = at_most(a, {.id = "slip", .claim = "Lemma 1", .erratum = "ERRATA.md 042"}, 3.0, 2.0);
  CHECK(slip.verdict == "erratum");
  CHECK_FALSE(slip.holds);
  CHECK(slip.tolerance["erratum"] == "ERRATA.md 042");
  CHECK(verdict_exit_code(a.result) == exit_check_failed);
}

TEST_CASE("exit codes: 0 all hold, 4 inconclusive without a refutation, 3 once a claim is contradicted", "[app][verdicts]") {
  Analysis a = test_analysis();
  at_most(a, {.id = "ok", .claim = "Lemma 1"}, 1.0, 2.0);
  CHECK(verdict_exit_code(a.result) == exit_ok);
  direction(a, {.id = "small", .claim = "Lemma 1"}, welch(0.3, 0.0, 1.0, 2), {0.5, "stated", false});
  CHECK(verdict_exit_code(a.result) == exit_inconclusive);
  CHECK_FALSE(a.result.all_hold());
  // p ≥ α without power is not a refutation.
  CHECK(significant(a, {.id = "p", .claim = "Lemma 1"}, 0.3, 0.05, "Welch").verdict == "inconclusive");
  CHECK(verdict_exit_code(a.result) == exit_inconclusive);
  at_most(a, {.id = "bad", .claim = "Lemma 1"}, 3.0, 2.0);
  CHECK(verdict_exit_code(a.result) == exit_check_failed);
  // A failing self-check is our bug: it fails the run too.
  Analysis b = test_analysis();
  at_most(b, {.id = "ours", .claim = "Lemma 1", .kind = Kind::self_check}, 3.0, 2.0);
  CHECK(b.result.checks.back().verdict == "fails");
  CHECK(verdict_exit_code(b.result) == exit_check_failed);
}

TEST_CASE("An intersection of binomial claims is decided by its weakest point: the refuting one, else the lowest lower end",
          "[app][binomial]") {
  using app::Point;
  const auto wilson = [](long hits, long trials) { return stats::wilson_interval(hits, trials, 0.10); };
  // All clear 0.9 except none refutes: the lowest lower end decides (29/30 below 30/30 and 60/60).
  const std::vector<Point> clear{{"a", 30, 30}, {"b", 29, 30}, {"c", 60, 60}};
  const app::DecidingPoint d = app::deciding_binomial_point(clear, 0.9, 0.05);
  CHECK(d.index == 1);
  REQUIRE(d.per_point.size() == 3);
  CHECK(d.per_point[1]["wilson90"][0].get<double>() == wilson(29, 30).lo);
  // A point whose upper end falls below 0.9 refutes, and among refuting points the lowest upper end decides,
  // whatever comes before or after it.
  REQUIRE(wilson(20, 30).hi < 0.9);
  REQUIRE(wilson(10, 30).hi < wilson(20, 30).hi);
  CHECK(app::deciding_binomial_point({{"a", 29, 30}, {"b", 20, 30}, {"c", 30, 30}, {"d", 10, 30}, {"e", 25, 30}}, 0.9, 0.05).index == 3);
  CHECK(app::deciding_binomial_point({{"a", 20, 30}, {"b", 1, 1}}, 0.9, 0.05).index == 0);
  CHECK_THROWS_AS(app::deciding_binomial_point({}, 0.9, 0.05), std::invalid_argument);
}
