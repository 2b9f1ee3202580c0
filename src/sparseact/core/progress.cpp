#include <sparseact/core/progress.hpp>

#include <cstdio>
#include <unistd.h>

namespace sparseact {

bool stderr_is_terminal() noexcept { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, std::size_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && stderr_is_terminal()),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::size_t steps) {
  done_ += steps;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 2.0 || std::chrono::duration<double>(now - last_draw_).count() < 0.25) return;
  last_draw_ = now;
  shown_ = true;
  const double frac = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 0.0;
  const double eta = frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0;
  std::fprintf(stderr, "\r%s: %zu/%zu (%3.0f%%) %.0fs elapsed, ~%.0fs left   ", label_.c_str(), done_,
               total_, 100.0 * frac, elapsed, eta);
  std::fflush(stderr);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (shown_) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "\r%s: %zu/%zu done in %.1fs%20s\n", label_.c_str(), done_, total_, elapsed, "");
  }
}

}  // namespace sparseact
