// Figures: files of the requested size in every format, written atomically; clear errors when
// gnuplot is missing or fails; bad descriptions refused; notebooks' mime bundle.
#include <catch2/catch.hpp>

#include "support.hpp"

#include <sparseact/core/errors.hpp>
#include <sparseact/plot/figure.hpp>
#include <sparseact/plot/jupyter.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace sparseact;
using namespace sparseact::plot;

namespace {

using test_support::TempDir;

/// A fresh folder for one test, removed afterwards.

/// Sets an environment variable for one scope and puts the old value back.
struct EnvGuard {
  std::string name;
  std::optional<std::string> old;
  EnvGuard(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~EnvGuard() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

const std::string png_signature = "\x89PNG\r\n\x1a\n";

/// Width and height from a PNG's IHDR chunk (bytes 16..23, big-endian).
std::pair<std::uint32_t, std::uint32_t> png_size(const std::string& bytes) {
  REQUIRE(bytes.size() > 24);
  REQUIRE(bytes.compare(0, 8, png_signature) == 0);
  REQUIRE(bytes.compare(12, 4, "IHDR") == 0);
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) v = v << 8 | static_cast<unsigned char>(bytes[at + k]);
    return v;
  };
  return {be32(16), be32(20)};
}

std::string base64_decode(const std::string& text) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    auto k = alphabet.find(c);
    if (k == std::string::npos) return "not base64";
    buffer = buffer << 6 | static_cast<unsigned>(k);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(buffer >> bits & 0xff);
    }
  }
  return out;
}

/// The rows of data block `$name` in a gnuplot script, as numbers.
std::vector<std::vector<double>> data_block(const std::string& script, const std::string& name) {
  auto start = script.find("$" + name + " << EOD\n");
  REQUIRE(start != std::string::npos);
  start = script.find('\n', start) + 1;
  auto end = script.find("EOD\n", start);
  std::vector<std::vector<double>> rows;
  std::istringstream lines(script.substr(start, end - start));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    rows.emplace_back(std::istream_iterator<double>(fields), std::istream_iterator<double>());
  }
  return rows;
}

/// A small figure with everything a paper's figure has.
Figure sample(const std::string& name) {
  Figure fig;
  fig.name = name;
  fig.title = "ESD of K Kᵀ";
  fig.xlabel = "eigenvalue λ";
  fig.ylabel = "density";
  Histogram h;
  for (int i = 0; i < 400; ++i) h.values.push_back(std::sin(i * 0.37) + 1.5);
  h.bins = 20;
  h.label = "empirical";
  fig.histograms.push_back(h);
  Series s;
  for (int i = 1; i <= 30; ++i) {
    s.x.push_back(i * 0.1);
    s.y.push_back(0.3 + 0.01 * i);
  }
  s.label = "Marchenko–Pastur";
  fig.series.push_back(s);
  Series e;
  e.x = {1, 2};
  e.y = {0.4, 0.5};
  e.yerr = {0.05, 0.1};
  e.style = Style::points;
  e.dashed = true;
  e.label = "measured";
  fig.series.push_back(e);
  RefLine edge;
  edge.at = 2.5;
  edge.label = "λ₊";
  fig.lines.push_back(edge);
  Annotation note;
  note.x = 0.1;
  note.y = 0.9;
  note.graph = true;
  note.text = "n = 400";
  fig.annotations.push_back(note);
  return fig;
}

}  // namespace

TEST_CASE("render writes PNG, SVG and PDF of the requested size, and nothing else", "[plot]") {
  REQUIRE(gnuplot_available());  // gnuplot-nox is a dependency (docs/DESIGN.md)
  TempDir dir;
  Figure fig = sample("esd");
  fig.width = 640;
  fig.height = 480;
  RenderOptions all;
  all.pdf = true;
  auto written = render(fig, dir.path, all);

  CHECK(std::set<std::string>(written.begin(), written.end()) == std::set<std::string>{"esd.png", "esd.svg", "esd.pdf"});
  CHECK(names_in(dir.path) == std::set<std::string>{"esd.png", "esd.svg", "esd.pdf"});  // no temporaries left

  auto [w, h] = png_size(slurp(dir.path / "esd.png"));
  CHECK(w == 640);
  CHECK(h == 480);

  std::string svg = slurp(dir.path / "esd.svg");
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("width=\"640\" height=\"480\"") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("K Kᵀ") != std::string::npos);  // UTF-8 text survives
  CHECK(svg.find("eigenvalue λ") != std::string::npos);

  std::string pdf = slurp(dir.path / "esd.pdf");
  CHECK(pdf.rfind("%PDF-", 0) == 0);
  std::smatch box;
  REQUIRE(std::regex_search(pdf, box, std::regex(R"(MediaBox \[ *0 0 ([0-9.]+) ([0-9.]+) *\])")));
  // 640 x 480 px at 100 dpi, in points; gnuplot rounds the page to whole points
  CHECK(std::stod(box[1]) == Approx(6.4 * 72).margin(1));
  CHECK(std::stod(box[2]) == Approx(4.8 * 72).margin(1));
}

