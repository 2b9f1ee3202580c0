// sparseact_reclassify FILE.json … — issue 38's kinds, departures and effects for result files that took too
// long to recompute here (the at-scale runs, hours each, and the longest default runs). It sets only what
// the analyses' code now sets itself, read from the run's own notes, params and data; it computes no
// verdict: sparseact_report re-derives every verdict from the stored numbers (app::reverdict) and lists
// each one that changed. A file is rewritten atomically and marked ("reclassified") so a second pass is a no-op.
//
//   comet_train        departure: Fashion-MNIST for CIFAR-10, epochs, lr and widths (from the check's note)
//   comet_utilization  departure: Fashion-MNIST for CIFAR-10/100; the percentage bounds clipped to their range
//   momlp_classify     departure: Fashion-MNIST pixels for DINOv2 features / CIFAR pixels, expert width
//   momlp_regression   departure: expert width ≠ 1000; momlp_beats_equal_active_* is an own question;
//                      momlp_beats_baseline_*: Table 4's spread (mean ± sd over 10 runs, delta method on ln ratio)
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sparseact/app/checks.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/core/stats.hpp>

using nlohmann::json;

namespace {

std::string match(const std::string& text, const std::string& pattern, int group = 1) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? m[group].str() : std::string();
}

/// Bounds of θ = paper − ours (percentages) clipped to [paper − 100, paper], as the analysis now does.
void clip(json& c, double paper) {
  json& t = c["tolerance"];
  for (const char* key : {"lower_bound", "upper_bound"})
    if (t.contains(key) && t[key].is_number()) t[key] = std::clamp(t[key].get<double>(), paper - 100, paper);
}

int reclassify(json& r) {
  const std::string analysis = r.value("analysis", "");
  int changed = 0;
  for (json& c : r["checks"]) {
    const std::string id = c.value("id", ""), note = c.value("note", "");
    std::string departure;
    if (analysis == "comet_train") {
      std::smatch m;
      if (std::regex_search(note, m, std::regex(R"(Fashion-MNIST for CIFAR-10, .*?, (\d+) epochs \(A\.1: 100\), SGD lr (\S+) \(A\.1: 1e-4\), widths (\S+) \(A\.1)")))
        departure = fmt::format("Fashion-MNIST for CIFAR-10, {} epochs (A.1: 100), SGD lr {} (A.1: 1e-4), widths {}", m[1].str(), m[2].str(), m[3].str());
    } else if (analysis == "comet_utilization") {
      departure = "Fashion-MNIST images stand in for CIFAR-10's (and classes 5–9 for CIFAR-100)";
      if (id == "dead_fraction") clip(c, 7.6e-4);
      if (id == "models_with_dead") clip(c, 2.0);
    } else if (analysis == "momlp_classify") {
      const std::string w = match(note, R"(w = (\d+) \(App\. D\.3\.1: 1000\))");
      departure = fmt::format("Fashion-MNIST pixels for DINOv2 features (Table 5) and CIFAR pixels (Table 9); w = {} (App. D.3.1: 1000)", w);
    } else if (analysis == "momlp_regression") {
      const std::string w = match(note, R"(experts of width w = (\d+))");
      if (!w.empty() && w != "1000") departure = fmt::format("experts of width {} (App. D.3.1: 1000)", w);
      if (id.rfind("momlp_beats_equal_active_", 0) == 0) c["kind"] = "own-question";
      if (id.rfind("momlp_beats_baseline_", 0) == 0) {
        const std::string target = id.substr(std::string("momlp_beats_baseline_").size());
        const json& paper = r["data"]["table4"][target]["paper"];
        const double se = sparseact::stats::log_ratio_std_error(paper["baseline"][0].get<double>(), paper["baseline"][1].get<double>(), 10,
                                                                paper["momlp"][0].get<double>(), paper["momlp"][1].get<double>(), 10);
        const double value = c["power"]["effect"].get<double>(), alpha = c["tolerance"].value("alpha", 0.05);
        const sparseact::app::Effect e{value, "", true, se};
        c["tolerance"]["effect_papers"] = true;
        c["tolerance"]["effect_prefixed"] = false;
        c["tolerance"]["effect_spread"] = se;
        c["tolerance"]["effect_that_counts"] = sparseact::app::effect_that_counts(e, alpha);
        c["power"]["effect_source"] = c["power"].value("effect_source", "") +
                                      fmt::format("; its own SE {:.3f} from Table 4's sd over 10 runs (delta method)", se);
      }
    } else {
      continue;
    }
    c["departure"] = departure;
    ++changed;
  }
  r["reclassified"] = "issue 38: kinds, departures and effects set by sparseact_reclassify from this run's own notes and data; "
                      "verdicts re-derived by sparseact_report";
  return changed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sparseact_reclassify FILE.json …\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    json r = json::parse(in, nullptr, false);
    if (!in.good() && !in.eof()) return std::fprintf(stderr, "sparseact_reclassify: cannot read %s\n", argv[i]), 2;
    if (r.is_discarded() || !r.contains("checks")) return std::fprintf(stderr, "sparseact_reclassify: %s is not a result file\n", argv[i]), 2;
    if (r.contains("reclassified")) {
      std::printf("%s: already reclassified\n", argv[i]);
      continue;
    }
    const int n = reclassify(r);
    sparseact::write_file_atomic(argv[i], r.dump(2) + "\n");
    std::printf("%s: %d checks reclassified\n", argv[i], n);
  }
  return 0;
}
