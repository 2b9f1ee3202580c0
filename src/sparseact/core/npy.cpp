// NumPy .npy reader and writer.
//
// Every number in a .npy header comes from an untrusted file. The rule throughout: parse the
// header, validate every size against the file's actual size with overflow-checked arithmetic,
// and only then allocate or read. Data are read in chunks straight into the result, so loading
// an array costs the matrix plus a small buffer (at most one row), never a copy of the file.
#include <sparseact/core/npy.hpp>
#include <sparseact/core/binary_input.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <sparseact/core/result.hpp>

namespace sparseact {
namespace {

namespace fs = std::filesystem;
using namespace io;
using std::uint64_t;

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
  PyLiteralParser(std::string_view text, const fs::path& file, const std::string& subject)
      : s_(text), file_(file), subject_(subject) {}

  PyValue parse_document() {
    PyValue v = value(0);
    skip_ws();
    if (pos_ != s_.size()) error("unexpected text after the dictionary");
    return v;
  }

 private:
  static constexpr int max_depth = 16;  // numpy's headers nest 3 deep; bounds the recursion

  [[noreturn]] void error(std::string_view what) const {
    fail(file_, fmt::format("{}malformed .npy header: {} at byte {} of the header", subject_, what, pos_));
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
  const std::string& subject_;
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

// The element type of float16/32/64 descrs; nothing for any other.
std::optional<Dtype> npy_float_dtype(std::string_view d) {
  bool big_endian = std::endian::native == std::endian::big;  // '=' and '|' mean native order
  if (!d.empty() && std::string_view("<>=|").find(d.front()) != std::string_view::npos) {
    if (d.front() == '<') big_endian = false;
    if (d.front() == '>') big_endian = true;
    d.remove_prefix(1);
  }
  if (d == "f2" || d == "e") return Dtype{Scalar::f16, big_endian, 2, "float16"};
  if (d == "f4") return Dtype{Scalar::f32, big_endian, 4, "float32"};
  if (d == "f8") return Dtype{Scalar::f64, big_endian, 8, "float64"};
  return std::nullopt;
}

// Bytes per element where the descr states them ('<i8', '|b1', '<U5' (UCS-4), '<M8[ns]'), so the
// data size of arrays we do not load is still checked. Object arrays are pickles: no size.
std::optional<uint64_t> npy_item_size(std::string_view d) {
  if (!d.empty() && std::string_view("<>=|").find(d.front()) != std::string_view::npos) d.remove_prefix(1);
  if (d == "?") return 1;
  if (d.size() < 2 || std::string_view("biufcSaUVMm").find(d.front()) == std::string_view::npos) return std::nullopt;
  const char code = d.front();
  d.remove_prefix(1);
  if ((code == 'M' || code == 'm') && d.find('[') != std::string_view::npos) d = d.substr(0, d.find('['));
  if (d.empty() || d.size() > 9 || !std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto n = static_cast<uint64_t>(std::stoull(std::string(d)));
  return code == 'U' ? 4 * n : n;
}

}  // namespace

NpyHeader read_npy_header(const fs::path& path, const std::string& subject, uint64_t size, const ByteSource& read) {
  static constexpr std::string_view magic = "\x93NUMPY";
  const auto fail = [&](std::string_view what) { io::fail(path, subject + std::string(what)); };
  const auto read_string = [&](uint64_t offset, std::size_t n) {
    std::string s(n, '\0');
    read(offset, s.data(), n);
    return s;
  };

  const std::string start = read_string(0, static_cast<std::size_t>(std::min<uint64_t>(size, 12)));
  const std::size_t have = std::min(start.size(), magic.size());
  if (std::string_view(start).substr(0, have) != magic.substr(0, have))
    fail("not a .npy file (bad magic; expected \\x93NUMPY)");
  if (start.size() < 10) fail(fmt::format("truncated .npy file ({} bytes)", size));
  const int major = static_cast<unsigned char>(start[6]);
  const int minor = static_cast<unsigned char>(start[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(fmt::format("unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are known)", major, minor));
  // Version 1.0 stores the header length in 2 bytes, later versions in 4.
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const uint64_t prefix = 8 + len_bytes;
  if (size < prefix) fail(fmt::format("truncated .npy file ({} bytes)", size));
  const auto* lp = reinterpret_cast<const unsigned char*>(start.data()) + 8;
  const uint64_t header_len = load_uint(lp, len_bytes, false);
  if (header_len > size - prefix)
    fail(fmt::format("truncated header: header length {} exceeds the {} bytes after the prefix", header_len,
                           size - prefix));
  // numpy itself refuses headers over 10000 bytes by default; ours hold three keys.
  constexpr uint64_t max_header = 1 << 20;
  if (header_len > max_header)
    fail(fmt::format("header length {} is implausibly large (limit {} bytes)", header_len, max_header));

  const std::string text = read_string(prefix, static_cast<std::size_t>(header_len));
  const PyValue dict = PyLiteralParser(text, path, subject).parse_document();
  if (dict.kind != PyValue::Kind::dict) fail("malformed .npy header: not a dictionary");

  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    if (key.kind != PyValue::Kind::string) fail("malformed .npy header: a key is not a string");
    // Unknown keys are ignored (numpy rejects them; no file numpy writes has any); for repeated
    // keys the last wins, as in Python.
    if (key.text == "descr") descr = &dict.items[i + 1];
    if (key.text == "fortran_order") fortran = &dict.items[i + 1];
    if (key.text == "shape") shape = &dict.items[i + 1];
  }
  if (!descr || !fortran || !shape)
    fail(fmt::format("malformed .npy header: missing key '{}'",
                           !descr ? "descr" : !fortran ? "fortran_order" : "shape"));

  NpyHeader h{};
  if (descr->kind == PyValue::Kind::list) {
    h.descr = "structured";  // a record dtype: a list of (name, type) fields
  } else {
    if (descr->kind != PyValue::Kind::string) fail("malformed .npy header: 'descr' is not a string");
    h.descr = descr->text;
    h.dtype = npy_float_dtype(h.descr);
    h.item_size = npy_item_size(h.descr);
  }

  if (fortran->kind != PyValue::Kind::boolean)
    fail("malformed .npy header: 'fortran_order' is not True or False");
  h.fortran_order = fortran->flag;

  if (shape->kind != PyValue::Kind::tuple) fail("malformed .npy header: 'shape' is not a tuple");
  for (const PyValue& d : shape->items) {
    if (d.kind != PyValue::Kind::integer) fail("malformed .npy header: 'shape' holds a non-integer");
    if (d.too_big) fail("malformed .npy header: a dimension of 'shape' exceeds 64 bits");
    if (d.negative && d.magnitude != 0)
      fail(fmt::format("malformed .npy header: negative dimension -{} in 'shape'", d.magnitude));
    h.shape.push_back(d.magnitude);
  }
  // (fmt::format: GCC 12 warns falsely (-Wrestrict) on a string assigned and then appended to.)
  h.shape_text = fmt::format("({}{})", join_dims(h.shape, ", "), h.shape.size() == 1 ? "," : "");
  h.data_offset = prefix + header_len;
  return h;
}

void check_npy_data_size(const fs::path& path, const std::string& subject, const NpyHeader& h, uint64_t size) {
  const auto fail = [&](std::string_view what) { io::fail(path, subject + std::string(what)); };
  if (!h.item_size) return;  // object arrays: pickled, any length
  const std::string type = h.dtype ? h.dtype->name : printable(h.descr, 20);
  const auto expected = checked_product(h.shape, *h.item_size);
  const uint64_t available = size - h.data_offset;
  const std::string promise =
      fmt::format("header promises {} {}", h.shape.empty() ? std::string("scalar") : join_dims(h.shape, "x"), type);
  if (!expected) fail(fmt::format("shape {} is too large: {} needs more than 2^64 bytes", h.shape_text, type));
  if (*expected > available)
    fail(fmt::format("truncated data: {} ({} bytes), file has {} bytes after the header", promise, *expected,
                     available));
  // numpy would ignore extra bytes; a mismatch more likely means a header that lies.
  if (*expected < available)
    fail(fmt::format("{} unexpected bytes after the data: {} ({} bytes), file has {} bytes after the header",
                     available - *expected, promise, *expected, available));
}

Eigen::MatrixXd load_npy(const std::filesystem::path& path) {
  InputFile file(path);
  const NpyHeader h = read_npy_header(path, "", file.size(),
                                      [&](uint64_t pos, void* dst, std::size_t n) { file.read(pos, dst, n); });
  // float16 loads through core/checkpoint.hpp; this reader keeps to the two types --weights documents.
  if (h.descr == "structured")
    fail(path, "unsupported dtype: structured (record) arrays cannot be loaded as a matrix");
  if (!h.dtype || h.dtype->scalar == Scalar::f16) {
    std::string_view d = h.descr;
    if (!d.empty() && std::string_view("<>=|").find(d.front()) != std::string_view::npos) d.remove_prefix(1);
    fail(path, fmt::format("unsupported dtype {} ({}); only float32 and float64 arrays can be loaded "
                           "(convert with a.astype(numpy.float64))",
                           quote_name(h.descr), describe_numpy_type(d)));
  }
  check_matrix_shape(path, "array", h.shape, h.shape_text);
  check_npy_data_size(path, "", h, file.size());
  const auto [rows, cols] = matrix_shape(h.shape);
  return read_matrix(file, h.data_offset, *h.dtype, rows, cols, !h.fortran_order);
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

}  // namespace sparseact
