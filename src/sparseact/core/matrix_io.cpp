// Readers for NumPy .npy and .safetensors checkpoints, and a .npy writer.
//
// Every number in these headers comes from an untrusted file. The rule throughout: parse the
// header, validate every size against the file's actual size with overflow-checked arithmetic,
// and only then allocate or read. Data are read in chunks straight into the result, so loading
// a tensor costs the matrix plus a small buffer (at most one row), never a copy of the file.
#include <sparseact/core/matrix_io.hpp>
#include <sparseact/core/binary_input.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/result.hpp>

namespace sparseact {
namespace {

namespace fs = std::filesystem;
using io::checked_mul;
using io::fail;
using io::printable;
using std::uint64_t;

// ---------------------------------------------------------------------------------------------
// Messages: one line, naming the file. Anything taken from the file (tensor names, dtypes) or the
// user (paths) is escaped, so a hostile header cannot break the one-line contract.

// (fmt::format rather than "'" + ...: GCC 12 gives a false -Wrestrict warning for the latter.)
std::string quote_name(std::string_view s) { return fmt::format("'{}'", printable(s, 80)); }


// ---------------------------------------------------------------------------------------------
// Overflow-checked size arithmetic.


std::optional<uint64_t> checked_product(const std::vector<uint64_t>& dims, uint64_t factor) {
  std::optional<uint64_t> p = factor;
  for (uint64_t d : dims) {
    p = checked_mul(*p, d);
    if (!p) return std::nullopt;
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// A file opened for random-access reads whose every read is checked against its size.

class InputFile {
 public:
  explicit InputFile(const fs::path& path) : path_(path) { size_ = io::open_regular_file(path, in_); }

  const fs::path& path() const { return path_; }
  uint64_t size() const { return size_; }

  void read(uint64_t offset, void* dst, std::size_t n) {
    if (offset > size_ || n > size_ - offset)
      fail(path_, fmt::format("read of {} bytes at offset {} past the end of the file ({} bytes)", n, offset, size_));
    if (n == 0) return;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!in_ || static_cast<std::size_t>(in_.gcount()) != n)
      fail(path_, fmt::format("read of {} bytes at offset {} failed (file changed while reading?)", n, offset));
  }

  std::string read_string(uint64_t offset, std::size_t n) {
    std::string s(n, '\0');
    read(offset, s.data(), n);
    return s;
  }

 private:
  fs::path path_;
  std::ifstream in_;
  uint64_t size_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Element types and their conversion to double. Loads assemble bytes explicitly, so they are
// correct for either byte order of file and host.

enum class Scalar { f16, bf16, f32, f64 };

struct Dtype {
  Scalar scalar;
  bool big_endian;
  std::size_t size;
  std::string name;  // as the format spells it, for messages
};

uint64_t load_uint(const unsigned char* p, std::size_t n, bool big_endian) {
  uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t byte = big_endian ? i : n - 1 - i;
    v = (v << 8) | p[byte];
  }
  return v;
}

double half_to_double(std::uint16_t h) {
  const bool negative = (h & 0x8000u) != 0;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double v;
  if (exponent == 0)
    v = std::ldexp(static_cast<double>(mantissa), -24);  // zero and subnormals: m * 2^-24
  else if (exponent == 0x1f)
    v = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  else
    v = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);  // 1.m * 2^(e-15)
  return negative ? -v : v;
}

double bf16_to_double(std::uint16_t b) {
  // bfloat16 is the upper half of an IEEE float32: widening is exact, NaN and inf included.
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16));
}

void decode(const unsigned char* p, std::size_t count, const Dtype& t, double* out) {
  switch (t.scalar) {
    case Scalar::f16:
      for (std::size_t i = 0; i < count; ++i)
        out[i] = half_to_double(static_cast<std::uint16_t>(load_uint(p + 2 * i, 2, t.big_endian)));
      break;
    case Scalar::bf16:
      for (std::size_t i = 0; i < count; ++i)
        out[i] = bf16_to_double(static_cast<std::uint16_t>(load_uint(p + 2 * i, 2, t.big_endian)));
      break;
    case Scalar::f32:
      for (std::size_t i = 0; i < count; ++i)
        out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(load_uint(p + 4 * i, 4, t.big_endian)));
      break;
    case Scalar::f64:
      for (std::size_t i = 0; i < count; ++i) out[i] = std::bit_cast<double>(load_uint(p + 8 * i, 8, t.big_endian));
      break;
  }
}

