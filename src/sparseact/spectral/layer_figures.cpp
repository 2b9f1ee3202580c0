#include <sparseact/spectral/layer_figures.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include <sparseact/spectral/marchenko_pastur.hpp>

namespace sparseact::spectral {

namespace {

plot::Series series(std::string label, std::string color, plot::Style style = plot::Style::lines, bool dashed = false) {
  plot::Series s;
  s.label = std::move(label), s.color = std::move(color), s.style = style, s.dashed = dashed;
  return s;
}

plot::Figure figure(std::string name, std::string title, std::string xlabel, std::string ylabel) {
  plot::Figure f;
  f.name = std::move(name), f.title = std::move(title), f.xlabel = std::move(xlabel), f.ylabel = std::move(ylabel);
  return f;
}

/// f_λ(x) = f_MP(x/n; c, σ²)/n on `points` log-spaced abscissae across MP's support.
plot::Series mp_series(const MpComparison& mp, double n, const std::string& label, const std::string& color, bool dashed) {
  plot::Series s = series(label, color, plot::Style::lines, dashed);
  if (!mp.valid || !(mp.lambda_plus > 0)) return s;
  const MarchenkoPastur law(mp.c, mp.sigma2);
  const double lo = std::max(mp.lambda_minus, mp.lambda_plus * 1e-6), hi = mp.lambda_plus;
  constexpr int points = 300;
  for (int k = 0; k <= points; ++k) {
    const double x = lo * std::pow(hi / lo, double(k) / points);
    const double f = law.density(x / n) / n;
    if (f > 0) s.x.push_back(x), s.y.push_back(f);
  }
  return s;
}

}  // namespace

plot::Figure layer_esd_figure(const LayerRef& layer, const LayerMetrics& m, const std::string& file_stem, int bins) {
  plot::Figure fig = figure(file_stem, short_layer_name(layer.name, 56), "eigenvalue λ of WᵀW (log scale)", "density (log scale)");
  fig.logx = fig.logy = true;
  fig.legend = "bottom left";
  std::vector<double> lambda;
  for (Eigen::Index i = 0; i < m.eigenvalues.size(); ++i)
    if (m.eigenvalues(i) > 0 && i >= m.eigenvalues.size() - m.rank) lambda.push_back(m.eigenvalues(i));
  if (lambda.size() < 2 || m.kind != SpectrumKind::regular) {
    fig.annotations.push_back({.x = 0.3, .y = 0.5, .text = fmt::format("{}×{}: {} spectrum, nothing to fit", layer.rows, layer.cols, to_string(m.kind)), .graph = true});
    fig.logx = fig.logy = false;
    fig.xrange = fig.yrange = std::pair{0.0, 1.0};
    return fig;
  }
  // Log-spaced bins: density per unit λ, so the MP and power-law densities overlay without rescaling.
  const auto [lo_it, hi_it] = std::minmax_element(lambda.begin(), lambda.end());
  const double lo = std::log(*lo_it), hi = std::log(*hi_it) + 1e-12, w = (hi - lo) / bins;
  std::vector<double> counts(static_cast<std::size_t>(bins), 0.0);
  for (double x : lambda) counts[std::min<std::size_t>(static_cast<std::size_t>((std::log(x) - lo) / w), bins - 1)] += 1;
  plot::Series esd = series(fmt::format("ESD, {} nonzero eigenvalues", lambda.size()), "gray30", plot::Style::steps);
  for (int b = 0; b < bins; ++b) {
    const double left = std::exp(lo + b * w), right = std::exp(lo + (b + 1) * w);
    if (counts[b] > 0) esd.x.push_back(std::sqrt(left * right)), esd.y.push_back(counts[b] / (lambda.size() * (right - left)));
  }
  const auto [ymin, ymax] = std::minmax_element(esd.y.begin(), esd.y.end());
  fig.yrange = std::pair{*ymin / 10, *ymax * 10};  // the MP densities fall to 0 at their edges: no axis down to 1e-9
  fig.series.push_back(std::move(esd));

  const double n = static_cast<double>(std::max(layer.rows, layer.cols));
  fig.series.push_back(mp_series(m.mp_own, n, fmt::format("MP, own σ² = {:.3g}", m.mp_own.sigma2), "#1f77b4", true));
  fig.series.push_back(mp_series(m.mp_fit, n, fmt::format("MP, fitted σ² = {:.3g}", m.mp_fit.sigma2), "#d62728", false));
  if (m.power_law.valid) {
    // p(x) = (α − 1)/x_min (x/x_min)^(−α) on the tail, times the tail's share of the spectrum.
    const double share = double(m.power_law.n_tail) / double(lambda.size()), a = m.power_law.alpha, x0 = m.power_law.x_min;
    plot::Series pl = series(fmt::format("power law α = {:.2f} ± {:.2f} from x_min", a, m.power_law.alpha_se), "#2ca02c");
    for (int k = 0; k <= 50; ++k) {
      const double x = x0 * std::pow(*hi_it / x0, k / 50.0);
      pl.x.push_back(x), pl.y.push_back(share * (a - 1) / x0 * std::pow(x / x0, -a));
    }
    fig.series.push_back(std::move(pl));
  }
  if (m.mp_fit.valid) {
    fig.lines.push_back({.at = m.mp_fit.lambda_plus, .label = "fitted bulk edge λ₊", .color = "#d62728"});
    fig.lines.push_back({.at = m.mp_fit.tw_threshold, .label = fmt::format("TW spike threshold ({} spikes)", m.spikes), .color = "gray50"});
  }
  fig.annotations.push_back({.x = 0.45, .y = 0.95, .text = fmt::format("{}×{}, stable rank {:.3g}, bulk MP p = {:.3g}", layer.rows, layer.cols,
                                                                       m.stable_rank, m.mp_fit.ks_p_value), .graph = true});
  return fig;
}

plot::Figure model_summary_figure(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics,
                                  const std::string& title, const std::string& file_stem) {
  plot::Figure fig = figure(file_stem, title, "layer (natural order of names; grey lines between blocks)", "value (log scale)");
  fig.logy = true;
  fig.legend = "outside right top vertical";
  fig.width = 1250;
  plot::Series alpha = series("power-law α", "#2ca02c", plot::Style::linespoints);
  plot::Series srank = series("stable rank Σλ/λ_max", "#1f77b4", plot::Style::linespoints);
  plot::Series kappa = series("κ = λ_max/λ_min⁺", "#d62728", plot::Style::linespoints);
  const auto add = [](plot::Series& s, double x, double y) {
    if (std::isfinite(y) && y > 0) s.x.push_back(x), s.y.push_back(y);
  };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    add(alpha, double(i), metrics[i].power_law.alpha);
    add(srank, double(i), metrics[i].stable_rank);
    add(kappa, double(i), metrics[i].ratio);
    if (i > 0 && layers[i].block != layers[i - 1].block) fig.lines.push_back({.at = i - 0.5, .vertical = true, .label = "", .color = "gray70"});
  }
  fig.series = {std::move(alpha), std::move(srank), std::move(kappa)};
  fig.xrange = std::pair{-0.5, double(layers.size()) - 0.5};
  return fig;
}

}  // namespace sparseact::spectral
