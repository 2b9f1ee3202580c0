// Running a sweep's items: here (compute threads) or on every rank (rank 0 dispatching).
//
// Scheduling. Items are handed out in decreasing estimated cost (a static split gave 1.45× on
// 2 ranks where the item costs spread over three decades). Rank 0's main thread is a dispatcher:
// it answers requests with guided chunks (items until their cost reaches remaining / (2·threads), at
// least one), so a rank that drew the largest item asks for little more and thousands of tiny items
// cost a few messages. Rank 0 computes too: its compute threads take single items from the same
// cursor without messages. Workers ask only when a compute thread is about to idle, send results in
// batches with non-blocking sends, and never wait on rank 0's current item: rank 0's main thread
// never computes. All MPI calls come from main threads (MPI_THREAD_FUNNELED).
//
// Identity. Every item runs on a compute thread with one OpenMP thread and serial BLAS, in every
// mode, and its record travels as the same bytes (serialize) whether it stays in this process,
// crosses MPI or lands in a checkpoint; the records are returned by index.
#include <sparseact/app/sweep_runner.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <numeric>
#include <thread>

#include <fmt/format.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <sparseact/app/cluster.hpp>
#include <sparseact/app/sweep_files.hpp>
#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/byte_io.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/progress.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/version.hpp>
#include <sparseact/cuda/runtime.hpp>

namespace sparseact::app {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int item_threads(int threads) {
  if (threads > 0) return threads;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

enum Tag : int { tag_request = 1, tag_grant = 2, tag_results = 3 };
enum Status : std::uint8_t { status_ok = 0, status_input_error = 1, status_internal_error = 2 };

/// One finished item as it travels: its record's bytes, or the error's message.
struct Outcome {
  std::size_t index = 0;
  double seconds = 0;
  std::uint8_t status = status_ok;
  std::string bytes;
};

using byte_io::put;

std::string pack(const std::vector<Outcome>& outcomes) {
  std::string m;
  put<std::uint64_t>(m, outcomes.size());
  for (const Outcome& o : outcomes) {
    put<std::uint64_t>(m, o.index);
    put<double>(m, o.seconds);
    put<std::uint8_t>(m, o.status);
    put<std::uint64_t>(m, o.bytes.size());
    m += o.bytes;
  }
  return m;
}

std::vector<Outcome> unpack(const std::string& m) {
  byte_io::Reader r{m, "sweep message"};
  std::vector<Outcome> out(r.get<std::uint64_t>());
  for (Outcome& o : out) {
    o.index = r.get<std::uint64_t>();
    o.seconds = r.get<double>();
    o.status = r.get<std::uint8_t>();
    o.bytes = std::string(r.take(r.get<std::uint64_t>()));
  }
  return out;
}

std::string pack_indices(const std::vector<std::size_t>& v) {
  std::string m;
  for (std::size_t i : v) put<std::uint64_t>(m, i);
  return m;
}
std::vector<std::size_t> unpack_indices(const std::string& m) {
  byte_io::Reader r{m, "sweep message"};
  std::vector<std::size_t> v(m.size() / 8);
  for (auto& i : v) i = r.get<std::uint64_t>();
  return v;
}

/// Runs item i on this thread; never throws.
Outcome run_item(const Sweep& sweep, std::size_t i, const SweepOptions& options) {
  Outcome o;
  o.index = i;
  const auto start = Clock::now();
  try {
    o.bytes = serialize(sweep.item(i));
    if (options.resume) sweep_files::write_item(options.out, i, o.bytes);
  } catch (const InputError& e) {
    o.status = status_input_error, o.bytes = e.what();
  } catch (const std::exception& e) {
    o.status = status_internal_error, o.bytes = e.what();
  } catch (...) {
    o.status = status_internal_error, o.bytes = "unknown exception";
  }
  o.seconds = seconds_since(start);
  return o;
}

/// The hand-out order of the items still to compute.
std::vector<std::size_t> hand_out_order(const Sweep& sweep, const std::vector<double>& cost, ItemOrder order,
                                        const ResumeState* state) {
  std::vector<std::size_t> v;
  for (std::size_t i = 0; i < sweep.count; ++i)
    if (!state || !state->done[i]) v.push_back(i);
  std::stable_sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  if (order == ItemOrder::reverse) std::reverse(v.begin(), v.end());
  if (order == ItemOrder::shuffle) {
    Rng rng(0x5eed, 0x5117);
    for (std::size_t k = v.size(); k > 1; --k) std::swap(v[k - 1], v[rng.below(k)]);
  }
  return v;
}

/// Rank 0's (and a lone process's) supply of items: single items for its compute threads, guided
/// chunks for remote ranks.
class Cursor {
 public:
  Cursor(std::vector<std::size_t> order, const std::vector<double>& cost) : order_(std::move(order)) {
    // Suffix sums of the cost, floored so that equal zero estimates still split evenly.
    double total = 0;
    for (std::size_t i : order_) total += cost[i];
    const double floor = order_.empty() ? 1 : std::max(total / order_.size() * 1e-3, 1e-300);
    cost_.resize(order_.size());
    suffix_.assign(order_.size() + 1, 0.0);
    for (std::size_t k = order_.size(); k-- > 0;) {
      cost_[k] = std::max(cost[order_[k]], 0.0) + floor;
      suffix_[k] = suffix_[k + 1] + cost_[k];
    }
  }
  std::optional<std::size_t> next() {
    std::lock_guard lock(mutex_);
    skip_above_limit();
    if (pos_ == order_.size()) return std::nullopt;
    return order_[pos_++];
  }
  std::vector<std::size_t> take_chunk(int total_threads) {
    std::lock_guard lock(mutex_);
    std::vector<std::size_t> chunk;
    skip_above_limit();
    const double target = suffix_[pos_] / (2.0 * std::max(1, total_threads));
    double taken = 0;
    while (pos_ < order_.size() && (chunk.empty() || taken + cost_[pos_] <= target)) {
      taken += cost_[pos_];
      if (order_[pos_] <= limit_) chunk.push_back(order_[pos_]);
      ++pos_;
    }
    return chunk;
  }
  /// Item i failed: items above i can no longer change the outcome (the lowest-index failure, as
  /// the sequential loop would meet it), items below still run.
  void failed(std::size_t i) {
    std::lock_guard lock(mutex_);
    limit_ = std::min(limit_, i);
  }

