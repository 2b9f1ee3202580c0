#pragma once
// Figures of a whole-checkpoint analysis (issue 16): one layer's empirical spectral density against
// Marchenko–Pastur (own and fitted σ²) and its power-law tail, and the model summary over layers.
// Plain plot::Figure data: the analysis renders them, a notebook shows them.
#include <string>
#include <vector>

#include <sparseact/plot/figure.hpp>
#include <sparseact/spectral/checkpoint_layers.hpp>
#include <sparseact/spectral/layer_metrics.hpp>

namespace sparseact::spectral {

/// The ESD of one layer on log–log axes: the nonzero eigenvalues λ of the smaller Gram matrix in
/// `bins` log-spaced bins (density per unit λ), the MP densities f(λ/n)/n for the own and the fitted
/// σ² (n = max(N, M)), the fitted bulk edge λ₊ and the Tracy–Widom spike threshold, and the
/// power-law density from x_min, scaled by the tail's share (n_tail/rank) so it overlays the ESD.
/// Title: the short layer name (short_layer_name), so it fits; `file_stem` names the files.
plot::Figure layer_esd_figure(const LayerRef& layer, const LayerMetrics& metrics, const std::string& file_stem,
                              int bins = 60);

/// The model summary: α, stable rank and κ = λ_max/λ_min⁺ per layer (log y) in the layers' order,
/// grey lines between blocks.
plot::Figure model_summary_figure(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics,
                                  const std::string& title, const std::string& file_stem = "summary");

}  // namespace sparseact::spectral
