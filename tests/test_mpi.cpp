// Sweeps under mpirun (ctest label `mpi`): the same bytes for any rank count and hand-out order,
// exit codes as one process, resuming after a killed rank, and dynamic scheduling. Built only where
// CMake found MPI and a launcher (SPARSEACT_MPIEXEC).
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <thread>

#include <sparseact/app/sweep.hpp>
#include <sparseact/core/device.hpp>
#include <sparseact/core/rng.hpp>

#include "support.hpp"

#ifdef SPARSEACT_MPIEXEC

using namespace test_support;
using nlohmann::json;

namespace {

/// mpirun as root in a container, more ranks than cores allowed.
std::string mpirun(int ranks) {
  return std::string(SPARSEACT_MPIEXEC) + " --allow-run-as-root --oversubscribe -n " + std::to_string(ranks) + " ";
}
std::string bin(const std::string& name) { return std::string(SPARSEACT_BIN_DIR) + "/" + name; }

Run shell(const std::string& cmd) { return run_shell(cmd); }

/// <name>.json without the lines that may differ between runs (elapsed_s, params.out), and with the
/// values the analysis names in data.timing_fields (JSON pointers) blanked.
std::string comparable_json(const fs::path& file) {
  json j = read_json(file);
  if (j.contains("data") && j["data"].contains("timing_fields"))
    for (const auto& p : j["data"]["timing_fields"])
      if (p.is_string() && p.get<std::string>().rfind("/", 0) == 0 && j.contains(json::json_pointer(p.get<std::string>())))
        j[json::json_pointer(p.get<std::string>())] = "timing";
  j.erase("elapsed_s");
  if (j.contains("params")) j["params"].erase("out"), j["params"].erase("threads");
  return j.dump(1);
}

/// A CSV's text with the named columns blanked (header kept); cells hold no commas (numbers, names).
std::string without_columns(const std::string& csv, const std::set<std::string>& names) {
  std::vector<std::size_t> drop;
  std::string out, line;
  std::istringstream in(csv);
  for (bool header = true; std::getline(in, line); header = false) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream row(line);
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    if (header)
      for (std::size_t c = 0; c < cells.size(); ++c)
        if (names.count(cells[c])) drop.push_back(c);
    for (std::size_t c : drop)
      if (!header && c < cells.size()) cells[c] = "timing";
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + cells[c];
    out += "\n";
  }
  return out;
}

/// Every output file of a run (its JSON lists them) compared with another run's; timing files skipped.
/// params.threads is masked too: some tests vary --threads on purpose.
void require_same_outputs(const fs::path& a, const fs::path& b, const std::string& name) {
  const fs::path ja = a / (name + ".json"), jb = b / (name + ".json");
  REQUIRE(fs::exists(ja));
  REQUIRE(fs::exists(jb));
  // Byte for byte apart from the two lines that may differ.
  auto lines = [](const fs::path& f) {
    std::ifstream in(f);
    std::string all, line;
    while (std::getline(in, line))
      if (line.find("\"elapsed_s\":") == std::string::npos && line.rfind("    \"out\":", 0) != 0 && line.rfind("    \"threads\":", 0) != 0)
        all += line + "\n";
    return all;
  };
  const json meta = read_json(ja);
  const bool timed = meta.contains("data") && meta["data"].contains("timing_fields");
  if (timed) CHECK(comparable_json(ja) == comparable_json(jb));
  else CHECK(lines(ja) == lines(jb));
  // timing_fields: "file:NAME" skips a file, "NAME.csv:COLUMN" blanks one CSV column, "/…" a JSON value.
  std::set<std::string> skip;
  std::map<std::string, std::set<std::string>> columns;
  if (timed)
    for (const auto& p : meta["data"]["timing_fields"]) {
      const std::string t = p.get<std::string>();
      if (t.rfind("file:", 0) == 0) skip.insert(t.substr(5));
      else if (t[0] != '/' && t.find(".csv:") != std::string::npos) columns[t.substr(0, t.find(".csv:") + 4)].insert(t.substr(t.find(".csv:") + 5));
    }
  for (const auto& f : meta["files"]) {
    const std::string file = f.get<std::string>();
    if (skip.count(file)) continue;
    INFO(name << ": " << file);
    if (columns.count(file)) CHECK(without_columns(read_bytes(a / file), columns[file]) == without_columns(read_bytes(b / file), columns[file]));
    else CHECK(read_bytes(a / file) == read_bytes(b / file));
  }
}

