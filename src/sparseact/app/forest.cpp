#include <sparseact/app/forest.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include <fmt/format.h>

namespace sparseact::app {

namespace {

using nlohmann::json;

double number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

/// The relation a deterministic check's `predicted` states, +1 for ≤ and < (the margin is bound − measured), −1 for
/// ≥ and > (measured − bound), 0 when it names none; `rest` is what follows the symbol.
int relation_sign(const std::string& predicted, std::string& rest) {
  static const std::pair<const char*, int> symbols[] = {{"≤", 1}, {"≥", -1}, {"<", 1}, {">", -1}};
  std::size_t best = std::string::npos;
  int sign = 0;
  std::size_t length = 0;
  for (const auto& [symbol, s] : symbols) {
    const std::size_t at = predicted.find(symbol);
    if (at < best) best = at, sign = s, length = std::string(symbol).size();
  }
  if (best != std::string::npos) rest = predicted.substr(best + length);
  return sign;
}

/// margin ÷ max(|bound|, |measured|): 0 at the bound, in [−2, 2].
double relative_margin(int sign, double measured, double bound) {
  const double size = std::max(std::abs(bound), std::abs(measured));
  return size > 0 ? sign * (bound - measured) / size : 0.0;
}

/// A deterministic check's deciding margin (forest.hpp), or NaN where its JSON does not state the comparison.
double exact_margin(const json& check) {
  const json& measured = check.value("measured", json());
  const json& predicted = check.value("predicted", json());
  if (measured.is_number() && predicted.is_number()) {  // an equality
    const double m = measured.get<double>(), p = predicted.get<double>();
    return m == p ? 0.0 : -std::abs(relative_margin(1, m, p));
  }
  if (!predicted.is_string()) return NAN;
  std::string rest;
  const int sign = relation_sign(predicted.get<std::string>(), rest);
  if (sign == 0) return NAN;
  const json& detail = check.value("detail", json());
  if (detail.is_object() && detail.value("points", json()).is_array() && !detail["points"].empty()) {
    std::vector<double> margins;
    for (const auto& p : detail["points"]) {
      const double m = number(p, "measured"), b = number(p, "bound");
      margins.push_back(std::isfinite(m) && std::isfinite(b) ? relative_margin(sign, m, b) : -2.0);  // NaN counts as the worst
    }
    std::sort(margins.begin(), margins.end(), std::greater<>());
    const double required = number(check.value("tolerance", json()), "required");
    const std::size_t k = std::isfinite(required) && required >= 1 ? std::min<std::size_t>(std::size_t(required), margins.size()) : margins.size();
    return margins[k - 1];
  }
  if (!measured.is_number()) return NAN;
  char* end = nullptr;
  const double bound = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str() || !std::isfinite(bound)) return NAN;
  return relative_margin(sign, measured.get<double>(), bound);
}

// The plot's visible span in threshold units: intervals are clipped to it (a clipped end is still drawn at the edge).
constexpr double kLeft = -3, kRight = 4, kLabels = -8.5;

}  // namespace

std::optional<ForestRow> forest_row(const json& check, std::string label) {
  const json& t = check.value("tolerance", json());
  ForestRow row{.label = std::move(label), .verdict = check.value("verdict", std::string())};
  const double estimate = number(t, "estimate");
  if (!std::isfinite(estimate)) {
    const double m = exact_margin(check);
    if (!std::isfinite(m)) return std::nullopt;
    row.estimate = row.lo = row.hi = m, row.exact = true;
    return row;
  }
  double lo = number(t, "lower_bound"), hi = number(t, "upper_bound");
  if (std::isfinite(lo) && std::isfinite(hi)) {
    // A direction: its effect that counts, else the effect its power is reported at (only the sign decided).
    double scale = number(t, "effect_that_counts");
    if (!(scale > 0)) scale = number(check.value("power", json()), "effect");
    if (!(scale > 0)) return std::nullopt;
    row.scale = scale;
  } else if (t.is_object() && t.contains("interval") && t["interval"].is_array() && t["interval"].size() == 2 && number(t, "margin") > 0) {
    lo = t["interval"][0].get<double>(), hi = t["interval"][1].get<double>();
    row.scale = number(t, "margin"), row.equivalence = true;
  } else {
    return std::nullopt;
  }
  row.estimate = estimate / row.scale, row.lo = lo / row.scale, row.hi = hi / row.scale;
  return row;
}

std::string verdict_color(const std::string& verdict) {
  static const std::map<std::string, std::string> colors = {
      {"holds", "#009e73"},          {"not refuted", "#0072b2"}, {"direction only", "#cc79a7"}, {"inconclusive", "#e69f00"},
      {"not reproduced", "#d55e00"}, {"contradicted", "#000000"}, {"erratum", "#000000"}};
  const auto it = colors.find(verdict);
  return it == colors.end() ? "#999999" : it->second;
}

plot::Figure forest_figure(const std::string& paper, const std::vector<ForestRow>& rows) {
  const double n = double(rows.size());
  plot::Figure fig{.name = "forest_" + paper,
                   .title = fmt::format("Paper {}: each claim against the threshold that decided it", paper),
                   .xlabel = "● θ̂ / threshold (0: no effect, 1: the effect that counts, ±1: a margin)   ◆ exact: margin / |bound|",
                   .ylabel = "",
                   .xrange = std::pair{kLabels, kRight},
                   .yrange = std::pair{0.0, n + 1},
                   .width = 1600,
                   .height = std::max(300, 140 + 24 * int(rows.size())),
                   .legend = "outside right"};
  const auto clip = [](double v) { return std::clamp(v, kLeft, kRight); };
  std::map<std::string, plot::Series> points;  // verdict → its estimates
  std::map<std::string, bool> named;           // verdict → its legend entry written
  bool equivalence = false;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ForestRow& r = rows[i];
    const double y = n - double(i);
    const std::string color = verdict_color(r.verdict);
    if (!r.exact) {
      fig.series.push_back({.x = {clip(r.lo), clip(r.hi)}, .y = {y, y}, .label = named[r.verdict] ? std::string() : r.verdict,
                            .style = plot::Style::lines, .color = color, .width = 3});
      named[r.verdict] = true;
    }
    plot::Series& p = points[(r.exact ? "exact " : "") + r.verdict];
    p.style = plot::Style::points, p.color = color, p.point_type = r.exact ? 13 : 7;
    if (r.exact && !named[r.verdict]) p.label = r.verdict, named[r.verdict] = true;  // a verdict only exact checks reached
    p.x.push_back(clip(r.estimate)), p.y.push_back(y);
    // An interval past the plot's edge is drawn to the edge; its label says where θ̂ lies.
    const bool clipped = r.estimate < kLeft || r.estimate > kRight;
    fig.annotations.push_back({.x = kLabels + 0.1, .y = y, .text = clipped ? fmt::format("{} [θ̂ at {:.3g}]", r.label, r.estimate) : r.label});
    equivalence = equivalence || r.equivalence;
  }
  for (auto& [verdict, p] : points) fig.series.push_back(std::move(p));
  fig.lines.push_back({.at = 0, .vertical = true, .label = "0"});
  fig.lines.push_back({.at = 1, .vertical = true, .label = "the effect that counts"});
  if (equivalence) fig.lines.push_back({.at = -1, .vertical = true, .label = "−Δ"});
  fig.lines.push_back({.at = kLeft - 0.05, .vertical = true, .label = "", .color = "gray80"});  // where the labels end
  return fig;
}

}  // namespace sparseact::app