// Reads rows*cols elements starting at `offset` into a column-major matrix. The caller has
// checked that the bytes exist; `row_major` says in which order the file lists them.
Eigen::MatrixXd read_matrix(InputFile& file, uint64_t offset, const Dtype& t, Eigen::Index rows, Eigen::Index cols,
                            bool row_major) {
  Eigen::MatrixXd m(rows, cols);
  constexpr Eigen::Index chunk = 1 << 16;  // elements per read: memory stays bounded for any size
  if (m.size() == 0) return m;
  if (!row_major || rows == 1 || cols == 1) {
    // The file's order is Eigen's storage order: decode straight into the matrix.
    const auto count = static_cast<uint64_t>(m.size());
    std::vector<unsigned char> bytes(static_cast<std::size_t>(std::min<uint64_t>(count, chunk)) * t.size);
    for (uint64_t done = 0; done < count;) {
      const auto n = static_cast<std::size_t>(std::min<uint64_t>(chunk, count - done));
      file.read(offset + done * t.size, bytes.data(), n * t.size);
      decode(bytes.data(), n, t, m.data() + done);
      done += n;
    }
    return m;
  }
  // Row-major data go in blocks of whole rows, transposed block by block: a block stays in
  // cache, where scattering single elements across columns would not (3x slower when measured).
  // A block is at least one row, so a buffer is at most max(64 Ki elements, one row).
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Index block_rows = std::min(rows, std::max<Eigen::Index>(1, chunk / cols));
  const auto block_size = static_cast<std::size_t>(block_rows * cols);
  std::vector<unsigned char> bytes(block_size * t.size);
  std::vector<double> values(block_size);
  for (Eigen::Index r0 = 0; r0 < rows; r0 += block_rows) {
    const Eigen::Index k = std::min(block_rows, rows - r0);
    const auto n = static_cast<std::size_t>(k * cols);
    file.read(offset + static_cast<uint64_t>(r0 * cols) * t.size, bytes.data(), n * t.size);
    decode(bytes.data(), n, t, values.data());
    m.middleRows(r0, k) = Eigen::Map<const RowMajor>(values.data(), k, cols);
  }
  return m;
}

// Shapes of rank 0, 1, 2 as a matrix: a scalar is 1x1, a vector one row.
std::pair<Eigen::Index, Eigen::Index> matrix_shape(const std::vector<uint64_t>& shape) {
  const auto dim = [](uint64_t d) { return static_cast<Eigen::Index>(d); };
  if (shape.empty()) return {1, 1};
  if (shape.size() == 1) return {1, dim(shape[0])};
  return {dim(shape[0]), dim(shape[1])};
}

std::string join_dims(const std::vector<uint64_t>& shape, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? std::string(sep) : "") + std::to_string(shape[i]);
  return s;
}

// Checks common to both formats: the rank, and dimensions that fit Eigen's signed index (only
// binding for empty arrays; otherwise the file's size bounds them). `subject` names the array.
void check_matrix_shape(const fs::path& file, const std::string& subject, const std::vector<uint64_t>& shape,
                        const std::string& shape_text) {
  if (shape.size() > 2)
    fail(file, fmt::format("{} has {}-d shape {}; only 0-d, 1-d and 2-d arrays can be loaded as a matrix", subject,
                           shape.size(), shape_text));
  for (uint64_t d : shape)
    if (d > static_cast<uint64_t>(std::numeric_limits<Eigen::Index>::max()))
      fail(file, fmt::format("{} has shape {} with a dimension too large for a matrix", subject, shape_text));
}

// ---------------------------------------------------------------------------------------------
// The .npy header is a Python dict literal. This parser accepts the subset of Python literal
// syntax that numpy (any version) writes: strings, integers (with Python 2's 'L' suffix), True,
// False, None, tuples, lists and dicts, any whitespace, trailing commas.

struct PyValue {
  enum class Kind { string, integer, boolean, none, tuple, list, dict };
  Kind kind = Kind::none;
  std::string text;            // string
  bool negative = false;       // integer: sign
  bool too_big = false;        // integer: magnitude beyond 64 bits
  uint64_t magnitude = 0;      // integer: |value|
  bool flag = false;           // boolean
  std::vector<PyValue> items;  // tuple and list elements; dict: key, value, key, value, ...
};

