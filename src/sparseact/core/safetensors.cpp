// .safetensors reader.
//
// Every number in a .safetensors header comes from an untrusted file. The rule throughout: parse
// the header, validate every size against the file's actual size with overflow-checked
// arithmetic, and only then allocate or read. Data are read in chunks straight into the result,
// so loading a tensor costs the matrix plus a small buffer (at most one row), never a copy of the file.
#include <sparseact/core/safetensors.hpp>
#include <sparseact/core/binary_input.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sparseact {
namespace {

namespace fs = std::filesystem;
using namespace io;
using std::uint64_t;

// ---------------------------------------------------------------------------------------------
// .safetensors: u64 little-endian header size N, N bytes of JSON, then the byte buffer that the
// tensors' data_offsets index.

using TensorEntry = SafetensorsEntry;

// Bytes per element of the dtypes the format defines, loadable or not: knowing them lets us
// validate every entry of a checkpoint, not just the one asked for. 0: unknown (newer) dtype.
std::size_t safetensors_dtype_size(std::string_view dtype) {
  for (auto [name, size] : {std::pair<std::string_view, std::size_t>{"BOOL", 1}, {"U8", 1}, {"I8", 1},
                            {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2}, {"BF16", 2},
                            {"I32", 4}, {"U32", 4}, {"F32", 4}, {"I64", 8}, {"U64", 8}, {"F64", 8}, {"C64", 8}})
    if (dtype == name) return size;
  return 0;
}

std::string shape_list(const std::vector<uint64_t>& shape) { return fmt::format("[{}]", join_dims(shape, ", ")); }

uint64_t json_uint(const fs::path& path, const std::string& tensor, const char* field,
                   const nlohmann::ordered_json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<uint64_t>();  // "-0"
  if (v.is_number_integer())
    fail(path, fmt::format("tensor {}: negative value {} in {}", quote_name(tensor), v.get<std::int64_t>(), field));
  fail(path, fmt::format("tensor {}: {} must hold non-negative integers", quote_name(tensor), field));
}

}  // namespace

SafetensorsHeader read_safetensors_header(InputFile& file) {
  const fs::path& path = file.path();
  const uint64_t size = file.size();
  if (size < 8) fail(path, fmt::format("truncated .safetensors file ({} bytes; the header size alone takes 8)", size));
  unsigned char nbuf[8];
  file.read(0, nbuf, 8);
  const uint64_t n = load_uint(nbuf, 8, false);
  if (n > size - 8)
    fail(path, fmt::format("header size {} exceeds the {} bytes after the size field (truncated or not a "
                           ".safetensors file)",
                           n, size - 8));
  constexpr uint64_t max_header = 100'000'000;  // the reference implementation's limit
  if (n > max_header) fail(path, fmt::format("header size {} exceeds the limit of {} bytes", n, max_header));

  const std::string text = file.read_string(8, static_cast<std::size_t>(n));
  if (!json_nesting_within(text, 8)) fail(path, "header is not a safetensors header (JSON nested too deeply)");
  nlohmann::ordered_json header;
  try {
    header = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::ordered_json::parse_error& e) {
    fail(path, fmt::format("header is not valid JSON (error at byte {} of the header)", e.byte));
  } catch (const nlohmann::ordered_json::exception&) {
    fail(path, "header is not valid JSON");
  }
  if (!header.is_object()) fail(path, "header is not a JSON object");

  SafetensorsHeader h;
  h.buffer_start = 8 + n;
  h.buffer_size = size - h.buffer_start;
  uint64_t buffer_end = 0;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    TensorEntry t;
    t.name = name;
    const std::string who = fmt::format("tensor {}", quote_name(name));
    if (!entry.is_object()) fail(path, who + ": entry is not a JSON object");
    const auto dtype = entry.find("dtype");
    const auto shape = entry.find("shape");
    const auto offsets = entry.find("data_offsets");
    if (dtype == entry.end() || !dtype->is_string()) fail(path, who + ": missing or non-string 'dtype'");
    if (shape == entry.end() || !shape->is_array()) fail(path, who + ": missing or non-array 'shape'");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2)
      fail(path, who + ": 'data_offsets' must be an array [begin, end]");
    t.dtype = dtype->get<std::string>();
    for (const auto& d : *shape) t.shape.push_back(json_uint(path, name, "'shape'", d));
    t.begin = json_uint(path, name, "'data_offsets'", (*offsets)[0]);
    t.end = json_uint(path, name, "'data_offsets'", (*offsets)[1]);
    if (t.begin > t.end)
      fail(path, fmt::format("{}: data_offsets [{}, {}] begin after end", who, t.begin, t.end));
    if (t.end > h.buffer_size)
      fail(path, fmt::format("{}: data_offsets [{}, {}] past the end of the data ({} bytes; file truncated?)", who,
                             t.begin, t.end, h.buffer_size));
    if (const std::size_t es = safetensors_dtype_size(t.dtype); es != 0) {
      const auto bytes = checked_product(t.shape, es);
      if (!bytes || *bytes != t.end - t.begin)
        fail(path, fmt::format("{}: shape {} of {} needs {} bytes but data_offsets [{}, {}] span {}", who,
                               shape_list(t.shape), printable(t.dtype, 20),
                               bytes ? std::to_string(*bytes) : std::string("more than 2^64"), t.begin, t.end,
                               t.end - t.begin));
    }
    buffer_end = std::max(buffer_end, t.end);
    h.tensors.push_back(std::move(t));
  }
  // Valid files end exactly where the last tensor does (the reference implementation insists).
  if (buffer_end != h.buffer_size)
    fail(path, fmt::format("{} bytes of data after the last tensor (which ends at offset {})",
                           h.buffer_size - buffer_end, buffer_end));
  // Two tensors sharing bytes would make writing one silently change the other, and the format
  // forbids it. Sorted by begin, an overlap shows as a tensor starting before the furthest end so
  // far. Empty tensors hold no bytes and overlap nothing.
  std::vector<const TensorEntry*> by_begin;
  for (const TensorEntry& t : h.tensors)
    if (t.end > t.begin) by_begin.push_back(&t);
  std::stable_sort(by_begin.begin(), by_begin.end(),
                   [](const TensorEntry* a, const TensorEntry* b) { return a->begin < b->begin; });
  const TensorEntry* furthest = nullptr;
  for (const TensorEntry* t : by_begin) {
    if (furthest && t->begin < furthest->end)
      fail(path, fmt::format("tensors {} (data_offsets [{}, {}]) and {} (data_offsets [{}, {}]) overlap",
                             quote_name(furthest->name), furthest->begin, furthest->end, quote_name(t->name),
                             t->begin, t->end));
    if (!furthest || t->end > furthest->end) furthest = t;
  }
  return h;
}

