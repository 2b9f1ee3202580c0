// sweep_schedule.hpp — the sweep runner's schedule replayed on known item times (benchmark support,
// not the library): rank 0's compute thread takes single items, other ranks take guided chunks
// (items, in decreasing cost, until their cost reaches remaining / (2 · ranks)), as
// app/sweep_runner.cpp hands them out. Used to project a measured 1-rank sweep onto many ranks.
#pragma once

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace sparseact::bench {

struct ScheduleModel {
  double overhead_s = 0;         ///< per item, measured on empty items
  double serial_s = 0;           ///< rank 0 outside the sweep: start-up, reduction, figures
  double gather_s_per_item = 0;  ///< a record's bytes at the measured gather rate
  double latency_s = 100e-6;     ///< a worker's request round trip (the dispatcher's polling)
};

struct ScheduleResult {
  double wall_s = 0;
  double sweep_s = 0;
  std::string limit;  ///< what binds: the largest item, rank 0's serial time, or the work itself
};

inline ScheduleResult simulate_schedule(const std::vector<double>& seconds, int ranks, const ScheduleModel& m) {
  std::vector<std::size_t> order(seconds.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  std::vector<double> suffix(order.size() + 1, 0.0);
  for (std::size_t k = order.size(); k-- > 0;) suffix[k] = suffix[k + 1] + seconds[order[k]];
  std::vector<double> free_at(static_cast<std::size_t>(ranks), 0.0);
  std::size_t pos = 0;
  while (pos < order.size()) {
    const auto r = static_cast<std::size_t>(std::min_element(free_at.begin(), free_at.end()) - free_at.begin());
    double busy = 0;
    if (r == 0) {
      busy = seconds[order[pos++]] + m.overhead_s;
    } else {
      const double target = suffix[pos] / (2.0 * ranks);
      double taken = 0;
      busy = m.latency_s;
      while (pos < order.size() && (taken == 0 || taken + seconds[order[pos]] <= target)) {
        taken += seconds[order[pos]];
        busy += seconds[order[pos]] + m.overhead_s;
        ++pos;
      }
    }
    free_at[r] += busy;
  }
  ScheduleResult out;
  out.sweep_s = *std::max_element(free_at.begin(), free_at.end());
  out.wall_s = m.serial_s + out.sweep_s + m.gather_s_per_item * static_cast<double>(seconds.size());
  const double largest = seconds.empty() ? 0 : *std::max_element(seconds.begin(), seconds.end());
  if (largest >= 0.8 * out.sweep_s)
    out.limit = fmt::format("the largest item ({:.2f} s of a {:.2f} s sweep)", largest, out.sweep_s);
  else if (m.serial_s >= out.sweep_s)
    out.limit = fmt::format("rank 0's serial time ({:.2f} s)", m.serial_s);
  else
    out.limit = fmt::format("the work: {:.1f} item-seconds over {} ranks", suffix[0], ranks);
  return out;
}

}  // namespace sparseact::bench
