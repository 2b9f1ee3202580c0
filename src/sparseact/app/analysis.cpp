#include <sparseact/app/analysis.hpp>

#include <algorithm>
#include <charconv>
#include <system_error>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <sparseact/app/checks.hpp>
#include <sparseact/app/output_set.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/version.hpp>

namespace sparseact::app {

namespace fs = std::filesystem;

Analysis::Analysis(AnalysisInfo info) : info_(std::move(info)), app_(std::make_unique<CLI::App>(info_.description, info_.name)) {
  auto& app = *app_;
  common.out = "results/" + info_.name;
  scale_flag_ = info_.default_scale == Scale::paper ? "paper" : "quick";
  app.add_option("--seed", common.seed, "random seed; every stream derives from it")->capture_default_str();
  app.add_option("--out", common.out, "output folder")->capture_default_str();
  app.add_option("--device", common.device_flag, "where to compute")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  app.add_option("--scale", scale_flag_, "quick: seconds, for tests; paper: the paper's setting")
      ->check(CLI::IsMember({"quick", "paper"}))->capture_default_str();
  app.add_option("--threads", common.threads, "OpenMP threads (0: all cores; BLAS follows OPENBLAS_NUM_THREADS); results do not depend on it")
      ->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_flag("--pdf", common.pdf, "also write figures as PDF");
  app.set_version_flag("--version", std::string(info_.name) + " (sparseact " + version() + ")");
}

std::unique_ptr<Progress> Analysis::progress(const std::string& label, std::size_t total) const {
  return std::make_unique<Progress>(info_.name + ": " + label, total);
}

json Analysis::collect_params() const {
  json params = json::object();
  for (const CLI::Option* opt : app_->get_options()) {
    const std::string name = opt->get_single_name();
    if (name.empty() || name == "help" || name == "version") continue;
    if (opt->get_items_expected_max() == 0) {  // a flag: present or not
      params[name] = opt->count() > 0;
      continue;
    }
    std::string text;
    if (opt->count() > 0) {
      const auto& results = opt->results();
      for (std::size_t i = 0; i < results.size(); ++i) text += (i ? "," : "") + results[i];
    } else {
      text = opt->get_default_str();
    }
    // Numbers and booleans as JSON values, everything else as text.
    json value = text;
    if (!text.empty()) {
      json parsed = json::parse(text, nullptr, false);
      if (!parsed.is_discarded() && (parsed.is_number() || parsed.is_boolean())) value = parsed;
    }
    params[name] = value;
  }
  return params;
}

namespace {

/// Values on the command line mean what a person reads: integers in base 10 (CLI11 alone reads
/// "0100" as octal 64), within the type's range (not wrapped or saturated: "-1" for an unsigned seed,
/// 2^70), finite floats (NaN passes every range check), and no empty text. The canonical text
/// replaces the argument, so `params` records exactly the value that ran.
void read_values_as_written(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    std::string type = opt->get_type_name();  // "INT:INT in [1 - 64]": the type, then the validators
    type = type.substr(0, type.find(':'));
    if (type == "INT" || type == "UINT") {
      const bool is_unsigned = type == "UINT";
      opt->transform(
          [is_unsigned](std::string text) {
            const char* first = text.data();
            const char* last = first + text.size();
            if (first != last && *first == '+') ++first;
            std::errc ec{};
            const char* end = nullptr;
            std::string canonical;
            if (is_unsigned) {
              std::uint64_t v = 0;
              auto r = std::from_chars(first, last, v, 10);
              ec = r.ec, end = r.ptr, canonical = std::to_string(v);
            } else {
              std::int64_t v = 0;
              auto r = std::from_chars(first, last, v, 10);
              ec = r.ec, end = r.ptr, canonical = std::to_string(v);
            }
            if (first == last || end != last || ec != std::errc{})
              throw CLI::ValidationError(fmt::format("'{}' is not {} in base 10", text,
                                                     is_unsigned ? "a non-negative integer" : "an integer"));
            return canonical;
          },
          "", "decimal integer");
    } else if (type == "FLOAT") {
      opt->transform(
          [](std::string text) {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !std::isfinite(v))
              throw CLI::ValidationError(fmt::format("'{}' is not a finite number", text));
            return text;
          },
          "", "finite number");
    } else if (opt->get_items_expected_max() > 0) {
      // An empty value given on purpose (--weights '') is never a choice; it would read as "absent".
      opt->transform(
          [](std::string text) {
            if (text.empty()) throw CLI::ValidationError("an empty value is not allowed");
            return text;
          },
          "", "non-empty");
    }
  }
}

}  // namespace