class PyLiteralParser {
 public:
  PyLiteralParser(std::string_view text, const fs::path& file) : s_(text), file_(file) {}

  PyValue parse_document() {
    PyValue v = value(0);
    skip_ws();
    if (pos_ != s_.size()) error("unexpected text after the dictionary");
    return v;
  }

 private:
  static constexpr int max_depth = 16;  // numpy's headers nest 3 deep; bounds the recursion

  [[noreturn]] void error(std::string_view what) const {
    fail(file_, fmt::format("malformed .npy header: {} at byte {} of the header", what, pos_));
  }

  void skip_ws() {
    while (pos_ < s_.size() && std::string_view(" \t\n\r\f\v").find(s_[pos_]) != std::string_view::npos) ++pos_;
  }

  char peek() {
    skip_ws();
    if (pos_ >= s_.size()) error("unexpected end");
    return s_[pos_];
  }

  PyValue value(int depth) {
    if (depth > max_depth) error("nesting too deep");
    const char c = peek();
    if (c == '{') return dict(depth);
    if (c == '(') return tuple(depth);
    if (c == '[') return list(depth);
    if (c == '\'' || c == '"') return string();
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return integer();
    if (std::isalpha(static_cast<unsigned char>(c))) return name();
    error(fmt::format("unexpected character '{}'", printable(std::string_view(&s_[pos_], 1))));
  }

  PyValue string() {
    const char quote = s_[pos_++];
    PyValue v;
    v.kind = PyValue::Kind::string;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') error("unterminated string");
      char c = s_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= s_.size()) error("unterminated string");
        c = s_[pos_++];
        if (c == 'n') c = '\n';
        else if (c == 't') c = '\t';
        else if (c != '\\' && c != '\'' && c != '"') v.text += '\\';  // keep unknown escapes verbatim
      }
      v.text += c;
    }
    return v;
  }

  PyValue integer() {
    PyValue v;
    v.kind = PyValue::Kind::integer;
    if (s_[pos_] == '-' || s_[pos_] == '+') v.negative = s_[pos_++] == '-';
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      const auto digit = static_cast<uint64_t>(s_[pos_++] - '0');
      const auto times10 = checked_mul(v.magnitude, 10);
      if (!times10 || *times10 > std::numeric_limits<uint64_t>::max() - digit)
        v.too_big = true;
      else
        v.magnitude = *times10 + digit;
    }
    if (pos_ == start) error("expected digits");
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;  // Python 2 long
    if (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.'))
      error("expected an integer");
    return v;
  }

  PyValue name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    const std::string_view word = s_.substr(start, pos_ - start);
    PyValue v;
    if (word == "True" || word == "False") {
      v.kind = PyValue::Kind::boolean;
      v.flag = word == "True";
    } else if (word == "None") {
      v.kind = PyValue::Kind::none;
    } else {
      pos_ = start;
      error(fmt::format("unexpected name '{}'", printable(word, 40)));
    }
    return v;
  }

  // Elements up to `close`, comma separated, trailing comma allowed. Returns whether any comma
  // was seen: in Python "(3)" is the integer 3 and only "(3,)" is a tuple.
  bool elements(char close, int depth, std::vector<PyValue>& out) {
    ++pos_;  // the opening bracket
    bool comma = false;
    while (true) {
      if (peek() == close) break;
      out.push_back(value(depth + 1));
      if (peek() == ',') {
        ++pos_;
        comma = true;
      } else if (peek() != close) {
        error(fmt::format("expected ',' or '{}'", close));
      }
    }
    ++pos_;  // the closing bracket
    return comma;
  }

  PyValue tuple(int depth) {
    PyValue v;
    v.kind = PyValue::Kind::tuple;
    const bool comma = elements(')', depth, v.items);
    if (v.items.size() == 1 && !comma) return std::move(v.items.front());  // parenthesized value
    return v;
  }

  PyValue list(int depth) {
    PyValue v;
    v.kind = PyValue::Kind::list;
    elements(']', depth, v.items);
    return v;
  }

  PyValue dict(int depth) {
    PyValue v;
    v.kind = PyValue::Kind::dict;
    ++pos_;
    while (true) {
      if (peek() == '}') break;
      v.items.push_back(value(depth + 1));
      if (peek() != ':') error("expected ':'");
      ++pos_;
      v.items.push_back(value(depth + 1));
      if (peek() == ',')
        ++pos_;
      else if (peek() != '}')
        error("expected ',' or '}'");
    }
    ++pos_;
    return v;
  }

  std::string_view s_;
  const fs::path& file_;
  std::size_t pos_ = 0;
};

