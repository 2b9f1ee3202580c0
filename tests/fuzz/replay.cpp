// Replays inputs through the fuzz entry points without libFuzzer (ctest label `fuzz`):
//
//     fuzz_replay TARGET PATH...
//
// TARGET is one of fuzz_targets()' names. Each PATH is a file or a folder of files (not recursive;
// a missing folder counts as empty). A file ending in .hex is a regression input
// (tests/fuzz/regressions/README.md): '#' lines are comments, the rest is hex digits and white
// space. Any other file is the input's bytes as they are. Exit status 1 when any input lets an
// exception escape (its name and message are printed), 2 on bad usage or no input at all.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_targets.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string decode_hex(const fs::path& p, const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  int nibble = -1;
  while (std::getline(lines, line)) {
    if (const auto first = line.find_first_not_of(" \t\r"); first != std::string::npos && line[first] == '#') continue;
    for (char ch : line) {
      if (std::isspace(static_cast<unsigned char>(ch))) continue;
      if (!std::isxdigit(static_cast<unsigned char>(ch)))
        throw std::runtime_error(p.string() + ": not a hex digit: '" + std::string(1, ch) + "'");
      const int v = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : std::tolower(ch) - 'a' + 10;
      if (nibble < 0) {
        nibble = v;
      } else {
        out.push_back(static_cast<char>(nibble * 16 + v));
        nibble = -1;
      }
    }
  }
  if (nibble >= 0) throw std::runtime_error(p.string() + ": odd number of hex digits");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET PATH...\n", argv[0]);
    return 2;
  }
  const FuzzTarget* target = nullptr;
  for (const FuzzTarget& t : fuzz_targets())
    if (std::string_view(argv[1]) == t.name) target = &t;
  if (!target) {
    std::fprintf(stderr, "unknown target '%s'; one of:", argv[1]);
    for (const FuzzTarget& t : fuzz_targets()) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    return 2;
  }

  std::vector<fs::path> inputs;
  for (int i = 2; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.' && e.path().filename() != "README.md")
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::exists(p)) {
      inputs.push_back(p);
    } else {
      std::printf("%s: no such file or folder, skipped\n", p.c_str());
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "%s: no inputs to replay\n", target->name);
    return 2;
  }

  int failures = 0;
  double slowest = 0;
  fs::path slowest_input;
  for (const fs::path& p : inputs) {
    const auto start = std::chrono::steady_clock::now();
    try {
      std::string bytes = read_bytes(p);
      if (p.extension() == ".hex") bytes = decode_hex(p, bytes);
      target->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      ++failures;
      std::printf("FAIL %s: %s\n", p.c_str(), e.what());
    } catch (...) {
      ++failures;
      std::printf("FAIL %s: an exception of unknown type\n", p.c_str());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > slowest) {
      slowest = s;
      slowest_input = p;
    }
  }
  std::printf("%s: %zu inputs replayed, %d failed; slowest %.3f s (%s)\n", target->name, inputs.size(), failures,
              slowest, slowest_input.filename().c_str());
  return failures ? 1 : 0;
}