 private:
  std::mutex mutex_;
  std::vector<std::size_t> order_;
  std::vector<double> cost_, suffix_;
  std::size_t pos_ = 0;
  std::size_t limit_ = static_cast<std::size_t>(-1);

  void skip_above_limit() {
    while (pos_ < order_.size() && order_[pos_] > limit_) ++pos_;
  }
};

/// A worker rank's items granted by rank 0 and not started yet.
class Queue {
 public:
  void push(const std::vector<std::size_t>& items) {
    {
      std::lock_guard lock(mutex_);
      items_.insert(items_.end(), items.begin(), items.end());
    }
    ready_.notify_all();
  }
  void finish() {
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    ready_.notify_all();
  }
  std::optional<std::size_t> next() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty() || finished_; });
    if (items_.empty()) return std::nullopt;
    const std::size_t i = items_.front();
    items_.pop_front();
    ++busy_;
    return i;
  }
  void done_one() {
    std::lock_guard lock(mutex_);
    --busy_;
  }
  /// Items queued plus items running.
  std::size_t load() {
    std::lock_guard lock(mutex_);
    return items_.size() + busy_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::size_t> items_;
  std::size_t busy_ = 0;
  bool finished_ = false;
};

/// Finished items on their way from compute threads to the main thread; wakes the main thread.
class Mailbox {
 public:
  void put(Outcome o) {
    {
      std::lock_guard lock(mutex_);
      box_.push_back(std::move(o));
    }
    wake_.notify_all();
  }
  std::vector<Outcome> take() {
    std::lock_guard lock(mutex_);
    std::vector<Outcome> out;
    out.swap(box_);
    return out;
  }
  /// Sleeps up to `timeout` or until an outcome arrives or notify() is called.
  void wait(std::chrono::microseconds timeout) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, timeout, [&] { return !box_.empty() || poked_; });
    poked_ = false;
  }
  void notify() {
    {
      std::lock_guard lock(mutex_);
      poked_ = true;
    }
    wake_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Outcome> box_;
  bool poked_ = false;
};