// What an unsupported numpy type string (without its byte-order character) holds, for messages.
std::string describe_numpy_type(std::string_view d) {
  if (d == "f2" || d == "e") return "float16";
  if (d == "f12" || d == "f16" || d == "g") return "extended-precision float";
  switch (d.empty() ? '\0' : d.front()) {
    case 'i': return "signed integer";
    case 'u': return "unsigned integer";
    case 'b': case '?': return "boolean";
    case 'c': return "complex";
    case 'O': return "Python objects";
    case 'S': case 'a': return "byte strings";
    case 'U': return "unicode strings";
    case 'V': return "raw or structured records";
    case 'M': return "datetime";
    case 'm': return "timedelta";
    default: return "unknown type";
  }
}

Dtype parse_npy_descr(const fs::path& file, const std::string& descr) {
  std::string_view d = descr;
  bool big_endian = std::endian::native == std::endian::big;  // '=' and '|' mean native order
  if (!d.empty() && std::string_view("<>=|").find(d.front()) != std::string_view::npos) {
    if (d.front() == '<') big_endian = false;
    if (d.front() == '>') big_endian = true;
    d.remove_prefix(1);
  }
  if (d == "f4") return {Scalar::f32, big_endian, 4, "float32"};
  if (d == "f8") return {Scalar::f64, big_endian, 8, "float64"};
  fail(file, fmt::format("unsupported dtype {} ({}); only float32 and float64 arrays can be loaded "
                         "(convert with a.astype(numpy.float64))",
                         quote_name(descr), describe_numpy_type(d)));
}

struct NpyHeader {
  Dtype dtype;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  std::string shape_text;  // Python's spelling, for messages
  uint64_t data_offset = 0;
};

