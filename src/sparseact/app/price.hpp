#pragma once
// Pricing a sweep for a cluster (issue 28): time a few real items of the grid as it would run, and
// project the whole grid's core-hours from them through the sweep's own cost model.
//
//   analysis --scale paper --price-items 2 --out figures/at-scale/pricing/<name>
//
// times the cheapest item and the median-cost one, each alone on serial BLAS (as a rank runs them),
// and writes <out>/price.json:
//   rate              median over the samples of seconds / estimated cost (the model's spread beside it),
//   core_hours        Σ_i cost_i · rate / 3600 (every item, one core each),
//   longest_item_h    max_i cost_i · rate / 3600 (an item cannot be split: the job's least wall time),
//   peak_rss_mib      this process's peak resident memory after the samples (memory per rank),
//   sbatch            the examples/slurm/sweep.sbatch line for 16 cores a node.
// The most expensive items are not timed (at paper scale one can take hours); the projection is as
// good as the cost model, which the samples' spread of seconds per unit of cost shows.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include <sparseact/app/sweep.hpp>

namespace sparseact::app {

/// Times `samples` items of `sweep` (the cheapest, then evenly up to the median cost) and returns the
/// pricing described above. `flags` are the command line's own flags for the sbatch line.
nlohmann::json price_sweep(const Sweep& sweep, std::size_t samples, const std::string& analysis, const std::string& flags);

}  // namespace sparseact::app
