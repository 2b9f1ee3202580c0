#pragma once
// The result of an analysis run, written as <name>.json plus CSV tables (docs/DESIGN.md, the analysis
// contract). A Check compares what this run measured with what a paper states; `holds` is
// derived from the two by one comparison (app/checks.hpp), never set to a constant. `measured`
// is what a person reads at a glance (a number, a short text, a short list); `detail` keeps the
// per-point data.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sparseact {

using json = nlohmann::json;

struct Check {
  std::string id;         ///< short stable identifier, e.g. "thm5_ratio"
  /// "claim" (the paper asserts it), "own-question" (ours, not the paper's), "observation" (the paper reports it: no verdict, the paper's
  /// value beside ours) or "self-check" (an invariant of our own construction, never evidence about
  /// a paper).
  std::string kind = "claim";
  std::string claim;      ///< "paper 001 Theorem 5"
  std::string statement;  ///< the inequality or equality in words and symbols
  json predicted;         ///< the paper's value or bound
  json measured;          ///< what this run found
  /// A claim's (or own question's): "holds", "not refuted", "direction only", "contradicted", "not
  /// reproduced", "inconclusive" or "erratum"; a self-check's: "holds" or "fails"; an observation's:
  /// "observation". Set by the app/checks.hpp helpers.
  std::string verdict;
  bool holds = false;  ///< verdict == "holds" (kept for readers of the older JSON)
  json tolerance;  ///< the allowance used to decide `holds`, and how it was derived
  std::string note;
  /// How the run's setup departs from the paper's (model, data, scale); empty at the paper's setup.
  std::string departure;
  json detail;     ///< per-point data behind `measured` (null when there is none)
  /// A statistical claim's power at the effect that counts, and the run size that reaches 80 %
  /// (null for a deterministic check).
  json power;
};

/// A table of numbers written as <name>.csv (header row, then one row per entry).
struct Table {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  void add_row(std::vector<double> row);
};

struct Result {
  std::string analysis;
  std::string paper;
  std::vector<std::string> claims;
  json params = json::object();
  std::uint64_t seed = 1;
  std::string device = "cpu";
  std::string version;
  double elapsed_s = 0.0;
  std::vector<Check> checks;
  std::vector<std::string> figures;  ///< file names, relative to the output folder
  std::vector<std::string> files;    ///< every file of the run besides the JSON (tables, figures)
  json data = json::object();
  json environment = json::object();  ///< what the numbers ran on (BLAS kernels, CPU); see core/blas_info.hpp
  std::vector<Table> tables;

  Check& add_check(Check check);
  /// Every check's verdict is "holds" or "observation".
  bool all_hold() const;
};

json to_json(const Check& check);
json to_json(const Result& result);
/// CSV text of a table; numbers with 17 significant digits so they read back exactly.
std::string to_csv(const Table& table);

/// Writes `text` to `path` atomically: a temporary file in the same folder, then rename(2).
void write_file_atomic(const std::filesystem::path& path, const std::string& text);

}  // namespace sparseact
