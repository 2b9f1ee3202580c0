#include <sparseact/app/gpu_twin.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include <sparseact/app/checks.hpp>
#include <sparseact/cuda/runtime.hpp>

namespace sparseact::app {

namespace {

/// "routing.comet_forward masks" → "routing_comet_forward_masks"
std::string slug(const std::string& path) {
  std::string s;
  for (char ch : path) s += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  return s;
}

/// NaN and ∞ as JSON cannot hold them (null would read as "agrees" to a careless reader).
json number_or_text(double v) { return std::isfinite(v) ? json(v) : json(fmt::format("{}", v)); }

}  // namespace

std::string twin_records_to_text(const std::vector<twin::Agreement>& records) {
  json j = json::array();
  for (const twin::Agreement& r : records)
    j.push_back({{"path", r.path}, {"slice", r.slice}, {"rule", twin::to_string(r.rule)}, {"error", number_or_text(r.error)},
                 {"tolerance", r.tolerance}, {"cpu_s", r.cpu_s}});
  return j.dump();
}

std::vector<twin::Agreement> twin_records_from_text(const std::string& text, int rank) {
  std::vector<twin::Agreement> out;
  for (const json& j : json::parse(text)) {
    twin::Agreement r;
    r.path = j.at("path"), r.slice = j.at("slice");
    r.rule = j.at("rule") == "identical" ? twin::Rule::identical : twin::Rule::relative;
    r.error = j.at("error").is_number() ? j.at("error").get<double>() : std::stod(j.at("error").get<std::string>());
    r.tolerance = j.at("tolerance"), r.cpu_s = j.at("cpu_s"), r.rank = rank;
    out.push_back(std::move(r));
  }
  return out;
}

int add_twin_checks(Analysis& a, const std::vector<twin::Agreement>& records, double elapsed_s) {
  double cost = 0;
  for (const twin::Agreement& r : records) cost += r.cpu_s;
  const double share = elapsed_s > 0 ? cost / elapsed_s : 0;
  a.result.environment["gpu"] = cuda::device_name();
  a.result.data["gpu_twin"] = {{"comparisons", records.size()},
                               {"cpu_s", cost},
                               {"elapsed_s", elapsed_s},
                               {"share_of_wall_time", share},
                               {"budget_share", 0.05},
                               {"within_budget", share <= 0.05}};
  if (records.empty()) a.result.data["gpu_twin"]["note"] = "no GPU work in this run (every item resumed from a checkpoint?)";
  int disagreements = 0;
  for (const twin::Agreement& r : records) {
    const bool identical = r.rule == twin::Rule::identical;
    Check& c = at_most(a,
                       {.id = "gpu_twin_" + slug(r.path) + (r.rank > 0 ? fmt::format("_rank{}", r.rank) : ""),
                        .claim = "— the GPU twin (sparseact's own promise, docs/DESIGN.md Devices; not the paper's)",
                        .statement = identical ? fmt::format("{} on the GPU is identical to the CPU's", r.path)
                                               : fmt::format("{} on the GPU agrees with the CPU's to {:g} relative", r.path, r.tolerance),
                        .note = fmt::format("CPU twin: {}{}; it cost {:.3g} s", r.slice, r.rank > 0 ? fmt::format(" (rank {})", r.rank) : "", r.cpu_s),
                        .detail = {{"rule", twin::to_string(r.rule)}, {"cpu_s", r.cpu_s}, {"rank", r.rank}},
                        .kind = Kind::self_check},
                       r.error, r.tolerance);
    c.measured = number_or_text(r.error);
    if (!r.agrees()) {
      ++disagreements;
      fmt::print(stderr, "{}: error: the GPU disagrees with its CPU twin on {}: {} {} > tolerance {:g} ({}); its results are not trusted\n",
                 a.info().name, r.path, identical ? "entries differing:" : "relative difference", r.error, r.tolerance, r.slice);
    }
  }
  return disagreements;
}

}  // namespace sparseact::app
