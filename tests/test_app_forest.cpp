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
  // No interval and no stated comparison, or nothing to scale by: no row.
  CHECK_FALSE(forest_row({{"verdict", "holds"}, {"tolerance", {{"bound", 1.0}}}}, "d"));
  CHECK_FALSE(forest_row({{"verdict", "holds"}, {"measured", 3.0}, {"predicted", "about 3"}, {"tolerance", json::object()}}, "d"));
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

TEST_CASE("forest_row: an exact comparison sits at its deciding margin over the bound's size, 0 at the bound, right of 0 when "
          "it passes", "[app][report][forest]") {
  // A number against a printed bound: (9 − 8.1) / 9 = 0.1 for "≤ 9"; (0.05 − 0.1)/0.1 = −0.5 for "≥ 0.1".
  const auto below = forest_row({{"verdict", "holds"}, {"measured", 8.1}, {"predicted", "≤ 9"}, {"tolerance", {{"abs", 0.0}}}}, "a");
  REQUIRE(below);
  CHECK(below->exact);
  CHECK(below->estimate == Approx(0.1));
  CHECK(below->lo == below->hi);
  const auto above = forest_row({{"verdict", "erratum"}, {"measured", 0.05}, {"predicted", "≥ 0.1"}, {"tolerance", {{"abs", 0.0}}}}, "b");
  REQUIRE(above);
  CHECK(above->estimate == Approx(-0.5));
  // An equality: 0 when it holds, left of 0 by the relative gap when not.
  CHECK(forest_row({{"verdict", "holds"}, {"measured", 7}, {"predicted", 7}, {"tolerance", {{"abs", 0.0}}}}, "c")->estimate == 0.0);
  CHECK(forest_row({{"verdict", "fails"}, {"measured", 6}, {"predicted", 8}, {"tolerance", {{"abs", 0.0}}}}, "c")->estimate == Approx(-0.25));
  // app::count's points: for all points the worst margin decides; for k of n the k-th best. Margins here, (bound − measured)
  // / max(|bound|, |measured|): 0.5, −0.5 (measured 2 over bound 1), 10/9 (measured −9 under bound 1).
  const json points = json::array({{{"measured", 1.0}, {"bound", 2.0}}, {{"measured", 2.0}, {"bound", 1.0}}, {{"measured", -9.0}, {"bound", 1.0}}});
  json all = {{"verdict", "erratum"}, {"measured", "2 of 3 points; worst margin -1"}, {"predicted", "measured ≤ bound at all 3 points"},
              {"tolerance", {{"abs", 0.0}, {"required", 3}}}, {"detail", {{"points", points}}}};
  CHECK(forest_row(all, "d")->estimate == Approx(-0.5));
  all["tolerance"]["required"] = 2;
  all["predicted"] = "measured ≤ bound at ≥ 2 of 3 points";
  CHECK(forest_row(all, "d")->estimate == Approx(0.5));
  // "measured > bound": the margin is measured − bound.
  all["predicted"] = "measured > bound at all 3 points";
  all["tolerance"]["required"] = 3;
  CHECK(forest_row(all, "d")->estimate == Approx(-10.0 / 9));
}

TEST_CASE("forest_figure: an exact comparison is a diamond without a segment", "[app][report][forest]") {
  std::vector<ForestRow> rows{*forest_row(direction(0.25, 0.1, 0.4, 0.5, 0.2), "interval"),
                              *forest_row({{"verdict", "holds"}, {"measured", 8.1}, {"predicted", "≤ 9"}, {"tolerance", json::object()}}, "exact")};
  const auto f = forest_figure("042", rows);
  REQUIRE(f.series.size() == 1 + 2);  // one segment; the interval's estimate and the exact diamond
  const auto diamond = std::find_if(f.series.begin(), f.series.end(), [](const auto& s) { return s.point_type == 13; });
  REQUIRE(diamond != f.series.end());
  REQUIRE(diamond->x.size() == 1);
  CHECK(diamond->x[0] == Approx(0.1));
  CHECK(diamond->y == std::vector<double>{1});
}
