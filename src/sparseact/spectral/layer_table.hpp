#pragma once
// The per-layer table of a whole-checkpoint analysis (issue 16), defined once as a list of columns
// over LayerMetrics, and written from it as layers.csv, as JSON, as the text table on stdout, and as
// the per-layer differences of two checkpoints (--compare).
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <sparseact/spectral/checkpoint_layers.hpp>
#include <sparseact/spectral/layer_metrics.hpp>

namespace sparseact::spectral {

/// One numeric column: its CSV/JSON name and how to read it from a layer's metrics.
struct LayerColumn {
  const char* name;
  double (*get)(const LayerMetrics&);
};

/// Every numeric quantity of a layer, in the order of layers.csv (after name, rows, cols, kind).
const std::vector<LayerColumn>& layer_columns();

/// layers.csv: name, rows, cols, kind, then layer_columns(); numbers with 17 significant digits, NaN as
/// "nan", names quoted as RFC 4180 asks when they hold a comma, quote or newline.
std::string layers_csv(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics);

/// The same rows as JSON objects (NaN and ±∞ as null, as JSON has no such numbers).
nlohmann::json layers_json(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics);

/// The text table printed on stdout, one line per layer, like WeightWatcher's analyze() DataFrame:
/// the layer's short name (the widest column) first, then its shape and the quantities a reader scans
/// (λ_max, stable rank, α ± SE, D, α-weighted, fitted σ², spikes, the MP p-value, soft rank, κ, §8.4).
std::string layers_text_table(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics);

/// Layers of two models paired by name (those present in both, with the same shape); the others listed.
struct LayerPairing {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  ///< (index in a, index in b), a's order
  std::vector<std::string> only_in_a, only_in_b, shape_differs;
};
LayerPairing pair_layers(const std::vector<LayerRef>& a, const std::vector<LayerRef>& b);

/// compare.csv: name, rows, cols, kind_a, kind_b, then for every column X: X_a, X_b, and X_b − X_a.
std::string compare_csv(const std::vector<LayerRef>& a_layers, const std::vector<LayerMetrics>& a,
                        const std::vector<LayerMetrics>& b, const LayerPairing& pairing);

/// A text table of the differences b − a of the quantities layers_text_table shows.
std::string compare_text_table(const std::vector<LayerRef>& a_layers, const std::vector<LayerMetrics>& a,
                               const std::vector<LayerMetrics>& b, const LayerPairing& pairing);

}  // namespace sparseact::spectral
