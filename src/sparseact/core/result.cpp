#include <sparseact/core/result.hpp>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>

namespace sparseact {

void Table::add_row(std::vector<double> row) {
  if (row.size() != columns.size())
    throw std::logic_error(fmt::format("table {}: row of {} values for {} columns", name, row.size(),
                                       columns.size()));
  rows.push_back(std::move(row));
}

Check& Result::add_check(Check check) {
  checks.push_back(std::move(check));
  return checks.back();
}

bool Result::all_hold() const {
  for (const auto& c : checks)
    if (!c.holds && c.verdict != "observation" && c.verdict != "not refuted" && c.kind != "own-question") return false;
  return true;
}

json to_json(const Check& c) {
  return json{{"id", c.id},           {"kind", c.kind},         {"claim", c.claim},
              {"statement", c.statement}, {"predicted", c.predicted}, {"measured", c.measured},
              {"verdict", c.verdict},     {"holds", c.holds},     {"tolerance", c.tolerance},
              {"note", c.note},           {"departure", c.departure}, {"detail", c.detail},
              {"power", c.power}};
}

json to_json(const Result& r) {
  json checks = json::array();
  for (const auto& c : r.checks) checks.push_back(to_json(c));
  return json{{"analysis", r.analysis}, {"paper", r.paper},     {"claims", r.claims},
              {"params", r.params},     {"seed", r.seed},       {"device", r.device},
              {"version", r.version},   {"elapsed_s", r.elapsed_s}, {"environment", r.environment}, {"checks", checks},
              {"figures", r.figures},   {"files", r.files},     {"data", r.data}};
}

std::string to_csv(const Table& t) {
  std::string out;
  for (std::size_t j = 0; j < t.columns.size(); ++j) out += (j ? "," : "") + t.columns[j];
  out += '\n';
  for (const auto& row : t.rows) {
    for (std::size_t j = 0; j < row.size(); ++j) {
      if (j) out += ',';
      out += std::isfinite(row[j]) ? fmt::format("{:.17g}", row[j]) : std::string(std::isnan(row[j]) ? "nan" : (row[j] > 0 ? "inf" : "-inf"));
    }
    out += '\n';
  }
  return out;
}

void write_file_atomic(const std::filesystem::path& path, const std::string& text) {
  auto tmp = path;
  tmp += fmt::format(".tmp{}", static_cast<long>(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f << text;
    f.flush();
    if (!f) throw std::runtime_error("write failed: " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  }
}

}  // namespace sparseact
