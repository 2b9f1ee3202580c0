#pragma once
// Figures shown inline in xeus-cling notebooks: `xcpp::display(fig)` finds mime_bundle_repr by
// argument-dependent lookup and shows the PNG (the SVG rides along for frontends that prefer it).
//
//   #include <sparseact/plot/jupyter.hpp>
//   xcpp::display(fig);
//
// Header-only and C++17 (xeus-cling's interpreter), on nlohmann-json and figure.hpp alone.
// mime_bundle_repr is a plain function, not a template: clang-based interpreters mis-parse a
// top-level call of a function template (docs/DESIGN.md, Notebooks).
#include <sparseact/plot/figure.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sparseact::plot {
namespace detail {

/// Base64 with padding (RFC 4648, section 4): how Jupyter's display protocol carries image/png.
inline std::string base64(const std::string& bytes) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    unsigned v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += alphabet[v >> 6 & 63];
    out += alphabet[v & 63];
  }
  if (std::size_t rest = bytes.size() - i; rest > 0) {  // 1 or 2 bytes left: pad to 4 characters
    unsigned v = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0u);
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += rest == 2 ? alphabet[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A new private folder under the system's temporary folder, removed with everything in it.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
      path = std::filesystem::temp_directory_path() / ("sparseact-figure-" + std::to_string(random()));
      if (std::filesystem::create_directory(path)) return;  // false: the name is taken, draw again
    }
    throw std::runtime_error("cannot create a temporary folder for a figure");
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

}  // namespace detail

/// {"image/png": base64 PNG, "image/svg+xml": SVG text} of `fig`, rendered by plot::render.
/// Throws what render throws (PlotError when gnuplot is missing or fails).
inline nlohmann::json mime_bundle_repr(const Figure& fig) {
  detail::ScratchDir dir;
  Figure named = fig;
  named.name = "figure";  // the file stem does not show: a notebook's figure needs no name
  RenderOptions options;
  options.png = true;
  options.svg = true;
  options.pdf = false;
  render(named, dir.path, options);

  nlohmann::json bundle = nlohmann::json::object();
  bundle["image/png"] = detail::base64(detail::read_bytes(dir.path / "figure.png"));
  bundle["image/svg+xml"] = detail::read_bytes(dir.path / "figure.svg");
  return bundle;
}

}  // namespace sparseact::plot