/// A finished item's file: NNNNNNNN.rec, not a rank's temporary (.tmp-<pid>-NNNNNNNN.rec).
bool is_item_file(const fs::path& p) { return p.extension() == ".rec" && p.filename().string()[0] != '.'; }

std::size_t count_items(const fs::path& out) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / ".sweep" / "items", ec)) n += is_item_file(e.path());
  return n;
}

/// The PID of MPI rank `rank` of a job whose command line mentions `marker`.
pid_t rank_pid(const std::string& marker, int rank) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_bytes(e.path() / "cmdline"), environ = read_bytes(e.path() / "environ");
    for (char& c : cmdline) if (c == '\0') c = ' ';
    if (cmdline.find(marker) == std::string::npos || cmdline.find("mpirun") != std::string::npos) continue;
    if (environ.find("OMPI_COMM_WORLD_RANK=" + std::to_string(rank) + '\0') != std::string::npos) return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

/// Starts `cmd` under /bin/sh in the background; returns its PID.
pid_t spawn(const std::string& cmd) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", (cmd + " >/dev/null 2>&1").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}
int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ino_t inode(const fs::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_ino;
}

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().string()] = read_bytes(e.path());
  return files;
}

}  // namespace

TEST_CASE("A toy grid gives the direct loop's records alone, on 2 threads and on 1-3 ranks, in any order", "[mpi]") {
  const std::string toy = bin("sweep_toy") + " --items 300 --array 3 --seed 7";
  const fs::path ref = fresh_dir("mpi-toy-ref");
  const Run plain = run("sweep_toy --items 300 --array 3 --seed 7 --threads 1 --out " + ref.string());
  REQUIRE(plain.code == 0);
  const json j = read_json(ref / "sweep_toy.json");
  for (std::size_t i = 0; i < 300; ++i) {
    CHECK(j["data"]["squares"][i].get<double>() == double(i * i));
    CHECK(j["data"]["draws"][i].get<double>() == sparseact::Rng(7, i).uniform());
  }
  struct Variant { std::string launcher, flags; };
  const std::vector<Variant> variants = {{"", "--threads 2"}, {"", "--threads 3 --item-order shuffle"}, {mpirun(1), ""},
                                         {mpirun(2), ""}, {mpirun(3), ""}, {mpirun(2), "--item-order reverse"},
                                         {mpirun(3), "--item-order shuffle --threads 2"}};
  int k = 0;
  for (const Variant& v : variants) {
    const fs::path out = fresh_dir("mpi-toy-" + std::to_string(k++));
    INFO(v.launcher << "… " << v.flags);
    const Run r = shell(v.launcher + toy + " " + v.flags + " --out " + out.string());
    CHECK(r.code == 0);
    require_same_outputs(ref, out, "sweep_toy");
  }
}

TEST_CASE("Every analysis writes the plain run's bytes under mpirun -n 1, 2, 3", "[mpi]") {
  for (const AnalysisUnderTest& a : kAnalyses) {
    const fs::path ref = fresh_dir(std::string("mpi-id-") + a.name);
    const Run plain = run(std::string(a.name) + " " + a.tiny + " --out " + ref.string());
    INFO(a.name << " plain: " << plain.output);
    REQUIRE((plain.code == 0 || plain.code == 3 || plain.code == 4));
    for (int ranks : {1, 2, 3}) {
      const fs::path out = fresh_dir(std::string("mpi-id-") + a.name + "-" + std::to_string(ranks));
      const Run r = shell(mpirun(ranks) + bin(a.name) + " " + a.tiny + " --out " + out.string());
      INFO(a.name << " -n " << ranks << ": " << r.output);
      CHECK(r.code == plain.code);
      require_same_outputs(ref, out, a.name);
    }
  }
}

