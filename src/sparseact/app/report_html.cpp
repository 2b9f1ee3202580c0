// figures/report/index.html from the report's model (app/report.hpp, issue 49). The prose is REPORT.md's own
// markdown, converted here (the subset sparseact_report writes: headings, paragraphs, "- " lists, pipe tables, images,
// links, `code`, **bold**, *italic*), so the page says what REPORT.md says; the checks are rows built from their
// fields, each with a detail row, and a few lines of our own JavaScript filter them by the URL's fragment
// (#paper=003&verdict=holds&kind=claim&setup=paper&q=text). No network, no third-party code: one static file that
// works from the file system. Links are REPORT.md's, one folder up (the page lives in figures/report/).
#include <sparseact/app/report.hpp>

#include <cctype>
#include <set>

#include <fmt/format.h>

#include <sparseact/app/forest.hpp>
#include <sparseact/app/report_text.hpp>

namespace sparseact::app {

namespace {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// A link of REPORT.md (relative to figures/) as the page (in figures/report/) reaches it; an anchor stays an anchor.
std::string relocate(const std::string& href) {
  if (href.empty() || href[0] == '#' || href.find("://") != std::string::npos || href[0] == '/') return href;
  return "../" + href;
}

/// GitHub's heading anchor, which REPORT.md's links use: lower case, spaces to '-', other punctuation dropped.
std::string anchor_of(const std::string& heading) {
  std::string out;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80) out += static_cast<char>(std::tolower(c));
    else if (c == ' ') out += '-';
  }
  return out;
}

/// Inline markdown → HTML: `code`, ![alt](src), [text](href), **bold**, *italic*, "\|" (a table's escaped pipe).
std::string inline_html(const std::string& md) {
  std::string out;
  std::size_t i = 0;
  const auto closing = [&](const std::string& mark, std::size_t from) { return md.find(mark, from); };
  while (i < md.size()) {
    const char c = md[i];
    if (c == '\\' && i + 1 < md.size() && md[i + 1] == '|') {
      out += '|', i += 2;
      continue;
    }
    if (c == '`') {
      const std::size_t end = closing("`", i + 1);
      if (end != std::string::npos) {
        out += "<code>" + escape(md.substr(i + 1, end - i - 1)) + "</code>", i = end + 1;
        continue;
      }
    }
    const bool image = c == '!' && i + 1 < md.size() && md[i + 1] == '[';
    if (image || c == '[') {
      // A link's text holds no bracket: "[0.1, 0.3]" before a later link stays text.
      const std::size_t open = i + (image ? 1 : 0);
      const std::size_t mid = md.find_first_of("[]", open + 1);
      const bool link = mid != std::string::npos && md.compare(mid, 2, "](") == 0;
      const std::size_t end = link ? closing(")", mid + 2) : std::string::npos;
      if (end != std::string::npos && md.find('\n', open) > end) {
        const std::string text = md.substr(open + 1, mid - open - 1), href = relocate(md.substr(mid + 2, end - mid - 2));
        out += image ? fmt::format("<img src=\"{}\" alt=\"{}\">", escape(href), escape(text))
                     : fmt::format("<a href=\"{}\">{}</a>", escape(href), inline_html(text));
        i = end + 1;
        continue;
      }
    }
    // Emphasis opens only at the start of a word (after a space or an opening bracket), as REPORT.md writes it.
    const bool word_start = i == 0 || md[i - 1] == ' ' || md[i - 1] == '(' || md[i - 1] == '[';
    if (c == '*' && word_start) {
      const bool strong = i + 1 < md.size() && md[i + 1] == '*';
      const std::string mark = strong ? "**" : "*";
      const std::size_t from = i + mark.size();
      const std::size_t end = from < md.size() && md[from] != ' ' && md[from] != '*' ? closing(mark, from) : std::string::npos;
      if (end != std::string::npos && end > from) {
        out += (strong ? "<strong>" : "<em>") + inline_html(md.substr(from, end - from)) + (strong ? "</strong>" : "</em>");
        i = end + mark.size();
        continue;
      }
    }
    out += escape(std::string(1, c)), ++i;
  }
  return out;
}

