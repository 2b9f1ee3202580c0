#pragma once
// A small description of a figure, rendered by gnuplot (gnuplot-nox) to PNG, SVG and PDF.
// Analyses, tests and notebooks build a Figure as plain data; render() turns it into files.
//
//   plot::Figure fig{.name = "esd", .title = "ESD of K Kᵀ", .xlabel = "eigenvalue λ", .ylabel = "density"};
//   fig.histograms.push_back({.values = eigs, .bins = 80, .label = "empirical"});
//   fig.series.push_back({.x = xs, .y = mp, .label = "Marchenko–Pastur"});
//   plot::render(fig, out_dir);   // out_dir/esd.png, out_dir/esd.svg
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sparseact::plot {

enum class Style { lines, points, linespoints, steps, impulses };

/// y against x; optional symmetric error bars.
struct Series {
  std::vector<double> x, y;
  std::string label;
  Style style = Style::lines;
  std::string color;  ///< gnuplot colour name or "#rrggbb"; empty = palette order
  double width = 2.0;
  std::vector<double> yerr;  ///< empty, or one half-width per point
  bool dashed = false;
  int point_type = 7;  ///< gnuplot's pt for points and linespoints: 7 a filled circle, 13 a filled diamond
};

/// Histogram of raw values; `density` normalises the area to 1 so a density can be overlaid.
struct Histogram {
  std::vector<double> values;
  int bins = 60;
  std::string label;
  bool density = true;
  std::optional<std::pair<double, double>> range;  ///< bin range; default [min, max] of values
  std::string color;
};

/// Text at (x, y): data coordinates, or graph coordinates in [0, 1]² when `graph` is set.
struct Annotation {
  double x = 0, y = 0;
  std::string text;
  bool graph = false;
};

/// A vertical (x = at) or horizontal (y = at) reference line across the plot.
struct RefLine {
  double at = 0;
  bool vertical = true;
  std::string label;
  std::string color = "gray40";
};

struct Figure {
  std::string name;  ///< file stem: name.png, name.svg, name.pdf
  std::string title, xlabel, ylabel;
  bool logx = false, logy = false;
  std::optional<std::pair<double, double>> xrange, yrange;
  std::vector<Histogram> histograms;
  std::vector<Series> series;
  std::vector<RefLine> lines;
  std::vector<Annotation> annotations;
  int width = 1000, height = 700;  ///< pixels of the PNG (the SVG uses the same size)
  std::string legend = "top right";  ///< gnuplot key position, or "off"
};

struct RenderOptions {
  bool png = true;
  bool svg = true;
  bool pdf = false;
};

/// True when a gnuplot executable is on PATH (or named by $SPARSEACT_GNUPLOT).
bool gnuplot_available();

/// The gnuplot script that draws `fig` into `output` with terminal `terminal` (png, svg, pdf);
/// exposed for tests and for users who want to edit a figure by hand.
std::string gnuplot_script(const Figure& fig, const std::string& terminal, const std::filesystem::path& output);

/// Renders `fig` into `dir`; returns the files written (file names only). Throws PlotError with a
/// one-line message when gnuplot is missing or fails; never leaves a half-written file.
std::vector<std::string> render(const Figure& fig, const std::filesystem::path& dir,
                                const RenderOptions& options = {});

}  // namespace sparseact::plot
