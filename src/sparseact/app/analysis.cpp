#include <sparseact/app/analysis.hpp>
#include <sparseact/core/blas_info.hpp>

#include <algorithm>
#include <atomic>
#include <thread>
#include <charconv>
#include <system_error>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>
#include <unistd.h>

#include <sparseact/app/checks.hpp>
#include <sparseact/app/cluster.hpp>
#include <sparseact/app/gpu_twin.hpp>
#include <sparseact/app/output_set.hpp>
#include <sparseact/app/price.hpp>
#include <sparseact/app/sweep_runner.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/version.hpp>
#include <sparseact/cuda/runtime.hpp>

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
  app.add_option("--scale", scale_flag_,
                 info_.standard_run ? "quick: seconds, for tests; paper: the paper's setting; without --scale: this analysis's default run "
                                      "(the flags' \"default\" values), which figures/ holds"
                                    : "quick: seconds, for tests; paper: the paper's setting")
      ->check(CLI::IsMember({"quick", "paper"}))->capture_default_str();
  app.add_option("--threads", common.threads, "OpenMP threads, and the work items a sweep runs at once (0: all cores of the affinity mask); results do not depend on it")
      ->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_flag("--pdf", common.pdf, "also write figures as PDF");
  app.add_flag("--resume", common.resume,
               "checkpoint each finished sweep item under <out>/.sweep and reuse those there: a rerun computes only the missing items");
  app.add_flag("--list-items", common.list_items, "print the sweep's work items (index, key, estimated cost) as JSON lines and exit");
  app.add_option("--price-items", "time this many real items (the cheapest first, then up to the median cost) one at a time on serial "
                                  "BLAS, write <out>/price.json with the whole grid's projected core-hours, memory and an sbatch line, "
                                  "and exit (app/price.hpp)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--price-length", "with --price-items: the timed items are 1/F of the real ones' length (e.g. --epochs 1 of a "
                                   "100-epoch job); their seconds count F times [1]")
      ->check(CLI::Range(1.0, 1e9))->needs("--price-items");
  app.add_option("--price-flags", "with --price-items: the real job's flags for the sbatch line (e.g. \"--epochs 100\"), "
                                  "where the timed run shortened its items")
      ->needs("--price-items");
  app.add_option("--item-order", item_order_, "test only: the order in which items are handed out")
      ->check(CLI::IsMember({"cost", "reverse", "shuffle"}))->group("");
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
    // How a run executes, never what it computes: kept out of <name>.json, which must not differ
    // between a resumed run, a listing or a test's hand-out order and a plain one.
    if (name == "resume" || name == "list-items" || name == "item-order" || name.rfind("price-", 0) == 0) continue;
    if (name == "scale" && opt->count() == 0 && info_.standard_run) {
      params[name] = "default";  // Scale::standard: the analysis's own default run
      continue;
    }
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

namespace {

// How a rank leaves the body early; all are caught in Analysis::run.
struct WorkerDone {};             ///< a rank other than 0 after the sweep: rank 0 reduces and writes
struct ItemsListed {};            ///< --list-items printed the grid
struct PeerFailed { int code; };  ///< another rank failed first; it says why

constexpr int kWriteOutputs = -1;  ///< the body finished: write the outputs (rank 0)

std::string one_line(std::string msg) {
  for (auto& ch : msg)
    if (ch == '\n') ch = ' ';
  return msg;
}

}  // namespace

int Analysis::run(int argc, char** argv, const std::function<void(Analysis&)>& body) {
  // Before MPI starts, the launcher's environment says which process speaks: rank 0 alone prints
  // help, versions and flag errors, which every rank meets alike.
  const bool speaker = cluster::launch_env().rank == 0;
  std::ostringstream silent;
  try {
    read_values_as_written(*app_);
    app_->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return speaker ? app_->exit(e) : app_->exit(e, silent, silent);
  } catch (const CLI::CallForAllHelp& e) {
    return speaker ? app_->exit(e) : app_->exit(e, silent, silent);
  } catch (const CLI::CallForVersion& e) {
    return speaker ? app_->exit(e) : app_->exit(e, silent, silent);
  } catch (const CLI::ParseError& e) {
    if (speaker) fmt::print(stderr, "{}: error: {}\n", info_.name, one_line(e.what()));
    return exit_bad_input;
  }
  try {
    cluster::init();
  } catch (const std::exception& e) {
    if (speaker) fmt::print(stderr, "{}: error: {}\n", info_.name, one_line(e.what()));
    return exit_bad_input;
  }
  const int code = run_body(body);
  cluster::finalize();
  return code;
}

