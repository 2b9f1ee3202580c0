// The report's forest plot (app/forest): each claim's interval in units of the threshold that decided it.
#include <catch2/catch.hpp>

#include <sparseact/app/forest.hpp>

using namespace sparseact::app;
using nlohmann::json;

namespace {
json direction(double estimate, double lo, double hi, double counts, double power_effect, const char* verdict = "holds") {
  return {{"verdict", verdict},
          {"tolerance", {{"estimate", estimate}, {"lower_bound", lo}, {"upper_bound", hi}, {"effect_that_counts", counts}}},
          {"power", {{"effect", power_effect}}}};
}
}  // namespace

TEST_CASE("forest_row: a direction in units of its effect that counts, else of its power's effect; an equivalence in units of Δ",
          "[app][report][forest]") {
  const auto a = forest_row(direction(0.25, 0.1, 0.4, 0.5, 0.2), "a");
  REQUIRE(a);
  CHECK(a->scale == 0.5);
  CHECK(a->estimate == Approx(0.5));
  CHECK(a->lo == Approx(0.2));
  CHECK(a->hi == Approx(0.8));
  CHECK_FALSE(a->equivalence);
  // Only the sign decided (effect that counts 0): the smallest effect of interest its power is reported at.
  const auto b = forest_row(direction(0.05, -0.01, 0.11, 0.0, 0.1, "inconclusive"), "b");
  REQUIRE(b);
  CHECK(b->scale == 0.1);
  CHECK(b->hi == Approx(1.1));
  CHECK(b->verdict == "inconclusive");
  const json eq = {{"verdict", "holds"}, {"tolerance", {{"estimate", -0.005}, {"interval", {-0.02, 0.01}}, {"margin", 0.04}}}};
  const auto c = forest_row(eq, "c");
  REQUIRE(c);
  CHECK(c->equivalence);
  CHECK(c->lo == Approx(-0.5));
  CHECK(c->hi == Approx(0.25));
  // No interval (a deterministic comparison), or nothing to scale by: no row.
  CHECK_FALSE(forest_row({{"verdict", "holds"}, {"tolerance", {{"bound", 1.0}}}}, "d"));
  CHECK_FALSE(forest_row(direction(0.05, 0.01, 0.09, 0.0, 0.0), "e"));
}

TEST_CASE("forest_figure: a segment per claim, one legend entry per verdict, thresholds at 0 and 1 (and −1 with an equivalence)",
          "[app][report][forest]") {
  std::vector<ForestRow> rows{*forest_row(direction(0.25, 0.1, 0.4, 0.5, 0.2), "first"),
                              *forest_row(direction(0.3, 0.2, 0.4, 0.5, 0.2), "second"),
                              *forest_row(direction(-9.0, -10.0, -8.0, 0.5, 0.2, "not reproduced"), "far left")};
  const sparseact::plot::Figure f = forest_figure("042", rows);
  CHECK(f.name == "forest_042");
  REQUIRE(f.series.size() == 3 + 2);  // three segments, then the estimates of each verdict
  CHECK(f.series[0].label == "holds");
  CHECK(f.series[1].label.empty());  // the verdict is in the legend once
  CHECK(f.series[2].label == "not reproduced");
  CHECK(f.series[0].y == std::vector<double>{3, 3});  // the first claim on top
  CHECK(f.series[0].color == verdict_color("holds"));
  CHECK(f.series[2].x == std::vector<double>{-3, -3});  // clipped at the plot's left edge
  REQUIRE(f.annotations.size() == 3);
  CHECK(f.annotations[2].text == "far left [θ̂ at -18]");  // past the edge: where θ̂ lies
  CHECK(f.annotations[0].text == "first");
  const auto at = [&](double x) { return std::any_of(f.lines.begin(), f.lines.end(), [&](const auto& l) { return l.vertical && l.at == x; }); };
  CHECK(at(0));
  CHECK(at(1));
  CHECK_FALSE(at(-1));
  rows.push_back(*forest_row({{"verdict", "holds"}, {"tolerance", {{"estimate", 0.0}, {"interval", {-0.02, 0.01}}, {"margin", 0.04}}}}, "eq"));
  CHECK(forest_figure("042", std::vector<ForestRow>(12, rows[0])).height > f.height);  // 24 px a claim past 300
  const auto g = forest_figure("042", rows);
  CHECK(std::any_of(g.lines.begin(), g.lines.end(), [](const auto& l) { return l.vertical && l.at == -1; }));
  CHECK(verdict_color("no such verdict") == "#999999");
}
