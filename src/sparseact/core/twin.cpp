#include <sparseact/core/twin.hpp>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

namespace sparseact::twin {

namespace {

struct Log {
  std::mutex m;
  std::set<std::string, std::less<>> asked;
  std::vector<Agreement> records;
};

Log& log() {
  static Log l;
  return l;
}

}  // namespace

double max_abs_difference(const double* a, const double* b, std::size_t n) {
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::abs(a[i] - b[i]);
    if (std::isnan(d)) return d;
    worst = std::max(worst, d);
  }
  return worst;
}

const char* to_string(Rule r) noexcept { return r == Rule::identical ? "identical" : "relative"; }

bool due(std::string_view path) {
  Log& l = log();
  std::lock_guard lock(l.m);
  return l.asked.emplace(path).second;
}

void record(Agreement a) {
  Log& l = log();
  std::lock_guard lock(l.m);
  l.records.push_back(std::move(a));
}

std::vector<Agreement> recorded() {
  Log& l = log();
  std::lock_guard lock(l.m);
  return l.records;
}

void reset() {
  Log& l = log();
  std::lock_guard lock(l.m);
  l.asked.clear();
  l.records.clear();
}

}  // namespace sparseact::twin
