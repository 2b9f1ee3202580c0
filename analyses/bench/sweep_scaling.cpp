// sweep_scaling — benchmark: how a sweep scales over MPI ranks (issue 11; docs/DESIGN.md, "Sweeps on many
// machines"), ours against the way an mpi4py user writes the same sweep, in one run.
//
//   strong   mp_sweep --scale paper --trials T (4 c × 4 n × T items), serial BLAS, on 1 and on R ranks:
//            whole-process wall times; target strong_speedup ≥ 1.8 at R = 2 (ratio of medians)
//   weak     T trials on 1 rank against 2T trials on 2 ranks: weak_efficiency ≥ 0.9
//   peer     sweep_scaling.py sweep: the same shapes and counts in numpy (eigvalsh of the smaller Gram,
//            cost-sorted cyclic split, comm.gather) on 1 and 2 ranks: speedup_vs_peer = our speed-up
//            over its speed-up ≥ 1
//   overhead 10,000 empty items on 2 ranks (the sweep_toy fixture), with and without --resume, against
//            mpi4py.futures.MPIPoolExecutor.map and a one-byte ping-pong (the floor):
//            overhead_vs_peer = its µs per task / ours ≥ 10
//   projection the schedule simulated for 2, 4, 16, 64 ranks on the 384-item paper grid from the
//            1-rank per-item seconds, the per-item overhead, the gather rate and rank 0's serial
//            time; the 2-rank simulation must land within 10% of the measured 2-rank wall.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <atomic>
#include <map>
#include <thread>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/errors.hpp>

#include "peer.hpp"
#include "sweep_schedule.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::bench;
namespace fs = std::filesystem;

