#include <sparseact/app/lint.hpp>

#include <cmath>
#include <map>
#include <regex>
#include <utility>

#include <fmt/format.h>

#include <sparseact/app/checks.hpp>

namespace sparseact::app {
namespace {

using nlohmann::json;

bool matches(const std::string& text, const std::regex& pattern) { return std::regex_search(text, pattern); }

const std::regex& beyond_paper() {
  static const std::regex r("beyond the paper", std::regex::icase);
  return r;
}
const std::regex& cannot_fail() {
  static const std::regex r(R"(always (true|holds)|by construction|cannot fail|can't fail|could not fail|cannot be violated)",
                            std::regex::icase);
  return r;
}
// A departure told in prose: a stand-in named, or one data set put for the paper's.
const std::regex& stand_in() {
  static const std::regex r(R"(stands? in for|stand-in|in place of|substitut|\bfor (the paper's )?(CIFAR|ImageNet|MNIST|DINOv2|C4)\b)",
                            std::regex::icase);
  return r;
}

double number_or(const json& j, const char* key, double otherwise) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : otherwise;
}

/// The last number after `label` in `text` ("…the effect that counts, fixed before the data: 0.1)" → 0.1).
bool number_after(const std::string& text, const std::string& label, double& value) {
  const std::size_t at = text.find(label);
  if (at == std::string::npos) return false;
  static const std::regex num(R"([-+]?[0-9]*\.?[0-9]+(e[-+]?[0-9]+)?)");
  std::smatch m;
  const std::string rest = text.substr(at + label.size());
  if (!std::regex_search(rest, m, num)) return false;
  value = std::stod(m.str());
  return true;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

}  // namespace

std::vector<std::string> lint_result(const json& result, const std::string& where) {
  std::vector<std::string> out;
  if (!result.is_object() || !result.contains("checks") || !result["checks"].is_array()) return out;
  std::map<std::pair<std::string, std::string>, std::string> seen;  // (measured, predicted) → first id
  for (const json& c : result["checks"]) {
    const std::string kind = c.value("kind", std::string("claim"));
    if (kind != "claim" && kind != "own-question") continue;
    const std::string id = c.value("id", std::string("?"));
    const auto offence = [&](const char* rule, const std::string& what) { out.push_back(fmt::format("{} › {}: {}: {}", where, id, rule, what)); };
    const std::string claim = c.value("claim", std::string()), note = c.value("note", std::string());
    const std::string departure = c.value("departure", std::string());
    const json& tol = c.value("tolerance", json());

    if (matches(claim, beyond_paper())) offence("beyond-paper", "the claim says \"beyond the paper\": an own question, not the paper's claim");
    std::smatch m;
    if (std::regex_search(note, m, cannot_fail())) offence("cannot-fail", "the note says \"" + m.str() + "\": a self-check, not evidence");
    if (tol.is_object() && tol.value("deterministic_data", false))
      offence("deterministic", "a statistical test on numbers with no random draw: a self-check");
    if (departure.empty() && std::regex_search(note, m, stand_in()))
      offence("stand-in", "the note names a departure (\"" + m.str() + "\") and the departure field is empty");

    const std::string measured = format_value(c.value("measured", json())), predicted = format_value(c.value("predicted", json()));
    const auto [first, fresh] = seen.emplace(std::make_pair(measured, predicted), id);
    if (!fresh) offence("duplicate", "the same measured and predicted values as " + first->second + " (one comparison counted twice)");

    if (tol.is_object() && tol.contains("estimate") && tol["estimate"].is_number()) {
      const double est = tol["estimate"].get<double>();
      double lo = number_or(tol, "lower_bound", -INFINITY), hi = number_or(tol, "upper_bound", INFINITY);
      if (tol.contains("interval") && tol["interval"].is_array() && tol["interval"].size() == 2 && tol["interval"][0].is_number())
        lo = tol["interval"][0].get<double>(), hi = tol["interval"][1].get<double>();
      const double slack = 1e-12 * std::max(1.0, std::abs(est));
      if (est < lo - slack || est > hi + slack)
        offence("outside-bounds", fmt::format("the estimate {:.6g} lies outside its own interval [{:.6g}, {:.6g}]", est, lo, hi));
      if (tol.contains("range") && tol["range"].is_array() && tol["range"].size() == 2) {
        const double r_lo = tol["range"][0].get<double>(), r_hi = tol["range"][1].get<double>();
        for (const double v : {est, lo, hi})
          if (std::isfinite(v) && (v < r_lo - slack || v > r_hi + slack))
            offence("outside-bounds", fmt::format("{:.6g} lies outside the parameter's range [{:.6g}, {:.6g}]", v, r_lo, r_hi));
      }
    }

    if (tol.is_object() && tol.contains("effect_that_counts") && c.value("predicted", json()).is_string()) {
      const std::string p = c["predicted"].get<std::string>();
      const double counts = tol["effect_that_counts"].get<double>();
      double named = 0;
      if (number_after(p, "the effect that counts", named) && !close(named, counts))
        offence("unused-effect", fmt::format("predicted names the effect that counts {:.6g}; the verdict used {:.6g}", named, counts));
      if (p.find("the paper's") != std::string::npos && !tol.value("effect_papers", false))
        offence("unused-effect", "predicted names the paper's effect; the verdict did not use one");
    }
  }
  return out;
}

}  // namespace sparseact::app
