#pragma once
// Reference values from /usr/bin/python3 (Debian's numpy/torch) for the tests that compare with a peer: a script is
// written to a private temporary folder, run, and its stdout read back as numbers.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

inline bool python_has_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

/// Runs `script` with /usr/bin/python3 and returns its stdout as whitespace-separated numbers; REQUIREs exit 0.
/// `tag` names the temporary folder (with the process id), so tests running side by side do not collide.
inline std::vector<double> run_python_numbers(const std::string& script, const std::string& tag) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("sparseact_" + tag + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "ref.py") << script;
  std::string out;
  FILE* pipe = ::popen(("/usr/bin/python3 '" + (dir / "ref.py").string() + "' 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  const int status = ::pclose(pipe);
  fs::remove_all(dir);
  INFO("python output: " << out);
  REQUIRE(status == 0);
  std::istringstream in(out);
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}
