// Figures through gnuplot: the Figure is validated and turned into one gnuplot script whose data
// travel inline as heredoc data blocks ($name << EOD), then gnuplot runs with the script on stdin.
// Files appear atomically: gnuplot writes hidden temporary names that are renamed on success.
#include <sparseact/plot/figure.hpp>

#include <sparseact/core/errors.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <ctime>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sparseact::plot {
namespace fs = std::filesystem;

namespace {

// Okabe & Ito's colour-blind-safe palette, without its yellow (unreadable on white).
constexpr std::array<const char*, 7> palette = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                "#E69F00", "#56B4E9", "#000000"};

// A figure of the default size uses 14-pixel text; other sizes scale text and lines with the
// square root of the area, so a thumbnail and a poster keep the same proportions (down to 3/4,
// below which text stops being readable).
constexpr double base_width = 1000, base_height = 700;
constexpr int base_font = 14;

// ---- text -----------------------------------------------------------------------------------

/// A gnuplot double-quoted string: inside double quotes gnuplot interprets only backslash
/// escapes, and macros (@x) are not expanded. Other control characters would break the script
/// line: they are dropped.
std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += ' ';
    } else if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      out += c;  // UTF-8 bytes pass through (set encoding utf8)
    }
  }
  out += '"';
  return out;
}

/// Shortest text that reads back as the same double.
std::string num(double v) {
  std::array<char, 32> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return ec == std::errc{} ? std::string(buf.data(), end) : std::string("NaN");
}

/// A user's text. The terminals run in enhanced mode for the log axes' 10^{k} tick labels; user
/// text opts out, so ^ _ @ & { } ~ stay plain characters.
std::string text(std::string_view s) { return quote(s) + " noenhanced"; }

std::string where(const Figure& fig) { return "figure '" + fig.name + "': "; }

/// A colour the user named: "#rrggbb", "#aarrggbb" or a gnuplot colour name ("gray40", "dark-red").
/// Anything else would be pasted into the script, so it is refused here.
std::string color_or(const std::string& color, const char* fallback, const Figure& fig) {
  if (color.empty()) return fallback;
  static const std::regex ok{"#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})|[a-zA-Z][a-zA-Z0-9-]*"};
  if (!std::regex_match(color, ok))
    throw std::invalid_argument(where(fig) + "colour \"" + color +
                                "\" is neither #rrggbb nor a gnuplot colour name");
  return color;
}

/// The legend position is pasted into `set key`: only gnuplot's position words are allowed.
void check_legend(const Figure& fig) {
  if (fig.legend == "off") return;
  static const std::regex ok{
      "\\s*((top|bottom|center|left|right|inside|outside|above|below|over|under|lmargin|rmargin|"
      "tmargin|bmargin|horizontal|vertical|Left|Right|reverse|noreverse|invert|noinvert|box|nobox|"
      "opaque|noopaque)\\s*)*"};
  if (!std::regex_match(fig.legend, ok))
    throw std::invalid_argument(where(fig) + "legend \"" + fig.legend +
                                "\" is not \"off\" nor gnuplot key position words (e.g. \"top right\")");
}

// ---- the script -----------------------------------------------------------------------------

/// Everything of a script except the terminal: data blocks and settings (`body`) and the plot
/// command (`plot`), built once so that render() can draw several formats from one data copy.
struct Script {
  std::string body;
  std::string plot;
};

struct Axes {
  bool logx, logy;
  bool keep(double x, double y) const {
    return std::isfinite(x) && std::isfinite(y) && (!logx || x > 0) && (!logy || y > 0);
  }
};

void check_range(const std::optional<std::pair<double, double>>& range, bool log, const char* what,
                 const Figure& fig) {
  if (!range) return;
  auto [lo, hi] = *range;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi))
    throw std::invalid_argument(where(fig) + what + " [" + num(lo) + ", " + num(hi) +
                                "] must be finite with low < high");
  if (log && lo <= 0)
    throw std::invalid_argument(where(fig) + what + " must be positive on a log axis, got [" + num(lo) +
                                ", " + num(hi) + "]");
}

/// Bin edges and heights of one histogram: `bins` equal bins on a linear x axis, equal bins of
/// log x on a log axis (so boxes have equal widths on screen). With `density` the area is 1 over
/// the values inside the range, as numpy's histogram(density=True).
struct Binned {
  std::vector<double> lo, hi, height;
};

