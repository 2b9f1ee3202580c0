// app/lint: what a report may count (issue 47, DESIGN.md). Every rule on a constructed result that breaks
// it and on the same result mended; and the labels, margins and binomial bounds the rules lean on.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/binomial_evidence.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/app/lint.hpp>
#include <sparseact/core/stats.hpp>

using namespace sparseact;
using namespace sparseact::app;
using nlohmann::json;

namespace {

Analysis test_analysis() { return Analysis({.name = "unit", .paper = "042", .claims = {"Lemma 1"}}); }

/// A clean claim (a deterministic comparison), with `extra` merged in.
json check(const std::string& id, json extra = json::object()) {
  json c = {{"id", id}, {"kind", "claim"}, {"claim", "paper 042 Lemma 1"}, {"statement", "s"}, {"predicted", "≤ 2"},
            {"measured", 1.0 + id.size()}, {"verdict", "holds"}, {"holds", true}, {"tolerance", {{"abs", 0}}},
            {"note", ""}, {"departure", ""}, {"detail", nullptr}, {"power", nullptr}};
  c.update(extra);
  return c;
}

std::vector<std::string> lint(const std::vector<json>& checks) { return lint_result(json{{"checks", checks}}, "unit"); }

/// The one offence of `checks`, which must name `rule`.
void require_one(const std::vector<json>& checks, const std::string& rule) {
  const auto lines = lint(checks);
  INFO(rule);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(": " + rule + ": ") != std::string::npos);
  CHECK(lines[0].rfind("unit › ", 0) == 0);
}

}  // namespace

TEST_CASE("lint: a clean result passes; self-checks and observations may say anything", "[app][lint]") {
  CHECK(lint({check("a"), check("bb")}).empty());
  // The same words on a self-check are fine: self-checks are never evidence.
  CHECK(lint({check("a", {{"kind", "self-check"}, {"note", "Always true: a failure is a bug."}, {"claim", "beyond the paper"}}),
              check("b", {{"kind", "self-check"}, {"measured", 2.0}})})
            .empty());
  CHECK(lint({check("a", {{"kind", "observation"}, {"note", "Fashion-MNIST stands in for CIFAR-10"}})}).empty());
}

TEST_CASE("lint: each rule refuses its example", "[app][lint]") {
  require_one({check("a", {{"claim", "paper 042 §5.1.1 (large-width law, beyond the paper)"}})}, "beyond-paper");
  require_one({check("a", {{"note", "Exact for k ≤ 3. Always true: a failure is a bug."}})}, "cannot-fail");
  require_one({check("a", {{"note", "β/p = √(1 − a/p) < 1 by construction (flatness/theorem7.hpp)"}})}, "cannot-fail");
  require_one({check("a", {{"kind", "own-question"}, {"tolerance", {{"deterministic_data", true}}}})}, "deterministic");
  require_one({check("a", {{"measured", 77.04}}), check("b", {{"measured", 77.04}})}, "duplicate");
  require_one({check("a", {{"note", "Data: Fashion-MNIST stands in for the paper's CIFAR-10."}})}, "stand-in");
  require_one({check("a", {{"note", "Departures: Fashion-MNIST for CIFAR-10, 5 epochs."}})}, "stand-in");
  // The stand-in named with the departure recorded is fine.
  CHECK(lint({check("a", {{"note", "Fashion-MNIST stands in for CIFAR-10."}, {"departure", "Fashion-MNIST for CIFAR-10"}})}).empty());
  // An estimate outside its own bounds (a Wilson centre printed as p̂ − p₀), and a bound outside the range.
  require_one({check("a", {{"tolerance", {{"estimate", -0.001}, {"std_error", 0.01}, {"lower_bound", 0.0}, {"upper_bound", 0.005}}}})},
              "outside-bounds");
  require_one({check("a", {{"tolerance", {{"estimate", 0.002}, {"std_error", 0.01}, {"lower_bound", 0.0}, {"upper_bound", 0.01},
                                          {"range", {-0.995, 0.005}}}}})},
              "outside-bounds");
  require_one({check("a", {{"tolerance", {{"estimate", 0.5}, {"std_error", 0.1}, {"interval", {0.6, 0.9}}, {"margin", 1}}}})},
              "outside-bounds");
  // A predicted that names an effect the verdict did not use (the at-scale dead_vs_sparsity's label).
  require_one({check("a", {{"predicted", "θ > 0 (the effect that counts: 0.1)"},
                           {"tolerance", {{"estimate", 0.15}, {"std_error", 0.03}, {"lower_bound", 0.1}, {"upper_bound", 0.2},
                                          {"effect_that_counts", 0.0}, {"effect_papers", false}}}})},
              "unused-effect");
  require_one({check("a", {{"predicted", "θ > 0 and consistent with the paper's 0.8"},
                           {"tolerance", {{"estimate", 0.15}, {"std_error", 0.03}, {"lower_bound", 0.1}, {"upper_bound", 0.2},
                                          {"effect_that_counts", 0.0}, {"effect_papers", false}}}})},
              "unused-effect");
}

