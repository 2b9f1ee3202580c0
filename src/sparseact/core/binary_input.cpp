#include <sparseact/core/binary_input.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>

namespace sparseact::io {

namespace fs = std::filesystem;

std::string printable(std::string_view s, std::size_t max_len) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);  // UTF-8 passes through: paths and names stay readable
  }
  return out;
}

std::string quote_name(std::string_view s) {
  // (fmt::format rather than "'" + ...: GCC 12 gives a false -Wrestrict warning for the latter.)
  return fmt::format("'{}'", printable(s, 80));
}

std::string name_list(const std::vector<std::string>& names, std::size_t shown) {
  std::string s;
  shown = std::min(names.size(), shown);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + printable(names[i], 80);
  if (names.size() > shown) s += fmt::format(", ... ({} more)", names.size() - shown);
  return s;
}

void fail(const fs::path& file, std::string_view what) {
  throw InputError(fmt::format("{}: {}", printable(file.string()), what));
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

std::optional<std::uint64_t> checked_product(const std::vector<std::uint64_t>& dims, std::uint64_t factor) {
  std::optional<std::uint64_t> p = factor;
  for (std::uint64_t d : dims) {
    p = checked_mul(*p, d);
    if (!p) return std::nullopt;
  }
  return p;
}

std::uint64_t open_regular_file(const fs::path& path, std::ifstream& in) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) fail(path, "no such file");
  if (ec) fail(path, "cannot access (" + ec.message() + ")");
  if (st.type() == fs::file_type::directory) fail(path, "is a directory, not a file");
  if (st.type() != fs::file_type::regular) fail(path, "not a regular file");
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) fail(path, "cannot determine size (" + ec.message() + ")");
  errno = 0;
  in.open(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open (") + (errno ? std::strerror(errno) : "unknown error") + ")");
  return size;
}

InputFile::InputFile(const fs::path& path) : path_(path) { size_ = open_regular_file(path, in_); }

void InputFile::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (offset > size_ || n > size_ - offset)
    fail(path_, fmt::format("read of {} bytes at offset {} past the end of the file ({} bytes)", n, offset, size_));
  if (n == 0) return;
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
  if (!in_ || static_cast<std::size_t>(in_.gcount()) != n)
    fail(path_, fmt::format("read of {} bytes at offset {} failed (file changed while reading?)", n, offset));
}

std::string InputFile::read_string(std::uint64_t offset, std::size_t n) {
  std::string s(n, '\0');
  read(offset, s.data(), n);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Array elements: bytes of either order to double.

std::uint64_t load_uint(const unsigned char* p, std::size_t n, bool big_endian) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t byte = big_endian ? i : n - 1 - i;
    v = (v << 8) | p[byte];
  }
  return v;
}

namespace {

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

/// The count elements of type U at p, in the host's byte order (memcpy: no alignment assumed).
template <class U, class F>
void decode_native(const unsigned char* p, std::size_t count, double* out, F to_double) {
  for (std::size_t i = 0; i < count; ++i) {
    U u;
    std::memcpy(&u, p + sizeof(U) * i, sizeof(U));
    out[i] = to_double(u);
  }
}

void decode(const unsigned char* p, std::size_t count, const Dtype& t, double* out) {
  // Files in the host's byte order (every little-endian checkpoint on x86 and ARM) are decoded by
  // memcpy; the byte-by-byte assembly below is for the other order. Same values either way.
  if (t.big_endian == (std::endian::native == std::endian::big)) {
    switch (t.scalar) {
      case Scalar::f16: return decode_native<std::uint16_t>(p, count, out, half_to_double);
      case Scalar::bf16: return decode_native<std::uint16_t>(p, count, out, bf16_to_double);
      case Scalar::f32: return decode_native<float>(p, count, out, [](float x) { return double(x); });
      case Scalar::f64: return decode_native<double>(p, count, out, [](double x) { return x; });
    }
  }
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

}  // namespace

Eigen::MatrixXd read_matrix(InputFile& file, std::uint64_t offset, const Dtype& t, Eigen::Index rows, Eigen::Index cols,
                            bool row_major) {
  return read_matrix([&](std::uint64_t pos, void* dst, std::size_t n) { file.read(offset + pos, dst, n); }, t, rows,
                     cols, row_major);
}

Eigen::MatrixXd read_matrix(const ByteSource& source, const Dtype& t, Eigen::Index rows, Eigen::Index cols,
                            bool row_major) {
  Eigen::MatrixXd m(rows, cols);
  constexpr Eigen::Index chunk = 1 << 16;  // elements per read: memory stays bounded for any size
  if (m.size() == 0) return m;
  if (!row_major || rows == 1 || cols == 1) {
    // The file's order is Eigen's storage order: decode straight into the matrix.
    const auto count = static_cast<std::uint64_t>(m.size());
    std::vector<unsigned char> bytes(static_cast<std::size_t>(std::min<std::uint64_t>(count, chunk)) * t.size);
    for (std::uint64_t done = 0; done < count;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, count - done));
      source(done * t.size, bytes.data(), n * t.size);
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
    source(static_cast<std::uint64_t>(r0 * cols) * t.size, bytes.data(), n * t.size);
    decode(bytes.data(), n, t, values.data());
    m.middleRows(r0, k) = Eigen::Map<const RowMajor>(values.data(), k, cols);
  }
  return m;
}

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

std::pair<Eigen::Index, Eigen::Index> matrix_shape(const std::vector<std::uint64_t>& shape) {
  const auto dim = [](std::uint64_t d) { return static_cast<Eigen::Index>(d); };
  if (shape.empty()) return {1, 1};
  if (shape.size() == 1) return {1, dim(shape[0])};
  return {dim(shape[0]), dim(shape[1])};
}

std::string join_dims(const std::vector<std::uint64_t>& shape, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? std::string(sep) : "") + std::to_string(shape[i]);
  return s;
}

void check_matrix_shape(const fs::path& file, const std::string& subject, const std::vector<std::uint64_t>& shape,
                        const std::string& shape_text) {
  if (shape.size() > 2)
    fail(file, fmt::format("{} has {}-d shape {}; only 0-d, 1-d and 2-d arrays can be loaded as a matrix", subject,
                           shape.size(), shape_text));
  for (std::uint64_t d : shape)
    if (d > static_cast<std::uint64_t>(std::numeric_limits<Eigen::Index>::max()))
      fail(file, fmt::format("{} has shape {} with a dimension too large for a matrix", subject, shape_text));
}

}  // namespace sparseact::io
