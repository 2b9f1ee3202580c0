#include <sparseact/core/twin.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace sparseact::twin {

namespace {

struct Offer {
  double cost = 0;
  std::function<Agreement()> check;
};

struct Log {
  std::mutex m;
  std::set<std::string, std::less<>> asked;
  std::map<std::string, Offer, std::less<>> offers;
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

bool wants(std::string_view path, double cost) {
  Log& l = log();
  std::lock_guard lock(l.m);
  const auto it = l.offers.find(path);
  return it == l.offers.end() || cost < it->second.cost;
}

void offer(std::string_view path, double cost, std::function<Agreement()> check) {
  Log& l = log();
  std::lock_guard lock(l.m);
  const auto it = l.offers.find(path);
  if (it == l.offers.end()) l.offers.emplace(std::string(path), Offer{cost, std::move(check)});
  else if (cost < it->second.cost) it->second = Offer{cost, std::move(check)};
}

void settle() {
  std::map<std::string, Offer, std::less<>> pending;
  {
    Log& l = log();
    std::lock_guard lock(l.m);
    pending.swap(l.offers);
  }
  for (auto& [path, o] : pending) {
    const Timer timer;
    Agreement a = o.check();
    a.cpu_s = timer.seconds();
    record(std::move(a));
  }
}

void record_losses(const std::string& path, const std::string& what, const std::vector<double>& cpu, const std::vector<double>& gpu,
                   double cpu_seconds) {
  double error = gpu.size() < cpu.size() ? std::nan("") : 0.0;
  for (std::size_t t = 0; t < cpu.size() && !std::isnan(error); ++t) {
    const double d = std::abs(gpu[t] - cpu[t]) / std::max(1.0, std::abs(cpu[t]));
    error = std::isnan(d) ? d : std::max(error, d);
  }
  record({.path = path, .slice = what + ", the batch loss of the first " + std::to_string(cpu.size()) + " steps, relative to max(1, |L|)",
          .rule = Rule::relative, .error = error, .tolerance = kTrainingLossTolerance, .cpu_s = cpu_seconds});
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
  l.offers.clear();
  l.records.clear();
}

}  // namespace sparseact::twin
