#pragma once
// Sweeps as work items (docs/DESIGN.md, "Sweeps on many machines"). An analysis declares its grid as a
// list of items and an item function that is pure in (the parameters, the item's index): it derives
// its random streams from --seed and the index, reads no other item's result and writes no shared
// state. Analysis::sweep() then runs the items
//
//   alone          --threads items at once in this process (default: the cores of its affinity mask),
//   under mpirun   on every rank, items handed out in decreasing estimated cost by rank 0,
//   with --resume  each finished item checkpointed under <out>/.sweep/, a rerun computing only the rest,
//
// and returns the records in index order, so the reduction that follows never sees arrival order
// and writes the same bytes for any placement. Items always run with serial BLAS and no nested
// OpenMP: OpenBLAS partitions some reductions by its thread count.
//
//   app::Sweep s{.label = "spectra", .count = grid.count(),
//                .key  = [&](std::size_t i) { return fmt::format("c={},n={},trial={}", ...); },
//                .cost = [&](std::size_t i) { return n * n * d; },
//                .item = [&](std::size_t i) { return app::Record().set("ratio", r).set("ks", ks); }};
//   const std::vector<app::Record> records = analysis.sweep(s);
//
// This header is C++17 and never includes mpi.h (notebooks read .sweep/ folders with it).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include <sparseact/core/record.hpp>

namespace sparseact::app {

// Record, serialize and deserialize live in core/record.hpp (topics' record converters include them
// without reaching up into app/); app::Record names the same type.
using sparseact::Record;
using sparseact::serialize;
using sparseact::deserialize;

/// A grid in mixed radix: item index ↔ coordinates, the last axis fastest, so an analysis that
/// looped `for a: for b: for t:` keeps its order and its streams.
struct Grid {
  std::vector<std::size_t> sizes;
  std::size_t count() const;
  std::vector<std::size_t> coords(std::size_t index) const;
  std::size_t index(const std::vector<std::size_t>& coords) const;
};

struct Sweep {
  std::string label = "items";  ///< for progress lines
  std::size_t count = 0;
  std::function<std::string(std::size_t)> key;  ///< readable coordinates of item i, e.g. "c=4,n=512,trial=3"
  std::function<double(std::size_t)> cost;      ///< estimated relative cost of item i (≥ 0); larger items go first
  std::function<Record(std::size_t)> item;      ///< pure in (parameters, i); may run on any thread of any rank
};

/// The order in which items are handed out: by decreasing estimated cost (ties: lower index first);
/// the test-only orders show that the bytes do not depend on it.
enum class ItemOrder { cost, reverse, shuffle };

/// How a sweep runs; Analysis::sweep fills it from the flags.
struct SweepOptions {
  int threads = 0;              ///< items at once per process; 0: the cores of the affinity mask
  bool resume = false;          ///< checkpoint items under <out>/.sweep and reuse the ones there
  std::filesystem::path out;    ///< --out (where .sweep lives)
  std::string analysis;         ///< manifest: analysis name
  std::string version;          ///< manifest: sparseact version
  nlohmann::json params;        ///< manifest: the parameters that change results (digested)
  ItemOrder order = ItemOrder::cost;
  std::string device = "cpu";   ///< run.json: where the items ran
  bool show_progress = true;    ///< a progress bar (alone) or batch-log lines (under a launcher)
};

/// What happened to each item, for .sweep/run.json (never for <name>.json: it differs between runs).
struct ItemRun {
  int rank = 0;
  double seconds = 0;
  bool resumed = false;
};

struct SweepReport {
  std::vector<ItemRun> items;   ///< by index
  std::size_t computed = 0, resumed = 0, redone = 0;  ///< redone: checkpoints that failed their digest
  double wall_s = 0;
};

/// Runs every item of `sweep` in this process and returns the records in index order; the first
/// exception by index is rethrown after the items in flight finish. With options.resume it reads and
/// writes <out>/.sweep (checkpoints, manifest, run.json). Under a launcher use Analysis::sweep,
/// which also spreads the items over the ranks.
std::vector<Record> run_sweep(const Sweep& sweep, const SweepOptions& options, SweepReport* report = nullptr);

/// The items an analysis would run, one JSON line each ({"index", "key", "cost"}): --list-items.
std::string list_items(const Sweep& sweep);

/// A .sweep folder read back (a finished or interrupted run): the manifest, run.json when present,
/// and every item checkpoint that passes its digest.
struct SweepFolder {
  nlohmann::json manifest;
  nlohmann::json run;               ///< null before the run finished
  std::map<std::size_t, Record> items;
  std::vector<std::size_t> corrupt; ///< item files that failed their digest
  std::vector<double> item_seconds; ///< from run.json, by index (empty before the run finished)
  std::vector<int> item_rank;       ///< from run.json: the rank that computed each item (−1: resumed)
};
SweepFolder read_sweep_folder(const std::filesystem::path& out);

/// The GPU a rank uses: its local rank modulo the node's GPU count (round robin when ranks
/// outnumber GPUs); −1 when the node has none.
int device_for_local_rank(int local_rank, int device_count);

/// The manifest digest of a parameter set: 8 hex digits of zlib's CRC-32 of its canonical JSON text
/// (the manifest also keeps the parameters themselves, compared exactly).
std::string params_digest(const nlohmann::json& params);

}  // namespace sparseact::app
