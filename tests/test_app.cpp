// app/: the check helpers derive `predicted`, `holds` and `tolerance` from one comparison; speed
// checks never hold on a noisy machine; --out is vetted before any work; values print readably.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>

#include "support.hpp"

using namespace sparseact;
using namespace sparseact::app;

namespace {

Analysis test_analysis() { return Analysis({.name = "unit", .paper = "042", .claims = {"Lemma 1"}}); }

}  // namespace

TEST_CASE("comparison checks hold exactly when the comparison does, tolerance in the claim's favour", "[app][checks]") {
  Analysis a = test_analysis();
  CHECK(at_most(a, {.id = "a", .claim = "Lemma 1", .statement = "x ≤ 1"}, 1.0, 1.0).holds);
  CHECK_FALSE(at_most(a, {.id = "b", .claim = "Lemma 1"}, 1.0 + 1e-9, 1.0).holds);
  CHECK(at_most(a, {.id = "c", .claim = "Lemma 1"}, 1.0 + 1e-9, 1.0, 1e-8).holds);
  CHECK(at_least(a, {.id = "d", .claim = "Lemma 1"}, 2.0, 1.0).holds);
  CHECK_FALSE(less_than(a, {.id = "e", .claim = "Lemma 1"}, 1.0, 1.0).holds);
  CHECK(greater_than(a, {.id = "f", .claim = "Lemma 1"}, 1.5, 1.0).holds);
  CHECK_FALSE(at_most(a, {.id = "nan", .claim = "Lemma 1"}, std::nan(""), 1.0).holds);  // a broken measurement fails
  const Check& c = a.result.checks.front();
  CHECK(c.claim == "paper 042 Lemma 1");
  CHECK(c.predicted == "≤ 1");
  CHECK(c.measured == 1.0);
  CHECK(a.result.checks.size() == 7);
  CHECK_FALSE(a.result.all_hold());
}

TEST_CASE("close_to, within, interval_contains, equals and significant", "[app][checks]") {
  Analysis a = test_analysis();
  CHECK(close_to(a, {.id = "a", .claim = "Lemma 1"}, 9.05, 9.0, 0.0, 0.01).holds);
  CHECK_FALSE(close_to(a, {.id = "b", .claim = "Lemma 1"}, 9.2, 9.0, 0.1, 0.01).holds);
  CHECK(within(a, {.id = "c", .claim = "Lemma 1"}, 0.5, 0.0, 1.0).holds);
  CHECK_FALSE(within(a, {.id = "d", .claim = "Lemma 1"}, 1.5, 0.0, 1.0).holds);
  CHECK(interval_contains(a, {.id = "e", .claim = "Lemma 1"}, 8.5, 9.5, 9.0).holds);
  CHECK_FALSE(interval_contains(a, {.id = "f", .claim = "Lemma 1"}, 9.1, 9.5, 9.0).holds);
  CHECK(equals(a, {.id = "g", .claim = "Lemma 1"}, 161172, 161172).holds);
  CHECK_FALSE(equals(a, {.id = "h", .claim = "Lemma 1"}, 161171, 161172).holds);
  CHECK(significant(a, {.id = "i", .claim = "Lemma 1"}, 0.01, 0.05, "paired t-test").holds);
  CHECK_FALSE(significant(a, {.id = "j", .claim = "Lemma 1"}, 0.05, 0.05, "paired t-test").holds);
}

TEST_CASE("per-point checks count the points, report the worst margin and keep every point in detail", "[app][checks]") {
  Analysis a = test_analysis();
  const std::vector<Point> pts{{"K = 1", 0.5, 1.0}, {"K = 2", 0.9, 1.0}, {"K = 4", 1.2, 1.0}};
  const Check& all = for_all(a, {.id = "all", .claim = "Lemma 1"}, Relation::at_most, pts, "K values");
  CHECK_FALSE(all.holds);
  CHECK(all.measured == "2 of 3 K values; worst margin -0.2 (K = 4)");
  REQUIRE(all.detail["points"].size() == 3);
  CHECK(all.detail["points"][2]["holds"] == false);
  CHECK(for_most(a, {.id = "most", .claim = "Lemma 1"}, Relation::at_most, pts, "K values").holds);
  CHECK_FALSE(count(a, {.id = "three", .claim = "Lemma 1"}, Relation::at_most, pts, "K values", 3).holds);
  CHECK(for_all(a, {.id = "tol", .claim = "Lemma 1"}, Relation::at_most, pts, "K values", 0.25).holds);
  const std::vector<Point> one_nan{{"a", 0.5, 1.0}, {"b", std::nan(""), 1.0}};
  CHECK_FALSE(for_all(a, {.id = "nan", .claim = "Lemma 1"}, Relation::at_most, one_nan, "points").holds);
}

