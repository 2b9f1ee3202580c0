#pragma once
// A work item's result (app/sweep.hpp): named numbers, strings and arrays of doubles, with the one
// serialisation that MPI messages, checkpoints and one-process runs share. C++17, no dependencies
// beyond the standard library.
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sparseact {

/// What one item returns: named numbers, strings and arrays of doubles. Every double survives
/// serialisation bit for bit (NaN payloads, ±inf, −0), so a record read back from a checkpoint or
/// an MPI message equals the one computed.
class Record {
 public:
  using Value = std::variant<double, std::string, std::vector<double>>;

  Record& set(const std::string& key, double v);
  Record& set(const std::string& key, std::string v);
  Record& set(const std::string& key, const char* v) { return set(key, std::string(v)); }
  Record& set(const std::string& key, std::vector<double> v);

  bool has(const std::string& key) const { return fields_.count(key) > 0; }
  /// Throw std::out_of_range naming the key when it is absent or of another kind.
  double num(const std::string& key) const;
  const std::string& str(const std::string& key) const;
  const std::vector<double>& arr(const std::string& key) const;

  const std::map<std::string, Value>& fields() const { return fields_; }
  /// Equal keys and kinds, doubles compared by their bits.
  bool operator==(const Record& other) const;
  bool operator!=(const Record& other) const { return !(*this == other); }

 private:
  std::map<std::string, Value> fields_;
};

/// The one serialisation of a record (messages, checkpoints, one-process runs alike):
/// little-endian, length-prefixed, doubles as their IEEE-754 bits.
std::string serialize(const Record& record);
/// Throws std::runtime_error on bytes that are not a whole record.
Record deserialize(std::string_view bytes);

}  // namespace sparseact
