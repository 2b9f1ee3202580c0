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
//   sbatch            the examples/slurm/sweep.sbatch line for 16 cores a node,
//   warning           where the longest item alone is past a 48-hour queue limit (items are not split).
// The most expensive items are not timed (at paper scale one can take hours); the projection is as
// good as the cost model, which the samples' spread of seconds per unit of cost shows.
//
// Where even the cheapest paper-scale item takes hours, time a slice of it instead:
//
//   comet_train --scale paper --epochs 1 --price-items 2 --price-length 100 --price-flags "--epochs 100"
//
// times one-epoch items, counts each as 100 times its seconds (`length_factor`; training cost is
// linear in epochs or steps, the evaluation included per epoch), and writes the real job's flags into
// the sbatch line; price.json keeps the flags the items were timed with (`timed_flags`) and each
// sample's measured seconds beside its projected ones. Memory is not scaled: a longer run holds the
// same model.
//
// With --device cuda on a GPU machine the items run on the GPU, one at a time (one GPU per rank), and the
// projection is in GPU-hours (`gpu_hours`, `longest_item_gpu_hours`, `gpu` naming the card; `core_hours` is
// null) with an sbatch line for kGpusPerNode GPUs a node. A CPU and a GPU price of one grid sit side by side as
// at-scale/pricing/<name>/ and <name>@gpu/.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include <sparseact/app/sweep.hpp>

namespace sparseact::app {

struct PriceRequest {
  std::size_t samples = 2;     // items to time
  std::string analysis;        // the executable, for the sbatch line
  std::string flags;           // the real job's flags for the sbatch line (" --name value ...")
  double length_factor = 1;    // the timed items are 1/length_factor of the real ones
  std::string timed_flags;     // the flags the items were timed with, where they differ from `flags`
  bool gpu_path = false;       // the analysis has a --device cuda path
  std::string gpu;             // the GPU the items ran on (--device cuda): the hours are GPU-hours, one GPU per rank
};

/// Times `request.samples` items of `sweep` (the cheapest, then evenly up to the median cost) and
/// returns the pricing described above.
nlohmann::json price_sweep(const Sweep& sweep, const PriceRequest& request);

}  // namespace sparseact::app
