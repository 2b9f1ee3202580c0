#include <sparseact/app/price.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::app {

namespace {

constexpr int kCoresPerNode = 16;       // examples/slurm/sweep.sbatch: --ntasks-per-node=16
constexpr double kTargetWallHours = 2;  // spread the grid so the job takes about this long
constexpr double kQueueLimitHours = 48; // a common partition's wall-time limit: an item longer than this cannot run as one
constexpr int kGpusPerNode = 4;         // a common GPU node: one rank per GPU

std::string hours_minutes(double hours) {
  const long minutes = std::max(10L, static_cast<long>(std::ceil(hours * 60)));
  return fmt::format("{:02d}:{:02d}:00", minutes / 60, minutes % 60);
}

}  // namespace

nlohmann::json price_sweep(const Sweep& sweep, const PriceRequest& request) {
  if (!(request.length_factor >= 1)) throw std::invalid_argument("price_sweep: length_factor must be ≥ 1");
  const std::size_t count = sweep.count;
  std::size_t samples = request.samples;
  std::vector<double> cost(count);
  for (std::size_t i = 0; i < count; ++i) cost[i] = sweep.cost(i);
  std::vector<std::size_t> by_cost(count);
  std::iota(by_cost.begin(), by_cost.end(), std::size_t{0});
  std::stable_sort(by_cost.begin(), by_cost.end(), [&](std::size_t a, std::size_t b) { return cost[a] < cost[b]; });
  // The cheapest item, then evenly up to the median one: never the largest, which may take hours.
  std::vector<std::size_t> picks;
  samples = std::min(std::max<std::size_t>(samples, 1), count);
  for (std::size_t j = 0; j < samples; ++j) {
    const double q = samples == 1 ? 0.0 : 0.5 * double(j) / double(samples - 1);
    const std::size_t i = by_cost[static_cast<std::size_t>(std::lround(q * double(count - 1)))];
    if (std::find(picks.begin(), picks.end(), i) == picks.end()) picks.push_back(i);
  }
  nlohmann::json timed = nlohmann::json::array();
  std::vector<double> rates;
  for (std::size_t i : picks) {
    const ScopedBlasThreads serial_blas(1);
    const auto t0 = std::chrono::steady_clock::now();
    (void)sweep.item(i);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double projected = seconds * request.length_factor;
    timed.push_back({{"index", i}, {"key", sweep.key(i)}, {"cost", cost[i]}, {"seconds", seconds}, {"projected_seconds", projected}});
    if (cost[i] > 0) rates.push_back(projected / cost[i]);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_mib = double(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
  const double total = std::accumulate(cost.begin(), cost.end(), 0.0), largest = *std::max_element(cost.begin(), cost.end());
  const double rate = rates.empty() ? 0.0 : stats::median(rates);
  const double core_hours = total * rate / 3600, longest = largest * rate / 3600;  // GPU-hours when the items ran on a GPU
  const bool on_gpu = !request.gpu.empty();
  const std::size_t per_node = on_gpu ? kGpusPerNode : kCoresPerNode;
  // Ranks: enough for about kTargetWallHours, whole nodes, no more than one per item.
  const std::size_t wanted = static_cast<std::size_t>(std::ceil(core_hours / kTargetWallHours));
  const std::size_t ranks = std::min(count, std::max<std::size_t>(per_node, (wanted + per_node - 1) / per_node * per_node));
  const std::size_t nodes = (ranks + per_node - 1) / per_node;
  const double wall = 1.25 * std::max(longest, core_hours / double(ranks));  // a quarter's margin for the cost model
  const std::string& analysis = request.analysis;
  nlohmann::json out = {{"analysis", analysis},
                        {"items", count},
                        {"total_cost", total},
                        {"samples", timed},
                        {"seconds_per_cost", rate},
                        {"rate_spread", rates.size() >= 2 ? *std::max_element(rates.begin(), rates.end()) / *std::min_element(rates.begin(), rates.end())
                                                          : 1.0},
                        {"core_hours", core_hours},
                        {"longest_item_hours", longest},
                        {"peak_rss_mib", peak_mib},
                        {"ranks", ranks},
                        {"nodes", nodes},
                        {"wall_hours", wall},
                        {"sbatch", fmt::format("ANALYSIS={} sbatch --nodes={}{} --time={} examples/slurm/sweep.sbatch{}", analysis, nodes,
                                               on_gpu ? fmt::format(" --ntasks-per-node={} --gpus-per-task=1", kGpusPerNode) : std::string(),
                                               hours_minutes(wall), request.flags)},
                        {"gpu_hours", on_gpu ? nlohmann::json(core_hours) : nlohmann::json(nullptr)},
                        {"gpu_path", request.gpu_path},
                        {"length_factor", request.length_factor}};
  if (on_gpu) {
    out["core_hours"] = nullptr;
    out["longest_item_hours"] = nullptr;
    out["longest_item_gpu_hours"] = longest;
    out["gpu"] = request.gpu;
  }
  // An item runs on one core (one GPU) and cannot be split across ranks: past a queue's limit, no node count helps.
  if (longest > kQueueLimitHours)
    out["warning"] = fmt::format("the longest item alone takes {:.0f} {}-hours on one {}, past a typical {:g}-hour queue limit: "
                                 "no number of ranks shortens it (items are not split); it needs faster {} or another code path",
                                 longest, on_gpu ? "GPU" : "core", on_gpu ? "GPU" : "core", kQueueLimitHours, on_gpu ? "GPUs" : "cores");
  // One note: where the seconds come from, and whether GPU nodes are an option.
  std::string note = on_gpu ? "measured on " + request.gpu + ", one item at a time (one GPU per rank)"
                            : "measured on this machine's cores, one item at a time on serial BLAS";
  if (request.length_factor != 1 || !request.timed_flags.empty()) {
    out["timed_flags"] = request.timed_flags;
    note += fmt::format(", on items 1/{:g} of the real length (timed with{}), their seconds × {:g}", request.length_factor,
                        request.timed_flags.empty() ? " the same flags" : request.timed_flags, request.length_factor);
  }
  if (!on_gpu && request.gpu_path) note += "; a --device cuda path exists: price it on a GPU machine with --device cuda";
  else if (!on_gpu) note += "; GPU-hours are not measured (no --device cuda path)";
  out["note"] = note;
  return out;
}

}  // namespace sparseact::app