void Analysis::setup() {
  const bool scale_given = app_->get_option("--scale")->count() > 0;
  common.scale = scale_flag_ == "paper" ? Scale::paper : !scale_given && info_.standard_run ? Scale::standard : Scale::quick;
  for (auto& resolve : resolvers_) resolve(common.scale);
  if (!info_.gpu_path && common.device_flag == "cuda")
    throw InputError(fmt::format("--device cuda: {} has no GPU code path; use --device cpu or auto", info_.name));
  const cluster::Info& ci = cluster::info();
  if (ci.active && info_.gpu_path) {
    // No run mixes CPU and GPU items: auto means cuda only when every rank has a GPU.
    const bool all_gpu = std::all_of(gpu_counts_.begin(), gpu_counts_.end(), [](int n) { return n > 0; });
    const int mine = gpu_counts_[static_cast<std::size_t>(ci.rank)];
    if (common.device_flag == "cuda" && mine == 0)
      throw InputError(fmt::format("--device cuda: rank {} on {} sees no CUDA GPU", ci.rank, ci.host));
    common.device = (common.device_flag == "cpu" || !all_gpu) ? Device::cpu : Device::cuda;
    if (common.device == Device::cuda) cuda::select_device(device_for_local_rank(ci.local_rank, mine));
  } else {
    common.device = info_.gpu_path ? resolve_device(common.device_flag) : Device::cpu;
  }
  // --threads sets OpenMP's team only. OpenBLAS keeps its own pool (OPENBLAS_NUM_THREADS): its
  // reductions are partitioned by its thread count, so leaving it alone keeps every number
  // identical for any --threads (benchmarks pin both sides' BLAS threads themselves); a sweep's
  // items run with serial BLAS wherever they run.
  if (common.threads > 0) omp_set_num_threads(common.threads);
  if (common.out.empty()) throw InputError("--out: must name a folder");
  require_writable_folder(common.out);

  result.analysis = info_.name;
  result.paper = info_.paper;
  result.claims = info_.claims;
  result.seed = common.seed;
  result.device = to_string(common.device);
  result.version = version();
  // The kernels behind every product: a ratio or a timing means little without them. Not the thread
  // count, which differs between a plain run and its ranks while the outputs must not.
  const BlasInfo blas = blas_info();
  result.environment = {{"openblas_core", blas.core}, {"cpu", blas.cpu}};
}

// Under MPI every path out of the body ends in one of two ways, identical on all ranks:
//  - a failure before the sweep (bad input, a rank without a GPU, a foreign .sweep manifest): the
//    ranks agree on statuses (one allgather, inside sweep() or here), the lowest failing rank prints
//    its line and every rank exits with its code;
//  - otherwise rank 0 finishes the body, writes the outputs and broadcasts its exit code.
int Analysis::run_body(const std::function<void(Analysis&)>& body) {
  const cluster::Info& ci = cluster::info();
  const auto start = std::chrono::steady_clock::now();
  int code = kWriteOutputs;
  std::string message;
  try {
    if (ci.active) gpu_counts_ = cluster::allgather(cuda::device_count());  // first, before anything can fail
    setup();
    body(*this);
    twin::settle();  // a GPU run's deferred twins, inside the wall time they are weighed against
    // After the work, so that bad input stays a one-line answer; rank 0 alone speaks.
    advise_on_blas_kernels_once(/*quiet=*/ci.rank != 0);
  } catch (const WorkerDone&) {
    code = exit_ok;
  } catch (const ItemsListed&) {
    code = exit_ok;
  } catch (const PeerFailed& p) {
    code = p.code;
  } catch (const InputError& e) {
    code = exit_bad_input, message = fmt::format("{}: error: {}", info_.name, one_line(e.what()));
  } catch (const std::exception& e) {
    code = exit_internal, message = fmt::format("{}: internal error: {}", info_.name, one_line(e.what()));
  }
  if (ci.active && !agreement_.reached) {
    try {
      agree(code == kWriteOutputs ? 0 : code, nullptr);
    } catch (const PeerFailed& p) {
      code = p.code;
    }
  }
  if (agreement_.failed_rank >= 0) {
    if (agreement_.failed_rank == ci.rank && !message.empty()) fmt::print(stderr, "{}\n", message);
    return agreement_.code;
  }
  if (!message.empty()) fmt::print(stderr, "{}\n", message);
  if (writes_outputs() && code == kWriteOutputs) {
    result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    try {
      add_twin_self_checks();
      code = write_outputs();
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: internal error while writing {}: {}\n", info_.name, common.out, e.what());
      code = exit_internal;
    }
  }
  return ci.active ? cluster::broadcast(code) : code;
}