NpyHeader read_npy_header(InputFile& file) {
  const fs::path& path = file.path();
  static constexpr std::string_view magic = "\x93NUMPY";
  const uint64_t size = file.size();

  const std::string start = file.read_string(0, static_cast<std::size_t>(std::min<uint64_t>(size, 12)));
  const std::size_t have = std::min(start.size(), magic.size());
  if (std::string_view(start).substr(0, have) != magic.substr(0, have))
    fail(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
  if (start.size() < 10) fail(path, fmt::format("truncated .npy file ({} bytes)", size));
  const int major = static_cast<unsigned char>(start[6]);
  const int minor = static_cast<unsigned char>(start[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(path, fmt::format("unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are known)", major, minor));
  // Version 1.0 stores the header length in 2 bytes, later versions in 4.
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const uint64_t prefix = 8 + len_bytes;
  if (size < prefix) fail(path, fmt::format("truncated .npy file ({} bytes)", size));
  const auto* lp = reinterpret_cast<const unsigned char*>(start.data()) + 8;
  const uint64_t header_len = load_uint(lp, len_bytes, false);
  if (header_len > size - prefix)
    fail(path, fmt::format("truncated header: header length {} exceeds the {} bytes after the prefix", header_len,
                           size - prefix));
  // numpy itself refuses headers over 10000 bytes by default; ours hold three keys.
  constexpr uint64_t max_header = 1 << 20;
  if (header_len > max_header)
    fail(path, fmt::format("header length {} is implausibly large (limit {} bytes)", header_len, max_header));

  const std::string text = file.read_string(prefix, static_cast<std::size_t>(header_len));
  const PyValue dict = PyLiteralParser(text, path).parse_document();
  if (dict.kind != PyValue::Kind::dict) fail(path, "malformed .npy header: not a dictionary");

  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    if (key.kind != PyValue::Kind::string) fail(path, "malformed .npy header: a key is not a string");
    // Unknown keys are ignored (numpy rejects them; no file numpy writes has any); for repeated
    // keys the last wins, as in Python.
    if (key.text == "descr") descr = &dict.items[i + 1];
    if (key.text == "fortran_order") fortran = &dict.items[i + 1];
    if (key.text == "shape") shape = &dict.items[i + 1];
  }
  if (!descr || !fortran || !shape)
    fail(path, fmt::format("malformed .npy header: missing key '{}'",
                           !descr ? "descr" : !fortran ? "fortran_order" : "shape"));

  NpyHeader h{};
  if (descr->kind == PyValue::Kind::list)
    fail(path, "unsupported dtype: structured (record) arrays cannot be loaded as a matrix");
  if (descr->kind != PyValue::Kind::string) fail(path, "malformed .npy header: 'descr' is not a string");
  h.dtype = parse_npy_descr(path, descr->text);

  if (fortran->kind != PyValue::Kind::boolean)
    fail(path, "malformed .npy header: 'fortran_order' is not True or False");
  h.fortran_order = fortran->flag;

  if (shape->kind != PyValue::Kind::tuple) fail(path, "malformed .npy header: 'shape' is not a tuple");
  h.shape_text = "(";
  for (const PyValue& d : shape->items) {
    if (d.kind != PyValue::Kind::integer) fail(path, "malformed .npy header: 'shape' holds a non-integer");
    if (d.too_big) fail(path, "malformed .npy header: a dimension of 'shape' exceeds 64 bits");
    if (d.negative && d.magnitude != 0)
      fail(path, fmt::format("malformed .npy header: negative dimension -{} in 'shape'", d.magnitude));
    h.shape.push_back(d.magnitude);
  }
  h.shape_text += join_dims(h.shape, ", ") + (h.shape.size() == 1 ? ",)" : ")");
  h.data_offset = prefix + header_len;
  return h;
}

// ---------------------------------------------------------------------------------------------
// .safetensors: u64 little-endian header size N, N bytes of JSON, then the byte buffer that the
// tensors' data_offsets index.

struct TensorEntry {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
};

struct SafetensorsHeader {
  uint64_t buffer_start = 0;
  uint64_t buffer_size = 0;
  std::vector<TensorEntry> tensors;  // header order, "__metadata__" excluded
};

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

// Rejects JSON nested deeper than a safetensors header ever is, before nlohmann builds it: a
// header of a million '[' would otherwise cost far more memory than the file.
bool json_nesting_within(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

uint64_t json_uint(const fs::path& path, const std::string& tensor, const char* field,
                   const nlohmann::ordered_json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<uint64_t>();  // "-0"
  if (v.is_number_integer())
    fail(path, fmt::format("tensor {}: negative value {} in {}", quote_name(tensor), v.get<std::int64_t>(), field));
  fail(path, fmt::format("tensor {}: {} must hold non-negative integers", quote_name(tensor), field));
}

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
  return h;
}

std::string available_names(const SafetensorsHeader& h) {
  std::string s;
  const std::size_t shown = std::min<std::size_t>(h.tensors.size(), 10);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + printable(h.tensors[i].name, 80);
  if (h.tensors.size() > shown) s += fmt::format(", ... ({} more)", h.tensors.size() - shown);
  return s;
}

Eigen::MatrixXd load_tensor(InputFile& file, const SafetensorsHeader& h, const TensorEntry& t) {
  const fs::path& path = file.path();
  const std::string who = fmt::format("tensor {}", quote_name(t.name));
  std::optional<Dtype> dtype;
  if (t.dtype == "F32") dtype = Dtype{Scalar::f32, false, 4, "F32"};
  if (t.dtype == "F64") dtype = Dtype{Scalar::f64, false, 8, "F64"};
  if (t.dtype == "F16") dtype = Dtype{Scalar::f16, false, 2, "F16"};
  if (t.dtype == "BF16") dtype = Dtype{Scalar::bf16, false, 2, "BF16"};
  if (!dtype)
    fail(path, fmt::format("{} has dtype {}; only F32, F64, F16 and BF16 tensors can be loaded", who,
                           printable(t.dtype, 20)));
  check_matrix_shape(path, who, t.shape, shape_list(t.shape));
  const auto [rows, cols] = matrix_shape(t.shape);
  // safetensors data are always little-endian and row-major.
  return read_matrix(file, h.buffer_start + t.begin, *dtype, rows, cols, true);
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Eigen::MatrixXd load_npy(const std::filesystem::path& path) {
  InputFile file(path);
  const NpyHeader h = read_npy_header(file);
  check_matrix_shape(path, "array", h.shape, h.shape_text);
  const auto expected = checked_product(h.shape, h.dtype.size);
  const uint64_t available = file.size() - h.data_offset;
  const std::string promise =
      fmt::format("header promises {} {}", h.shape.empty() ? std::string("scalar") : join_dims(h.shape, "x"),
                  h.dtype.name);
  if (!expected)
    fail(path, fmt::format("shape {} is too large: {} needs more than 2^64 bytes", h.shape_text, h.dtype.name));
  if (*expected > available)
    fail(path, fmt::format("truncated data: {} ({} bytes), file has {} bytes after the header", promise, *expected,
                           available));
  // numpy would ignore extra bytes; a mismatch more likely means a header that lies.
  if (*expected < available)
    fail(path, fmt::format("{} unexpected bytes after the data: {} ({} bytes), file has {} bytes after the header",
                           available - *expected, promise, *expected, available));
  const auto [rows, cols] = matrix_shape(h.shape);
  return read_matrix(file, h.data_offset, h.dtype, rows, cols, !h.fortran_order);
}

void save_npy(const std::filesystem::path& path, const Eigen::MatrixXd& m) {
  std::string header =
      fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", m.rows(), m.cols());
  // Pad with spaces and a final newline so the data start on a 64-byte boundary, as numpy does
  // (aligned data can be memory-mapped).
  constexpr std::size_t prefix = 10;  // magic, version, 2-byte header length
  const std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out;
  out.reserve(total + static_cast<std::size_t>(m.size()) * 8);
  out += "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  // C order, little-endian whatever the host.
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const auto bits = std::bit_cast<uint64_t>(m(r, c));
      for (int b = 0; b < 8; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xff);
    }
  write_file_atomic(path, out);
}

Eigen::MatrixXd load_safetensors(const std::filesystem::path& path, const std::string& name) {
  InputFile file(path);
  const SafetensorsHeader h = read_safetensors_header(file);
  for (const TensorEntry& t : h.tensors)
    if (t.name == name) return load_tensor(file, h, t);
  if (h.tensors.empty()) fail(path, fmt::format("no tensor {}; the file holds no tensors", quote_name(name)));
  fail(path, fmt::format("no tensor {}; available ({}): {}", quote_name(name), h.tensors.size(), available_names(h)));
}

std::vector<std::string> safetensors_names(const std::filesystem::path& path) {
  InputFile file(path);
  const SafetensorsHeader h = read_safetensors_header(file);
  std::vector<std::string> names;
  names.reserve(h.tensors.size());
  for (const TensorEntry& t : h.tensors) names.push_back(t.name);
  return names;
}

Eigen::MatrixXd load_matrix(const std::string& spec) {
  if (spec.empty()) throw InputError("weights: empty file name");
  // Paths may contain ':' themselves, so "FILE:TENSOR" is split at the last ':' only when what
  // precedes it names an existing file or a .safetensors file.
  fs::path file = spec;
  std::optional<std::string> tensor;
  if (const auto colon = spec.rfind(':'); colon != std::string::npos && colon > 0) {
    const std::string before = spec.substr(0, colon);
    std::error_code ec;
    if (fs::is_regular_file(before, ec) || lowercase(before).ends_with(".safetensors")) {
      file = before;
      tensor = spec.substr(colon + 1);
      if (tensor->empty()) fail(file, "empty tensor name after ':'");
    }
  }

  InputFile probe(file);  // "no such file" and friends, before any format guess
  const std::string ext = lowercase(file.extension().string());
  bool is_npy = ext == ".npy";
  const bool is_safetensors = ext == ".safetensors";
  if (!is_npy && !is_safetensors) {
    const std::string start = probe.read_string(0, static_cast<std::size_t>(std::min<uint64_t>(probe.size(), 6)));
    is_npy = start == "\x93NUMPY";
    if (!is_npy)
      fail(file, "unknown format: expected a .npy file (by extension or magic) or a .safetensors file (by extension)");
  }

  if (is_npy) {
    if (tensor)
      fail(file, fmt::format("a .npy file holds one array; no tensor name ({}) expected", quote_name(*tensor)));
    return load_npy(file);
  }
  if (tensor) return load_safetensors(file, *tensor);
  const SafetensorsHeader h = read_safetensors_header(probe);
  if (h.tensors.size() == 1) return load_tensor(probe, h, h.tensors.front());
  if (h.tensors.empty()) fail(file, "the file holds no tensors");
  fail(file, fmt::format("the file holds {} tensors; name one as FILE:TENSOR (available: {})", h.tensors.size(),
                         available_names(h)));
}

}  // namespace sparseact