TEST_CASE("Under mpirun, bad input is one line from rank 0 and nothing written; --list-items prints once", "[mpi]") {
  const fs::path out = fresh_dir("mpi-bad");
  for (const std::string flags : {"--trials 0", "--c 1,2 --n 32,48,64", "--n 32,48", "--device nonsense"}) {
    const Run r = shell(mpirun(2) + bin("mp_sweep") + " " + flags + " --out " + out.string());
    INFO(flags << ": " << r.output);
    CHECK(r.code == 2);
    std::size_t ours = 0, pos = 0;
    while ((pos = r.output.find("mp_sweep: error:", pos)) != std::string::npos) ++ours, ++pos;
    CHECK(ours == 1);
    CHECK_FALSE(fs::exists(out));
  }
  if (!sparseact::cuda_device_present()) {  // a rank without a GPU refuses --device cuda, before any item
    const Run r = shell(mpirun(2) + bin("mp_sweep") + " --scale quick --n 32,48,64 --trials 2 --device cuda --out " + out.string());
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("--device cuda"));
    CHECK_FALSE(fs::exists(out));
  }
  const Run listed = shell(mpirun(3) + bin("mp_sweep") + " --scale quick --n 32,48,64 --c 0.25,4 --trials 2 --list-items --out " + out.string());
  CHECK(listed.code == 0);
  std::size_t lines = 0, pos = 0;
  while ((pos = listed.output.find("{\"cost\":", pos)) != std::string::npos) ++lines, ++pos;
  CHECK(lines == 12);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("A sweep killed mid-run resumes to a clean run's bytes, reusing its items", "[mpi]") {
  // ~500 items of a few ms each on 2 ranks: long enough to kill one rank in the middle.
  const std::string flags = " --scale quick --n 160,240,320 --c 0.5,2 --trials 84 --seed 11";
  const fs::path clean = fresh_dir("mpi-kill-clean");
  const Run ref = run("mp_sweep" + flags + " --out " + clean.string());
  REQUIRE((ref.code == 0 || ref.code == 3 || ref.code == 4));

  for (int victim : {1, 0}) {
    const fs::path out = fresh_dir("mpi-kill-" + std::to_string(victim));
    const pid_t job = spawn(mpirun(2) + bin("mp_sweep") + flags + " --resume --out " + out.string());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (count_items(out) < 20 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const pid_t pid = rank_pid(out.string(), victim);
    REQUIRE(pid > 0);
    ::kill(pid, SIGKILL);
    CHECK(wait_exit(job) != 0);
    // mpirun can return while the surviving rank is still finishing an item: wait until no rank is
    // left, so that the snapshot below is the folder the resumed run will find.
    const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((rank_pid(out.string(), 0) > 0 || rank_pid(out.string(), 1) > 0) && std::chrono::steady_clock::now() < gone_by)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::size_t kept = count_items(out);
    INFO("victim rank " << victim << ", items kept " << kept);
    CHECK(kept >= 20);
    CHECK(kept < 504);
    REQUIRE(fs::exists(out / ".sweep" / "manifest.json"));
    CHECK_FALSE(fs::exists(out / "mp_sweep.json"));
    std::map<std::string, ino_t> before;
    for (const auto& e : fs::directory_iterator(out / ".sweep" / "items"))
      if (is_item_file(e.path())) before[e.path().string()] = inode(e.path());

    const Run resumed = shell(mpirun(3) + bin("mp_sweep") + flags + " --resume --out " + out.string());
    CHECK(resumed.code == ref.code);
    require_same_outputs(clean, out, "mp_sweep");
    for (const auto& [file, ino] : before) CHECK(inode(file) == ino);  // not rewritten
    const json runinfo = read_json(out / ".sweep" / "run.json");
    CHECK(runinfo["resumed"].get<std::size_t>() == before.size());
    CHECK(runinfo["computed"].get<std::size_t>() == 504 - before.size());
  }

  const fs::path out = fs::path(SPARSEACT_BINARY_DIR) / "test-tmp" / "mpi-kill-1";
  // Resuming a finished run computes nothing; a damaged item is redone and said.
  const Run again = shell(mpirun(2) + bin("mp_sweep") + flags + " --resume --out " + out.string());
  CHECK(again.code == ref.code);
  CHECK(read_json(out / ".sweep" / "run.json")["computed"] == 0);
  const fs::path item = out / ".sweep" / "items" / "00000100.rec";
  const std::string bytes = read_bytes(item);
  write_bytes(item, bytes.substr(0, bytes.size() / 2));
  const Run redo = shell(mpirun(2) + bin("mp_sweep") + flags + " --resume --out " + out.string());
  CHECK(redo.code == ref.code);
  CHECK_THAT(redo.output, Catch::Contains("item 100") && Catch::Contains("failed its digest"));
  CHECK(read_json(out / ".sweep" / "run.json")["computed"] == 1);
  require_same_outputs(clean, out, "mp_sweep");

  // Another seed: refused before any work, the folder unchanged.
  const auto before = snapshot(out);
  const Run other = shell(mpirun(2) + bin("mp_sweep") + " --scale quick --n 160,240,320 --c 0.5,2 --trials 84 --seed 12 --resume --out " + out.string());
  INFO(other.output);
  CHECK(other.code == 2);
  CHECK_THAT(other.output, Catch::Contains("--seed 11 there, 12 here"));
  CHECK(snapshot(out) == before);
}

TEST_CASE("The rank that draws a long item takes few others", "[mpi]") {
  const fs::path out = fresh_dir("mpi-schedule");
  // A static split would give the heavy item's rank 50 short items; dynamic hand-out, about none. The
  // margins (600 ms against 2 ms, at most 20) hold on a loaded machine too (12 were seen at 300 ms with
  // a parallel build running).
  const Run r = shell(mpirun(2) + bin("sweep_toy") + " --items 101 --item-ms 2 --heavy 50 --heavy-ms 600 --resume --out " + out.string());
  REQUIRE(r.code == 0);
  const json runinfo = read_json(out / ".sweep" / "run.json");
  const int heavy_rank = runinfo["items"][50]["rank"];
  int others = 0;
  for (const auto& item : runinfo["items"]) others += item["rank"] == heavy_rank && item["index"] != 50;
  INFO("the heavy item's rank " << heavy_rank << " took " << others << " of the 100 short items");
  CHECK(others <= 20);
  CHECK(runinfo["ranks"] == 2);
}

TEST_CASE("A failing item under mpirun exits as the one-process run does", "[mpi]") {
  const fs::path a = fresh_dir("mpi-fail-1"), b = fresh_dir("mpi-fail-2");
  const Run plain = run("sweep_toy --items 40 --fail-at 17 --out " + a.string());
  const Run ranks = shell(mpirun(3) + bin("sweep_toy") + " --items 40 --fail-at 17 --out " + b.string());
  CHECK(plain.code == 2);
  CHECK(ranks.code == 2);
  CHECK_THAT(plain.output, Catch::Contains("item 17 refuses"));
  CHECK_THAT(ranks.output, Catch::Contains("item 17 refuses"));
  CHECK_FALSE(fs::exists(a / "sweep_toy.json"));
  CHECK_FALSE(fs::exists(b / "sweep_toy.json"));
}

TEST_CASE("The sbatch example falls back to mpirun -n 2 outside Slurm and writes the plain run's bytes", "[mpi]") {
  const std::string tiny = " --n 32,48,64 --c 0.25,4 --trials 2";
  const fs::path ref = fresh_dir("mpi-sbatch-ref"), out = fresh_dir("mpi-sbatch");
  const Run plain = run("mp_sweep --scale quick" + tiny + " --out " + ref.string());
  const Run r = shell("env -u SLURM_JOB_ID ANALYSIS=mp_sweep SCALE=quick SPARSEACT_RANKS=2 SPARSEACT_BIN=" + std::string(SPARSEACT_BIN_DIR) +
                      " OUT=" + out.string() + " SPARSEACT_MPIRUN_FLAGS='--allow-run-as-root --oversubscribe' bash " +
                      std::string(SPARSEACT_SOURCE_DIR) + "/examples/slurm/sweep.sbatch" + tiny);
  INFO(r.output);
  CHECK(r.code == plain.code);
  require_same_outputs(ref, out, "mp_sweep");
  const nlohmann::json runinfo = read_json(out / ".sweep" / "run.json");
  CHECK(runinfo["ranks"] == 2);
  CHECK(fs::exists(out / ".sweep" / "manifest.json"));
}

TEST_CASE("GPU items under mpirun -n 2 equal the one-process GPU run", "[mpi][cuda]") {
  if (!sparseact::cuda_device_present()) {
    WARN("no CUDA GPU: skipped");
    return;
  }
  const std::string tiny = " --scale quick --n 64,96,128 --c 0.25,4 --trials 3 --device cuda";
  const fs::path ref = fresh_dir("mpi-cuda-ref"), out = fresh_dir("mpi-cuda");
  const Run plain = run("mp_sweep" + tiny + " --out " + ref.string());
  const Run ranks = shell(mpirun(2) + bin("mp_sweep") + tiny + " --out " + out.string());
  CHECK(ranks.code == plain.code);
  require_same_outputs(ref, out, "mp_sweep");
  CHECK(read_json(out / "mp_sweep.json")["device"] == "cuda");
}

#endif  // SPARSEACT_MPIEXEC