Binned bin(const Histogram& h, bool logx, bool logy, const Figure& fig) {
  if (h.bins < 1 || h.bins > 1'000'000)
    throw std::invalid_argument(where(fig) + "histogram \"" + h.label + "\" has bins = " +
                                std::to_string(h.bins) + ", allowed 1..1000000");
  check_range(h.range, logx, "histogram range", fig);

  std::vector<double> v;
  v.reserve(h.values.size());
  for (double x : h.values)
    if (std::isfinite(x) && (!logx || x > 0)) v.push_back(x);
  if (v.empty()) return {};

  double lo, hi;
  if (h.range) {
    std::tie(lo, hi) = *h.range;
  } else {
    auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    lo = *mn;
    hi = *mx;
    if (lo == hi) {  // one distinct value: a bin around it, as numpy does
      lo = logx ? lo / 2 : lo - 0.5;
      hi = logx ? hi * 2 : hi + 0.5;
    }
  }
  // Work in log space on a log axis; t maps a value to [0, bins].
  auto t = [&](double x) { return logx ? std::log(x / lo) / std::log(hi / lo) : (x - lo) / (hi - lo); };
  auto edge = [&](int i) {
    double f = double(i) / h.bins;
    return logx ? lo * std::pow(hi / lo, f) : lo + f * (hi - lo);
  };

  std::vector<double> count(h.bins, 0.0);
  double inside = 0;
  for (double x : v) {
    if (x < lo || x > hi) continue;
    int i = std::min(h.bins - 1, static_cast<int>(t(x) * h.bins));  // x == hi joins the last bin
    count[std::max(i, 0)] += 1;
    inside += 1;
  }
  if (inside == 0) return {};

  Binned b;
  for (int i = 0; i < h.bins; ++i) {
    double a = edge(i), z = edge(i + 1);
    double y = h.density ? count[i] / (inside * (z - a)) : count[i];
    if (logy && y <= 0) continue;  // an empty bin has no height on a log axis
    b.lo.push_back(a);
    b.hi.push_back(z);
    b.height.push_back(y);
  }
  return b;
}

/// Scale and tics of a log axis. gnuplot puts a log axis' major tics on powers of ten only, so
/// 10^{k} labels them exactly; a fixed range with fewer than two powers of ten inside would have
/// (almost) no labels, so it gets 1-2-5 tics (or 1..9, or its ends) labelled plainly instead.
std::string log_axis(char axis, const std::optional<std::pair<double, double>>& range) {
  std::string name(1, axis);
  std::string s = "set logscale " + name + " 10\n";
  if (!range || std::floor(std::log10(range->second)) - std::ceil(std::log10(range->first)) >= 1)
    return s + "set format " + name + " \"10^{%L}\"\n";

  auto [lo, hi] = *range;
  auto tics = [&](std::initializer_list<double> mantissas) {
    std::vector<double> v;
    for (int k = int(std::floor(std::log10(lo))); k <= int(std::floor(std::log10(hi))); ++k)
      for (double m : mantissas) {
        double t = m * std::pow(10.0, k);
        if (t >= lo * (1 - 1e-12) && t <= hi * (1 + 1e-12)) v.push_back(t);
      }
    return v;
  };
  std::vector<double> v = tics({1, 2, 5});
  if (v.size() < 2) v = tics({1, 2, 3, 4, 5, 6, 7, 8, 9});
  if (v.size() < 2) v = {lo, hi};
  std::string list;
  for (double t : v) list += (list.empty() ? "" : ", ") + num(t);
  return s + "set " + name + "tics (" + list + ")\nset format " + name + " \"%g\"\n";
}