/// `threads` compute threads, each with one OpenMP thread, taking items from `next` until it is empty.
template <class Next, class Done>
std::vector<std::thread> start_compute(int threads, const Sweep& sweep, const SweepOptions& options, Next next, Done done) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&sweep, &options, next, done] {
      omp_set_num_threads(1);  // no nested teams inside an item
      cuda::bind_thread();     // this rank's GPU (the runtime's current device is per thread)
      while (const auto i = next()) done(run_item(sweep, *i, options));
    });
  return pool;
}

/// Results by index, the lowest-index failure, and progress for rank 0 or a lone process.
class Collector {
 public:
  Collector(const Sweep& sweep, const SweepOptions& options, const ResumeState* state, SweepReport& report)
      : sweep_(sweep), options_(options), report_(report), bytes_(sweep.count) {
    report_.items.assign(sweep.count, ItemRun{});
    if (state) {
      for (std::size_t i = 0; i < sweep.count; ++i)
        if (state->done[i]) bytes_[i] = *state->done[i], report_.items[i].resumed = true, ++report_.resumed;
      report_.redone = state->redone.size();
    }
    done_ = report_.resumed;
    const cluster::Info& ci = cluster::info();
    if (ci.active) {
      log_prefix_ = fmt::format("[rank {}/{} {}]", ci.rank, ci.size, ci.host);
    } else if (options.show_progress) {
      bar_ = std::make_unique<Progress>(options.analysis + ": " + sweep.label, sweep.count);
      if (done_) bar_->advance(done_);
    }
    last_log_ = start_;
  }

  void add(Outcome o, int rank) {
    std::lock_guard lock(mutex_);
    ItemRun& run = report_.items[o.index];
    run.rank = rank, run.seconds = o.seconds;
    if (o.status == status_ok) {
      bytes_[o.index] = std::move(o.bytes);
      ++report_.computed;
    } else if (!failure_ || o.index < failure_->index) {
      failure_ = ItemFailure{o.index, o.status == status_input_error, std::move(o.bytes)};
    }
    ++done_;
    if (bar_) bar_->advance();
  }
  bool failed() {
    std::lock_guard lock(mutex_);
    return failure_.has_value();
  }

  /// Rank 0's batch-log line and progress.json, every ~10 s (and at the end when `final`).
  void heartbeat(bool final = false) {
    std::lock_guard lock(mutex_);
    if (!final && seconds_since(last_log_) < 10) return;
    last_log_ = Clock::now();
    const double elapsed = seconds_since(start_);
    const std::size_t computed = done_ - report_.resumed;
    const std::size_t left = sweep_.count - done_;
    const double eta = computed ? elapsed / computed * left : 0;
    if (!log_prefix_.empty() && options_.show_progress)
      fmt::print(stderr, "{} {} {}: {}/{} done ({} resumed), {:.0f} s elapsed, ETA {:.0f} s\n", log_prefix_, options_.analysis,
                 sweep_.label, done_, sweep_.count, report_.resumed, elapsed, eta);
    if (options_.resume || cluster::info().active) {
      const nlohmann::json p{{"analysis", options_.analysis}, {"done", done_}, {"total", sweep_.count}, {"resumed", report_.resumed},
                             {"elapsed_s", elapsed}, {"eta_s", eta}, {"finished", final}};
      std::error_code ec;
      fs::create_directories(sweep_files::dir(options_.out), ec);
      try {
        sweep_files::write_atomic(sweep_files::dir(options_.out) / "progress.json", p.dump(2) + "\n");
      } catch (const std::exception&) {
        // progress is advisory; a failing write must not end the sweep
      }
    }
  }

  std::vector<Record> finish() {
    if (bar_) bar_->finish();
    report_.wall_s = seconds_since(start_);
    if (failure_) {
      if (failure_->input_error) throw InputError(failure_->message);
      throw std::runtime_error(fmt::format("item {} ({}): {}", failure_->index, sweep_.key ? sweep_.key(failure_->index) : "", failure_->message));
    }
    std::vector<Record> records;
    records.reserve(bytes_.size());
    for (std::size_t i = 0; i < bytes_.size(); ++i) records.push_back(deserialize(bytes_[i]));
    return records;
  }

 private:
  const Sweep& sweep_;
  const SweepOptions& options_;
  SweepReport& report_;
  std::mutex mutex_;
  std::vector<std::string> bytes_;
  std::optional<ItemFailure> failure_;
  std::size_t done_ = 0;
  std::unique_ptr<Progress> bar_;
  std::string log_prefix_;
  Clock::time_point start_ = Clock::now(), last_log_;
};