void Analysis::agree(int status, std::exception_ptr error) {
  const std::vector<int> statuses = cluster::allgather(status);
  agreement_.reached = true;
  for (std::size_t r = 0; r < statuses.size(); ++r)
    if (statuses[r] != 0) {
      agreement_.failed_rank = static_cast<int>(r);
      agreement_.code = statuses[r];
      break;
    }
  if (agreement_.failed_rank < 0) return;
  if (error) std::rethrow_exception(error);
  throw PeerFailed{agreement_.code};
}

bool Analysis::writes_outputs() const { return cluster::info().rank == 0; }

json Analysis::result_params() const {
  json p = result.params.empty() ? collect_params() : result.params;
  for (const char* k : {"out", "threads", "pdf", "device"}) p.erase(k);
  p["device"] = to_string(common.device);
  return p;
}

namespace {

/// With --resume every rank writes item files into <out>/.sweep, so every rank must see the same
/// folder: rank 0 leaves a token there and each rank reads it back. Leaves nothing behind when
/// the check fails.
void require_shared_out(const fs::path& out) {
  const cluster::Info& ci = cluster::info();
  const fs::path dir = out / ".sweep";
  fs::path created;  // the first folder this check creates, removed on failure
  std::string token;
  if (ci.rank == 0) {
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) created = p;
    fs::create_directories(dir);
    const std::string content = fmt::format("{:016x}", mix64(static_cast<std::uint64_t>(::getpid()) ^
                                                             static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())));
    const fs::path file = dir / (".share-" + content);
    std::ofstream(file) << content;
    token = file.string() + "\n" + content;
  }
  token = cluster::broadcast(token);
  const std::string path = token.substr(0, token.find('\n')), content = token.substr(token.find('\n') + 1);
  std::string seen;
  std::ifstream(path) >> seen;
  const std::vector<int> ok = cluster::allgather(seen == content ? 1 : 0);
  std::vector<std::string> blind;
  for (std::size_t r = 0; r < ok.size(); ++r)
    if (!ok[r]) blind.push_back(std::to_string(r));
  if (ci.rank == 0) {
    std::error_code ec;
    fs::remove(path, ec);
    if (!blind.empty() && !created.empty()) fs::remove_all(created, ec);
  }
  if (blind.empty()) return;
  if (ci.rank == 0)
    throw InputError(fmt::format("--out {}: --resume needs a folder every rank sees, and rank(s) {} cannot read {}",
                                 out.string(), fmt::join(blind, ", "), dir.string()));
  throw PeerFailed{exit_bad_input};
}

}  // namespace

