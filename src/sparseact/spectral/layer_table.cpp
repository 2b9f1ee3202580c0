#include <sparseact/spectral/layer_table.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace sparseact::spectral {

namespace {

using M = LayerMetrics;

std::string number(double x) {
  if (std::isfinite(x)) return fmt::format("{:.17g}", x);
  return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
}

nlohmann::json json_number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

/// A short, fixed-width rendering for the text tables: 4 significant digits, "-" for NaN.
std::string cell(double x, bool integer = false) {
  if (std::isnan(x)) return "-";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (integer) return fmt::format("{:.0f}", x);
  return fmt::format("{:.4g}", x);
}

/// Columns of the text tables: header, value, whether a count.
struct TextColumn {
  const char* header;
  double (*get)(const M&);
  bool integer = false;
};

const std::vector<TextColumn>& text_columns() {
  static const std::vector<TextColumn> cols = {
      {"lambda_max", [](const M& m) { return m.lambda_max; }},
      {"stable_rank", [](const M& m) { return m.stable_rank; }},
      {"alpha", [](const M& m) { return m.power_law.alpha; }},
      {"alpha_se", [](const M& m) { return m.power_law.alpha_se; }},
      {"D", [](const M& m) { return m.power_law.D; }},
      {"alpha_w", [](const M& m) { return m.alpha_weighted; }},
      {"sigma2_fit", [](const M& m) { return m.mp_fit.sigma2; }},
      {"spikes", [](const M& m) { return m.kind == SpectrumKind::regular ? double(m.spikes) : NAN; }, true},
      {"mp_p", [](const M& m) { return m.mp_fit.ks_p_value; }},
      {"soft_rank", [](const M& m) { return m.mp_soft_rank; }},
      {"kappa", [](const M& m) { return m.ratio; }},
      {"majority", [](const M& m) { return m.majority_ratio; }},
  };
  return cols;
}

/// Right-aligned columns after a left-aligned first one, widths from the content.
std::string render(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  std::vector<std::size_t> width(rows[0].size(), 0);
  const auto display = [](const std::string& s) {  // UTF-8 code points, for the "…" of short names
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  };
  for (const auto& row : rows)
    for (std::size_t j = 0; j < row.size(); ++j) width[j] = std::max(width[j], display(row[j]));
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t j = 0; j < row.size(); ++j) {
      const std::string pad(width[j] - display(row[j]), ' ');
      out += j == 0 ? row[j] + pad : "  " + pad + row[j];
    }
    out += '\n';
  }
  return out;
}

std::string shape_of(const LayerRef& l) { return fmt::format("{}x{}", l.rows, l.cols); }

}  // namespace

const std::vector<LayerColumn>& layer_columns() {
  static const std::vector<LayerColumn> cols = {
      {"rank", [](const M& m) { return double(m.rank); }},
      {"lambda_max", [](const M& m) { return m.lambda_max; }},
      {"lambda_min_nonzero", [](const M& m) { return m.lambda_min_nonzero; }},
      {"sum_lambda", [](const M& m) { return m.sum_lambda; }},
      {"stable_rank", [](const M& m) { return m.stable_rank; }},
      {"spectral_norm", [](const M& m) { return m.spectral_norm; }},
      {"frobenius_norm", [](const M& m) { return m.frobenius_norm; }},
      {"log10_spectral_norm", [](const M& m) { return m.log10_spectral_norm; }},
      {"log10_frobenius_norm", [](const M& m) { return m.log10_frobenius_norm; }},
      {"log10_lambda_max", [](const M& m) { return m.log10_lambda_max; }},
      {"log10_sum_lambda", [](const M& m) { return m.log10_sum_lambda; }},
      {"alpha", [](const M& m) { return m.power_law.alpha; }},
      {"alpha_se", [](const M& m) { return m.power_law.alpha_se; }},
      {"x_min", [](const M& m) { return m.power_law.x_min; }},
      {"n_tail", [](const M& m) { return m.power_law.valid ? double(m.power_law.n_tail) : NAN; }},
      {"D", [](const M& m) { return m.power_law.D; }},
      {"alpha_weighted", [](const M& m) { return m.alpha_weighted; }},
      {"sigma2_own", [](const M& m) { return m.mp_own.sigma2; }},
      {"lambda_plus_own", [](const M& m) { return m.mp_own.lambda_plus; }},
      {"ks_own", [](const M& m) { return m.mp_own.ks; }},
      {"p_own", [](const M& m) { return m.mp_own.ks_p_value; }},
      {"sigma2_fit", [](const M& m) { return m.mp_fit.sigma2; }},
      {"lambda_plus_fit", [](const M& m) { return m.mp_fit.lambda_plus; }},
      {"tw_threshold", [](const M& m) { return m.mp_fit.tw_threshold; }},
      {"spikes", [](const M& m) { return m.mp_fit.valid ? double(m.spikes) : NAN; }},
      {"above_edge", [](const M& m) { return m.mp_fit.valid ? double(m.mp_fit.above_edge) : NAN; }},
      {"ks_fit", [](const M& m) { return m.mp_fit.ks; }},
      {"p_fit", [](const M& m) { return m.mp_fit.ks_p_value; }},
      {"bulk_is_mp", [](const M& m) { return m.mp_fit.valid ? double(m.bulk_is_mp) : NAN; }},
      {"mp_soft_rank", [](const M& m) { return m.mp_soft_rank; }},
      {"mp_soft_rank_own", [](const M& m) { return m.mp_soft_rank_own; }},
      {"ratio", [](const M& m) { return m.ratio; }},
      {"ratio_limit", [](const M& m) { return m.ratio_limit; }},
      {"ratio_init_lo", [](const M& m) { return m.ratio_init_lo; }},
      {"ratio_init_hi", [](const M& m) { return m.ratio_init_hi; }},
      {"near_zero_portion", [](const M& m) { return m.near_zero_portion; }},
      {"majority_ratio", [](const M& m) { return m.majority_ratio; }},
      {"extreme_ratio", [](const M& m) { return m.extreme_ratio; }},
  };
  return cols;
}