Script build(const Figure& fig) {
  if (fig.name.empty()) throw std::invalid_argument("figure has an empty name (the file stem)");
  if (fig.name == "." || fig.name == ".." || fig.name.find_first_of(std::string("/\0", 2)) != std::string::npos)
    throw std::invalid_argument(where(fig) + "the name is a file stem and may not contain '/'");
  if (fig.width < 16 || fig.height < 16 || fig.width > 20000 || fig.height > 20000)
    throw std::invalid_argument(where(fig) + "size " + std::to_string(fig.width) + "x" +
                                std::to_string(fig.height) + " pixels, allowed 16..20000 each way");
  check_range(fig.xrange, fig.logx, "xrange", fig);
  check_range(fig.yrange, fig.logy, "yrange", fig);
  check_legend(fig);
  const Axes axes{fig.logx, fig.logy};

  std::string data, elements, settings;
  auto add = [&](const std::string& element) { elements += (elements.empty() ? "" : ", \\\n     ") + element; };
  bool titled = false;    // an empty key would still draw its box
  bool grounded = false;  // something drawn up from y = 0 (boxes, impulses)
  auto title = [&](const std::string& label) {
    titled = titled || !label.empty();
    return label.empty() ? std::string("notitle") : "title " + text(label);
  };
  std::size_t next_color = 0;
  auto color = [&](const std::string& requested) {
    const char* fallback = palette[next_color++ % palette.size()];  // a named colour still takes its turn
    return quote(color_or(requested, fallback, fig));
  };
  // First drawable point: ref lines are anchored there (see below).
  std::optional<std::pair<double, double>> anchor;

  // Histograms first, so lines are drawn over the boxes.
  for (std::size_t k = 0; k < fig.histograms.size(); ++k) {
    const Histogram& h = fig.histograms[k];
    std::string c = color(h.color);
    Binned b = bin(h, fig.logx, fig.logy, fig);
    if (b.height.empty()) continue;
    std::string block = "$hist" + std::to_string(k);
    data += block + " << EOD\n";
    for (std::size_t i = 0; i < b.height.size(); ++i)
      data += num(b.lo[i]) + ' ' + num(b.hi[i]) + ' ' + num(b.height[i]) + '\n';
    data += "EOD\n";
    anchor = anchor.value_or(std::pair{b.lo[0], b.height[0]});
    grounded = true;
    // boxes centred on the arithmetic middle with the data width have exact edges on log axes too
    add(block + " using (($1+$2)/2):3:($2-$1) with boxes lc rgb " + c +
        " lw 1 fillstyle transparent solid 0.45 border " + title(h.label));
  }

  for (std::size_t k = 0; k < fig.series.size(); ++k) {
    const Series& s = fig.series[k];
    std::string c = color(s.color);
    if (s.x.size() != s.y.size())
      throw std::invalid_argument(where(fig) + "series \"" + s.label + "\" has " + std::to_string(s.x.size()) +
                                  " x values but " + std::to_string(s.y.size()) + " y values");
    const bool errors = !s.yerr.empty();
    if (errors && s.yerr.size() != s.y.size())
      throw std::invalid_argument(where(fig) + "series \"" + s.label + "\" has " + std::to_string(s.y.size()) +
                                  " points but " + std::to_string(s.yerr.size()) + " yerr values");
    if (!std::isfinite(s.width) || s.width <= 0)
      throw std::invalid_argument(where(fig) + "series \"" + s.label + "\" has line width " + num(s.width) +
                                  ", must be > 0");

    std::string rows;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!axes.keep(s.x[i], s.y[i])) continue;
      if (errors) {
        if (std::isnan(s.yerr[i]) || std::isinf(s.yerr[i])) continue;
        if (s.yerr[i] < 0)
          throw std::invalid_argument(where(fig) + "series \"" + s.label + "\" has yerr[" + std::to_string(i) +
                                      "] = " + num(s.yerr[i]) + ", must be >= 0");
      }
      anchor = anchor.value_or(std::pair{s.x[i], s.y[i]});
      rows += num(s.x[i]) + ' ' + num(s.y[i]) + (errors ? ' ' + num(s.yerr[i]) : std::string()) + '\n';
    }
    if (rows.empty()) continue;
    std::string block = "$series" + std::to_string(k);
    data += block + " << EOD\n" + rows + "EOD\n";

    std::string line = "lw " + num(s.width) + " lc rgb " + c + (s.dashed ? " dt 2" : " dt solid");
    std::string with;
    switch (s.style) {
      case Style::lines: with = "lines"; break;
      case Style::points: with = "points pt " + std::to_string(s.point_type) + " ps 1.2"; break;
      case Style::linespoints: with = "linespoints pt " + std::to_string(s.point_type) + " ps 1.0"; break;
      case Style::steps: with = "steps"; break;
      case Style::impulses: with = "impulses"; grounded = true; break;
    }
    // Bars first, in the series' colour without its dashes or a legend entry, so the series'
    // own points sit on top. (ps 0 would draw a white dot over the series: small dots instead.)
    if (errors) add(block + " using 1:2:3 with yerrorbars lc rgb " + c + " lw 1 dt solid pt 7 ps 0.5 notitle");
    add(block + " using 1:2 with " + with + ' ' + line + ' ' + title(s.label));
  }

  const bool key_on = fig.legend != "off";
  const bool no_data = !anchor.has_value();
  auto mid = [](const std::optional<std::pair<double, double>>& r, bool log) {
    if (!r) return log ? 1.0 : 0.5;
    return log ? std::sqrt(r->first * r->second) : (r->first + r->second) / 2;
  };
  if (no_data) anchor = std::pair{mid(fig.xrange, fig.logx), mid(fig.yrange, fig.logy)};
  auto inside = [](const std::optional<std::pair<double, double>>& r, double v) {
    return !r || (r->first <= v && v <= r->second);
  };

  // Reference lines are arrows from one side of the graph to the other. An arrow does not take
  // part in autoscaling, so each line also gets an invisible point at its position (anchored at
  // a data point in the other coordinate): the axis then stretches to show it. gnuplot's
  // "[*<a : b<*]" range constraints would do the same but are ignored on log axes (5.4).
  std::string anchors;
  int arrow = 0;
  for (const RefLine& r : fig.lines) {
    std::string c = quote(color_or(r.color, "gray40", fig));
    bool log = r.vertical ? fig.logx : fig.logy;
    if (!std::isfinite(r.at) || (log && r.at <= 0) || !inside(r.vertical ? fig.xrange : fig.yrange, r.at))
      continue;  // cannot be shown on this axis
    std::string at = num(r.at);
    settings += "set arrow " + std::to_string(++arrow) +
                (r.vertical ? " from first " + at + ", graph 0 to first " + at + ", graph 1"
                            : " from graph 0, first " + at + " to graph 1, first " + at) +
                " nohead lc rgb " + c + " lw 1.5 dt 2 back\n";
    anchors += r.vertical ? at + ' ' + num(anchor->second) + '\n' : num(anchor->first) + ' ' + at + '\n';
    if (r.label.empty()) continue;
    if (key_on) {
      add("keyentry with lines lc rgb " + c + " lw 1.5 dt 2 " + title(r.label));
    } else {  // no legend: the label sits along the line, near its top or right end
      settings += r.vertical
                      ? "set label " + text(r.label) + " at first " + at + ", graph 0.97 rotate by 90 right offset -0.6,0 tc rgb " + c + " front\n"
                      : "set label " + text(r.label) + " at graph 0.98, first " + at + " right offset 0,0.6 tc rgb " + c + " front\n";
    }
  }
  if (no_data) {  // an empty frame still needs something to plot: the default ranges' corners
    auto corner = [](bool log, double f) { return log ? std::pow(10.0, f) : f; };
    anchors += num(corner(fig.logx, 0)) + ' ' + num(corner(fig.logy, 0)) + '\n' + num(corner(fig.logx, 1)) + ' ' +
               num(corner(fig.logy, 1)) + '\n';
  }
  if (!anchors.empty()) {
    data += "$anchors << EOD\n" + anchors + "EOD\n";
    add("$anchors using 1:2 with points ps 0 lc rgb \"#FF000000\" notitle");  // fully transparent
  }

  for (const Annotation& a : fig.annotations) {
    if (!std::isfinite(a.x) || !std::isfinite(a.y)) continue;
    if (a.graph) {
      settings += "set label " + text(a.text) + " at graph " + num(a.x) + ", graph " + num(a.y) + " front\n";
    } else {
      if (!axes.keep(a.x, a.y)) continue;
      settings += "set label " + text(a.text) + " at first " + num(a.x) + ", first " + num(a.y) + " front\n";
    }
  }

  std::string s;
  s += "set title " + text(fig.title) + " font \"," + std::to_string(base_font + 2) + "\"\n";
  s += "set xlabel " + text(fig.xlabel) + "\n";
  s += "set ylabel " + text(fig.ylabel) + "\n";
  if (fig.logx) s += log_axis('x', fig.xrange);
  if (fig.logy) s += log_axis('y', fig.yrange);
  if (fig.xrange) s += "set xrange [" + num(fig.xrange->first) + ":" + num(fig.xrange->second) + "]\n";
  if (fig.yrange) s += "set yrange [" + num(fig.yrange->first) + ":" + num(fig.yrange->second) + "]\n";
  // Paper look: left and bottom axes, ticks outside, a light solid grid behind the data.
  s += "set border 3 lw 1.2\n"
       "set tics nomirror out scale 0.75\n"
       "set style line 100 lc rgb \"#e3e3e3\" lw 1 dt solid\n"
       "set grid xtics ytics back ls 100\n"
       "set errorbars 1.0\n";
  // Autoscaled linear axes end at the data plus a small margin rather than at the next tic
  // (which can waste a whole tic interval); boxes and impulses stand on the bottom of the frame.
  // Log axes keep extending to whole decades: that is what gives them labelled tics (and a margin
  // would push them out by another decade).
  if (!fig.logx) s += "set autoscale xfix\n";
  if (!fig.logy) s += "set autoscale yfix\n";
  std::string side = fig.logx ? "0" : "graph 0.02";
  s += "set offsets " + side + ", " + side + ", " + (fig.logy ? "0" : "graph 0.05") + ", " +
       (fig.logy || grounded ? "0" : "graph 0.03") + "\n";
  if (key_on && titled)
    s += "set key " + fig.legend + " opaque box lc rgb \"#c0c0c0\" samplen 2.5 spacing 1.15\n";
  else
    s += "unset key\n";
  s += settings;

  return {data + s, "plot " + elements + "\n"};
}