std::vector<double> costs(const Sweep& sweep) {
  std::vector<double> c(sweep.count, 1.0);
  if (sweep.cost)
    for (std::size_t i = 0; i < sweep.count; ++i) {
      c[i] = sweep.cost(i);
      if (!(c[i] >= 0)) c[i] = 0;
    }
  return c;
}

void require_item_function(const Sweep& sweep) {
  if (!sweep.item) throw std::logic_error("sweep '" + sweep.label + "': no item function");
}

}  // namespace

// --- Resume ------------------------------------------------------------------------------------------

namespace {
nlohmann::json manifest_of(const Sweep& sweep, const SweepOptions& options) {
  return {{"analysis", options.analysis}, {"version", options.version}, {"params_digest", params_digest(options.params)},
          {"params", options.params}, {"items", sweep.count}};
}

std::string first_difference(const nlohmann::json& there, const nlohmann::json& here) {
  for (const auto& [k, v] : here.items())
    if (!there.contains(k) || there[k] != v)
      return fmt::format("--{} {} there, {} here", k, there.contains(k) ? there[k].dump() : "absent", v.dump());
  for (const auto& [k, v] : there.items())
    if (!here.contains(k)) return fmt::format("--{} {} there, absent here", k, v.dump());
  return "a parameter";
}
}  // namespace

ResumeState read_resume_state(const Sweep& sweep, const SweepOptions& options) {
  ResumeState state;
  state.done.assign(sweep.count, std::nullopt);
  const fs::path dir = sweep_files::dir(options.out);
  const fs::path manifest_file = dir / "manifest.json";
  std::error_code ec;
  if (!fs::exists(manifest_file, ec)) return state;
  state.manifest_exists = true;
  std::ifstream f(manifest_file);
  const auto there = nlohmann::json::parse(f, nullptr, false);
  const std::string where = fmt::format("--resume: {}", dir.string());
  const std::string advice = "resume with the same executable and parameters, or choose another --out";
  if (there.is_discarded() || !there.is_object() || !there.contains("params_digest"))
    throw InputError(fmt::format("{} has an unreadable manifest.json; delete that folder or {}", where, advice));
  const nlohmann::json here = manifest_of(sweep, options);
  if (there.value("analysis", "") != options.analysis)
    throw InputError(fmt::format("{} belongs to {}, not {}; {}", where, there.value("analysis", "?"), options.analysis, advice));
  if (there.value("version", "") != options.version)
    throw InputError(fmt::format("{} was written by sparseact {}, this is {}; {}", where, there.value("version", "?"), options.version, advice));
  if (there["params_digest"] != here["params_digest"] || there.value("params", nlohmann::json()) != options.params)
    throw InputError(fmt::format("{} was made with other parameters ({}); {}", where,
                                 first_difference(there.value("params", nlohmann::json::object()), options.params), advice));
  if (there.value("items", std::size_t{0}) != sweep.count)
    throw InputError(fmt::format("{} holds a grid of {} items, this run has {}; {}", where, there.value("items", 0), sweep.count, advice));
  if (fs::is_directory(sweep_files::items_dir(options.out), ec))
    for (const auto& entry : fs::directory_iterator(sweep_files::items_dir(options.out))) {
      const auto index = sweep_files::item_index(entry.path());
      if (!index || *index >= sweep.count) continue;
      if (auto bytes = sweep_files::read_item(entry.path(), *index)) state.done[*index] = std::move(bytes);
      else state.redone.push_back(*index);
    }
  std::sort(state.redone.begin(), state.redone.end());
  return state;
}

void open_resume_folder(const Sweep& sweep, const SweepOptions& options, const ResumeState& state) {
  const fs::path dir = sweep_files::dir(options.out);
  fs::create_directories(sweep_files::items_dir(options.out));
  if (!state.manifest_exists) sweep_files::write_atomic(dir / "manifest.json", manifest_of(sweep, options).dump(2) + "\n");
  std::error_code ec;
  for (const fs::path& d : {dir, sweep_files::items_dir(options.out)})
    for (const auto& entry : fs::directory_iterator(d, ec))
      if (entry.path().filename().string().rfind(".tmp", 0) == 0) fs::remove(entry.path(), ec);
  for (std::size_t i : state.redone) {
    fs::remove(sweep_files::item_path(options.out, i), ec);
    fmt::print(stderr, "{}: item {} ({}): its checkpoint failed its digest (truncated or damaged); computing it again\n", options.analysis, i,
               sweep.key ? sweep.key(i) : "");
  }
}