/// A table row's cells, split at unescaped pipes.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string current;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') current += "\\|", ++i;
    else if (line[i] == '|') cells.push_back(current), current.clear();
    else current += line[i];
  }
  for (auto& c : cells) {
    const std::size_t a = c.find_first_not_of(' '), b = c.find_last_not_of(' ');
    c = a == std::string::npos ? std::string() : c.substr(a, b - a + 1);
  }
  return cells;
}

/// Block markdown → HTML: "#…" headings (with GitHub's anchors), pipe tables, "- " lists, a lone image as a figure,
/// paragraphs.
std::string block_html(const std::string& md) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at <= md.size();) {
    const std::size_t nl = md.find('\n', at);
    lines.push_back(md.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  std::string out, paragraph;
  const auto flush = [&] {
    if (!paragraph.empty()) out += "<p>" + inline_html(paragraph) + "</p>\n";
    paragraph.clear();
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty()) {
      flush();
    } else if (line[0] == '#') {
      flush();
      const std::size_t level = line.find_first_not_of('#');
      const std::string text = line.substr(level + 1);
      out += fmt::format("<h{0} id=\"{1}\">{2}</h{0}>\n", level, escape(anchor_of(text)), inline_html(text));
    } else if (line.rfind("| ", 0) == 0 || line == "|") {
      flush();
      std::vector<std::vector<std::string>> rows;
      for (; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i)
        if (lines[i].rfind("|---", 0) != 0) rows.push_back(cells_of(lines[i]));
      --i;
      out += "<div class=\"wide\"><table>\n";
      for (std::size_t r = 0; r < rows.size(); ++r) {
        out += "<tr>";
        for (const std::string& c : rows[r]) out += fmt::format("<{0}>{1}</{0}>", r == 0 ? "th" : "td", inline_html(c));
        out += "</tr>\n";
      }
      out += "</table></div>\n";
    } else if (line.rfind("- ", 0) == 0) {
      flush();
      out += "<ul>\n";
      for (; i < lines.size() && lines[i].rfind("- ", 0) == 0; ++i) out += "<li>" + inline_html(lines[i].substr(2)) + "</li>\n";
      --i;
      out += "</ul>\n";
    } else if (line.rfind("![", 0) == 0 && line.back() == ')') {
      flush();
      out += "<figure>" + inline_html(line) + "</figure>\n";
    } else {
      paragraph += (paragraph.empty() ? "" : " ") + line;
    }
  }
  flush();
  return out;
}

/// A list of the report (what is wrong, …) with each line's paper, analysis and verdict as attributes.
std::string items_html(const std::vector<ReportItem>& items, const std::string& none) {
  if (items.empty()) return "<p>" + escape(none) + "</p>\n";
  std::string out = "<ul class=\"items\">\n";
  for (const ReportItem& x : items) {
    std::string md = x.md.substr(x.md.rfind("- ", 0) == 0 ? 2 : 0);
    while (!md.empty() && md.back() == '\n') md.pop_back();
    out += fmt::format("<li data-paper=\"{}\" data-kind=\"{}\" data-verdict=\"{}\">{}</li>\n", escape(x.paper), escape(x.kind), escape(x.verdict),
                       inline_html(md));
  }
  return out + "</ul>\n";
}

std::string pretty(const nlohmann::json& j) { return j.is_null() ? std::string() : j.dump(1); }

