// app/checks: the verdict vocabulary (docs/DESIGN.md). Each rule on constructed cases: one clearly true,
// one clearly false, one too small to tell; kinds, errata and the exit codes that follow.
#include <catch2/catch.hpp>

#include <cmath>
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

TEST_CASE("direction: holds when the lower bound clears 0, contradicted when data exclude it, inconclusive when small",
          "[app][verdicts]") {
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
  // No support at high power: a null effect measured precisely contradicts "A beats B by ≥ 0.5".
  const Check& flat = direction(a, {.id = "flat", .claim = "Lemma 1"}, welch(0.0, 0.0, 0.2, 20), effect);
  CHECK(flat.power["power"].get<double>() >= 0.8);
  CHECK(flat.verdict == "contradicted");
  // The paper's own effect excluded: contradicted even where a smaller effect is not excluded.
  const Evidence half = welch(0.3, 0.0, 0.3, 3);
  const Check& own = direction(a, {.id = "own", .claim = "Lemma 1"}, half, {2.0, "paper 042 Table 1", true});
  CHECK(own.verdict == "contradicted");
  CHECK(verdict_exit_code(a.result) == exit_check_failed);
}

TEST_CASE("equivalent (TOST): holds inside the margin, contradicted outside, inconclusive when the interval straddles",
          "[app][verdicts]") {
  Analysis a = test_analysis();
  CHECK(equivalent(a, {.id = "same", .claim = "Lemma 1"}, welch(1.0, 1.02, 0.05, 10), 0.1, "stated").verdict == "holds");
  CHECK(equivalent(a, {.id = "apart", .claim = "Lemma 1"}, welch(1.0, 2.0, 0.05, 10), 0.1, "stated").verdict ==
        "contradicted");
  const Check& wide = equivalent(a, {.id = "wide", .claim = "Lemma 1"}, welch(1.0, 1.0, 0.5, 2), 0.1, "stated");
  CHECK(wide.verdict == "inconclusive");
  CHECK(wide.power["power"].get<double>() < 0.8);
  CHECK(wide.power["n_for_80"].get<std::size_t>() > 4);
}

TEST_CASE("uniform_categories: every share within Δ of 1/K holds, one share outside contradicts, few trials are inconclusive",
          "[app][verdicts]") {
  Analysis a = test_analysis();
  const auto claim = [](const char* id) { return Claim{.id = id, .claim = "Lemma 1"}; };
  // 10⁵ trials per group, split exactly evenly: every relative interval is about ±0.01 wide, inside ±0.1.
  const Check& even = uniform_categories(a, claim("even"), {{"K = 2", {50000, 50000}}, {"K = 4", {25000, 25000, 25000, 25000}}}, 0.1, "stated");
  CHECK(even.verdict == "holds");
  CHECK(even.power["power"].get<double>() > 0.99);
  // One of 4 categories at 0.3 instead of 0.25 (K p − 1 = 0.2): its interval lies entirely above Δ = 0.1.
  const Check& heavy = uniform_categories(a, claim("heavy"), {{"K = 4", {30000, 23334, 23333, 23333}}}, 0.1, "stated");
  CHECK(heavy.verdict == "contradicted");
  CHECK(heavy.detail["deciding"] == "K = 4, category 0");
  // 200 trials over 8 categories: each share's 90 % interval reaches ±30 % of 1/8, so nothing is shown either way.
  const Check& few = uniform_categories(a, claim("few"), {{"K = 8", {25, 25, 25, 25, 25, 25, 25, 25}}}, 0.1, "stated");
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