/// `set terminal` and `set output` for one format. Sizes: PNG and SVG in pixels; PDF in inches
/// at 100 dpi. pngcairo and svg draw a 14-point font 14 pixels high and lw 1 one pixel wide; in
/// the PDF a pixel is 0.72 pt, so text scales by 0.72 and lines by 0.72 / 0.5 (pdfcairo's lw 1
/// is half a point): all three formats look alike.
std::string terminal(const Figure& fig, std::string_view format, const fs::path& output) {
  double scale = std::clamp(std::sqrt(fig.width * fig.height / (base_width * base_height)), 0.75, 4.0);
  std::string font = " font \"Sans," + std::to_string(base_font) + "\"";
  std::string size = std::to_string(fig.width) + "," + std::to_string(fig.height);
  std::string t;
  if (format == "png") {
    t = "set terminal pngcairo size " + size + " enhanced" + font + " fontscale " + num(scale) +
        " linewidth " + num(scale) + " background rgb \"white\"";
  } else if (format == "svg") {
    t = "set terminal svg size " + size + " fixed enhanced" + font + " fontscale " + num(scale) +
        " linewidth " + num(scale) + " background rgb \"white\"";
  } else if (format == "pdf") {
    t = "set terminal pdfcairo size " + num(fig.width / 100.0) + "in," + num(fig.height / 100.0) +
        "in enhanced" + font + " fontscale " + num(0.72 * scale) + " linewidth " + num(1.44 * scale) +
        " background rgb \"white\"";
  } else {
    throw std::invalid_argument("gnuplot_script: terminal \"" + std::string(format) + "\", allowed png, svg, pdf");
  }
  return t + "\nset output " + quote(output.string()) + "\n";
}