TEST_CASE("render defaults to PNG and SVG and replaces earlier files", "[plot]") {
  REQUIRE(gnuplot_available());
  TempDir dir;
  Figure fig = sample("again");
  CHECK(render(fig, dir.path) == std::vector<std::string>{"again.png", "again.svg"});
  fig.width = 300;
  fig.height = 200;
  render(fig, dir.path);
  CHECK(names_in(dir.path) == std::set<std::string>{"again.png", "again.svg"});
  CHECK(png_size(slurp(dir.path / "again.png")) == std::pair<std::uint32_t, std::uint32_t>{300, 200});
}

TEST_CASE("render creates the folder and survives concurrent writers of one figure", "[plot]") {
  REQUIRE(gnuplot_available());
  TempDir dir;
  fs::path sub = dir.path / "a" / "b";
  Figure fig = sample("same");
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&] { render(fig, sub); });
  for (auto& t : threads) t.join();
  CHECK(names_in(sub) == std::set<std::string>{"same.png", "same.svg"});
  CHECK(png_size(slurp(sub / "same.png")).first == 1000);
}

TEST_CASE("text reaches gnuplot verbatim: quotes, backslashes, @ and enhanced-text specials", "[plot]") {
  REQUIRE(gnuplot_available());
  TempDir dir;
  Figure fig = sample("text");
  fig.title = "say \"hi\" \\ @x a_b^2 {c} & ~";
  fig.series[0].label = "line\nbreak";
  std::string script = gnuplot_script(fig, "svg", dir.path / "text.svg");
  CHECK(script.find(R"(set title "say \"hi\" \\ @x a_b^2 {c} & ~" noenhanced)") != std::string::npos);
  CHECK(script.find(R"(title "line\nbreak" noenhanced)") != std::string::npos);
  CHECK(script.find("set encoding utf8") != std::string::npos);

  render(fig, dir.path);
  std::string svg = slurp(dir.path / "text.svg");
  CHECK(svg.find("@x a_b^2 {c}") != std::string::npos);
}

TEST_CASE("a missing gnuplot is a one-line PlotError and nothing is written", "[plot]") {
  TempDir dir;
  fs::path out = dir.path / "never";
  EnvGuard env("SPARSEACT_GNUPLOT", "/nonexistent/bin/gnuplot");
  CHECK_FALSE(gnuplot_available());
  try {
    render(sample("missing"), out);
    FAIL("render did not throw");
  } catch (const PlotError& e) {
    std::string what = e.what();
    CHECK(what.find("gnuplot not found") != std::string::npos);
    CHECK(what.find("SPARSEACT_GNUPLOT") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("a failing gnuplot is a PlotError with its message, and leaves no file", "[plot]") {
  TempDir dir;
  fs::path fake = dir.path / "fake-gnuplot";
  fs::path out = dir.path / "out";
  fs::create_directories(out);
  auto fake_gnuplot = [&](const std::string& body) {
    std::ofstream(fake) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(fake, fs::perms::owner_all);
  };
  EnvGuard env("SPARSEACT_GNUPLOT", fake.string());

  SECTION("it reports an error") {
    fake_gnuplot("cat >/dev/null\necho 'plot $x with foo' >&2\necho '         line 2: warning: no valid points' >&2\necho '         line 3: unrecognized plot type' >&2\nexit 1");
    REQUIRE_THROWS_AS(render(sample("fails"), out), PlotError);
    REQUIRE_THROWS_WITH(render(sample("fails"), out), Catch::Contains("unrecognized plot type"));
  }
  SECTION("it quits without reading a large script or writing a file") {
    fake_gnuplot("exit 0");  // our writes then meet a closed pipe: EPIPE, not a SIGPIPE
    Figure big = sample("big");
    big.series[0].x.assign(200000, 1.0);
    big.series[0].y.assign(200000, 2.0);
    REQUIRE_THROWS_AS(render(big, out), PlotError);
  }
  CHECK(names_in(out).empty());
}

TEST_CASE("log axes drop non-positive and non-finite points and still render", "[plot]") {
  REQUIRE(gnuplot_available());
  TempDir dir;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Figure fig;
  fig.name = "loglog";
  fig.logx = fig.logy = true;
  Series s;
  s.x = {-1, 0, 1, 2, 3, nan, 5};
  s.y = {1, 1, 0, 4, nan, 1, inf};
  fig.series.push_back(s);
  Histogram h;
  h.values = {-3, 0, 0.5, 1, 2, 4, 8, nan};
  h.bins = 4;
  fig.histograms.push_back(h);
  RefLine below_zero;
  below_zero.at = -1;
  fig.lines.push_back(below_zero);

  std::string script = gnuplot_script(fig, "png", dir.path / "loglog.png");
  CHECK(data_block(script, "series0") == std::vector<std::vector<double>>{{2, 4}});
  auto bins = data_block(script, "hist0");
  REQUIRE_FALSE(bins.empty());
  CHECK(bins.front()[0] == Approx(0.5));  // log bins from the smallest positive value
  CHECK(bins.back()[1] == Approx(8));
  CHECK(script.find("set arrow") == std::string::npos);

  CHECK(render(fig, dir.path).size() == 2);

  SECTION("even when nothing is left to draw") {
    fig.name = "empty";
    fig.histograms.clear();
    fig.series[0].y.assign(fig.series[0].x.size(), -1.0);
    CHECK(render(fig, dir.path) == std::vector<std::string>{"empty.png", "empty.svg"});
  }
}

TEST_CASE("log axes label powers of ten, or 1-2-5 tics inside a narrow fixed range", "[plot]") {
  Figure fig = sample("ticks");
  fig.logx = fig.logy = true;
  fig.yrange = std::pair{0.15, 0.6};
  std::string script = gnuplot_script(fig, "png", "ticks.png");
  CHECK(script.find("set format x \"10^{%L}\"") != std::string::npos);
  CHECK(script.find("set ytics (0.2, 0.5)") != std::string::npos);
}

TEST_CASE("a density histogram has area one; a count histogram sums to the sample size", "[plot]") {
  Figure fig;
  fig.name = "hist";
  Histogram h;
  for (int i = 0; i < 1000; ++i) h.values.push_back(std::pow(i / 1000.0, 2));
  h.values.push_back(std::numeric_limits<double>::quiet_NaN());
  h.bins = 17;
  fig.histograms.push_back(h);
  h.density = false;
  h.range = std::pair{0.25, 0.5};
  fig.histograms.push_back(h);

  std::string script = gnuplot_script(fig, "png", "hist.png");
  double area = 0;
  for (const auto& row : data_block(script, "hist0")) area += (row[1] - row[0]) * row[2];
  CHECK(area == Approx(1.0));
  auto counted = data_block(script, "hist1");
  CHECK(counted.size() == 17);
  double total = 0;
  for (const auto& row : counted) total += row[2];
  CHECK(total == Approx(double(std::count_if(h.values.begin(), h.values.end(), [](double v) { return v >= 0.25 && v <= 0.5; }))));
}

TEST_CASE("bad figure descriptions throw invalid_argument", "[plot]") {
  auto fails = [](auto change) {
    Figure fig = sample("bad");
    change(fig);
    CHECK_THROWS_AS(gnuplot_script(fig, "png", "bad.png"), std::invalid_argument);
  };
  fails([](Figure& f) { f.name.clear(); });
  fails([](Figure& f) { f.name = "sub/dir"; });
  fails([](Figure& f) { f.width = 0; });
  fails([](Figure& f) { f.series[0].y.pop_back(); });
  fails([](Figure& f) { f.series[1].yerr = {0.1}; });
  fails([](Figure& f) { f.series[1].yerr = {0.1, -0.1}; });
  fails([](Figure& f) { f.series[0].width = 0; });
  fails([](Figure& f) { f.histograms[0].bins = 0; });
  fails([](Figure& f) { f.histograms[0].range = std::pair{1.0, 1.0}; });
  fails([](Figure& f) { f.xrange = std::pair{2.0, 1.0}; });
  fails([](Figure& f) {
    f.logy = true;
    f.yrange = std::pair{0.0, 1.0};
  });
  fails([](Figure& f) { f.series[0].color = "red\nsystem 'touch x'"; });
  fails([](Figure& f) { f.legend = "top right; system 'touch x'"; });
  CHECK_THROWS_AS(gnuplot_script(sample("bad"), "jpeg", "bad.jpg"), std::invalid_argument);

  // The figure is checked before gnuplot is looked for: a bad figure is the caller's error.
  EnvGuard env("SPARSEACT_GNUPLOT", "/nonexistent/bin/gnuplot");
  Figure unnamed = sample("");
  CHECK_THROWS_AS(render(unnamed, fs::temp_directory_path()), std::invalid_argument);
}

TEST_CASE("mime_bundle_repr carries a base64 PNG and the SVG", "[plot]") {
  REQUIRE(gnuplot_available());
  Figure fig = sample("");  // notebooks' figures need no name
  fig.width = 320;
  fig.height = 240;
  nlohmann::json bundle = mime_bundle_repr(fig);  // found by argument-dependent lookup
  REQUIRE(bundle.contains("image/png"));
  REQUIRE(bundle.contains("image/svg+xml"));
  std::string png = base64_decode(bundle["image/png"].get<std::string>());
  CHECK(png.compare(0, 8, png_signature) == 0);
  CHECK(png_size(png) == std::pair<std::uint32_t, std::uint32_t>{320, 240});
  CHECK(bundle["image/svg+xml"].get<std::string>().find("<svg") != std::string::npos);

  CHECK(detail::base64("") == "");
  CHECK(detail::base64("f") == "Zg==");
  CHECK(detail::base64("fo") == "Zm8=");
  CHECK(detail::base64("foo") == "Zm9v");
  CHECK(detail::base64("\xff\xfe") == "//4=");
}
