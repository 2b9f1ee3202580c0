// .safetensors reader.
//
// Every number in a .safetensors header comes from an untrusted file. The rule throughout: parse
// the header, validate every size against the file's actual size with overflow-checked
// arithmetic, and only then allocate or read. Data are read in chunks straight into the result,
// so loading a tensor costs the matrix plus a small buffer (at most one row), never a copy of the file.
#include <sparseact/core/safetensors.hpp>
#include <sparseact/core/binary_input.hpp>
#include <sparseact/core/json_events.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

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

// The header's JSON as events (core/json_events.hpp): each entry is checked and kept when its object
// closes, unknown fields and "__metadata__" are skipped unread, so reading costs time linear in the
// header and memory for the entries alone (issue 26).
class HeaderReader final : public JsonReader {
 public:
  HeaderReader(const fs::path& path, uint64_t buffer_size) : path_(path), buffer_size_(buffer_size) {}
  std::vector<TensorEntry> tensors;

  void key(int depth, std::string& k) override {
    if (depth == 1) {
      name_ = std::move(k);
      return;
    }
    field_ = k == "dtype" ? &dtype_ : k == "shape" ? &shape_ : k == "data_offsets" ? &offsets_ : nullptr;
    if (field_ && field_->present) fail(path_, fmt::format("{}: key '{}' appears twice", who(), k));
    if (field_) field_->present = true;
  }

  JsonNext value(int depth, const JsonValue& v) override {
    const JsonNext past = v.is_container() ? JsonNext::skip : JsonNext::go_on;
    if (depth == 0) {
      if (v.kind != Kind::object) fail(path_, "header is not a JSON object");
      return JsonNext::go_on;
    }
    if (depth == 1) {
      if (name_ == "__metadata__") {
        if (metadata_) fail(path_, "key \"__metadata__\" appears twice");
        metadata_ = true;
        return past;
      }
      if (v.kind != Kind::object) fail(path_, who() + ": entry is not a JSON object");
      dtype_ = shape_ = offsets_ = Field{};
      return JsonNext::go_on;
    }
    if (depth == 2) {
      if (field_ == nullptr) return past;  // a field we do not read
      field_->type_ok = field_ == &dtype_ ? v.kind == Kind::string : v.kind == Kind::array;
      if (field_ == &dtype_ && field_->type_ok) dtype_text_ = std::move(*v.text);
      return field_->type_ok ? JsonNext::go_on : past;
    }
    // depth 3: an element of 'shape' or 'data_offsets'
    Field& f = *field_;
    ++f.count;
    if (!f.error.empty()) return past;
    if (v.kind == Kind::integer && !v.negative) {
      if (f.values.size() < max_dimensions) f.values.push_back(v.magnitude);
    } else if (v.kind == Kind::integer) {
      f.error = fmt::format("negative value -{} in {}", v.magnitude, field_name(f));
    } else {
      f.error = fmt::format("{} must hold non-negative integers", field_name(f));
    }
    return past;
  }

  void end(int depth) override {
    if (depth == 1) finish_entry();
  }

 private:
  using Kind = JsonValue::Kind;
  // numpy allows 32 (and numpy 2, 64) dimensions; more is a hostile header, not a tensor.
  static constexpr std::size_t max_dimensions = 64;

  struct Field {
    bool present = false, type_ok = false;
    uint64_t count = 0;            // elements seen
    std::vector<uint64_t> values;  // the first max_dimensions of them
    std::string error;             // the first element that is not a non-negative integer
  };

  std::string who() const { return fmt::format("tensor {}", quote_name(name_)); }
  const char* field_name(const Field& f) const { return &f == &shape_ ? "'shape'" : "'data_offsets'"; }

  // The checks of one entry, in the order a reader of the format expects them: fields, values, then
  // the offsets against the shape and the data buffer.
  void finish_entry() {
    if (!dtype_.present || !dtype_.type_ok) fail(path_, who() + ": missing or non-string 'dtype'");
    if (!shape_.present || !shape_.type_ok) fail(path_, who() + ": missing or non-array 'shape'");
    if (!offsets_.present || !offsets_.type_ok || offsets_.count != 2)
      fail(path_, who() + ": 'data_offsets' must be an array [begin, end]");
    if (!shape_.error.empty()) fail(path_, who() + ": " + shape_.error);
    if (!offsets_.error.empty()) fail(path_, who() + ": " + offsets_.error);
    if (shape_.count > max_dimensions)
      fail(path_, fmt::format("{}: 'shape' has {} dimensions; the limit is {}", who(), shape_.count, max_dimensions));
    TensorEntry t;
    t.name = std::move(name_);
    t.dtype = std::move(dtype_text_);
    t.shape = std::move(shape_.values);
    t.begin = offsets_.values[0];
    t.end = offsets_.values[1];
    const std::string subject = fmt::format("tensor {}", quote_name(t.name));
    if (t.begin > t.end) fail(path_, fmt::format("{}: data_offsets [{}, {}] begin after end", subject, t.begin, t.end));
    if (t.end > buffer_size_)
      fail(path_, fmt::format("{}: data_offsets [{}, {}] past the end of the data ({} bytes; file truncated?)", subject,
                              t.begin, t.end, buffer_size_));
    if (const std::size_t es = safetensors_dtype_size(t.dtype); es != 0) {
      const auto bytes = checked_product(t.shape, es);
      if (!bytes || *bytes != t.end - t.begin)
        fail(path_, fmt::format("{}: shape {} of {} needs {} bytes but data_offsets [{}, {}] span {}", subject,
                                shape_list(t.shape), printable(t.dtype, 20),
                                bytes ? std::to_string(*bytes) : std::string("more than 2^64"), t.begin, t.end,
                                t.end - t.begin));
    }
    tensors.push_back(std::move(t));
  }

  const fs::path& path_;
  const uint64_t buffer_size_;
  bool metadata_ = false;
  std::string name_, dtype_text_;
  Field dtype_, shape_, offsets_;
  Field* field_ = nullptr;
};

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
  SafetensorsHeader h;
  h.buffer_start = 8 + n;
  h.buffer_size = size - h.buffer_start;
  HeaderReader reader(path, h.buffer_size);
  if (const auto at = read_json(text, reader))
    fail(path, fmt::format("header is not valid JSON (error at byte {} of the header)", *at));
  h.tensors = std::move(reader.tensors);
  // A name twice would make the second entry shadow the first (JSON's objects have unique keys).
  std::vector<const TensorEntry*> by_name;
  by_name.reserve(h.tensors.size());
  for (const TensorEntry& t : h.tensors) by_name.push_back(&t);
  std::sort(by_name.begin(), by_name.end(), [](const TensorEntry* a, const TensorEntry* b) { return a->name < b->name; });
  for (std::size_t i = 1; i < by_name.size(); ++i)
    if (by_name[i]->name == by_name[i - 1]->name)
      fail(path, fmt::format("tensor {} appears twice in the header", quote_name(by_name[i]->name)));
  uint64_t buffer_end = 0;
  for (const TensorEntry& t : h.tensors) buffer_end = std::max(buffer_end, t.end);
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
