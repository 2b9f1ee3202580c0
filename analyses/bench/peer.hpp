// peer.hpp — support shared by the benchmarks in analyses/bench/ (not the library): running the
// Python peer script as a subprocess, governing OpenBLAS's thread pool, a temporary folder, and the
// summaries of timing repeats (speed verdicts themselves: app::speedup_at_least).
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <sparseact/core/blas_info.hpp>
#include <sparseact/core/result.hpp>
#include <sparseact/core/stats.hpp>

extern char** environ;

namespace sparseact::bench {

/// The median of a set of repeats (Boost.Math through core/stats).
inline double median(const std::vector<double>& v) { return stats::median(v); }

inline double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
inline double worst(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

/// OpenBLAS's own thread pool (Debian's openblas-pthread) ignores omp_set_num_threads; reach it
/// through the already-loaded library so that --threads governs the BLAS/LAPACK work too. Returns
/// the pool's size after the call (requested ≤ 0: leaves it as it is).
inline int blas_threads(int requested) {
  using setter = void (*)(int);
  using getter = int (*)();
  auto set = reinterpret_cast<setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  auto get = reinterpret_cast<getter>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (requested > 0 && set) set(requested);
  if (get) return get();
  return requested > 0 ? requested : static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

/// The CPU's name as /proc/cpuinfo gives it ("AMD EPYC 7B13", "Intel(R) Xeon(R) Processor"); "" where it does not.
inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string name = line.substr(line.find(':') + 1);
      name.erase(0, name.find_first_not_of(" \t"));
      return name;
    }
  return {};
}

/// Writes the BLAS a benchmark ran on into its JSON's `environment` when the body ends (a guard at
/// the body's top; the body pins the BLAS threads it wants first): OpenBLAS's kernel set, its build
/// and its thread count beside the load. A ratio measured on generic kernels is not comparable with one
/// on AVX-512 (core/blas_info.hpp).
struct RecordBlas {
  Result& result;
  explicit RecordBlas(Result& r) : result(r) {}
  ~RecordBlas() {
    const BlasInfo b = blas_info();
    result.environment["openblas_core"] = b.core;
    result.environment["openblas_threads"] = b.threads;
    result.environment["openblas_config"] = b.config;
    result.environment["cpu"] = b.cpu;
    result.environment["cpu_model"] = cpu_model();  // BENCH.md's row per kernel set names the CPU (issue 50)
  }
  RecordBlas(const RecordBlas&) = delete;
  RecordBlas& operator=(const RecordBlas&) = delete;
};

/// This process's environment with `extra_env` (NAME=value) overriding the inherited variables.
inline std::vector<std::string> merged_environment(const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const bool overridden = std::any_of(extra_env.begin(), extra_env.end(), [&](const std::string& x) {
      return kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    });
    if (!overridden) env_store.push_back(kv);
  }
  env_store.insert(env_store.end(), extra_env.begin(), extra_env.end());
  return env_store;
}

/// The 1-, 5- and 15-minute load averages (empty when unavailable): how quiet the machine was.
inline std::vector<double> load_average() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return {};
  return {load[0], load[1], load[2]};
}

/// One finished subprocess: exit status (127 when argv[0] cannot be started, 128 + signal when it was
/// killed), stdout, wall seconds from spawn to reaping, and its peak resident memory (wait4's ru_maxrss).
struct Finished {
  int rc = 0;
  std::string out;
  double seconds = 0;
  double maxrss_mib = 0;
};

/// Runs argv with extra environment variables (NAME=value, overriding the inherited ones) and captures
/// its stdout. stderr is inherited, or redirected to `stderr_file` when one is named ("/dev/null" to
/// silence it).
inline Finished run_process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                            const std::string& stderr_file = "") {
  std::vector<std::string> env_store = merged_environment(extra_env);
  std::vector<char*> envp, args;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = argv;
  for (auto& s : argv_store) args.push_back(s.data());
  args.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  if (!stderr_file.empty())
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Finished f;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    f.rc = 127;
    return f;
  }
  char buf[4096];
  for (;;) {
    const ssize_t got = read(fds[0], buf, sizeof buf);
    if (got > 0) f.out.append(buf, static_cast<std::size_t>(got));
    else if (got == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  f.maxrss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return f;
}

/// (exit status, stdout) of run_process; stderr inherited, or silenced when quiet_stderr.
inline std::pair<int, std::string> run_capture(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                                               bool quiet_stderr = false) {
  Finished f = run_process(argv, extra_env, quiet_stderr ? "/dev/null" : "");
  return {f.rc, std::move(f.out)};
}

/// The peer script `file_name` (e.g. "lsh_vs_faiss.py"): in the source tree's analyses/bench/ (so an
/// edit takes effect without a rebuild), else the copy the build puts next to this executable (a
/// build whose source tree moved).
inline std::filesystem::path peer_script(std::string_view file_name) {
  namespace fs = std::filesystem;
#ifdef SPARSEACT_SOURCE_DIR
  const fs::path src = fs::path(SPARSEACT_SOURCE_DIR) / "analyses" / "bench" / file_name;
  if (fs::exists(src)) return src;
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(exe.parent_path() / file_name)) return exe.parent_path() / file_name;
  throw std::runtime_error(std::string(file_name) + " not found in the source tree nor next to the executable");
}

/// A temporary folder <temp>/<prefix>-XXXXXX, removed with everything in it on scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(std::string_view prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace sparseact::bench