namespace {

struct Timed {
  double wall_s = 0;  ///< from the launch until <name>.json appeared (mpirun's own teardown excluded: it
                      ///< lingers ~2 s when a rank exits non-zero, e.g. 3 for a check that fails)
  json run;           ///< <out>/.sweep/run.json (ours) or the peer's JSON line
  std::string out;
};

/// mpirun with the flags a container needs (root; more ranks than cores when asked).
std::vector<std::string> launcher(int ranks) {
  std::vector<std::string> cmd = {"mpirun"};
  if (::geteuid() == 0) cmd.push_back("--allow-run-as-root");
  cmd.insert(cmd.end(), {"--oversubscribe", "-n", std::to_string(ranks)});
  return cmd;
}

/// Runs argv; with `result` given, the wall time is taken when that file appears (polled every ms).
Timed timed(std::vector<std::string> argv, const fs::path& out, const std::string& result = "") {
  const auto t0 = std::chrono::steady_clock::now();
  double appeared = -1;
  std::atomic<bool> done{false};
  std::thread watch;
  if (!result.empty())
    watch = std::thread([&] {
      while (!done && !fs::exists(out / result)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (fs::exists(out / result)) appeared = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  const auto [code, stdout_text] = run_capture(argv, {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"}, true);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  done = true;
  if (watch.joinable()) watch.join();
  Timed t{appeared > 0 ? appeared : total, {}, stdout_text};
  if (code != 0 && code != 3) throw std::runtime_error(fmt::format("a timed run exited with {}: {}", code, fmt::join(argv, " ")));
  if (!out.empty()) {
    std::ifstream f(out / ".sweep" / "run.json");
    t.run = json::parse(f);
  } else {
    const std::size_t brace = stdout_text.rfind('{');
    t.run = json::parse(stdout_text.substr(brace == std::string::npos ? 0 : brace));
  }
  return t;
}

std::string read_file_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::vector<double> walls(const std::vector<Timed>& v) {
  std::vector<double> w;
  for (const Timed& t : v) w.push_back(t.wall_s);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "sweep_scaling", .paper = "bench", .claims = {"issue 11"},
                     .description = "Sweeps over MPI ranks: strong and weak scaling of mp_sweep, per-item overhead, a 64-rank projection",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  int trials = 0, repeats = 3, ranks = 2, overhead_items = 10000;
  std::string python = "/usr/bin/python3";
  analysis.scaled_option("--trials", trials, 2, 8, "trials per (c, n) of mp_sweep's paper grid")->check(CLI::Range(2, 100));
  app.add_option("--repeats", repeats, "timed repeats of each variant")->check(CLI::Range(1, 20))->capture_default_str();
  app.add_option("--ranks", ranks, "ranks of the strong-scaling run")->check(CLI::Range(2, 64))->capture_default_str();
  app.add_option("--overhead-items", overhead_items, "empty items of the overhead run")->check(CLI::Range(100, 1000000))->capture_default_str();
  app.add_option("--python", python, "the Python with numpy and mpi4py")->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    const fs::path bin = fs::read_symlink("/proc/self/exe").parent_path().parent_path();
    if (!fs::exists(bin / "mp_sweep") || !fs::exists(bin / "sweep_toy"))
      throw InputError(fmt::format("{}: needs mp_sweep and sweep_toy built beside it (cmake --build build)", bin.string()));
    const std::string script = peer_script("sweep_scaling.py").string();
    TempDir tmp("sparseact-sweep-scaling");
    const std::string cs = "0.25,2,4,8", ns = "256,512,1024,2048";
    const auto ours = [&](int r, int t, const std::string& tag, std::vector<std::string> extra = {}) {
      std::vector<std::string> cmd = launcher(r);
      const fs::path out = tmp.path / tag;
      fs::remove_all(out);
      cmd.insert(cmd.end(), {(bin / "mp_sweep").string(), "--scale", "paper", "--trials", std::to_string(t), "--out", out.string()});
      cmd.insert(cmd.end(), extra.begin(), extra.end());
      return timed(cmd, out, "mp_sweep.json");
    };
    const auto peer = [&](int r, int t) {
      std::vector<std::string> cmd = launcher(r);
      cmd.insert(cmd.end(), {python, script, "sweep", cs, ns, std::to_string(t), "1"});
      return timed(cmd, {});
    };

    // --- Run: strong, weak and peer, interleaved so that a load change hits every variant ------------
    std::vector<Timed> one, many, weak, peer_one, peer_two;
    for (int k = 0; k < repeats; ++k) {
      one.push_back(ours(1, trials, "one"));
      many.push_back(ours(ranks, trials, "many"));
      weak.push_back(ours(2, 2 * trials, "weak"));
      peer_one.push_back(peer(1, trials));
      peer_two.push_back(peer(2, trials));
    }
    const bool same_bytes = read_file_bytes(tmp.path / "one" / "sweep.csv") == read_file_bytes(tmp.path / "many" / "sweep.csv");

    // --- Overhead per item: ours (with and without --resume), mpi4py's pool, the ping-pong floor ------
    std::vector<double> ours_us, ours_resume_us, pool_us, pingpong_us;
    for (int k = 0; k < repeats; ++k) {
      for (bool resume : {false, true}) {
        std::vector<std::string> cmd = launcher(2);
        const fs::path out = tmp.path / "toy";
        fs::remove_all(out);
        cmd.insert(cmd.end(), {(bin / "sweep_toy").string(), "--items", std::to_string(overhead_items), "--out", out.string()});
        if (resume) cmd.push_back("--resume");
        const Timed t = timed(cmd, out);
        (resume ? ours_resume_us : ours_us).push_back(t.run["wall_s"].get<double>() / overhead_items * 1e6);
      }
      std::vector<std::string> pool = launcher(2), ping = launcher(2);
      pool.insert(pool.end(), {python, "-m", "mpi4py.futures", script, "pool", std::to_string(std::min(overhead_items, 5000))});
      ping.insert(ping.end(), {python, script, "pingpong", "100000"});
      pool_us.push_back(timed(pool, {}).run["us_per_task"].get<double>());
      pingpong_us.push_back(timed(ping, {}).run["us_per_message"].get<double>());
    }
    // The gather rate: records of 8 KB (1000 doubles) from 2 ranks.
    std::vector<std::string> gather_cmd = launcher(2);
    gather_cmd.insert(gather_cmd.end(), {(bin / "sweep_toy").string(), "--items", "2000", "--array", "1000", "--out", (tmp.path / "gather").string()});
    const double gather_bytes_per_s = 2000.0 * 8000 / timed(gather_cmd, tmp.path / "gather").run["wall_s"].get<double>();

    // --- Projection: the paper grid (24 trials per cell) from the 1-rank per-item seconds -------------
    const Timed& base = *std::min_element(one.begin(), one.end(), [](const Timed& x, const Timed& y) { return x.wall_s < y.wall_s; });
    ScheduleModel model;
    model.overhead_s = median(ours_us) * 1e-6;
    double item_sum = 0;
    std::map<std::string, std::vector<double>> per_cell;  // "c=…,n=…" → seconds of its trials
    for (const auto& item : base.run["items"]) {
      const std::string key = item["key"].get<std::string>();
      per_cell[key.substr(0, key.rfind(','))].push_back(item["seconds"].get<double>());
      item_sum += item["seconds"].get<double>();
    }
    model.serial_s = std::max(0.0, median(walls(one)) - item_sum);
    model.gather_s_per_item = 40.0 / gather_bytes_per_s;  // a mp_sweep record: two numbers and their names
    std::vector<double> measured_items, paper_items;
    for (const auto& item : base.run["items"]) measured_items.push_back(item["seconds"].get<double>());
    for (const auto& [cell, secs] : per_cell)
      for (int t = 0; t < 24; ++t) paper_items.push_back(std::accumulate(secs.begin(), secs.end(), 0.0) / secs.size());
    const double simulated_p2 = simulate_schedule(measured_items, 2, model).wall_s;
    const double p2_error = std::abs(simulated_p2 - median(walls(many))) / median(walls(many));
    json projection = json::array();
    for (int r : {1, 2, 4, 16, 64}) {
      const ScheduleResult s = simulate_schedule(paper_items, r, model);
      projection.push_back({{"ranks", r}, {"wall_s", s.wall_s}, {"speedup", 0.0}, {"limit", s.limit}});
    }
    for (auto& row : projection) row["speedup"] = projection[0]["wall_s"].get<double>() / row["wall_s"].get<double>();

    // --- Checks ------------------------------------------------------------------------------------------
    speedup_at_least(a, {.id = "strong_speedup_2", .claim = "issue 11",
                         .statement = fmt::format("mp_sweep --scale paper --trials {} on {} ranks: whole-process wall ≥ 1.8× faster than on 1", trials, ranks),
                         .note = "Ratio of medians over interleaved repeats; serial BLAS on both sides; each rank one core."},
                     walls(many), walls(one), 1.8);
    speedup_at_least(a, {.id = "weak_efficiency_2", .claim = "issue 11",
                         .statement = fmt::format("{} trials on 1 rank vs {} on 2 ranks: efficiency T₁/T₂ ≥ 0.9", trials, 2 * trials)},
                     walls(weak), walls(one), 0.9);
    std::vector<double> ours_inv, peer_inv;
    for (int k = 0; k < repeats; ++k) ours_inv.push_back(many[k].wall_s / one[k].wall_s), peer_inv.push_back(peer_two[k].wall_s / peer_one[k].wall_s);
    speedup_at_least(a, {.id = "speedup_vs_peer", .claim = "issue 11",
                         .statement = "our 1→2-rank speed-up over mpi4py + numpy's on the same shapes and counts ≥ 1",
                         .note = fmt::format("Repeats are the inverse speed-ups T₂/T₁ of each side; peer speed-up {:.3f}×, ours {:.3f}×.",
                                             median(walls(peer_one)) / median(walls(peer_two)), median(walls(one)) / median(walls(many)))},
                     ours_inv, peer_inv, 1.0);
    speedup_at_least(a, {.id = "overhead_vs_peer", .claim = "issue 11",
                         .statement = fmt::format("{} empty items on 2 ranks: mpi4py.futures µs per task / ours ≥ 10", overhead_items),
                         .note = fmt::format("Ours {:.3g} µs per item ({:.3g} with --resume, a file per item); MPIPoolExecutor.map {:.3g} µs; "
                                             "one-byte ping-pong {:.3g} µs per message (the floor).",
                                             median(ours_us), median(ours_resume_us), median(pool_us), median(pingpong_us))},
                     ours_us, pool_us, 10.0);
    at_most(a, {.id = "projection_p2_error", .claim = "issue 11",
                .statement = "the schedule simulated for 2 ranks lands within 10% of the measured 2-rank wall",
                .note = fmt::format("simulated {:.3f} s, measured median {:.3f} s", simulated_p2, median(walls(many)))},
            p2_error, 0.10);
    equals(a, {.id = "same_bytes", .claim = "issue 11", .statement = "sweep.csv on 1 and on R ranks byte for byte"}, same_bytes ? 1LL : 0LL, 1LL);

    auto& d = a.result.data;
    d["ours_s"] = {{"one_rank", walls(one)}, {"ranks", walls(many)}, {"weak_2_ranks", walls(weak)}};
    d["peer_s"] = {{"one_rank", walls(peer_one)}, {"two_ranks", walls(peer_two)}};
    d["ratio"] = median(walls(one)) / median(walls(many));
    d["overhead_us"] = {{"ours", ours_us}, {"ours_resume", ours_resume_us}, {"mpi4py_pool", pool_us}, {"pingpong", pingpong_us}};
    d["gather_bytes_per_s"] = gather_bytes_per_s;
    d["model"] = {{"serial_s", model.serial_s}, {"overhead_s", model.overhead_s}, {"gather_s_per_item", model.gather_s_per_item},
                  {"largest_item_s", *std::max_element(paper_items.begin(), paper_items.end())},
                  {"paper_grid_item_s_total", std::accumulate(paper_items.begin(), paper_items.end(), 0.0)}};
    d["projection"] = projection;
    d["ranks"] = ranks;
    d["trials"] = trials;
    double load[3];
    if (getloadavg(load, 3) == 3) d["load_average_at_end"] = {load[0], load[1], load[2]};
  });
}