/// One check: its row (id, paper and claim, kind, verdict, decisive run, measured, predicted) and the detail row it
/// expands to (statement, tolerance, power, departure, note, its runs, its JSON).
std::string check_html(const ReportCheck& c) {
  const std::string detail_id = "d-" + anchor_of(c.analysis) + "-" + anchor_of(c.id);
  std::string text = c.paper + " " + c.analysis + " " + c.id + " " + c.claim + " " + c.statement + " " + c.verdict + " " + c.kind;
  for (auto& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string out = fmt::format(
      "<tbody class=\"check\" data-paper=\"{}\" data-kind=\"{}\" data-verdict=\"{}\" data-setup=\"{}\" data-text=\"{}\">\n"
      "<tr><td><button type=\"button\" aria-expanded=\"false\" aria-controls=\"{}\">{}</button></td><td>{}</td><td>{}</td>"
      "<td><span class=\"verdict\" style=\"border-color:{}\">{}</span></td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
      escape(c.paper), escape(c.kind), escape(c.verdict), c.at_setup ? "paper" : "departs", escape(text), detail_id, escape(c.id),
      inline_html(c.claim), escape(c.kind), verdict_color(c.verdict), inline_html(c.verdict_md), c.run == "default" ? "default run" : escape(c.run + " (" + c.run_setup + ")"),
      inline_html(c.measured), inline_html(c.predicted));
  out += fmt::format("<tr class=\"detail\" id=\"{}\" hidden><td colspan=\"7\"><dl>\n<dt>statement</dt><dd>{}</dd>\n", detail_id, inline_html(c.statement));
  if (!c.tolerance.is_null()) out += "<dt>tolerance</dt><dd><pre>" + escape(pretty(c.tolerance)) + "</pre></dd>\n";
  if (!c.power.is_null()) out += "<dt>power</dt><dd><pre>" + escape(pretty(c.power)) + "</pre></dd>\n";
  if (!c.departure.empty()) out += "<dt>departure</dt><dd>" + inline_html(c.departure) + "</dd>\n";
  if (!c.note.empty()) out += "<dt>note</dt><dd>" + inline_html(c.note) + "</dd>\n";
  if (!c.across.empty()) out += "<dt>across runs</dt><dd>" + inline_html(c.across) + "</dd>\n";
  out += fmt::format("<dt>JSON</dt><dd><a href=\"{}\">{}</a></dd>\n</dl></td></tr>\n</tbody>\n", escape(relocate(c.json_path)), escape(c.json_path));
  return out;
}

/// An analysis's figures: each PNG it wrote, as its SVG where it wrote one (the PNG if the SVG cannot load).
std::string figures_html(const ReportAnalysis& a, const std::string& paper) {
  const std::set<std::string> files(a.figures.begin(), a.figures.end());
  std::string claims;
  for (const ReportCheck& c : a.checks)
    if (c.kind == "claim") claims += (claims.empty() ? "" : "; ") + c.statement;
  if (claims.size() > 400) claims = claims.substr(0, claims.rfind(' ', 400)) + " …";
  std::string out;
  for (const std::string& png : a.figures) {
    if (png.size() < 5 || png.substr(png.size() - 4) != ".png") continue;
    const std::string stem = png.substr(0, png.size() - 4), svg = stem + ".svg";
    const std::string alt = fmt::format("Figure {} of {} (paper {}){}{}", stem, a.name, paper, claims.empty() ? "" : ", for: ", claims);
    const std::string png_href = escape(relocate(a.name + "/" + png));
    if (files.count(svg))
      out += fmt::format("<figure><img src=\"{}\" alt=\"{}\" loading=\"lazy\" onerror=\"this.onerror=null;this.src='{}'\"></figure>\n",
                         escape(relocate(a.name + "/" + svg)), escape(alt), png_href);
    else
      out += fmt::format("<figure><img src=\"{}\" alt=\"{}\" loading=\"lazy\"></figure>\n", png_href, escape(alt));
  }
  return out;
}

constexpr const char* kStyle = R"(
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:0 1rem 4rem;color:#1a1a1a}
h1{margin-top:1.2rem}h2{border-top:2px solid #ccc;padding-top:.8rem;margin-top:2.5rem}
table{border-collapse:collapse;font-size:13px;margin:.5rem 0}th,td{border:1px solid #ddd;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#f4f4f4}.wide{overflow-x:auto}code{background:#f2f2f2;padding:0 2px}pre{white-space:pre-wrap;margin:0;font-size:12px}
figure{margin:.5rem 0}figure img{max-width:min(100%,860px);height:auto}
#filters{position:sticky;top:0;background:#fff;border-bottom:1px solid #ccc;padding:.5rem 0;z-index:1;display:flex;flex-wrap:wrap;gap:.6rem;align-items:center}
#filters label{font-size:13px}table.checks{width:100%}table.checks button{font:inherit;font-size:13px;cursor:pointer;background:none;border:0;
padding:0;color:#0057a8;text-decoration:underline;text-align:left}.verdict{border-left:6px solid;padding-left:4px;display:inline-block}
dl{margin:.3rem 0}dt{font-weight:600}dd{margin:0 0 .4rem 1rem}
)";

// Filters by the URL's fragment; a row toggles its detail. Errors are kept on <html data-errors>, for the tests.
constexpr const char* kScript = R"(
(function () {
  var keys = ['paper', 'kind', 'verdict', 'setup', 'q'];
  function state() {
    var p = new URLSearchParams(location.hash.slice(1)), s = {};
    keys.forEach(function (k) { s[k] = p.get(k) || ''; });
    return s;
  }
  function apply(s) {
    keys.forEach(function (k) { var c = document.getElementById('f-' + k); if (c) c.value = s[k]; });
    var q = s.q.toLowerCase(), shown = 0, rows = document.querySelectorAll('tbody.check');
    rows.forEach(function (tb) {
      var d = tb.dataset, ok = (!s.paper || d.paper === s.paper) && (!s.kind || d.kind === s.kind) &&
        (!s.verdict || d.verdict === s.verdict) && (!s.setup || d.setup === s.setup) && (!q || d.text.indexOf(q) >= 0);
      tb.hidden = !ok;
      if (ok) shown++;
    });
    // The lists' lines follow the same filters but the setup (a line names its run's setup in words).
    document.querySelectorAll('ul.items li').forEach(function (li) {
      var d = li.dataset;
      li.hidden = !((!s.paper || d.paper === s.paper) && (!s.kind || d.kind === s.kind) && (!s.verdict || d.verdict === s.verdict) &&
        (!q || li.textContent.toLowerCase().indexOf(q) >= 0));
    });
    document.querySelectorAll('section.analysis, section.paper').forEach(function (sec) {
      sec.hidden = !sec.querySelector('tbody.check:not([hidden])') && sec.querySelector('tbody.check') !== null;
    });
    var out = document.getElementById('shown');
    out.textContent = shown + ' of ' + rows.length + ' checks shown in the papers\' sections (the lists follow the filters too)';
    document.documentElement.dataset.shown = shown;
  }
  function changed() {
    var p = new URLSearchParams();
    keys.forEach(function (k) { var v = document.getElementById('f-' + k).value; if (v) p.set(k, v); });
    history.replaceState(null, '', '#' + p.toString());
    apply(state());
  }
  keys.forEach(function (k) {
    var c = document.getElementById('f-' + k);
    c.addEventListener(k === 'q' ? 'input' : 'change', changed);
  });
  document.querySelectorAll('table.checks button').forEach(function (b) {
    b.addEventListener('click', function () {
      var d = document.getElementById(b.getAttribute('aria-controls')), open = b.getAttribute('aria-expanded') !== 'true';
      d.hidden = !open;
      b.setAttribute('aria-expanded', open ? 'true' : 'false');
    });
  });
  // A fragment without '=' is a link to a section (REPORT.md's #analysis links): filters stay, unless they hide it.
  window.addEventListener('hashchange', function () {
    var h = decodeURIComponent(location.hash.slice(1)), target = h.indexOf('=') < 0 && h ? document.getElementById(h) : null;
    if (!target) { apply(state()); return; }
    if (target.closest('[hidden]')) { apply(state()); target.scrollIntoView(); }
  });
  apply(state());
})();
)";

std::string select_html(const std::string& key, const std::string& label, const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out = fmt::format("<label>{} <select id=\"f-{}\"><option value=\"\">all</option>", escape(label), key);
  for (const auto& [value, text] : options) out += fmt::format("<option value=\"{}\">{}</option>", escape(value), escape(text));
  return out + "</select></label>\n";
}

}  // namespace