TEST_CASE("lint: the helpers' own output passes, and a deterministic fit is caught wherever it is a claim", "[app][lint]") {
  Analysis a = test_analysis();
  const Effect soi{0.1, "smallest effect of interest: 0.1", false};
  direction(a, {.id = "d", .claim = "Lemma 1"}, {0.3, 0.05, 20, 10, "seeds", "Welch t"}, soi);
  direction(a, {.id = "p", .claim = "Lemma 1"}, {0.3, 0.05, 20, 10, "seeds", "Welch t"}, {0.5, "paper 042 Table 1", true, 0.1});
  direction(a, {.id = "f", .claim = "Lemma 1"}, {0.3, 0.05, 20, 10, "seeds", "Welch t"}, {0.2, "DESIGN.md rule", false, 0, true});
  equivalent(a, {.id = "e", .claim = "Lemma 1"}, {0.01, 0.05, 20, 10, "seeds", "Welch t"}, 0.5, "paper 042 Table 2: 0.5");
  direction(a, {.id = "w", .claim = "Lemma 1"}, wilson_evidence(200, 200, 0.995, 0.05, "trials"), {0.002, "smallest effect", false});
  const json result = to_json(a.result);
  INFO(result.dump(1));
  CHECK(lint_result(result, "unit").empty());
  // The same fit on a seedless construction, still a claim: refused.
  direction(a, {.id = "g", .claim = "Lemma 1", .deterministic_data = true}, {0.4, 0.05, 20, 10, "nets", "fit"}, soi);
  const auto lines = lint_result(to_json(a.result), "unit");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("unit › g: deterministic") == 0);
}

TEST_CASE("labels: predicted and the power clause name the effect that decided", "[app][lint]") {
  Analysis a = test_analysis();
  const Evidence e{0.3, 0.05, 20, 10, "seeds", "Welch t"};
  const Check& soi = direction(a, {.id = "soi", .claim = "Lemma 1"}, e, {0.1, "smallest effect of interest: 0.1", false});
  CHECK(soi.predicted == "θ > 0 (smallest effect of interest, sets power only: 0.1)");
  CHECK(soi.measured.get<std::string>().find("at the smallest effect of interest, θ = 0.1") != std::string::npos);
  CHECK(soi.tolerance["effect_that_counts"] == 0.0);
  const Check& fixed = direction(a, {.id = "fixed", .claim = "Lemma 1"}, e, {0.1, "DESIGN.md rule", false, 0, true});
  CHECK(fixed.predicted == "θ > 0 (the effect that counts, fixed before the data: 0.1)");
  const Check& paper = direction(a, {.id = "paper", .claim = "Lemma 1"}, e, {0.8, "paper 042 Table 1", true});
  CHECK(paper.predicted == "θ > 0 and consistent with the paper's 0.8");
  CHECK(paper.measured.get<std::string>().find("at the paper's θ = 0.8") != std::string::npos);
  // A stored direction with the old label is relabelled from its numbers, and then passes the lint.
  json stored = check("old", {{"predicted", "θ > 0 (the effect that counts: 0.1)"},
                              {"measured", "θ̂ = 0.15, one-sided 95% bounds [0.1, 0.2]; power 0.62 at θ = 0.1"},
                              {"tolerance", {{"estimate", 0.15}, {"std_error", 0.03}, {"lower_bound", 0.1}, {"upper_bound", 0.2},
                                             {"effect_that_counts", 0.0}, {"effect_papers", false}, {"effect_prefixed", false}}},
                              {"power", {{"power", 0.62}, {"effect", 0.1}, {"effect_source", "smallest effect of interest"}, {"n", 10}}}});
  CHECK(lint({stored}).size() == 1);
  reverdict(stored);
  CHECK(stored["predicted"] == "θ > 0 (smallest effect of interest, sets power only: 0.1)");
  CHECK(stored["measured"] == "θ̂ = 0.15, one-sided 95% bounds [0.1, 0.2]; power 0.62 at the smallest effect of interest, θ = 0.1");
  CHECK(lint({stored}).empty());
}

