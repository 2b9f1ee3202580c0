// Tests of the IDX reader and the Fashion-MNIST loader: hand-built IDX files of every type, plain
// and gzip, checked element by element; truncated, corrupted and lying files, which must end in an
// InputError naming the file, never in a crash or another exception; and, where Debian's
// dataset-fashion-mnist is installed, the real test split.
#include <catch2/catch.hpp>

#include "support.hpp"

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>
#include <zlib.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/nn/idx.hpp>

namespace fs = std::filesystem;
using sparseact::InputError;
namespace nn = sparseact::nn;

namespace {

using test_support::TempDir;
using test_support::read_bytes;
using test_support::write_bytes;




void write_gzip(const fs::path& p, const std::string& bytes) {
  gzFile gz = gzopen(p.c_str(), "wb1");
  REQUIRE(gz != nullptr);
  REQUIRE(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(gz) == Z_OK);
}

std::string be(std::uint64_t v, int n) {
  std::string s(static_cast<std::size_t>(n), '\0');
  for (int i = 0; i < n; ++i) s[static_cast<std::size_t>(n - 1 - i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::string idx_header(int type, const std::vector<std::uint32_t>& dims) {
  std::string s = std::string("\0\0", 2) + static_cast<char>(type) + static_cast<char>(dims.size());
  for (auto d : dims) s += be(d, 4);
  return s;
}

using test_support::input_error;

using test_support::loads_or_input_error;

// A 4x3x5 u8 image file: pixel (n, r, c) = (37 n + 11 r + 3 c) mod 256.
int pixel(int n, int r, int c) { return (37 * n + 11 * r + 3 * c) % 256; }
std::string u8_images() {
  std::string s = idx_header(0x08, {4, 3, 5});
  for (int n = 0; n < 4; ++n)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 5; ++c) s += static_cast<char>(pixel(n, r, c));
  return s;
}

void require_u8_images(const Eigen::MatrixXd& m) {
  REQUIRE(m.rows() == 15);
  REQUIRE(m.cols() == 4);
  for (int n = 0; n < 4; ++n)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 5; ++c) {
        INFO("image " << n << " pixel (" << r << ", " << c << ")");
        CHECK(m(r * 5 + c, n) == pixel(n, r, c) / 255.0);
      }
}

}  // namespace

TEST_CASE("IDX files of every element type load element by element", "[idx]") {
  TempDir dir;
  const auto path = dir / "a.idx";

  SECTION("3-d u8 images: features x N, scaled to [0, 1]") {
    write_bytes(path, u8_images());
    require_u8_images(nn::load_idx_images(path));
    const nn::IdxArray a = nn::read_idx(path);
    CHECK(a.type == nn::IdxType::u8);
    CHECK(a.dims == std::vector<std::uint64_t>{4, 3, 5});
    REQUIRE(a.values.size() == 60);
    for (int i = 0; i < 60; ++i) CHECK(a.values(i) == pixel(i / 15, (i / 5) % 3, i % 5));  // unscaled, row-major
  }

  SECTION("1-d f32: exact values, one feature per sample, not rescaled") {
    const std::vector<float> v = {0.5f, -1.25f, 3.0e-8f, 65504.0f, -0.0f};
    std::string s = idx_header(0x0D, {5});
    for (float x : v) s += be(std::bit_cast<std::uint32_t>(x), 4);
    write_bytes(path, s);
    const nn::IdxArray a = nn::read_idx(path);
    CHECK(a.type == nn::IdxType::f32);
    CHECK(a.dims == std::vector<std::uint64_t>{5});
    REQUIRE(a.values.size() == 5);
    for (int i = 0; i < 5; ++i) CHECK(a.values(i) == static_cast<double>(v[static_cast<std::size_t>(i)]));
    CHECK(std::signbit(a.values(4)));
    const Eigen::MatrixXd m = nn::load_idx_images(path);
    REQUIRE(m.rows() == 1);
    REQUIRE(m.cols() == 5);
    for (int i = 0; i < 5; ++i) CHECK(m(0, i) == static_cast<double>(v[static_cast<std::size_t>(i)]));
  }

  SECTION("3-d f32 images keep their values") {
    std::string s = idx_header(0x0D, {2, 2, 3});
    for (int i = 0; i < 12; ++i) s += be(std::bit_cast<std::uint32_t>(static_cast<float>(i - 5.5)), 4);
    write_bytes(path, s);
    const Eigen::MatrixXd m = nn::load_idx_images(path);
    REQUIRE(m.rows() == 6);
    REQUIRE(m.cols() == 2);
    for (int n = 0; n < 2; ++n)
      for (int f = 0; f < 6; ++f) CHECK(m(f, n) == n * 6 + f - 5.5);
  }

  SECTION("i8, i16, i32 and f64, negative values included") {
    std::string s = idx_header(0x09, {4}) + std::string("\x00\x7f\x80\xff", 4);
    write_bytes(path, s);
    CHECK(nn::read_idx(path).values == Eigen::Vector4d(0, 127, -128, -1));
    write_bytes(path, idx_header(0x0B, {2, 2}) + be(1, 2) + be(0x7fff, 2) + be(0x8000, 2) + be(0xfffe, 2));
    CHECK(nn::read_idx(path).values == Eigen::Vector4d(1, 32767, -32768, -2));
    write_bytes(path, idx_header(0x0C, {3}) + be(70000, 4) + be(0x80000000u, 4) + be(0xffffffffu, 4));
    CHECK(nn::read_idx(path).values == Eigen::Vector3d(70000, -2147483648.0, -1));
    CHECK(nn::load_idx_labels(path) == std::vector<int>{70000, -2147483647 - 1, -1});
    write_bytes(path, idx_header(0x0E, {1, 2}) + be(std::bit_cast<std::uint64_t>(0.1), 8) +
                          be(std::bit_cast<std::uint64_t>(-1e300), 8));
    const nn::IdxArray a = nn::read_idx(path);
    CHECK(a.type == nn::IdxType::f64);
    CHECK(a.values == Eigen::Vector2d(0.1, -1e300));
  }

  SECTION("labels, 0-d arrays and empty arrays") {
    write_bytes(path, idx_header(0x08, {6}) + std::string("\x09\x00\x03\x03\x07\x01", 6));
    CHECK(nn::load_idx_labels(path) == std::vector<int>{9, 0, 3, 3, 7, 1});
    write_bytes(path, idx_header(0x08, {}) + "\x2a");
    const nn::IdxArray scalar = nn::read_idx(path);
    CHECK(scalar.dims.empty());
    CHECK(scalar.values == Eigen::VectorXd::Constant(1, 42));
    CHECK_THAT(input_error([&] { nn::load_idx_images(path); }), Catch::Contains("0-d"));
    write_bytes(path, idx_header(0x08, {0, 28, 28}));
    const Eigen::MatrixXd e = nn::load_idx_images(path);
    CHECK(e.rows() == 784);
    CHECK(e.cols() == 0);
  }

  SECTION("labels must be 1-d integers") {
    write_bytes(path, idx_header(0x08, {2, 1}) + "\x01\x02");
    CHECK_THAT(input_error([&] { nn::load_idx_labels(path); }), Catch::Contains("1-d") && Catch::Contains("2x1"));
    write_bytes(path, idx_header(0x0D, {1}) + be(0, 4));
    CHECK_THAT(input_error([&] { nn::load_idx_labels(path); }), Catch::Contains("integer") && Catch::Contains("f32"));
  }
}

TEST_CASE("gzip-compressed IDX files round trip", "[idx]") {
  TempDir dir;
  // Large enough to cross the reader's chunks and its geometric growth.
  std::string big = idx_header(0x08, {3000, 28, 28});
  sparseact::Rng rng(7, 0);
  std::string pixels(3000 * 784, '\0');
  for (auto& c : pixels) c = static_cast<char>(rng.below(4) * 60);
  big += pixels;
  write_gzip(dir / "big.gz", big);
  write_bytes(dir / "big", big);
  CHECK(fs::file_size(dir / "big.gz") < big.size());
  const Eigen::MatrixXd from_gz = nn::load_idx_images(dir / "big.gz");
  const Eigen::MatrixXd from_plain = nn::load_idx_images(dir / "big");
  REQUIRE(from_gz.rows() == 784);
  REQUIRE(from_gz.cols() == 3000);
  CHECK(from_gz == from_plain);
  CHECK(from_gz(5, 2999) == static_cast<unsigned char>(pixels[2999 * 784 + 5]) / 255.0);

  // The gzip magic decides, not the name.
  write_gzip(dir / "small.idx", u8_images());
  require_u8_images(nn::load_idx_images(dir / "small.idx"));
}

TEST_CASE("malformed IDX headers give one-line InputErrors naming the file", "[idx]") {
  TempDir dir;
  const auto path = dir / "bad-idx";
  struct Case {
    const char* what;
    std::string bytes;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"empty file", "", "truncated"},
      {"bad magic", std::string("\x01\x00\x08\x01", 4) + be(1, 4) + "x", "not an IDX file"},
      {"unknown type", std::string("\x00\x00\x0A\x01", 4) + be(1, 4) + "x", "unknown IDX type code 0x0a"},
      {"missing dims", idx_header(0x08, {2, 2}).substr(0, 9), "truncated"},
      {"short data", idx_header(0x08, {10, 28, 28}) + "abc",
       "truncated data: header promises 10x28x28 u8 (7840 bytes), file has 3 bytes after the header"},
      {"trailing data", idx_header(0x0C, {1}) + be(5, 4) + "zz", "2 bytes of trailing data after 1 i32 (4 bytes)"},
      {"overflowing dims", idx_header(0x0E, {0xffffffffu, 0xffffffffu, 0xffffffffu}), "too many to address"},
      {"huge dims", idx_header(0x08, {0xffffffffu, 0x10000u}) + "x", "truncated data"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    write_bytes(path, c.bytes);
    const std::string msg = input_error([&] { nn::read_idx(path); });
    CHECK_THAT(msg, Catch::StartsWith(path.string() + ": ") && Catch::Contains(c.message));
    CHECK(msg.find('\n') == std::string::npos);
  }

  SECTION("a gzip file promising far more than it can hold is rejected before allocating") {
    write_gzip(path, idx_header(0x0E, {60000, 60000, 28}) + "12345678");
    CHECK_THAT(input_error([&] { nn::read_idx(path); }), Catch::Contains("more than a") && Catch::Contains("gzip"));
    // Plausible for deflate but a lie: fails at the end of the data, having allocated only what exists.
    sparseact::Rng rng(5, 0);
    std::string noise(5000, '\0');  // incompressible, so that deflate's bound admits the lie
    for (auto& c : noise) c = static_cast<char>(rng.below(256));
    write_gzip(path, idx_header(0x08, {100, 1000, 40}) + noise);
    CHECK_THAT(input_error([&] { nn::load_idx_images(path); }),
               Catch::Contains("truncated data") && Catch::Contains("decompressed data end after 5000"));
    write_gzip(path, idx_header(0x08, {2}) + "abc");
    CHECK_THAT(input_error([&] { nn::read_idx(path); }), Catch::Contains("trailing data"));
  }

  SECTION("missing files and folders") {
    CHECK(input_error([&] { nn::read_idx(dir / "nope"); }) == (dir / "nope").string() + ": no such file");
    CHECK_THAT(input_error([&] { nn::read_idx(dir.path); }), Catch::Contains("directory"));
  }
}

TEST_CASE("truncated and corrupted IDX files throw InputError, never crash", "[idx]") {
  TempDir dir;
  const std::string plain = u8_images();
  std::string f32 = idx_header(0x0D, {3, 4});
  for (int i = 0; i < 12; ++i) f32 += be(std::bit_cast<std::uint32_t>(static_cast<float>(i) / 4), 4);
  const auto plain_path = dir / "fuzz-idx";
  const auto f32_path = dir / "fuzz-f32";
  const auto gz_path = dir / "fuzz-gz";
  write_gzip(gz_path, plain);
  const std::string gz = read_bytes(gz_path);

  const std::vector<std::pair<std::string, fs::path>> files = {{plain, plain_path}, {f32, f32_path}, {gz, gz_path}};

  SECTION("every truncation") {
    for (const auto& [bytes, path] : files) {
      for (std::size_t n = 0; n < bytes.size(); ++n) {
        INFO(path.filename().string() << " truncated to " << n << " bytes");
        write_bytes(path, bytes.substr(0, n));
        CHECK(loads_or_input_error([&] { nn::read_idx(path); }, path.filename().string()));
        CHECK(loads_or_input_error([&] { nn::load_idx_images(path); }, path.filename().string()));
      }
    }
  }

  SECTION("random byte corruptions") {
    sparseact::Rng rng(20240607, 1);
    int errors[3] = {0, 0, 0};
    for (int trial = 0; trial < 300; ++trial) {
      INFO("trial " << trial);
      int k = 0;
      for (const auto& [bytes, path] : files) {
        std::string b = bytes;
        const auto flips = 1 + rng.below(4);
        for (std::uint64_t f = 0; f < flips; ++f) {
          // Half the corruptions hit the header (plain) or the gzip header and first block.
          const std::size_t limit = rng.below(2) ? std::min<std::size_t>(b.size(), 20) : b.size();
          b[rng.below(limit)] = static_cast<char>(rng.below(256));
        }
        write_bytes(path, b);
        errors[k++] += loads_or_input_error([&] { nn::load_idx_images(path); }, path.filename().string());
      }
    }
    // Both outcomes occur for the plain files: corrupted headers fail, corrupted pixels load.
    CHECK(errors[0] > 30);
    CHECK(errors[0] < 300);
    CHECK(errors[1] > 30);
    CHECK(errors[1] < 300);
    CHECK(errors[2] > 30);  // gzip: the checksum catches nearly every corruption
  }
}

TEST_CASE("load_fashion_mnist finds the files and checks them", "[idx]") {
  TempDir dir;
  SECTION("a missing folder or file says what to install") {
    CHECK_THAT(input_error([&] { nn::load_fashion_mnist(dir / "absent", "test"); }),
               Catch::Contains("absent") && Catch::Contains("install dataset-fashion-mnist"));
    CHECK_THAT(input_error([&] { nn::load_fashion_mnist(dir.path, "train"); }),
               Catch::Contains("train-images-idx3-ubyte.gz") && Catch::Contains("install dataset-fashion-mnist"));
    CHECK_THAT(input_error([&] { nn::load_fashion_mnist(dir.path, "validation"); }),
               Catch::Contains("'validation'") && Catch::Contains("train or test"));
  }

  std::string images = idx_header(0x08, {3, 28, 28}) + std::string(3 * 784, '\x80');
  write_gzip(dir / "t10k-images-idx3-ubyte.gz", images);
  SECTION("plain and gzip files mixed; counts must match; labels in 0..9") {
    write_bytes(dir / "t10k-labels-idx1-ubyte", idx_header(0x08, {3}) + std::string("\x01\x09\x00", 3));
    const nn::FashionMnist d = nn::load_fashion_mnist(dir.path, "test");
    CHECK(d.images.rows() == 784);
    CHECK(d.images.cols() == 3);
    CHECK(d.images(0, 0) == 128 / 255.0);
    CHECK(d.labels == std::vector<int>{1, 9, 0});
    CHECK(d.split == "test");

    write_bytes(dir / "t10k-labels-idx1-ubyte", idx_header(0x08, {2}) + "\x01\x09");
    CHECK_THAT(input_error([&] { nn::load_fashion_mnist(dir.path, "test"); }),
               Catch::Contains("2 labels for 3 images"));
    write_bytes(dir / "t10k-labels-idx1-ubyte", idx_header(0x08, {3}) + std::string("\x01\x0a\x00", 3));
    CHECK_THAT(input_error([&] { nn::load_fashion_mnist(dir.path, "test"); }),
               Catch::Contains("label 10 of sample 1"));
    write_gzip(dir / "t10k-images-idx3-ubyte.gz", idx_header(0x08, {3, 784}) + std::string(3 * 784, '\x80'));
    write_bytes(dir / "t10k-labels-idx1-ubyte", idx_header(0x08, {3}) + std::string("\x01\x09\x00", 3));
    CHECK_THAT(input_error([&] { nn::load_fashion_mnist(dir.path, "test"); }),
               Catch::Contains("expected Nx28x28 u8 images, found 3x784 u8"));
  }
}

TEST_CASE("the installed Fashion-MNIST test split", "[idx]") {
  const fs::path dir = nn::default_fashion_mnist_dir();
  if (!fs::is_directory(dir)) {
    WARN(dir.string() << " is absent (install dataset-fashion-mnist): skipping the real data");
    return;
  }
  const nn::FashionMnist d = nn::load_fashion_mnist("test");
  REQUIRE(d.images.rows() == 784);
  REQUIRE(d.images.cols() == 10000);
  REQUIRE(d.labels.size() == 10000);
  CHECK(d.images.minCoeff() >= 0.0);
  CHECK(d.images.maxCoeff() <= 1.0);
  CHECK(d.images.maxCoeff() == 1.0);
  std::vector<int> counts(10, 0);
  for (int y : d.labels) {
    REQUIRE(y >= 0);
    REQUIRE(y <= 9);
    ++counts[static_cast<std::size_t>(y)];
  }
  CHECK(counts == std::vector<int>(10, 1000));
  CHECK(std::vector<int>(d.labels.begin(), d.labels.begin() + 3) == std::vector<int>{9, 2, 1});
  CHECK(nn::fashion_mnist_classes().at(9) == "Ankle boot");
}