TEST_CASE("a speed check holds only when the ratio of medians reaches the target beyond the noise", "[app][speed]") {
  // The case: a measured ratio of 0.46 against a target of 1 on a loaded machine never holds.
  const std::vector<double> ours{2.0, 2.2, 4.8, 1.1, 6.0}, peer{0.5, 1.0, 2.0, 0.9, 1.2};
  const SpeedVerdict noisy = speed_verdict(ours, peer, 1.0);
  CHECK(noisy.ratio == Approx(1.0 / 2.2));  // medians 1.0 and 2.2
  CHECK_FALSE(noisy.holds);
  CHECK(noisy.inconclusive);  // spread > 1.2: the target lies within ratio·(1 + spread)
  CHECK(noisy.verdict == "inconclusive: machine too noisy");

  const std::vector<double> quiet_ours{1.00, 1.01, 0.99, 1.00, 1.02}, quiet_peer{0.46, 0.47, 0.46, 0.45, 0.46};
  const SpeedVerdict slow = speed_verdict(quiet_ours, quiet_peer, 1.0);
  CHECK_FALSE(slow.holds);
  CHECK_FALSE(slow.inconclusive);
  CHECK(slow.verdict == "does not hold");

  const std::vector<double> fast_peer{2.1, 2.0, 2.05, 1.98, 2.02};
  CHECK(speed_verdict(quiet_ours, fast_peer, 1.5).holds);
  // ratio 2.0 ≥ 1.9, but a 20% spread leaves 1.9 undecided
  const std::vector<double> jittery_ours{1.0, 0.9, 1.1, 0.8, 1.2};
  const SpeedVerdict close = speed_verdict(jittery_ours, fast_peer, 1.9);
  CHECK(close.ratio >= 1.9);
  CHECK_FALSE(close.holds);
  CHECK(close.inconclusive);

  // one repeat a side: the noise is unknown, so even a clear ratio does not hold
  const SpeedVerdict single = speed_verdict({1.0}, {3.0}, 1.5);
  CHECK_FALSE(single.holds);
  CHECK(single.inconclusive);
  CHECK(single.verdict == "inconclusive: too few repeats to judge the noise");

  Analysis a = test_analysis();
  const Check& c = speedup_at_least(a, {.id = "speed", .claim = "benchmark target"}, ours, peer, 1.0);
  CHECK_FALSE(c.holds);
  CHECK(c.tolerance["verdict"] == "inconclusive: machine too noisy");
  CHECK(format_value(c.measured).find("inconclusive") != std::string::npos);
}

TEST_CASE("format_value reads as a person would write it, never raw JSON", "[app][checks]") {
  CHECK(format_value(json(0.123456789)) == "0.123457");
  CHECK(format_value(json(42)) == "42");
  CHECK(format_value(json("8 of 8 widths")) == "8 of 8 widths");
  CHECK(format_value(json::array({1.5, 2, "x"})) == "1.5, 2, x");
  CHECK(format_value(json{{"k1", 0.5}}) == "k1: 0.5");
  CHECK(format_value(json(true)) == "yes");
  CHECK(format_value(json(std::numeric_limits<double>::infinity())) == "∞");
}

TEST_CASE("the output folder is vetted before any work and nothing is created", "[app][cli]") {
  test_support::TempDir tmp;
  const auto file = tmp / "a_file";
  test_support::write_bytes(file, "x");
  CHECK_NOTHROW(require_writable_folder(tmp.path));
  CHECK_NOTHROW(require_writable_folder(tmp / "new" / "deeper"));
  CHECK_FALSE(std::filesystem::exists(tmp / "new"));
  CHECK_THAT(test_support::input_error([&] { require_writable_folder(file); }), Catch::Contains("not a folder"));
  CHECK_THAT(test_support::input_error([&] { require_writable_folder(file / "sub"); }), Catch::Contains("cannot be created"));
  if (::geteuid() != 0) {  // root writes anywhere
    std::filesystem::create_directories(tmp / "ro");
    std::filesystem::permissions(tmp / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    CHECK_THROWS_AS(require_writable_folder(tmp / "ro" / "x"), InputError);
    std::filesystem::permissions(tmp / "ro", std::filesystem::perms::owner_all);
  }
}
