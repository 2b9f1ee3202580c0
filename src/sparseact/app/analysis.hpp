#pragma once
// The analysis contract (docs/DESIGN.md) in one place: common flags, range checks, devices, exit codes,
// atomic outputs, progress. An analysis file declares its own flags, then hands a body to run():
//
//   int main(int argc, char** argv) {
//     app::Analysis a({.name = "mp_spectrum", .paper = "001", .claims = {"Theorem 5"}, .gpu_path = true});
//     int n = 0;
//     a.scaled_option("--n", n, 768, 3072, "rows of K")->check(CLI::Range(2, 20000));
//     return a.run(argc, argv, [&](app::Analysis& a) { ... app::at_most(a, {...}, measured, bound); });
//   }
//
// run() parses (bad flag: exit 2, one line, nothing written), checks that --out can be written and
// that the device can be used (exit 2 before any work otherwise), calls the body (InputError: exit
// 2, nothing written; other exceptions: exit 1), writes <name>.json, the CSV tables and the figures
// into --out atomically, prints the checks, and exits 0 when every check holds, 3 otherwise.
// The checks themselves are stated with the helpers of app/checks.hpp.
//
// A grid goes through sweep() (app/sweep.hpp): alone it runs the items on --threads compute
// threads; under mpirun or srun every rank parses the flags and builds the grid, the ranks share
// the items, and rank 0 alone reduces and writes, every rank exiting with rank 0's code.
#include <charconv>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include <sparseact/app/sweep.hpp>
#include <sparseact/core/device.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/progress.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/plot/figure.hpp>

namespace sparseact::app {

/// --scale quick (seconds; what tests run) or paper (the paper's setting where a 2-core machine can).
/// Without --scale an analysis runs its default_scale, unless it declares a default run of its own
/// (AnalysisInfo::standard_run): then Scale::standard, settings between the two, which figures/ holds.
/// (`standard` because `default` is a keyword; the flags' help and params call it "default".)
enum class Scale { quick, standard, paper };

struct AnalysisInfo {
  std::string name;   ///< executable and result name
  std::string paper;  ///< "001"
  std::vector<std::string> claims;
  std::string description;
  Scale default_scale = Scale::quick;
  /// Whether the body passes common.device to a GPU code path. Without one, --device auto runs on
  /// the CPU and --device cuda is bad input (exit 2), so the JSON's `device` is always where the
  /// work ran (docs/DESIGN.md, Devices).
  bool gpu_path = false;
  /// Whether a run without --scale has settings of its own (Scale::standard), given by the three-valued
  /// scaled_option; params then record scale "default", never a scale that did not run.
  bool standard_run = false;
};

/// The flags every analysis takes.
struct CommonFlags {
  std::uint64_t seed = 1;
  std::string out;  ///< default results/<name>
  std::string device_flag = "auto";
  Device device = Device::cpu;  ///< resolved from device_flag and AnalysisInfo::gpu_path
  Scale scale = Scale::quick;
  int threads = 0;  ///< 0: OpenMP's default; a sweep's items at once (0: the affinity mask's cores)
  bool pdf = false;
  bool resume = false;      ///< checkpoint sweep items under <out>/.sweep and reuse them
  bool list_items = false;  ///< print the sweep's items and exit
};

class Analysis {
 public:
  explicit Analysis(AnalysisInfo info);

  CLI::App& app() { return *app_; }
  const AnalysisInfo& info() const { return info_; }

  /// An option whose default depends on --scale; an explicit value always wins. Scale::standard takes
  /// the quick value here: an analysis with a standard run uses the three-valued form below.
  template <class T>
  CLI::Option* scaled_option(const std::string& name, T& var, T quick, T paper, const std::string& help) {
    auto* opt = app_->add_option(name, var, help + " [quick: " + to_text(quick) + ", paper: " + to_text(paper) + "]");
    resolvers_.push_back([opt, &var, quick, paper](Scale s) {
      if (opt->count() == 0) {
        var = (s == Scale::paper) ? paper : quick;
        opt->default_str(to_text(var));  // so params records the value used
      }
    });
    return opt;
  }
  /// T as a parameter that is not deduced from (C++17's spelling of std::type_identity_t), so that
  /// "32,64" initialises a std::string option.
  template <class T>
  using Given = typename std::common_type<T>::type;
  /// The same with a value for the default run too (AnalysisInfo::standard_run).
  template <class T>
  CLI::Option* scaled_option(const std::string& name, T& var, Given<T> quick, Given<T> standard, Given<T> paper, const std::string& help) {
    const auto shown = [](const T& v) { return to_text(v).empty() ? std::string("none") : to_text(v); };
    auto* opt = app_->add_option(name, var, help + " [quick " + shown(quick) + "; default " + shown(standard) + "; paper " + shown(paper) + "]");
    resolvers_.push_back([opt, &var, quick, standard, paper](Scale s) {
      if (opt->count() == 0) {
        var = s == Scale::paper ? paper : s == Scale::standard ? standard : quick;
        opt->default_str(to_text(var));
      }
    });
    return opt;
  }