std::optional<Dtype> safetensors_dtype(std::string_view dtype) {
  if (dtype == "F32") return Dtype{Scalar::f32, false, 4, "F32"};
  if (dtype == "F64") return Dtype{Scalar::f64, false, 8, "F64"};
  if (dtype == "F16") return Dtype{Scalar::f16, false, 2, "F16"};
  if (dtype == "BF16") return Dtype{Scalar::bf16, false, 2, "BF16"};
  return std::nullopt;
}

namespace {

std::vector<std::string> names_of(const SafetensorsHeader& h) {
  std::vector<std::string> names;
  names.reserve(h.tensors.size());
  for (const TensorEntry& t : h.tensors) names.push_back(t.name);
  return names;
}

Eigen::MatrixXd load_tensor(InputFile& file, const SafetensorsHeader& h, const TensorEntry& t) {
  const fs::path& path = file.path();
  const std::string who = fmt::format("tensor {}", quote_name(t.name));
  const std::optional<Dtype> dtype = safetensors_dtype(t.dtype);
  if (!dtype)
    fail(path, fmt::format("{} has dtype {}; only F32, F64, F16 and BF16 tensors can be loaded", who,
                           printable(t.dtype, 20)));
  check_matrix_shape(path, who, t.shape, shape_list(t.shape));
  const auto [rows, cols] = matrix_shape(t.shape);
  // safetensors data are always little-endian and row-major.
  return read_matrix(file, h.buffer_start + t.begin, *dtype, rows, cols, true);
}

}  // namespace

Eigen::MatrixXd load_safetensors(const std::filesystem::path& path, const std::string& name) {
  InputFile file(path);
  const SafetensorsHeader h = read_safetensors_header(file);
  for (const TensorEntry& t : h.tensors)
    if (t.name == name) return load_tensor(file, h, t);
  if (h.tensors.empty()) fail(path, fmt::format("no tensor {}; the file holds no tensors", quote_name(name)));
  fail(path, fmt::format("no tensor {}; available ({}): {}", quote_name(name), h.tensors.size(), name_list(names_of(h))));
}

std::vector<std::string> safetensors_names(const std::filesystem::path& path) {
  InputFile file(path);
  return names_of(read_safetensors_header(file));
}

}  // namespace sparseact