std::vector<Record> Analysis::sweep(const Sweep& s) {
  const cluster::Info& ci = cluster::info();
  if (common.list_items) {
    if (writes_outputs()) fmt::print("{}", list_items(s));
    throw ItemsListed{};
  }
  if (const CLI::Option* price = app_->get_option("--price-items"); price->count() > 0) {
    if (writes_outputs()) {
      // The sbatch line repeats this command's own flags, less how this process ran and where it wrote.
      std::string flags;
      for (const CLI::Option* opt : app_->get_options()) {
        const std::string name = opt->get_single_name();
        if (opt->count() == 0 || name == "out" || name == "threads" || name == "resume" || name.rfind("price-", 0) == 0 || name == "scale") continue;
        flags += " --" + name;
        for (const std::string& v : opt->results()) flags += " " + v;
      }
      PriceRequest request{.samples = price->as<std::size_t>(), .analysis = info_.name, .flags = flags, .length_factor = 1, .timed_flags = {},
                           .gpu_path = info_.gpu_path, .gpu = common.device == Device::cuda ? cuda::device_name() : std::string()};
      if (const CLI::Option* length = app_->get_option("--price-length"); length->count() > 0) request.length_factor = length->as<double>();
      if (const CLI::Option* real = app_->get_option("--price-flags"); real->count() > 0) {
        request.timed_flags = flags;
        request.flags = " " + real->as<std::string>();
      } else if (request.length_factor != 1) {
        throw InputError("--price-length: give the real job's flags with --price-flags too (the sbatch line must run the full-length items)");
      }
      const json p = price_sweep(s, request);
      const fs::path out = normalise_out(common.out);
      fs::create_directories(out);
      write_file_atomic(out / "price.json", p.dump(2) + "\n");
      const bool gpu_hours = !p["gpu_hours"].is_null();
      fmt::print("{}: {} items, {:.3g} {}-hours projected ({} timed; seconds per unit of cost spread {:.2f}×), longest item "
                 "{:.3g} h, peak memory {:.0f} MiB; {}\n",
                 info_.name, p["items"].get<std::size_t>(), p[gpu_hours ? "gpu_hours" : "core_hours"].get<double>(), gpu_hours ? "GPU" : "core",
                 p["samples"].size(), p["rate_spread"].get<double>(), p[gpu_hours ? "longest_item_gpu_hours" : "longest_item_hours"].get<double>(),
                 p["peak_rss_mib"].get<double>(), p["sbatch"].get<std::string>());
    }
    throw ItemsListed{};
  }
  // Under MPI the other ranks leave the body after the sweep, so a second one would wait for them
  // forever: an analysis with several grids concatenates them into one item list (item kinds by
  // index range).
  if (ci.active && agreement_.reached)
    throw std::logic_error("Analysis::sweep: one sweep per analysis under MPI; concatenate the grids into one item list");
  SweepOptions o;
  o.threads = common.threads;
  o.resume = common.resume;
  o.out = normalise_out(common.out);
  o.analysis = info_.name;
  o.version = version();
  o.params = result_params();
  o.order = item_order_ == "reverse" ? ItemOrder::reverse : item_order_ == "shuffle" ? ItemOrder::shuffle : ItemOrder::cost;
  o.device = result.device;
  if (!ci.active) return run_sweep(s, o);
  SweepReport report;
  std::optional<ResumeState> state;
  // Every rank: validation of .sweep on rank 0, agreed by all before the first item.
  int status = 0;
  std::exception_ptr error;
  if (ci.rank == 0 && o.resume) {
    try {
      state = read_resume_state(s, o);
    } catch (const InputError&) {
      status = exit_bad_input, error = std::current_exception();
    } catch (const std::exception&) {
      status = exit_internal, error = std::current_exception();
    }
  }
  agree(status, error);
  if (o.resume) {
    require_shared_out(o.out);
    if (ci.rank == 0) open_resume_folder(s, o, *state);
  }
  std::vector<Record> records = run_on_ranks(s, o, state ? &*state : nullptr, report);
  const std::vector<std::string> hosts = cluster::gather_strings(ci.host);
  twin::settle();  // the deferred twins (a spectrum's) of this rank's items
  const std::vector<twin::Agreement> mine = twin::recorded();
  const std::vector<std::string> twins = cluster::gather_strings(twin_records_to_text(mine));
  if (ci.rank != 0) throw WorkerDone{};
  for (std::size_t r = 0; r < twins.size(); ++r) {
    const std::vector<twin::Agreement> got = twin_records_from_text(twins[r], static_cast<int>(r));
    gathered_twins_.insert(gathered_twins_.end(), got.begin(), got.end());
  }
  own_twins_gathered_ = mine.size();
  write_run_json(s, o, report, hosts, result.device);
  return records;
}

void Analysis::add_twin_self_checks() {
  if (common.device != Device::cuda) return;
  twin::settle();
  std::vector<twin::Agreement> records = gathered_twins_;
  const std::vector<twin::Agreement> own = twin::recorded();  // made on rank 0 after the sweep, or in a run without MPI
  records.insert(records.end(), own.begin() + static_cast<std::ptrdiff_t>(std::min(own_twins_gathered_, own.size())), own.end());
  add_twin_checks(*this, records, result.elapsed_s);
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
    for (const auto& [name, text] : text_files_) {
      write_file_atomic(dir / name, text);
      result.files.push_back(name);
    }
    std::string plot_error;
    plot::RenderOptions options;
    options.pdf = common.pdf;
    // Each figure is one gnuplot process: an analysis with dozens of figures (checkpoint_spectra's ESDs)
    // renders them side by side on --threads workers; the list of files keeps the figures' order.
    std::vector<std::vector<std::string>> rendered(figures.size());
    std::vector<std::string> errors(figures.size());
    std::atomic<std::size_t> next{0};
    const auto worker = [&] {
      for (std::size_t i; (i = next++) < figures.size();) {
        try {
          rendered[i] = plot::render(figures[i], dir, options);
        } catch (const PlotError& e) {
          errors[i] = e.what();
        }
      }
    };
    const int workers = static_cast<int>(std::min<std::size_t>(figures.size(), std::max(1, common.threads > 0 ? common.threads : omp_get_max_threads())));
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; ++w) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    for (std::size_t i = 0; i < figures.size(); ++i) {
      if (plot_error.empty()) plot_error = errors[i];
      for (auto& file : rendered[i]) result.figures.push_back(file);
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
  return verdict_exit_code(result);
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
    fmt::print("  [{}] {:<28} {}: measured {} vs {} {}\n", c.verdict, c.id, c.claim, format_value(c.measured),
               c.kind == "observation" ? "the paper's" : "predicted", format_value(c.predicted));
  }
}

}  // namespace sparseact::app