std::string report_html(const ReportModel& m) {
  // The prose is REPORT.md's: its opening (up to the papers' sections) is converted whole, the lists from their items.
  std::string md = report_markdown(m);
  const std::size_t lists = md.find(std::string("### ") + report_text::wrong.heading);
  std::set<std::string> verdicts, kinds;
  for (const ReportPaper& p : m.papers)
    for (const ReportAnalysis& a : p.analyses)
      for (const ReportCheck& c : a.checks) verdicts.insert(c.verdict), kinds.insert(c.kind);

  std::string h = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>sparseact verification report</title>\n<style>";
  h += kStyle;
  h += "</style>\n<script>window.addEventListener('error', function (e) { var d = document.documentElement.dataset; "
       "d.errors = (d.errors ? d.errors + ' | ' : '') + e.message; });</script>\n</head>\n<body>\n";
  // The filters first (they stay at the top of the window): they select the rows of the papers' sections.
  std::vector<std::pair<std::string, std::string>> papers, verdict_options, kind_options;
  for (const ReportPaper& p : m.papers) papers.push_back({p.id, "paper " + p.id});
  for (const std::string& v : verdicts) verdict_options.push_back({v, v});
  for (const std::string& k : kinds) kind_options.push_back({k, k});
  h += "<nav id=\"filters\" aria-label=\"filters\">\n" + select_html("paper", "Paper", papers) + select_html("kind", "Kind", kind_options) +
       select_html("verdict", "Verdict", verdict_options) +
       select_html("setup", "Setup", {{"paper", "at the paper's setup"}, {"departs", "departs from it"}}) +
       "<label>Search <input id=\"f-q\" type=\"search\" placeholder=\"id, claim, statement\"></label>\n<output id=\"shown\"></output> <a href=\"#paper-sections\">to the checks</a>\n</nav>\n";
  h += block_html(md.substr(0, lists));
  namespace text = report_text;
  const auto list = [](const text::List& l, const std::string& extra, const std::vector<ReportItem>& items) {
    return block_html(fmt::format("### {}\n\n{}{}\n", l.heading, l.intro, extra)) + items_html(items, l.none);
  };
  h += list(text::wrong, text::errata_sentence(m.errata_line), m.wrong);
  h += list(text::not_reproduced, "", m.not_reproduced);
  h += block_html(fmt::format("### {}\n", text::holds.heading));
  bool any_holding = false;
  for (const ReportPaper& p : m.papers)
    if (!p.holding.empty()) any_holding = true, h += block_html(text::holding_intro(p.id, p.holding.size())) + items_html(p.holding, "");
  if (!any_holding) h += block_html(text::holds.none);
  h += list(text::unsettled, "", m.unsettled);
  if (!m.own_questions.empty()) h += list(text::own_questions, "", m.own_questions);
  h += block_html("### Where we depart from the paper's setup\n\n" + (m.departures_md.empty() ? std::string("No check records a departure.\n") : m.departures_md) +
                  "\n" + m.at_scale_md + m.pricing_md);

  // One section per paper: its paragraph, its forest plot, one table of checks per analysis.
  h += "<div id=\"paper-sections\"></div>\n";
  for (const ReportPaper& p : m.papers) {
    h += fmt::format("<section class=\"paper\" id=\"paper-{0}\">\n<h2>Paper {0}</h2>\n", escape(p.id)) + block_html(p.brief_md);
    if (!p.forest_name.empty())
      h += fmt::format("<figure><img src=\"{0}.svg\" alt=\"{1}\" onerror=\"this.onerror=null;this.src='{0}.png'\"></figure>\n", escape(p.forest_name),
                       escape(p.forest_alt));
    else
      h += block_html(p.forest_md);
    for (const ReportAnalysis& a : p.analyses) {
      h += fmt::format("<section class=\"analysis\" id=\"{0}\">\n<h3>{0}</h3>\n", escape(a.name)) + block_html(a.meta_md);
      h += "<div class=\"wide\"><table class=\"checks\">\n<thead><tr><th>id</th><th>paper and claim</th><th>kind</th><th>verdict</th>"
           "<th>decisive run</th><th>measured</th><th>predicted</th></tr></thead>\n";
      for (const ReportCheck& c : a.checks) h += check_html(c);
      h += "</table></div>\n" + figures_html(a, p.id);
      if (!a.figure_error.empty()) h += "<p>Figures missing: " + inline_html(a.figure_error) + "</p>\n";
      h += "</section>\n";
    }
    h += "</section>\n";
  }
  const std::size_t rederived = md.find("## Verdicts re-derived from stored numbers");
  if (rederived != std::string::npos) h += block_html(md.substr(rederived));
  h += "<script>";
  h += kScript;
  h += "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace sparseact::app