int Analysis::run(int argc, char** argv, const std::function<void(Analysis&)>& body) {
  try {
    read_values_as_written(*app_);
    app_->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app_->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app_->exit(e);
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    for (auto& ch : msg)
      if (ch == '\n') ch = ' ';
    fmt::print(stderr, "{}: error: {}\n", info_.name, msg);
    return exit_bad_input;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    common.scale = scale_flag_ == "paper" ? Scale::paper : Scale::quick;
    for (auto& resolve : resolvers_) resolve(common.scale);
    if (!info_.gpu_path && common.device_flag == "cuda")
      throw InputError(fmt::format("--device cuda: {} has no GPU code path; use --device cpu or auto", info_.name));
    common.device = info_.gpu_path ? resolve_device(common.device_flag) : Device::cpu;
    // --threads sets OpenMP's team only. OpenBLAS keeps its own pool (OPENBLAS_NUM_THREADS): its
    // reductions are partitioned by its thread count, so leaving it alone keeps every number
    // identical for any --threads (benchmarks pin both sides' BLAS threads themselves).
    if (common.threads > 0) omp_set_num_threads(common.threads);
    if (common.out.empty()) throw InputError("--out: must name a folder");
    require_writable_folder(common.out);

    result.analysis = info_.name;
    result.paper = info_.paper;
    result.claims = info_.claims;
    result.seed = common.seed;
    result.device = to_string(common.device);
    result.version = version();
    body(*this);
  } catch (const InputError& e) {
    fmt::print(stderr, "{}: error: {}\n", info_.name, e.what());
    return exit_bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: internal error: {}\n", info_.name, e.what());
    return exit_internal;
  }
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    return write_outputs();
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: internal error while writing {}: {}\n", info_.name, common.out, e.what());
    return exit_internal;
  }
}

int Analysis::write_outputs() {
  result.params = collect_params();
  const fs::path out = normalise_out(common.out);
  remove_stale_staging(out);
  const fs::path dir = make_staging(out);
  try {
    for (const auto& table : result.tables) {
      write_file_atomic(dir / (table.name + ".csv"), to_csv(table));
      result.files.push_back(table.name + ".csv");
    }
    std::string plot_error;
    plot::RenderOptions options;
    options.pdf = common.pdf;
    for (const auto& fig : figures) {
      try {
        for (auto& file : plot::render(fig, dir, options)) result.figures.push_back(file);
      } catch (const PlotError& e) {
        plot_error = e.what();
        break;
      }
    }
    result.files.insert(result.files.end(), result.figures.begin(), result.figures.end());
    if (!plot_error.empty()) result.data["figure_error"] = plot_error;
    write_file_atomic(dir / (info_.name + ".json"), to_json(result).dump(2) + "\n");
    publish(dir, out, info_.name + ".json");
    print_checks(result);
    if (!plot_error.empty()) {
      fmt::print(stderr, "{}: error: figures not rendered: {} (data and JSON written to {})\n", info_.name, plot_error,
                 out.string());
      return exit_internal;
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw;
  }
  return result.all_hold() ? exit_ok : exit_check_failed;
}

void require_writable_folder(const fs::path& dir, const std::string& flag) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) throw InputError(fmt::format("{} {}: exists and is not a folder", flag, dir.string()));
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      throw InputError(fmt::format("{} {}: the folder is not writable", flag, dir.string()));
    return;
  }
  // Walk up to the nearest existing ancestor: create_directories will start there.
  fs::path parent = fs::absolute(dir, ec).parent_path();
  while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path()) parent = parent.parent_path();
  if (!fs::is_directory(parent, ec))
    throw InputError(fmt::format("{} {}: cannot be created ({} is not a folder)", flag, dir.string(), parent.string()));
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{} {}: cannot be created ({} is not writable)", flag, dir.string(), parent.string()));
}

std::vector<double> parse_number_list(const std::string& flag, const std::string& text, double lo, double hi,
                                      bool integers) {
  std::vector<double> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    char* rest = nullptr;
    const double v = std::strtod(item.c_str(), &rest);
    if (item.empty() || *rest != '\0' || !(v >= lo && v <= hi) || (integers && v != std::floor(v)))
      throw InputError(fmt::format("{}: '{}' is not a comma-separated list of {} in [{}, {}]", flag, text,
                                   integers ? "integers" : "numbers", lo, hi));
    out.push_back(v);
    pos = end + 1;
  }
  return out;
}

void print_checks(const Result& r) {
  fmt::print("{} (paper {}): {} checks, results in JSON\n", r.analysis, r.paper, r.checks.size());
  for (const auto& c : r.checks) {
    fmt::print("  [{}] {:<28} {}: measured {} vs predicted {}\n", c.holds ? "holds" : "FAILS", c.id, c.claim,
               format_value(c.measured), format_value(c.predicted));
  }
}

}  // namespace sparseact::app
