// IDX reader (plain and gzip) and the Fashion-MNIST loader.
//
// Every number in an IDX header comes from an untrusted file. As in core/npy.cpp: parse the
// header, validate the promised size against the file with overflow-checked arithmetic, and only
// then allocate. A gzip file's uncompressed size is not known in advance (its trailer is untrusted
// and modulo 2^32), so for gzip the result grows geometrically as decompressed data actually
// arrive: a header that lies about the size costs at most twice the data that really exist.
#include <sparseact/nn/idx.hpp>
#include <sparseact/core/binary_input.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <zlib.h>

#include <sparseact/core/errors.hpp>

namespace sparseact::nn {
namespace {

namespace fs = std::filesystem;
using std::uint64_t;
using io::checked_mul;
using io::fail;
using io::printable;



// deflate expands at most 1032:1; the slack covers gzip's header and trailer on tiny files.
constexpr uint64_t max_deflate_ratio = 1032;
constexpr uint64_t gzip_slack = 1 << 12;

// A plain or gzip file read front to back; every read is exact or an InputError.
class Reader {
 public:
  explicit Reader(const fs::path& path) : path_(path) {
    size_ = io::open_regular_file(path, in_);
    unsigned char magic[2] = {0, 0};
    if (size_ >= 2) {
      in_.read(reinterpret_cast<char*>(magic), 2);
      in_.seekg(0);
    }
    if (magic[0] == 0x1f && magic[1] == 0x8b) {
      in_.close();
      gz_ = gzopen(path.c_str(), "rb");
      if (gz_ == nullptr) fail(path, "cannot open as gzip");
      gzbuffer(gz_, 1 << 17);
    }
  }
  ~Reader() {
    if (gz_ != nullptr) gzclose(gz_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const fs::path& path() const { return path_; }
  bool gzip() const { return gz_ != nullptr; }
  uint64_t file_size() const { return size_; }

  // Reads up to n bytes; returns how many (fewer only at the end of the data).
  std::size_t read_some(void* dst, std::size_t n) {
    auto* out = static_cast<char*>(dst);
    std::size_t got = 0;
    while (got < n) {
      if (gz_ != nullptr) {
        const auto want = static_cast<unsigned>(std::min<std::size_t>(n - got, 1u << 20));
        const int r = gzread(gz_, out + got, want);
        if (r < 0) gz_fail();
        if (r == 0) {
          check_gz_error();
          break;
        }
        got += static_cast<std::size_t>(r);
      } else {
        in_.read(out + got, static_cast<std::streamsize>(n - got));
        const auto r = static_cast<std::size_t>(in_.gcount());
        got += r;
        if (r == 0 || !in_) break;
      }
    }
    if (gz_ != nullptr && got < n) check_gz_error();
    return got;
  }

  void read(void* dst, std::size_t n, std::string_view what) {
    const std::size_t got = read_some(dst, n);
    if (got != n) fail(path_, fmt::format("truncated: {} ends after {} of {} bytes", what, got, n));
  }

  // The data must end here: nothing after it, and (gzip) a valid checksum.
  void expect_end(std::string_view what) {
    char extra[64];
    const std::size_t more = read_some(extra, sizeof extra);
    if (more != 0)
      fail(path_, fmt::format("trailing data after {}{}", what, gzip() ? " (decompressed)" : ""));
  }

 private:
  [[noreturn]] void gz_fail() {
    int code = Z_OK;
    const char* msg = gzerror(gz_, &code);
    fail(path_, fmt::format("corrupt gzip data ({})", printable(msg != nullptr ? msg : "unknown zlib error")));
  }
  void check_gz_error() {
    int code = Z_OK;
    gzerror(gz_, &code);
    if (code != Z_OK && code != Z_STREAM_END) gz_fail();
  }

  fs::path path_;
  std::ifstream in_;
  gzFile gz_ = nullptr;
  uint64_t size_ = 0;
};

struct Header {
  IdxType type = IdxType::u8;
  std::vector<uint64_t> dims;
  uint64_t count = 1;  // elements
  uint64_t bytes = 0;  // data bytes
  std::string shape_text() const {
    std::string s;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (i) s += 'x';
      s += std::to_string(dims[i]);
    }
    return dims.empty() ? "scalar" : s;
  }
};

Header read_header(Reader& in) {
  unsigned char magic[4];
  in.read(magic, 4, "the 4-byte IDX magic");
  if (magic[0] != 0 || magic[1] != 0)
    fail(in.path(), fmt::format("not an IDX file: magic starts 0x{:02x} 0x{:02x}, expected two zero bytes", magic[0],
                                magic[1]));
  Header h;
  switch (magic[2]) {
    case 0x08: case 0x09: case 0x0B: case 0x0C: case 0x0D: case 0x0E:
      h.type = static_cast<IdxType>(magic[2]);
      break;
    default:
      fail(in.path(), fmt::format("unknown IDX type code 0x{:02x} (allowed: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, "
                                  "0x0D f32, 0x0E f64)", magic[2]));
  }
  const int ndim = magic[3];
  std::vector<unsigned char> raw(static_cast<std::size_t>(4 * ndim));
  in.read(raw.data(), raw.size(), fmt::format("the header's {} dimensions", ndim));
  for (int i = 0; i < ndim; ++i) {
    const unsigned char* p = raw.data() + 4 * i;
    h.dims.push_back((uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | p[3]);
  }
  std::optional<uint64_t> count = 1;
  for (uint64_t d : h.dims)
    if (count) count = checked_mul(*count, d);
  const auto bytes = count ? checked_mul(*count, idx_type_size(h.type)) : std::nullopt;
  if (!bytes || *count > static_cast<uint64_t>(std::numeric_limits<Eigen::Index>::max()))
    fail(in.path(), fmt::format("header promises {} {} elements, too many to address", h.shape_text(),
                                to_string(h.type)));
  h.count = *count;
  h.bytes = *bytes;

  const uint64_t header_size = 4 + 4 * static_cast<uint64_t>(ndim);
  if (!in.gzip()) {
    const uint64_t have = in.file_size() - header_size;  // the header was read, so no underflow
    if (have < h.bytes)
      fail(in.path(), fmt::format("truncated data: header promises {} {} ({} bytes), file has {} bytes after the "
                                  "header", h.shape_text(), to_string(h.type), h.bytes, have));
    if (have > h.bytes)
      fail(in.path(), fmt::format("{} bytes of trailing data after {} {} ({} bytes)", have - h.bytes, h.shape_text(),
                                  to_string(h.type), h.bytes));
  } else {
    const auto limit = checked_mul(in.file_size(), max_deflate_ratio);
    if (limit && h.bytes > *limit + gzip_slack)
      fail(in.path(), fmt::format("header promises {} {} ({} bytes), more than a {}-byte gzip file can hold",
                                  h.shape_text(), to_string(h.type), h.bytes, in.file_size()));
  }
  return h;
}

inline uint64_t load_be(const unsigned char* p, std::size_t n) {
  uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

void decode(const unsigned char* p, std::size_t count, IdxType type, double* out) {
  switch (type) {
    case IdxType::u8:
      for (std::size_t i = 0; i < count; ++i) out[i] = p[i];
      break;
    case IdxType::i8:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::int8_t>(p[i]);
      break;
    case IdxType::i16:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::int16_t>(load_be(p + 2 * i, 2));
      break;
    case IdxType::i32:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::int32_t>(load_be(p + 4 * i, 4));
      break;
    case IdxType::f32:
      for (std::size_t i = 0; i < count; ++i)
        out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(load_be(p + 4 * i, 4)));
      break;
    case IdxType::f64:
      for (std::size_t i = 0; i < count; ++i) out[i] = std::bit_cast<double>(load_be(p + 8 * i, 8));
      break;
  }
}

// The elements as a count × 1 matrix (callers reshape it in place with resize(), which keeps the
// buffer when the size is unchanged). Plain files: allocated once, the size having been checked.
// Gzip: grown geometrically as data arrive.
Eigen::MatrixXd read_elements(Reader& in, const Header& h) {
  constexpr uint64_t chunk = 1 << 16;  // elements per read
  const auto count = static_cast<Eigen::Index>(h.count);
  Eigen::MatrixXd m(in.gzip() ? std::min<Eigen::Index>(count, Eigen::Index{1} << 20) : count, 1);
  const std::size_t size = idx_type_size(h.type);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(std::min<uint64_t>(h.count, chunk)) * size);
  for (uint64_t done = 0; done < h.count;) {
    const auto n = static_cast<std::size_t>(std::min<uint64_t>(chunk, h.count - done));
    const std::size_t got = in.read_some(bytes.data(), n * size);
    if (got != n * size)
      fail(in.path(), fmt::format("truncated data: {} {} needs {} bytes, the {}data end after {}", h.shape_text(),
                                  to_string(h.type), h.bytes, in.gzip() ? "decompressed " : "",
                                  done * size + got));
    if (static_cast<Eigen::Index>(done + n) > m.rows())
      m.conservativeResize(std::min<Eigen::Index>(count, std::max<Eigen::Index>(2 * m.rows(), done + n)), 1);
    decode(bytes.data(), n, h.type, m.data() + done);
    done += n;
  }
  in.expect_end(fmt::format("{} {} ({} bytes)", h.shape_text(), to_string(h.type), h.bytes));
  return m;
}

}  // namespace

std::size_t idx_type_size(IdxType type) noexcept {
  switch (type) {
    case IdxType::u8: case IdxType::i8: return 1;
    case IdxType::i16: return 2;
    case IdxType::i32: case IdxType::f32: return 4;
    case IdxType::f64: return 8;
  }
  return 1;
}

const char* to_string(IdxType type) noexcept {
  switch (type) {
    case IdxType::u8: return "u8";
    case IdxType::i8: return "i8";
    case IdxType::i16: return "i16";
    case IdxType::i32: return "i32";
    case IdxType::f32: return "f32";
    case IdxType::f64: return "f64";
  }
  return "?";
}

IdxArray read_idx(const fs::path& path) {
  Reader in(path);
  const Header h = read_header(in);
  IdxArray a;
  a.type = h.type;
  a.dims = h.dims;
  Eigen::MatrixXd m = read_elements(in, h);
  a.values = Eigen::Map<const Eigen::VectorXd>(m.data(), m.size());
  return a;
}

Eigen::MatrixXd load_idx_images(const fs::path& path) {
  Reader in(path);
  const Header h = read_header(in);
  if (h.dims.empty()) fail(path, "a 0-d IDX array holds no images (expected N x ... dimensions)");
  const auto n = static_cast<Eigen::Index>(h.dims[0]);
  const Eigen::Index features = n == 0 ? 0 : static_cast<Eigen::Index>(h.count / h.dims[0]);
  if (n == 0) {  // the feature count of an empty set still comes from the dimensions
    uint64_t f = 1;
    for (std::size_t i = 1; i < h.dims.size(); ++i) {
      const auto p = checked_mul(f, h.dims[i]);
      if (!p || *p > static_cast<uint64_t>(std::numeric_limits<Eigen::Index>::max()))
        fail(path, "image dimensions too large");
      f = *p;
    }
    // No elements, but the data must still end here (and a gzip file's checksum hold), as read_idx
    // demands: found by the idx fuzz target (tests/fuzz/regressions/idx).
    in.expect_end(fmt::format("{} {} (0 bytes)", h.shape_text(), to_string(h.type)));
    return Eigen::MatrixXd(static_cast<Eigen::Index>(f), 0);
  }
  Eigen::MatrixXd m = read_elements(in, h);
  m.resize(features, n);  // same size: keeps the buffer; row-major N × features is features × N
  if (h.type == IdxType::u8) m /= 255.0;  // exactly v/255, pixel for pixel
  return m;
}

std::vector<int> load_idx_labels(const fs::path& path) {
  Reader in(path);
  const Header h = read_header(in);
  if (h.dims.size() != 1)
    fail(path, fmt::format("labels must be a 1-d IDX array, this one has shape {}", h.shape_text()));
  if (h.type == IdxType::f32 || h.type == IdxType::f64)
    fail(path, fmt::format("labels must be of an integer type (u8, i8, i16, i32), not {}", to_string(h.type)));
  const Eigen::MatrixXd m = read_elements(in, h);
  std::vector<int> labels(static_cast<std::size_t>(m.size()));
  for (Eigen::Index i = 0; i < m.size(); ++i) labels[static_cast<std::size_t>(i)] = static_cast<int>(m(i));
  return labels;
}

const std::vector<std::string>& fashion_mnist_classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

FashionMnist load_fashion_mnist(const fs::path& dir, const std::string& split) {
  if (split != "train" && split != "test")
    throw InputError(fmt::format("Fashion-MNIST split '{}': expected train or test", printable(split)));
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    fail(dir, "no such folder; install dataset-fashion-mnist (apt-get install dataset-fashion-mnist) or name the "
              "folder that holds the IDX files");
  const std::string prefix = split == "train" ? "train" : "t10k";
  const auto find = [&](const std::string& name) {
    for (const fs::path& p : {dir / name, dir / (name + ".gz")})
      if (fs::exists(p, ec)) return p;
    fail(dir, fmt::format("neither {0} nor {0}.gz found; install dataset-fashion-mnist", name));
  };
  FashionMnist d;
  d.split = split;
  d.images_file = find(prefix + "-images-idx3-ubyte");
  d.labels_file = find(prefix + "-labels-idx1-ubyte");

  {
    Reader in(d.images_file);
    const Header h = read_header(in);
    if (h.type != IdxType::u8 || h.dims.size() != 3 || h.dims[1] != 28 || h.dims[2] != 28)
      fail(d.images_file, fmt::format("expected Nx28x28 u8 images, found {} {}", h.shape_text(), to_string(h.type)));
  }
  d.images = load_idx_images(d.images_file);
  {
    Reader in(d.labels_file);
    const Header h = read_header(in);
    if (h.type != IdxType::u8) fail(d.labels_file, fmt::format("expected u8 labels, found {}", to_string(h.type)));
  }
  d.labels = load_idx_labels(d.labels_file);
  if (static_cast<Eigen::Index>(d.labels.size()) != d.images.cols())
    fail(d.labels_file, fmt::format("{} labels for {} images in {}", d.labels.size(), d.images.cols(),
                                    printable(d.images_file.filename().string())));
  for (std::size_t i = 0; i < d.labels.size(); ++i)
    if (d.labels[i] < 0 || d.labels[i] > 9)
      fail(d.labels_file, fmt::format("label {} of sample {} is outside 0..9", d.labels[i], i));
  return d;
}

FashionMnist load_fashion_mnist(const std::string& split) {
  return load_fashion_mnist(fs::path(default_fashion_mnist_dir()), split);
}

}  // namespace sparseact::nn