  /// Parses flags and runs `body`; returns the process exit code.
  int run(int argc, char** argv, const std::function<void(Analysis&)>& body);

  CommonFlags common;
  Result result;
  std::vector<plot::Figure> figures;

  void add_table(Table table) { result.tables.push_back(std::move(table)); }
  void add_figure(plot::Figure fig) { figures.push_back(std::move(fig)); }
  /// A further output file (e.g. certificates.json), written beside the tables and listed in `files`.
  void add_text_file(std::string name, std::string text) { text_files_.emplace_back(std::move(name), std::move(text)); }
  /// Runs the items of `sweep` (here, or on every rank under MPI) and returns their records in
  /// index order on the rank that goes on to reduce. On the other ranks it does not return: they
  /// wait for rank 0's exit code. --list-items prints the items here and ends the run (exit 0).
  std::vector<Record> sweep(const Sweep& sweep);
  /// Whether this process writes the outputs (false on MPI ranks other than 0).
  bool writes_outputs() const;

  /// A progress bar on stderr, drawn after ~2 s when stderr is a terminal.
  std::unique_ptr<Progress> progress(const std::string& label, std::size_t total) const;

 private:
  template <class T>
  static std::string to_text(const T& v) {
    if constexpr (std::is_convertible_v<T, std::string>) {
      return std::string(v);
    } else if constexpr (std::is_floating_point_v<T>) {  // shortest round trip: 1e-12, not to_string's "0.000000"
      char buf[32];
      return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    } else {
      return std::to_string(v);
    }
  }
  json collect_params() const;
  /// The parameters that change results: params without where and how the run executes.
  json result_params() const;
  int write_outputs();
  int run_body(const std::function<void(Analysis&)>& body);
  void setup();
  /// Every rank states its status (0: fine); throws on failure somewhere (see analysis.cpp).
  void agree(int status, std::exception_ptr error);

  struct Agreement {
    bool reached = false;
    int failed_rank = -1;  ///< lowest rank that failed, −1 when none
    int code = 0;
  } agreement_;
  std::string item_order_ = "cost";
  std::vector<int> gpu_counts_;  ///< GPUs per rank, gathered at start under MPI
  /// The GPU twin's records (core/twin.hpp) of every rank, gathered after an MPI sweep, and how many
  /// of this process's own records they already hold.
  std::vector<twin::Agreement> gathered_twins_;
  std::size_t own_twins_gathered_ = 0;
  /// Self-checks from the GPU twin's records (app/gpu_twin.hpp), when the run computed on the GPU.
  void add_twin_self_checks();

  AnalysisInfo info_;
  std::vector<std::pair<std::string, std::string>> text_files_;
  std::unique_ptr<CLI::App> app_;
  std::string scale_flag_;
  std::vector<std::function<void(Scale)>> resolvers_;
};

/// Throws InputError unless `dir` is a writable folder or can be created as one: the nearest
/// existing ancestor must be a folder we may write into. Creates nothing.
void require_writable_folder(const std::filesystem::path& dir, const std::string& flag = "--out");

/// Parses a comma-separated list of numbers given to `flag` (e.g. --c 0.25,4), each in [lo, hi]
/// (and whole when `integers`); throws InputError naming the flag otherwise.
std::vector<double> parse_number_list(const std::string& flag, const std::string& text, double lo, double hi,
                                      bool integers = false);

/// Prints a result's checks as a table on stdout.
void print_checks(const Result& result);

}  // namespace sparseact::app
