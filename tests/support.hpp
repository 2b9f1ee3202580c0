#pragma once
// Shared by the tests that run the analysis executables: run one, read its JSON, get a fresh folder.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <iterator>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <sparseact/core/errors.hpp>

namespace test_support {

namespace fs = std::filesystem;

/// Every analysis, with flags for a run of about a second (the contract and MPI identity tests).
struct AnalysisUnderTest {
  const char* name;
  const char* tiny;  ///< flags for a run of about a second
  bool gpu_path;     ///< --device cuda is valid where a GPU is present
};

inline const AnalysisUnderTest kAnalyses[] = {
    {"mp_spectrum", "--scale quick --n 64 --d 16 --trials 2 --eta-samples 20", true},
    {"mp_sweep", "--scale quick --n 32,48,64 --c 0.25,4 --trials 2", true},
    {"lsh_buckets", "--scale quick", true},
    {"lsh_learn", "--scale quick --targets polynomial", false},
    {"lsh_lower_bound", "--scale quick", false},
    {"dsm_vs_dense", "--scale quick --table1-units 32,64,128 --seeds 2 --table1-seeds 2", false},
    {"flatness_bounds", "--train 512 --pool 7 --d 6 --n 12 --blocks 1 --batch 16 --steps 20 --checkpoints 2 --eval 32 --max-probes 6", false},
    {"sparsity_training", "--train 512 --test 128 --pool 7 --d 6 --n 12 --blocks 2 --batch 16 --steps 20 --log-every 5 --seeds 2", false},
    {"weird_activation", "--train 512 --pool 7 --d 6 --n 12 --blocks 2 --batch 16 --steps 20 --log-every 5", false},
    {"spectral_training", "--train 512 --pool 7 --d 6 --n 12 --wide-d 12 --wide-n 6 --blocks 2 --batch 16 --steps 20 --checkpoints 2 --eval 32", false},
    {"thm7_bounds", "--train 512 --pool 7 --p 6,12 --wd 0,0.1 --steps 40 --batch 8 --log-every 10", false},
    {"vc_super_expressive", "--scale quick --k-max 6 --random-labelings 20", false},
    {"vc_shatter", "--class halfspace,interval,pwaffine,relu,momlp --n 1 --L 2", false},
    {"momlp_trees", "--scale quick --n 1,2 --nu 2,3 --probes 200", false},
    {"momlp_routing", "--scale quick --K 4,16 --n 1,2 --nu 2 --inputs-per-set 50", false},
    {"momlp_regression", "--scale quick --targets fbm,ackley2 --s1 200 --s2 12 --width 4 --runs 2 --epochs 2 --stage1-epochs 1 --K-sweep 1,2,4", true},
    {"momlp_classify", "--scale quick --train 300 --test 100 --width 8 --epochs 1 --runs 2", false},
    {"vc_bounds", "--J 1,2 --W 2,4 --L 1,13,16 --n 1", false},
    {"comet_ntk", "--scale quick --pairs 12 --nets 2 --depth 2 --width 32 --gram-inputs 16 --resamples 200", false},
    {"comet_train", "--scale quick --widths 8,16 --sparsity 0.5,0.9 --seeds 2 --epochs 1 --train 200 --test 100 --models standard,comet,smaller,bernoulli,example_tied,moe_trainable", true},
    {"comet_utilization", "--scale quick --nets 3 --images 300", true},
    {"comet_overlap", "--scale quick --pairs 20 --nets 2 --depth 3 --width 64 --pk 0.1,0.5,1 --resamples 200", true},
    {"parrots_length2", "--scale quick --V-max-exhaustive 4 --V 16,64 --graphs 100 --n-max 4 --instances 100 --n 16", false},
    {"parrots_phonebook", "--scale quick --dense-widths 8,12,16 --moe-widths 8 --experts 4 --sizes 4,8 --epochs 5 --queries 8", false},
    {"parrots_memorize", "--scale quick --n 128,256,512 --draws 2 --max-points 128 --dense-max-n 256", false},
    {"checkpoint_spectra", "--synthetic-blocks 2 --synthetic-d 32 --esd-figures 2", true},
    {"parrots_shortest_path", "--scale quick --vertices 6 --train 40 --test 8 --epochs 1 --dense-widths 8,12,16 --moe-widths 8 --experts 2,4,8", false},
};

struct Run {
  int code;
  std::string output;  ///< stdout and stderr
};

/// Runs a shell command line and captures its output (stdout and stderr) and exit code.
inline Run run_shell(const std::string& command) {
  Run r{-1, ""};
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) r.output += buf;
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

/// Runs `args` (an executable under build/bin plus its flags) and captures its output and exit code.
inline Run run(const std::string& args) { return run_shell(std::string(SPARSEACT_BIN_DIR) + "/" + args); }

/// build/test-tmp/<name>, removed if it exists (the folder itself is not created).
inline fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(SPARSEACT_BINARY_DIR) / "test-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir;
}