constexpr const char* preamble = "reset\nset encoding utf8\n";

// ---- running gnuplot ------------------------------------------------------------------------

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// $SPARSEACT_GNUPLOT (a path, or a name looked up on PATH), else `gnuplot` on PATH.
std::optional<fs::path> find_gnuplot() {
  const char* env = std::getenv("SPARSEACT_GNUPLOT");
  std::string name = env && *env ? env : "gnuplot";
  if (name.find('/') != std::string::npos) return executable(name) ? std::optional<fs::path>(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    fs::path dir{std::string(dirs.substr(0, colon))};
    fs::path candidate = (dir.empty() ? fs::path(".") : dir) / name;
    if (executable(candidate)) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

[[noreturn]] void gnuplot_missing() {
  const char* env = std::getenv("SPARSEACT_GNUPLOT");
  std::string looked = env && *env ? " at SPARSEACT_GNUPLOT=" + std::string(env) : " on PATH";
  throw PlotError("gnuplot not found" + looked + " (install gnuplot-nox, or set SPARSEACT_GNUPLOT)");
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Outcome {
  int status;  ///< as from waitpid
  std::string errors;
};

/// Runs `gnuplot -d` (no init files) with `script` on stdin and its stderr captured. Stdin is a
/// socket so that writing to a gnuplot that already quit gives EPIPE (MSG_NOSIGNAL) instead of a
/// SIGPIPE that would kill the caller; poll() feeds stdin and drains stderr together, so a chatty
/// gnuplot cannot block on a full pipe while we block on writing.
Outcome run_gnuplot(const fs::path& exe, const std::string& script) {
  int sv[2], ep[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw PlotError(std::string("cannot start gnuplot: socketpair: ") + std::strerror(errno));
  Fd in_parent{sv[0]}, in_child{sv[1]};
  if (::pipe2(ep, O_CLOEXEC) != 0) throw PlotError(std::string("cannot start gnuplot: pipe: ") + std::strerror(errno));
  Fd err_parent{ep[0]}, err_child{ep[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_child.fd, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_child.fd, 2);
  std::string exe_s = exe.string();
  std::string flag = "-d";
  char* argv[] = {exe_s.data(), flag.data(), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, exe_s.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    if (rc == ENOENT) gnuplot_missing();
    throw PlotError("cannot start gnuplot (" + exe_s + "): " + std::strerror(rc));
  }
  in_child.close();
  err_child.close();
  ::fcntl(in_parent.fd, F_SETFL, ::fcntl(in_parent.fd, F_GETFL) | O_NONBLOCK);

  std::string errors;
  std::size_t sent = 0;
  if (script.empty()) in_parent.close();
  while (err_parent.fd >= 0) {
    pollfd fds[2] = {{err_parent.fd, POLLIN, 0}, {in_parent.fd, POLLOUT, 0}};
    int n = ::poll(fds, in_parent.fd >= 0 ? 2 : 1, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (in_parent.fd >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = ::send(in_parent.fd, script.data() + sent, script.size() - sent, MSG_NOSIGNAL);
      if (w > 0) sent += static_cast<std::size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == script.size()) in_parent.close();  // EOF for gnuplot
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[4096];
      ssize_t r = ::read(err_parent.fd, buf, sizeof buf);
      if (r > 0) {
        if (errors.size() < (1 << 16)) errors.append(buf, static_cast<std::size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        err_parent.close();  // gnuplot closed stderr: it is exiting
      }
    }
  }
  in_parent.close();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {status, std::move(errors)};
}

/// One line saying why gnuplot failed. gnuplot echoes the offending command and a caret before
/// its message ("line 12: unrecognized plot type"), so the message line is preferred over the
/// first line of stderr, and over gnuplot's own "line N: warning: ..." and fontconfig's chatter.
std::string failure(const Outcome& out) {
  std::string first;
  std::size_t start = 0;
  while (start < out.errors.size()) {
    std::size_t end = out.errors.find('\n', start);
    std::string line = out.errors.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? out.errors.size() : end + 1;
    // "line <digits>: <message>", unless the message is a warning.
    const std::size_t at = line.find("line ");
    if (at != std::string::npos) {
      std::size_t i = at + 5;
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
      if (i > at + 5 && i < line.size() && line[i] == ':') {
        const std::size_t text = line.find_first_not_of(" \t", i + 1);
        if (text != std::string::npos && line.compare(text, 8, "warning:") != 0) return line.substr(text);
      }
    }
    auto begin = line.find_first_not_of(" \t\r");
    if (first.empty() && begin != std::string::npos) first = line.substr(begin);
  }
  if (!first.empty()) return first;
  if (WIFSIGNALED(out.status)) return "killed by signal " + std::to_string(WTERMSIG(out.status));
  return "exit status " + std::to_string(WIFEXITED(out.status) ? WEXITSTATUS(out.status) : -1);
}

/// Temporary outputs: removed unless committed, whatever happens in between.
struct Staged {
  std::vector<std::pair<fs::path, fs::path>> files;  ///< temporary -> final
  ~Staged() {
    for (auto& [tmp, final_path] : files) {
      std::error_code ec;
      fs::remove(tmp, ec);
    }
  }
};

/// Flushes a finished temporary file to disk before it is renamed into place.
void sync_file(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

/// cairo 1.16 stamps a PDF with the time it was written (/CreationDate (D:YYYYMMDDHHMMSSZ)), so two
/// runs of the same analysis would differ in bytes. The stamp becomes SOURCE_DATE_EPOCH's date (the
/// reproducible-builds convention) or, without it, 1970-01-01: same length, so the PDF's
/// cross-reference offsets stay valid.
void make_pdf_reproducible(const fs::path& p) {
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string key = "/CreationDate (D:";
  const std::size_t at = bytes.find(key);
  if (at == std::string::npos || at + key.size() + 14 > bytes.size()) return;
  std::time_t when = 0;
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) when = static_cast<std::time_t>(std::strtoll(epoch, nullptr, 10));
  std::tm utc{};
  ::gmtime_r(&when, &utc);
  char stamp[15];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &utc);
  bytes.replace(at + key.size(), 14, stamp, 14);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

/// A log axis without a given range spans its data times a small factor either way, not whole
/// decades, so the data fill the frame (log_axis then labels 1-2-5 tics where decades are few).
Figure with_log_ranges(const Figure& fig) {
  Figure f = fig;
  auto fit = [](std::vector<double> v) -> std::optional<std::pair<double, double>> {
    double lo = INFINITY, hi = 0;
    for (double x : v)
      if (std::isfinite(x) && x > 0) lo = std::min(lo, x), hi = std::max(hi, x);
    if (!(hi > 0)) return std::nullopt;
    return std::pair{lo / 1.25, hi * 1.25};
  };
  if (f.logx && !f.xrange) {
    std::vector<double> v;
    for (const auto& se : f.series) v.insert(v.end(), se.x.begin(), se.x.end());
    for (const auto& h : f.histograms) v.insert(v.end(), h.values.begin(), h.values.end());
    for (const auto& l : f.lines)
      if (l.vertical) v.push_back(l.at);
    f.xrange = fit(v);
  }
  if (f.logy && !f.yrange && f.histograms.empty()) {  // histogram heights are known only after binning
    std::vector<double> v;
    for (const auto& se : f.series)
      for (std::size_t i = 0; i < se.y.size(); ++i) {
        v.push_back(se.y[i]);
        if (i < se.yerr.size()) v.push_back(se.y[i] + se.yerr[i]), v.push_back(se.y[i] - se.yerr[i]);
      }
    for (const auto& l : f.lines)
      if (!l.vertical) v.push_back(l.at);
    f.yrange = fit(v);
  }
  return f;
}

bool gnuplot_available() { return find_gnuplot().has_value(); }

std::string gnuplot_script(const Figure& fig, const std::string& terminal_name, const fs::path& output) {
  Script s = build(with_log_ranges(fig));
  return preamble + terminal(fig, terminal_name, output) + s.body + s.plot + "set output\n";
}

std::vector<std::string> render(const Figure& fig, const fs::path& dir, const RenderOptions& options) {
  Script script = build(with_log_ranges(fig));  // a bad figure is the caller's error, whether or not gnuplot exists
  std::vector<std::string> formats;
  if (options.png) formats.emplace_back("png");
  if (options.svg) formats.emplace_back("svg");
  if (options.pdf) formats.emplace_back("pdf");
  if (formats.empty()) return {};

  std::optional<fs::path> exe = find_gnuplot();
  if (!exe) gnuplot_missing();

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw PlotError("cannot create folder " + dir.string() + ": " + ec.message());

  // Hidden names, unique across threads and processes, in the target folder so rename() is atomic.
  static std::atomic<unsigned long> counter{0};
  std::string tag = std::to_string(::getpid()) + "-" + std::to_string(counter++);
  Staged staged;
  std::string text = preamble + script.body;
  for (const std::string& f : formats) {
    fs::path tmp = dir / ("." + fig.name + "." + f + ".tmp-" + tag);
    staged.files.emplace_back(tmp, dir / (fig.name + "." + f));
    text += terminal(fig, f, tmp) + script.plot + "set output\n";  // `set output` closes the file
  }

  Outcome out = run_gnuplot(*exe, text);
  if (!WIFEXITED(out.status) || WEXITSTATUS(out.status) != 0)
    throw PlotError("gnuplot failed on " + where(fig) + failure(out));

  std::vector<std::string> written;
  for (auto& [tmp, final_path] : staged.files) {
    if (!fs::is_regular_file(tmp, ec) || fs::file_size(tmp, ec) == 0)
      throw PlotError("gnuplot wrote no " + final_path.filename().string() + " for " + where(fig) + failure(out));
  }
  for (auto& [tmp, final_path] : staged.files) {
    if (final_path.extension() == ".pdf") make_pdf_reproducible(tmp);
    sync_file(tmp);
    fs::rename(tmp, final_path, ec);
    if (ec) throw PlotError("cannot write " + final_path.string() + ": " + ec.message());
    written.push_back(final_path.filename().string());
  }
  staged.files.clear();
  return written;
}

}  // namespace sparseact::plot
