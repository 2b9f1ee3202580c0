#pragma once
// Progress on stderr for long runs (docs/DESIGN.md): silent for the first ~2 s and whenever stderr is
// not a terminal, so tests and CI logs stay clean.
#include <chrono>
#include <cstddef>
#include <string>

namespace sparseact {

class Progress {
 public:
  /// `total` steps of `label`; `enabled = false` silences it regardless of the terminal.
  Progress(std::string label, std::size_t total, bool enabled = true);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Marks `steps` more steps done and redraws at most a few times a second.
  void advance(std::size_t steps = 1);
  void finish();

 private:
  std::string label_;
  std::size_t total_, done_ = 0;
  bool enabled_, shown_ = false, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

/// True when stderr is a terminal (progress is drawn only then).
bool stderr_is_terminal() noexcept;

}  // namespace sparseact