// --- One process -------------------------------------------------------------------------------------

std::vector<Record> run_here(const Sweep& sweep, const SweepOptions& options, const ResumeState* state, SweepReport& report) {
  require_item_function(sweep);
  const ScopedBlasThreads serial_blas(1);
  Collector collector(sweep, options, state, report);
  Cursor cursor(hand_out_order(sweep, costs(sweep), options.order, state), costs(sweep));
  auto pool = start_compute(
      item_threads(options.threads), sweep, options, [&] { return cursor.next(); },
      [&](Outcome o) {
        const bool failed = o.status != status_ok;
        const std::size_t index = o.index;
        collector.add(std::move(o), 0);
        if (failed) cursor.failed(index);
        collector.heartbeat();
      });
  for (auto& t : pool) t.join();
  collector.heartbeat(true);
  return collector.finish();
}

std::vector<Record> run_sweep(const Sweep& sweep, const SweepOptions& options, SweepReport* report) {
  SweepReport local;
  SweepReport& r = report ? *report : local;
  if (!options.resume) return run_here(sweep, options, nullptr, r);
  const ResumeState state = read_resume_state(sweep, options);
  open_resume_folder(sweep, options, state);
  std::vector<Record> records = run_here(sweep, options, &state, r);
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  write_run_json(sweep, options, r, {host}, options.device);
  return records;
}

// --- Every rank ----------------------------------------------------------------------------------------