std::string layers_csv(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics) {
  std::string out = "name,rows,cols,kind";
  for (const LayerColumn& c : layer_columns()) out += fmt::format(",{}", c.name);
  out += '\n';
  for (std::size_t i = 0; i < layers.size(); ++i) {
    out += fmt::format("{},{},{},{}", csv_field(layers[i].name), layers[i].rows, layers[i].cols, to_string(metrics[i].kind));
    for (const LayerColumn& c : layer_columns()) (out += ',') += number(c.get(metrics[i]));
    out += '\n';
  }
  return out;
}

nlohmann::json layers_json(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    nlohmann::json row = {{"name", layers[i].name}, {"block", layers[i].block}, {"rows", layers[i].rows},
                          {"cols", layers[i].cols}, {"kind", to_string(metrics[i].kind)}};
    for (const LayerColumn& c : layer_columns()) row[c.name] = json_number(c.get(metrics[i]));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string layers_text_table(const std::vector<LayerRef>& layers, const std::vector<LayerMetrics>& metrics) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"layer", "shape", "kind"};
  for (const TextColumn& c : text_columns()) header.push_back(c.header);
  rows.push_back(std::move(header));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::vector<std::string> row = {short_layer_name(layers[i].name, 48), shape_of(layers[i]),
                                    metrics[i].kind == SpectrumKind::regular ? "" : to_string(metrics[i].kind)};
    for (const TextColumn& c : text_columns()) row.push_back(cell(c.get(metrics[i]), c.integer));
    rows.push_back(std::move(row));
  }
  return render(rows);
}

LayerPairing pair_layers(const std::vector<LayerRef>& a, const std::vector<LayerRef>& b) {
  LayerPairing p;
  std::map<std::string, std::size_t> in_b;
  for (std::size_t j = 0; j < b.size(); ++j) in_b.emplace(b[j].name, j);
  std::vector<bool> used(b.size(), false);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto it = in_b.find(a[i].name);
    if (it == in_b.end()) {
      p.only_in_a.push_back(a[i].name);
      continue;
    }
    used[it->second] = true;
    if (a[i].rows != b[it->second].rows || a[i].cols != b[it->second].cols)
      p.shape_differs.push_back(fmt::format("{} ({} vs {})", a[i].name, shape_of(a[i]), shape_of(b[it->second])));
    else
      p.pairs.emplace_back(i, it->second);
  }
  for (std::size_t j = 0; j < b.size(); ++j)
    if (!used[j]) p.only_in_b.push_back(b[j].name);
  return p;
}

std::string compare_csv(const std::vector<LayerRef>& a_layers, const std::vector<LayerMetrics>& a,
                        const std::vector<LayerMetrics>& b, const LayerPairing& pairing) {
  std::string out = "name,rows,cols,kind_a,kind_b";
  for (const LayerColumn& c : layer_columns()) out += fmt::format(",{0}_a,{0}_b,{0}_diff", c.name);
  out += '\n';
  for (const auto& [i, j] : pairing.pairs) {
    out += fmt::format("{},{},{},{},{}", csv_field(a_layers[i].name), a_layers[i].rows, a_layers[i].cols, to_string(a[i].kind),
                       to_string(b[j].kind));
    for (const LayerColumn& c : layer_columns()) {
      const double x = c.get(a[i]), y = c.get(b[j]);
      out += fmt::format(",{},{},{}", number(x), number(y), number(y - x));
    }
    out += '\n';
  }
  return out;
}

std::string compare_text_table(const std::vector<LayerRef>& a_layers, const std::vector<LayerMetrics>& a,
                               const std::vector<LayerMetrics>& b, const LayerPairing& pairing) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"layer (b − a)", "shape"};
  for (const TextColumn& c : text_columns()) header.push_back(std::string("Δ") + c.header);
  rows.push_back(std::move(header));
  for (const auto& [i, j] : pairing.pairs) {
    std::vector<std::string> row = {short_layer_name(a_layers[i].name, 48), shape_of(a_layers[i])};
    for (const TextColumn& c : text_columns()) {
      const double d = c.get(b[j]) - c.get(a[i]);
      row.push_back(std::isnan(d) ? "-" : (c.integer ? fmt::format("{:+.0f}", d) : fmt::format("{:+.3g}", d)));
    }
    rows.push_back(std::move(row));
  }
  return render(rows);
}

}  // namespace sparseact::spectral