TEST_CASE("margins: only the paper's number, a DESIGN.md rule or a pre-registration can decide an equivalence", "[app][lint]") {
  Analysis a = test_analysis();
  const Evidence tight{0.001, 0.01, 40, 20, "seeds", "Welch t"};
  CHECK(equivalent(a, {.id = "paper", .claim = "Lemma 1"}, tight, 0.1, "paper 042 Table 5: 0.1").verdict == "holds");
  CHECK(equivalent(a, {.id = "rule", .claim = "Lemma 1"}, tight, 0.1, "DESIGN.md rule: 0.1").verdict == "holds");
  CHECK(equivalent(a, {.id = "pre", .claim = "Lemma 1"}, tight, 0.1, "pre-registration abc123: 0.1").verdict == "holds");
  const Check& stated = equivalent(a, {.id = "stated", .claim = "Lemma 1"}, tight, 0.1, "stated: 1 point of test accuracy");
  CHECK(stated.verdict == "inconclusive");
  CHECK(stated.tolerance["margin_fixed"] == false);
  // Far outside an unfixed margin is not a contradiction either.
  CHECK(equivalent(a, {.id = "far", .claim = "Lemma 1"}, {5.0, 0.01, 40, 20, "seeds", "Welch t"}, 0.1, "half the gap α̂·ln 2").verdict ==
        "inconclusive");
  // A stored equivalence with an unfixed margin is re-derived the same way.
  json stored = to_json(a.result)["checks"][0];
  stored["tolerance"]["margin_source"] = "stated: 0.1";
  reverdict(stored);
  CHECK(stored["verdict"] == "inconclusive");
}

TEST_CASE("wilson_evidence: p̂ − p₀ inside its own Wilson bounds, all inside [−p₀, 1 − p₀], at every count", "[app][lint]") {
  Analysis a = test_analysis();
  for (const std::int64_t hits : {0, 1, 150, 199, 200}) {
    const Evidence e = wilson_evidence(hits, 200, 0.995, 0.05, "trials");
    CHECK(e.estimate == Approx(hits / 200.0 - 0.995));
    const Check& c = direction(a, {.id = "w" + std::to_string(hits), .claim = "Lemma 1"}, e, {0.002, "smallest effect", false});
    const double lo = c.tolerance["lower_bound"], hi = c.tolerance["upper_bound"];
    // The one-sided 95 % bounds are the two-sided 90 % Wilson interval's ends, less p₀.
    const stats::Interval w = stats::wilson_interval(hits, 200, 0.10);
    CHECK(lo == Approx(w.lo - 0.995).margin(1e-15));
    CHECK(hi == Approx(w.hi - 0.995).margin(1e-15));
    CHECK(lo <= e.estimate);
    CHECK(e.estimate <= hi);
    CHECK(lo >= -0.995);
    CHECK(hi <= 0.005 + 1e-15);
  }
  // All successes: p̂ − p₀ = 0.005 > 0, and the Wilson lower end 0.9866 < 0.995, so it cannot yet hold.
  const Evidence all = wilson_evidence(200, 200, 0.995, 0.05, "trials");
  CHECK(all.estimate == Approx(0.005));
  CHECK(direction(a, {.id = "all", .claim = "Lemma 1"}, all, {0.002, "smallest effect", false}).verdict == "inconclusive");
}

TEST_CASE("reverdict keeps a comparison with a model that did not train inconclusive, whatever its interval", "[app][lint]") {
  json stored = check("untrained", {{"verdict", "inconclusive"}, {"holds", false},
                                    {"tolerance", {{"estimate", 0.6}, {"std_error", 0.02}, {"lower_bound", 0.57}, {"upper_bound", 0.63},
                                                   {"effect_that_counts", 0.0}, {"model_did_not_train", "COMET stayed at ln 10"},
                                                   {"verdict_without_training_rule", "holds"}}}});
  reverdict(stored);
  CHECK(stored["verdict"] == "inconclusive");
  CHECK(stored["holds"] == false);
  // The same interval without the record holds.
  stored["tolerance"].erase("model_did_not_train");
  reverdict(stored);
  CHECK(stored["verdict"] == "holds");
}