inline nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

/// The check with this id in a result's JSON, or nullptr (an analysis may skip a check it cannot test).
inline const nlohmann::json* find_check(const nlohmann::json& result, const std::string& id) {
  for (const auto& c : result["checks"])
    if (c["id"] == id) return &c;
  return nullptr;
}

/// The check with this id; the test fails when there is none.
inline const nlohmann::json& check_by_id(const nlohmann::json& result, const std::string& id) {
  const nlohmann::json* c = find_check(result, id);
  if (c == nullptr) FAIL("no check " << id);
  return *c;
}

/// The exit code the analysis contract gives a result's verdicts (0 / 3 / 4), read from the JSON
/// alone, so a test can hold the process's code against what it wrote.
inline int exit_code_from_verdicts(const nlohmann::json& result) {
  bool refuted = false, open = false;
  // DESIGN.md: own questions and observations never set the exit code.
  for (const auto& c : result["checks"]) {
    if (c.value("kind", "claim") == "own-question" || c.value("kind", "claim") == "observation") continue;
    const std::string v = c["verdict"];
    refuted = refuted || v == "contradicted" || v == "not reproduced" || v == "direction only" || v == "erratum" || v == "fails";
    open = open || v == "inconclusive";
  }
  return refuted ? 3 : open ? 4 : 0;
}

/// A fresh folder under the system's temporary directory, removed with everything in it at scope exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& prefix = "sparseact-test") {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path operator/(const std::string& name) const { return path / name; }
};

inline void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

inline std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// The message of the InputError that `f` throws (fails the test when it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const sparseact::InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError");
  return {};
}

/// Fuzzing a reader: `load` must succeed or throw InputError with a one-line message naming the
/// file; anything else (another exception, a crash) fails the test. Returns whether it threw.
template <class F>
bool loads_or_input_error(F&& load, const std::string& file_name) {
  try {
    load();
    return false;
  } catch (const sparseact::InputError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains(file_name));
    CHECK(msg.find('\n') == std::string::npos);
    return true;
  } catch (const std::exception& e) {
    FAIL("not an InputError: " << e.what());
  }
  return true;
}

/// A check's `measured` reads at a glance (docs/DESIGN.md): a number, a short text, or a short list of
/// numbers; per-point data belong in `detail`.
inline void require_readable(const nlohmann::json& measured, const std::string& id) {
  INFO("check " << id << ": measured = " << measured.dump());
  if (measured.is_number() || measured.is_boolean()) return;
  if (measured.is_string()) {
    CHECK(measured.get<std::string>().size() <= 160);  // bytes: about 100 characters of UTF-8
    return;
  }
  REQUIRE(measured.is_array());
  CHECK(measured.size() <= 6);
  for (const auto& v : measured) CHECK(v.is_number());
}

/// Every field of the analysis contract (docs/DESIGN.md) is present, and each check cites "paper NNN ...".
inline void require_contract_fields(const nlohmann::json& r, const std::string& name) {
  for (const char* key : {"analysis", "paper", "claims", "params", "seed", "device", "version", "elapsed_s", "checks", "figures", "data"})
    REQUIRE(r.contains(key));
  CHECK(r["analysis"] == name);
  for (const auto& c : r["checks"]) {
    for (const char* key : {"id", "kind", "claim", "statement", "predicted", "measured", "verdict", "holds", "tolerance", "note", "departure",
                            "detail", "power"})
      REQUIRE(c.contains(key));
    CHECK(c["claim"].get<std::string>().rfind("paper ", 0) == 0);
    // The verdict vocabulary (docs/DESIGN.md): `holds` is true exactly for the verdict "holds".
    const std::string kind = c["kind"], verdict = c["verdict"];
    INFO(c["id"] << ": kind " << kind << ", verdict " << verdict);
    if (kind == "claim" || kind == "own-question")
      CHECK((verdict == "holds" || verdict == "not refuted" || verdict == "direction only" || verdict == "contradicted" ||
             verdict == "not reproduced" || verdict == "inconclusive" || verdict == "erratum"));
    else if (kind == "self-check") CHECK((verdict == "holds" || verdict == "fails" || verdict == "inconclusive"));
    else CHECK((kind == "observation" && verdict == "observation"));
    CHECK(c["holds"] == (verdict == "holds"));
    // "not reproduced" only where the run departs from the paper's setup, and it says how.
    if (verdict == "not reproduced") CHECK_FALSE(c["departure"].get<std::string>().empty());
    // An inconclusive claim says how much power it had and what run would settle it.
    if (verdict == "inconclusive" && !c["tolerance"].contains("ratio_range")) {
      REQUIRE(c["power"].is_object());
      CHECK(c["power"].contains("power"));
      CHECK(c["power"].contains("n_for_80"));
    }
    require_readable(c["measured"], c["id"].get<std::string>());
  }
}

}  // namespace test_support
