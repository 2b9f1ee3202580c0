#pragma once
// Shared by the tests that run the analysis executables: run one, read its JSON, get a fresh folder.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

namespace test_support {

namespace fs = std::filesystem;

struct Run {
  int code;
  std::string output;  ///< stdout and stderr
};

/// Runs `args` (an executable under build/bin plus its flags) and captures its output and exit code.
inline Run run(const std::string& args) {
  const std::string cmd = std::string(SPARSEACT_BIN_DIR) + "/" + args + " 2>&1";
  Run r{-1, ""};
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) r.output += buf;
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

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

/// Every field of the analysis contract (DESIGN.md) is present, and each check cites "paper NNN ...".
inline void require_contract_fields(const nlohmann::json& r, const std::string& name) {
  for (const char* key : {"analysis", "paper", "claims", "params", "seed", "device", "version", "elapsed_s", "checks", "figures", "data"})
    REQUIRE(r.contains(key));
  CHECK(r["analysis"] == name);
  for (const auto& c : r["checks"]) {
    for (const char* key : {"id", "claim", "statement", "predicted", "measured", "holds", "tolerance", "note"}) REQUIRE(c.contains(key));
    CHECK(c["claim"].get<std::string>().rfind("paper ", 0) == 0);
  }
}

}  // namespace test_support