namespace {

std::vector<Record> dispatch(const Sweep& sweep, const SweepOptions& options, const ResumeState* state, SweepReport& report,
                             const std::vector<int>& rank_threads) {
  const int ranks = static_cast<int>(rank_threads.size());
  const int total_threads = std::accumulate(rank_threads.begin(), rank_threads.end(), 0);
  Collector collector(sweep, options, state, report);
  const std::vector<double> cost = costs(sweep);
  Cursor cursor(hand_out_order(sweep, cost, options.order, state), cost);
  Mailbox mailbox;
  std::atomic<int> local_running{rank_threads[0]};
  auto pool = start_compute(
      rank_threads[0], sweep, options,
      [&]() -> std::optional<std::size_t> {
        auto i = cursor.next();
        if (!i) {
          --local_running;
          mailbox.notify();
        }
        return i;
      },
      [&](Outcome o) { mailbox.put(std::move(o)); });

  std::vector<char> told_done(static_cast<std::size_t>(ranks), 0);
  told_done[0] = 1;
  std::size_t outstanding = 0;  // granted to other ranks, not reported yet
  auto idle = std::chrono::microseconds(50);
  for (;;) {
    bool active = false;
    for (Outcome& o : mailbox.take()) {
      const bool failed = o.status != status_ok;
      const std::size_t index = o.index;
      collector.add(std::move(o), 0);
      if (failed) cursor.failed(index);
      active = true;
    }
    int source = 0, tag = 0;
    std::string bytes;
    while (cluster::receive(source, tag, bytes)) {
      active = true;
      if (tag == tag_request) {
        const std::vector<std::size_t> chunk = cursor.take_chunk(total_threads);
        if (chunk.empty()) told_done[static_cast<std::size_t>(source)] = 1;
        outstanding += chunk.size();
        cluster::post(source, tag_grant, pack_indices(chunk));
      } else if (tag == tag_results) {
        for (Outcome& o : unpack(bytes)) {
          const bool failed = o.status != status_ok;
          const std::size_t index = o.index;
          collector.add(std::move(o), source);
          if (failed) cursor.failed(index);
          --outstanding;
        }
      }
    }
    cluster::sends_pending();
    collector.heartbeat();
    if (local_running == 0 && outstanding == 0 && std::all_of(told_done.begin(), told_done.end(), [](char c) { return c; })) break;
    idle = active ? std::chrono::microseconds(50) : std::min(idle * 2, std::chrono::microseconds(2000));
    mailbox.wait(idle);
  }
  for (auto& t : pool) t.join();
  for (Outcome& o : mailbox.take()) collector.add(std::move(o), 0);
  while (cluster::sends_pending()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  collector.heartbeat(true);
  return collector.finish();
}

void work(const Sweep& sweep, const SweepOptions& options, int threads) {
  const cluster::Info& ci = cluster::info();
  Queue queue;
  Mailbox mailbox;
  std::size_t done = 0;
  double busy_s = 0;
  auto pool = start_compute(threads, sweep, options, [&] { return queue.next(); },
                            [&](Outcome o) {
                              queue.done_one();
                              mailbox.put(std::move(o));
                            });
  const auto start = Clock::now();
  auto last_log = start - std::chrono::seconds(60);
  bool finished = false, asked = false;
  auto idle = std::chrono::microseconds(50);
  for (;;) {
    bool active = false;
    std::vector<Outcome> out = mailbox.take();
    if (!out.empty()) {
      active = true;
      for (const Outcome& o : out) busy_s += o.seconds;
      done += out.size();
      const Outcome& last = out.back();
      if (options.show_progress && seconds_since(last_log) >= 10) {
        last_log = Clock::now();
        fmt::print(stderr, "[rank {}/{} {}] item {} ({:.3g} s), {} done, busy {:.0f}%\n", ci.rank, ci.size, ci.host, last.index, last.seconds,
                   done, 100 * busy_s / std::max(1e-9, seconds_since(start) * threads));
      }
      cluster::post(0, tag_results, pack(out));
    }
    if (!finished && !asked && queue.load() < static_cast<std::size_t>(threads)) {
      std::string m;
      put<std::uint32_t>(m, static_cast<std::uint32_t>(threads));
      cluster::post(0, tag_request, std::move(m));
      asked = true;
      active = true;
    }
    int source = 0, tag = 0;
    std::string bytes;
    while (cluster::receive(source, tag, bytes)) {
      if (tag != tag_grant) continue;
      active = true;
      asked = false;
      const std::vector<std::size_t> chunk = unpack_indices(bytes);
      if (chunk.empty()) {
        finished = true;
        queue.finish();
      } else {
        queue.push(chunk);
      }
    }
    const bool pending = cluster::sends_pending();
    if (finished && queue.load() == 0 && !pending) {
      for (auto& t : pool) t.join();
      std::vector<Outcome> rest = mailbox.take();
      if (!rest.empty()) cluster::post(0, tag_results, pack(rest));
      while (cluster::sends_pending()) std::this_thread::sleep_for(std::chrono::microseconds(50));
      break;
    }
    idle = active ? std::chrono::microseconds(50) : std::min(idle * 2, std::chrono::microseconds(2000));
    mailbox.wait(idle);
  }
}

}  // namespace

std::vector<Record> run_on_ranks(const Sweep& sweep, const SweepOptions& options, const ResumeState* state, SweepReport& report) {
  require_item_function(sweep);
  const cluster::Info& ci = cluster::info();
  const ScopedBlasThreads serial_blas(1);
  const int threads = item_threads(options.threads);
  const std::vector<int> rank_threads = cluster::allgather(threads);
  if (ci.rank == 0) return dispatch(sweep, options, state, report, rank_threads);
  work(sweep, options, threads);
  return {};
}

void write_run_json(const Sweep& sweep, const SweepOptions& options, const SweepReport& report, const std::vector<std::string>& hosts,
                    const std::string& device) {
  nlohmann::json items = nlohmann::json::array();
  for (std::size_t i = 0; i < report.items.size(); ++i) {
    const ItemRun& r = report.items[i];
    items.push_back({{"index", i}, {"key", sweep.key ? sweep.key(i) : std::to_string(i)}, {"rank", r.rank},
                     {"seconds", r.seconds}, {"resumed", r.resumed}});
  }
  const nlohmann::json run{{"analysis", options.analysis}, {"version", options.version}, {"ranks", hosts.size()}, {"hosts", hosts},
                           {"threads_per_rank", item_threads(options.threads)}, {"device", device}, {"wall_s", report.wall_s},
                           {"computed", report.computed}, {"resumed", report.resumed}, {"redone", report.redone}, {"items", items}};
  std::error_code ec;
  fs::create_directories(sweep_files::dir(options.out), ec);
  sweep_files::write_atomic(sweep_files::dir(options.out) / "run.json", run.dump(1) + "\n");
}

}  // namespace sparseact::app
