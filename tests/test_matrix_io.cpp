// Tests of the .npy / .safetensors readers: hand-built files with known bytes, files written by
// real NumPy (when /usr/bin/python3 has it), and malformed files, which must all end in an
// InputError naming the file, never in a crash, an abort or another exception.
#include <catch2/catch.hpp>

#include "support.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/matrix_io.hpp>

namespace fs = std::filesystem;
using sparseact::InputError;

namespace {

using test_support::TempDir;
using test_support::read_bytes;
using test_support::write_bytes;




std::string uint_bytes(std::uint64_t v, int n, bool big_endian = false) {
  std::string s(static_cast<std::size_t>(n), '\0');
  for (int i = 0; i < n; ++i)
    s[static_cast<std::size_t>(big_endian ? n - 1 - i : i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string f32_bytes(float v, bool big_endian = false) {
  return uint_bytes(std::bit_cast<std::uint32_t>(v), 4, big_endian);
}
std::string f64_bytes(double v, bool big_endian = false) {
  return uint_bytes(std::bit_cast<std::uint64_t>(v), 8, big_endian);
}

// A .npy file: magic, version major.0, header length (2 bytes for v1, 4 for v2/v3), the dict
// padded with spaces and a newline to a multiple of `align`, then the data.
std::string npy_bytes(int major, const std::string& dict, const std::string& data, std::size_t align = 64) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  const std::size_t total = (prefix + header.size() + 1 + align - 1) / align * align;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  return std::string("\x93NUMPY") + static_cast<char>(major) + '\0' + uint_bytes(header.size(), major == 1 ? 2 : 4) +
         header + data;
}

std::string safetensors_bytes(const std::string& json, const std::string& data) {
  return uint_bytes(json.size(), 8) + json + data;
}

using test_support::input_error;

// A 3x4 matrix of exactly representable values (float32 and float16 alike).
double value(int r, int c) { return (r * 4 + c - 5.5) / 4; }

// Same shape and same values (Eigen's == asserts, or worse, on a shape mismatch).
bool same(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

bool python_has_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }
bool python_works() { return std::system("/usr/bin/python3 -c 'import json, struct' >/dev/null 2>&1") == 0; }

void run_python(const TempDir& dir, const std::string& script) {
  write_bytes(dir / "gen.py", script);
  const std::string cmd = "/usr/bin/python3 '" + (dir / "gen.py").string() + "' '" + dir.path.string() + "' > '" +
                          (dir / "gen.log").string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) FAIL("python failed: " << read_bytes(dir / "gen.log"));
}

void require_3x4(const Eigen::MatrixXd& m) {
  REQUIRE(m.rows() == 3);
  REQUIRE(m.cols() == 4);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) {
      INFO("element (" << r << ", " << c << ")");
      CHECK(m(r, c) == value(r, c));
    }
}

}  // namespace

TEST_CASE("save_npy and load_npy round trip", "[io]") {
  TempDir dir;
  const auto path = dir / "m.npy";

  SECTION("values, including special ones, survive exactly") {
    Eigen::MatrixXd m(7, 5);
    for (int r = 0; r < 7; ++r)
      for (int c = 0; c < 5; ++c) m(r, c) = std::sin(r * 5.0 + c) * std::pow(10.0, r - 3);
    m(0, 0) = std::numeric_limits<double>::infinity();
    m(1, 1) = -0.0;
    m(2, 2) = std::numeric_limits<double>::denorm_min();
    m(3, 3) = std::numeric_limits<double>::quiet_NaN();
    sparseact::save_npy(path, m);
    const Eigen::MatrixXd back = sparseact::load_npy(path);
    REQUIRE(back.rows() == 7);
    REQUIRE(back.cols() == 5);
    for (int r = 0; r < 7; ++r)
      for (int c = 0; c < 5; ++c)
        CHECK(std::bit_cast<std::uint64_t>(back(r, c)) == std::bit_cast<std::uint64_t>(m(r, c)));

    // The layout numpy writes: version 1.0, '<f8', C order, data on a 64-byte boundary.
    const std::string bytes = read_bytes(path);
    REQUIRE(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header_len = static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
    CHECK((10 + header_len) % 64 == 0);
    CHECK(bytes[10 + header_len - 1] == '\n');
    const std::string header = bytes.substr(10, header_len);
    CHECK(header.find("'descr': '<f8'") != std::string::npos);
    CHECK(header.find("'fortran_order': False") != std::string::npos);
    CHECK(header.find("'shape': (7, 5)") != std::string::npos);
    CHECK(bytes.size() == 10 + header_len + 7 * 5 * 8);
    CHECK(bytes.substr(10 + header_len + 8, 8) == f64_bytes(m(0, 1)));  // row-major
  }

  SECTION("large enough to cross read chunks, overwriting, nothing left behind") {
    Eigen::MatrixXd m(300, 401);
    for (int r = 0; r < 300; ++r)
      for (int c = 0; c < 401; ++c) m(r, c) = r - 0.25 * c;
    sparseact::save_npy(path, Eigen::MatrixXd::Zero(2, 2));
    sparseact::save_npy(path, m);
    CHECK(same(sparseact::load_npy(path), m));
    CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // no temp file
  }

  SECTION("empty and 1x1 matrices") {
    sparseact::save_npy(path, Eigen::MatrixXd(0, 3));
    const Eigen::MatrixXd e = sparseact::load_npy(path);
    CHECK(e.rows() == 0);
    CHECK(e.cols() == 3);
    sparseact::save_npy(path, Eigen::MatrixXd::Constant(1, 1, -2.5));
    CHECK(same(sparseact::load_npy(path), Eigen::MatrixXd::Constant(1, 1, -2.5)));
  }
}

TEST_CASE("load_npy reads hand-built files", "[io]") {
  TempDir dir;
  const auto path = dir / "w.npy";

  for (int major : {1, 2, 3})
    for (bool f64 : {false, true})
      for (bool fortran : {false, true})
        for (bool big : {false, true}) {
          std::string data;
          const int outer = fortran ? 4 : 3, inner = fortran ? 3 : 4;
          for (int i = 0; i < outer; ++i)
            for (int j = 0; j < inner; ++j) {
              const double v = fortran ? value(j, i) : value(i, j);
              data += f64 ? f64_bytes(v, big) : f32_bytes(static_cast<float>(v), big);
            }
          const std::string descr = std::string(big ? ">" : "<") + (f64 ? "f8" : "f4");
          const std::string order = fortran ? "True" : "False";
          // Alternate numpy's own spelling with keys reordered, odd whitespace, no trailing comma.
          const std::string dict = major == 2
              ? "{ 'shape' :( 3 ,4 ) ,\n 'fortran_order':" + order + ",'descr':\"" + descr + "\"}"
              : "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': (3, 4), }";
          INFO("version " << major << ", " << descr << ", fortran_order " << order);
          write_bytes(path, npy_bytes(major, dict, data, major == 3 ? 16 : 64));
          require_3x4(sparseact::load_npy(path));
        }

  SECTION("1-d becomes one row, 0-d is 1x1") {
    std::string data;
    for (int i = 0; i < 5; ++i) data += f32_bytes(i * 0.5f);
    write_bytes(path, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", data));
    const Eigen::MatrixXd v = sparseact::load_npy(path);
    REQUIRE(v.rows() == 1);
    REQUIRE(v.cols() == 5);
    for (int i = 0; i < 5; ++i) CHECK(v(0, i) == i * 0.5);

    write_bytes(path, npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f64_bytes(-3.75)));
    CHECK(same(sparseact::load_npy(path), Eigen::MatrixXd::Constant(1, 1, -3.75)));
  }

  SECTION("Python 2 longs, native byte order and empty arrays") {
    std::string data;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) data += f64_bytes(value(r, c));
    write_bytes(path, npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L)}", data));
    require_3x4(sparseact::load_npy(path));
    write_bytes(path, npy_bytes(1, "{'descr': '=f8', 'fortran_order': False, 'shape': (3, 4)}", data));
    require_3x4(sparseact::load_npy(path));

    write_bytes(path, npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 7), }", ""));
    const Eigen::MatrixXd e = sparseact::load_npy(path);
    CHECK(e.rows() == 0);
    CHECK(e.cols() == 7);
    for (const char* order : {"False", "True"}) {
      const std::string dict = std::string("{'descr': '<f4', 'fortran_order': ") + order + ", 'shape': (3, 0), }";
      write_bytes(path, npy_bytes(1, dict, ""));
      const Eigen::MatrixXd z = sparseact::load_npy(path);
      CHECK(z.rows() == 3);
      CHECK(z.cols() == 0);
    }
    write_bytes(path, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", ""));
    CHECK(sparseact::load_npy(path).cols() == 0);
  }
}

TEST_CASE("load_safetensors reads hand-built files", "[io]") {
  TempDir dir;
  const auto path = dir / "model.safetensors";

  // float16 and bfloat16 bit patterns with known values, special values included.
  const std::vector<std::uint16_t> half = {0x3C00, 0xC000, 0x0001, 0x0400, 0x7BFF,
                                           0x3555, 0x7C00, 0xFC00, 0x8000, 0x7E00};
  const std::vector<double> half_values = {1, -2, std::ldexp(1.0, -24), std::ldexp(1.0, -14), 65504,
                                           0.333251953125, INFINITY, -INFINITY, -0.0, NAN};
  const std::vector<std::uint16_t> bf = {0x3F80, 0xC0A0, 0x7F80, 0x0001, 0x4049, 0xFFC0};
  const std::vector<double> bf_values = {1, -5, INFINITY, std::ldexp(1.0, -133), 3.140625, NAN};

  std::string data, f32, f64, f16, b16;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) f32 += f32_bytes(static_cast<float>(value(r, c)));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) f64 += f64_bytes(value(r, c));
  for (auto h : half) f16 += uint_bytes(h, 2);
  for (auto b : bf) b16 += uint_bytes(b, 2);
  const std::string scalar = f32_bytes(7.25f), ids = std::string(16, '\0');
  data = f32 + f64 + f16 + b16 + scalar + ids;
  std::size_t at = 0;
  const auto offsets = [&](const std::string& part) {
    const std::string s = "[" + std::to_string(at) + ", " + std::to_string(at + part.size()) + "]";
    at += part.size();
    return s;
  };
  std::string json = R"({"__metadata__": {"format": "pt"},)";
  json += R"( "w32": {"dtype": "F32", "shape": [3, 4], "data_offsets": )" + offsets(f32) + "},";
  json += R"( "w64": {"dtype": "F64", "shape": [3, 4], "data_offsets": )" + offsets(f64) + "},";
  json += R"( "h": {"dtype": "F16", "shape": [2, 5], "data_offsets": )" + offsets(f16) + "},";
  json += R"( "b": {"dtype": "BF16", "shape": [6], "data_offsets": )" + offsets(b16) + "},";
  json += R"( "s": {"dtype": "F32", "shape": [], "data_offsets": )" + offsets(scalar) + "},";
  json += R"( "ids": {"dtype": "I64", "shape": [1, 2], "data_offsets": )" + offsets(ids) + "}}  ";
  write_bytes(path, safetensors_bytes(json, data));

  CHECK(sparseact::safetensors_names(path) == std::vector<std::string>{"w32", "w64", "h", "b", "s", "ids"});
  require_3x4(sparseact::load_safetensors(path, "w32"));
  require_3x4(sparseact::load_safetensors(path, "w64"));

  const Eigen::MatrixXd h = sparseact::load_safetensors(path, "h");
  REQUIRE(h.rows() == 2);
  REQUIRE(h.cols() == 5);
  for (int i = 0; i < 10; ++i) {
    INFO("half 0x" << std::hex << half[static_cast<std::size_t>(i)]);
    const double got = h(i / 5, i % 5), want = half_values[static_cast<std::size_t>(i)];
    if (std::isnan(want))
      CHECK(std::isnan(got));
    else
      CHECK((got == want && std::signbit(got) == std::signbit(want)));
  }
  const Eigen::MatrixXd b = sparseact::load_safetensors(path, "b");
  REQUIRE(b.rows() == 1);
  REQUIRE(b.cols() == 6);
  for (int i = 0; i < 6; ++i) {
    const double want = bf_values[static_cast<std::size_t>(i)];
    if (std::isnan(want))
      CHECK(std::isnan(b(0, i)));
    else
      CHECK(b(0, i) == want);
  }
  CHECK(same(sparseact::load_safetensors(path, "s"), Eigen::MatrixXd::Constant(1, 1, 7.25)));

  const std::string unsupported = input_error([&] { sparseact::load_safetensors(path, "ids"); });
  CHECK_THAT(unsupported, Catch::Contains("model.safetensors") && Catch::Contains("I64"));
  const std::string missing = input_error([&] { sparseact::load_safetensors(path, "nope"); });
  CHECK_THAT(missing, Catch::Contains("'nope'") && Catch::Contains("w32, w64, h, b, s, ids"));
  CHECK_THAT(missing, !Catch::Contains("__metadata__"));
}

TEST_CASE("a missing tensor's message lists at most 10 names, on one line", "[io]") {
  TempDir dir;
  const auto path = dir / "many.safetensors";
  std::string json = "{";
  for (int i = 0; i < 13; ++i)
    json += "\"t" + std::to_string(i) + "\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [" +
            std::to_string(4 * i) + ", " + std::to_string(4 * i + 4) + "]}, ";
  json += R"("bad\nname": {"dtype": "F32", "shape": [0], "data_offsets": [52, 52]}})";
  write_bytes(path, safetensors_bytes(json, std::string(52, '\0')));
  REQUIRE(sparseact::safetensors_names(path).size() == 14);
  const std::string msg = input_error([&] { sparseact::load_safetensors(path, "x\ny"); });
  CHECK_THAT(msg, Catch::Contains("t0, t1") && Catch::Contains("t9, ... (4 more)") && !Catch::Contains("t10"));
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(sparseact::load_safetensors(path, "bad\nname").cols() == 0);  // an empty 1-d tensor
}

TEST_CASE("load_matrix parses FILE[:TENSOR] and dispatches on the format", "[io]") {
  TempDir dir;
  Eigen::MatrixXd m(3, 4);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) m(r, c) = value(r, c);

  fs::create_directories(dir / "odd:dir");
  sparseact::save_npy(dir / "odd:dir" / "a:b.npy", m);
  require_3x4(sparseact::load_matrix((dir / "odd:dir" / "a:b.npy").string()));
  sparseact::save_npy(dir / "weights.bin", m);  // npy by magic, not by name
  require_3x4(sparseact::load_matrix((dir / "weights.bin").string()));

  std::string f32;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) f32 += f32_bytes(static_cast<float>(value(r, c)));
  const std::string one = R"({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}})";
  const std::string two = R"({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]},)"
                          R"( "v": {"dtype": "F32", "shape": [2], "data_offsets": [48, 56]}})";
  write_bytes(dir / "one.safetensors", safetensors_bytes(one, f32));
  write_bytes(dir / "m:1.safetensors", safetensors_bytes(two, f32 + f32_bytes(1) + f32_bytes(2)));

  require_3x4(sparseact::load_matrix((dir / "one.safetensors").string()));    // single tensor: no name
  require_3x4(sparseact::load_matrix((dir / "one.safetensors:w").string()));
  require_3x4(sparseact::load_matrix((dir / "m:1.safetensors:w").string()));  // split at the last ':'
  CHECK(same(sparseact::load_matrix((dir / "m:1.safetensors:v").string()), Eigen::RowVector2d(1, 2)));

  CHECK_THAT(input_error([&] { sparseact::load_matrix((dir / "m:1.safetensors").string()); }),
             Catch::Contains("2 tensors") && Catch::Contains("w, v"));
  CHECK_THAT(input_error([&] { sparseact::load_matrix((dir / "one.safetensors:").string()); }),
             Catch::Contains("empty tensor name"));
  CHECK_THAT(input_error([&] { sparseact::load_matrix((dir / "weights.bin:w").string()); }),
             Catch::Contains("no tensor name"));

  const std::string nowhere = (dir / "nowhere.npy").string();
  CHECK(input_error([&] { sparseact::load_matrix(nowhere); }) == nowhere + ": no such file");
  const std::string nowhere_st = (dir / "nowhere.safetensors").string();
  CHECK(input_error([&] { sparseact::load_matrix(nowhere_st + ":w"); }) == nowhere_st + ": no such file");
  CHECK(input_error([&] { sparseact::load_npy(nowhere); }) == nowhere + ": no such file");

  write_bytes(dir / "notes.txt", "just text, no magic");
  CHECK_THAT(input_error([&] { sparseact::load_matrix((dir / "notes.txt").string()); }),
             Catch::Contains("notes.txt") && Catch::Contains("unknown format"));
  CHECK_THAT(input_error([&] { sparseact::load_matrix(dir.path.string()); }), Catch::Contains("directory"));
}

TEST_CASE("files written by NumPy and by Python's struct module", "[io]") {
  TempDir dir;
  if (!python_has_numpy()) {
    WARN("/usr/bin/python3 has no numpy: skipping the NumPy-written .npy files");
  } else {
    run_python(dir, R"(
import sys
import numpy as np
d = sys.argv[1]
a = (np.arange(12, dtype=np.float64).reshape(3, 4) - 5.5) / 4
np.save(f"{d}/c64.npy", a)
np.save(f"{d}/c32.npy", a.astype(np.float32))
np.save(f"{d}/f64.npy", np.asfortranarray(a))
np.save(f"{d}/f32.npy", np.asfortranarray(a.astype(np.float32)))
np.save(f"{d}/be64.npy", a.astype(">f8"))
np.save(f"{d}/be32f.npy", np.asfortranarray(a.astype(">f4")))
np.save(f"{d}/t.npy", a.T.copy().T)  # non-contiguous views are written in Fortran order
for v in [(2, 0), (3, 0)]:
    with open(f"{d}/v{v[0]}.npy", "wb") as f:
        np.lib.format.write_array(f, a, version=v)
big = ((np.arange(300 * 501) % 1000 - 500) / 8).reshape(300, 501)
np.save(f"{d}/bigc.npy", big.astype(np.float32))
np.save(f"{d}/bigf.npy", np.asfortranarray(big))
np.save(f"{d}/vec.npy", np.arange(5, dtype=np.float32) * 0.5)
np.save(f"{d}/scalar.npy", np.float64(2.25))
np.save(f"{d}/empty.npy", np.zeros((0, 4)))
np.save(f"{d}/int.npy", np.arange(6).reshape(2, 3))
np.save(f"{d}/complex.npy", np.ones((2, 2), dtype=np.complex128))
np.save(f"{d}/object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
np.save(f"{d}/half.npy", np.ones((2, 2), dtype=np.float16))
np.save(f"{d}/record.npy", np.zeros(3, dtype=[("x", "<f4"), ("y", "<i4")]))
np.save(f"{d}/cube.npy", np.zeros((2, 3, 4)))
)");
    for (const char* name : {"c64", "c32", "f64", "f32", "be64", "be32f", "t", "v2", "v3"}) {
      INFO(name);
      require_3x4(sparseact::load_npy(dir / (std::string(name) + ".npy")));
    }
    for (const char* name : {"bigc", "bigf"}) {
      INFO(name);
      const Eigen::MatrixXd big = sparseact::load_npy(dir / (std::string(name) + ".npy"));
      REQUIRE(big.rows() == 300);
      REQUIRE(big.cols() == 501);
      int wrong = 0;
      for (int r = 0; r < 300; ++r)
        for (int c = 0; c < 501; ++c) wrong += big(r, c) != ((r * 501 + c) % 1000 - 500) / 8.0;
      CHECK(wrong == 0);
    }
    const Eigen::MatrixXd vec = sparseact::load_npy(dir / "vec.npy");
    CHECK(same(vec, (Eigen::RowVectorXd(5) << 0, 0.5, 1, 1.5, 2).finished()));
    CHECK(same(sparseact::load_npy(dir / "scalar.npy"), Eigen::MatrixXd::Constant(1, 1, 2.25)));
    CHECK(sparseact::load_npy(dir / "empty.npy").size() == 0);
    CHECK(sparseact::load_npy(dir / "empty.npy").cols() == 4);

    const std::vector<std::pair<const char*, const char*>> rejected = {
        {"int", "integer"},  {"complex", "complex"},      {"object", "Python objects"},
        {"half", "float16"}, {"record", "structured"},    {"cube", "(2, 3, 4)"}};
    for (const auto& [name, why] : rejected) {
      const std::string msg = input_error([&] { sparseact::load_npy(dir / (std::string(name) + ".npy")); });
      CHECK_THAT(msg, Catch::Contains(std::string(name) + ".npy") && Catch::Contains(why));
    }
  }

  if (!python_works()) {
    WARN("/usr/bin/python3 is missing: skipping the Python-written .safetensors file");
    return;
  }
  run_python(dir, R"(
import json, struct, sys
d = sys.argv[1]
def f32(v): return struct.pack(f"<{len(v)}f", *v)
def f64(v): return struct.pack(f"<{len(v)}d", *v)
def f16(v): return struct.pack(f"<{len(v)}e", *v)
def bf16(v): return b"".join(struct.pack("<f", x)[2:4] for x in v)  # exact for these values
tensors = [
    ("w32", "F32", [3, 4], f32([(k - 5.5) / 4 for k in range(12)])),
    ("w64", "F64", [3, 4], f64([(k - 5.5) / 4 for k in range(12)])),
    ("w16", "F16", [3, 4], f16([(k - 5.5) / 4 for k in range(12)])),
    ("wbf", "BF16", [3, 4], bf16([(k - 5.5) / 4 for k in range(12)])),
    ("row", "F16", [5], f16([(k - 2) * 0.375 for k in range(5)])),
    ("s", "F32", [], f32([7.25])),
]
header, buf = {"__metadata__": {"format": "pt"}}, b""
for name, dtype, shape, data in tensors:
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(buf), len(buf) + len(data)]}
    buf += data
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
with open(f"{d}/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + buf)
)");
  const auto st = dir / "model.safetensors";
  CHECK(sparseact::safetensors_names(st) == std::vector<std::string>{"w32", "w64", "w16", "wbf", "row", "s"});
  for (const char* name : {"w32", "w64", "w16", "wbf"}) {
    INFO(name);
    require_3x4(sparseact::load_safetensors(st, name));
  }
  const Eigen::RowVectorXd row = (Eigen::RowVectorXd(5) << -0.75, -0.375, 0, 0.375, 0.75).finished();
  CHECK(same(sparseact::load_safetensors(st, "row"), row));
  CHECK(same(sparseact::load_safetensors(st, "s"), Eigen::MatrixXd::Constant(1, 1, 7.25)));
  require_3x4(sparseact::load_matrix(st.string() + ":w16"));
}

namespace {

using test_support::loads_or_input_error;

}  // namespace

TEST_CASE("truncated and corrupted files throw InputError", "[io]") {
  TempDir dir;
  std::string data;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) data += f32_bytes(static_cast<float>(value(r, c)));
  const std::string npy = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", data);
  const std::string st = safetensors_bytes(
      R"({"__metadata__": {"k": "v"}, "a": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]},)"
      R"( "b": {"dtype": "BF16", "shape": [2], "data_offsets": [48, 52]}})",
      data + std::string("\x80\x3f\x00\x40", 4));
  const auto npy_path = dir / "fuzz.npy";
  const auto st_path = dir / "fuzz.safetensors";
  const auto load_npy = [&] { sparseact::load_npy(npy_path); };
  const auto load_st = [&] { sparseact::load_safetensors(st_path, "a"); };

  // Sanity: the intact files load.
  write_bytes(npy_path, npy);
  write_bytes(st_path, st);
  require_3x4(sparseact::load_npy(npy_path));
  require_3x4(sparseact::load_safetensors(st_path, "a"));

  SECTION("every truncation") {
    for (std::size_t n = 0; n < npy.size(); ++n) {
      INFO("npy truncated to " << n << " bytes");
      write_bytes(npy_path, npy.substr(0, n));
      CHECK(loads_or_input_error(load_npy, "fuzz.npy"));
    }
    for (std::size_t n = 0; n < st.size(); ++n) {
      INFO("safetensors truncated to " << n << " bytes");
      write_bytes(st_path, st.substr(0, n));
      CHECK(loads_or_input_error(load_st, "fuzz.safetensors"));
      CHECK(loads_or_input_error([&] { sparseact::safetensors_names(st_path); }, "fuzz.safetensors"));
    }
  }

  SECTION("random byte corruptions") {
    std::mt19937 rng(20240607);
    int npy_errors = 0, st_errors = 0;
    for (int trial = 0; trial < 300; ++trial) {
      // Half the corruptions target the header, where parsing happens.
      const auto corrupt = [&](std::string bytes, std::size_t header_end) {
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) {
          const std::size_t limit = rng() % 2 ? header_end : bytes.size();
          bytes[rng() % limit] = static_cast<char>(rng() % 256);
        }
        return bytes;
      };
      INFO("trial " << trial);
      write_bytes(npy_path, corrupt(npy, 64));
      npy_errors += loads_or_input_error(load_npy, "fuzz.npy");
      write_bytes(st_path, corrupt(st, st.size() - 52));
      st_errors += loads_or_input_error(load_st, "fuzz.safetensors");
    }
    // Both outcomes occur: the corruptions exercise the error paths and the data paths.
    CHECK(npy_errors > 30);
    CHECK(npy_errors < 300);
    CHECK(st_errors > 30);
    CHECK(st_errors < 300);
  }
}

TEST_CASE("malformed headers give one-line InputErrors naming the file", "[io]") {
  TempDir dir;
  const std::string d12 = std::string(48, '\0');
  struct Case {
    std::string what, bytes, expect;
  };
  const auto npy = [&](const std::string& dict, const std::string& data = std::string(48, '\0')) {
    return npy_bytes(1, dict, data);
  };
  const auto st = [&](const std::string& json, const std::string& data = std::string(48, '\0')) {
    return safetensors_bytes(json, data);
  };
  const std::string tensor_a = R"({"a": {"dtype": "F32", "shape": [3, 4], "data_offsets": )";

  const std::vector<Case> npy_cases = {
      {"empty file", "", "truncated"},
      {"two bytes", "\x93N", "truncated"},
      {"bad magic", "\x93NUMPZ" + npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}").substr(6), "magic"},
      {"unknown version", "\x93NUMPY\x04" + npy("{}").substr(7), "version 4.0"},
      {"unknown dtype", npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3, 4)}"), "'<i8'"},
      {"object dtype", npy("{'descr': '|O', 'fortran_order': False, 'shape': (3, 4)}"), "Python objects"},
      {"3-d shape", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2, 2)}"), "(3, 2, 2)"},
      {"huge shape", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 2)}"), "too large"},
      {"huge 2-d shape", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
       "too large"},
      {"dimension past 64 bits", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1)}"),
       "64 bits"},
      {"negative dimension", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4)}"), "negative"},
      {"shape too small for the data", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4)}"),
       "unexpected bytes"},
      {"shape too large for the data", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (30, 4)}"),
       "truncated data: header promises 30x4 float32 (480 bytes), file has 48 bytes after the header"},
      {"header length past the end", std::string("\x93NUMPY\x01\x00\xff\xff{}", 12), "header length 65535"},
      {"v2 header length past the end", std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14), "header length"},
      {"not a dict", npy("[1, 2, 3]"), "not a dictionary"},
      {"bad literal", npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3, 4)}"), "Maybe"},
      {"unterminated string", npy("{'descr': '<f4"), "unterminated"},
      {"missing key", npy("{'descr': '<f4', 'fortran_order': False}"), "'shape'"},
      {"fortran_order not a bool", npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 4)}"), "fortran_order"},
      {"shape not a tuple", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (12)}"), "not a tuple"},
      {"deep nesting", npy("{'descr': " + std::string(5000, '(') + "}"), "too deep"},
      {"text after the dict", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)} x"), "after"},
  };
  for (const auto& c : npy_cases) {
    INFO(c.what);
    const auto path = dir / "bad.npy";
    write_bytes(path, c.bytes);
    const std::string msg = input_error([&] { sparseact::load_npy(path); });
    CHECK_THAT(msg, Catch::StartsWith(path.string() + ": ") && Catch::Contains(c.expect));
    CHECK(msg.find('\n') == std::string::npos);
  }

  const std::vector<Case> st_cases = {
      {"empty file", "", "truncated"},
      {"negative offsets", st(tensor_a + "[-8, 40]}}"), "negative"},
      {"offsets past the end", st(tensor_a + "[0, 4800]}}"), "past the end"},
      {"begin after end", st(tensor_a + "[48, 0]}}"), "begin after end"},
      {"size mismatch", st(tensor_a + "[0, 44]}}", d12.substr(0, 44)), "needs 48 bytes"},
      {"huge shape", st(R"({"a": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 48]}})"),
       "more than 2^64"},
      {"float offsets", st(tensor_a + "[0.0, 48]}}"), "non-negative integers"},
      {"offsets beyond 64 bits", st(tensor_a + "[0, 184467440737095516160]}}"), "non-negative integers"},
      {"three offsets", st(tensor_a + "[0, 24, 48]}}"), "data_offsets"},
      {"missing dtype", st(R"({"a": {"shape": [3, 4], "data_offsets": [0, 48]}})"), "dtype"},
      {"header length past the end", uint_bytes(1ull << 40, 8) + "{}", "header size 1099511627776"},
      {"header length 2^64-1", uint_bytes(~0ull, 8) + "{}", "exceeds"},
      {"header not JSON", st("this is not JSON at all", ""), "not valid JSON"},
      {"header invalid UTF-8", st("{\"\xff\": 1}", ""), "not valid JSON"},
      {"header a JSON array", st("[1, 2]", ""), "not a JSON object"},
      {"entry not an object", st(R"({"a": 3})", ""), "not a JSON object"},
      {"deep nesting", st(std::string(100000, '[') + std::string(100000, ']'), ""), "nested too deeply"},
      {"bytes after the last tensor", st(tensor_a + "[0, 48]}}", d12 + "xx"), "after the last tensor"},
      {"unsupported dtype", st(R"({"a": {"dtype": "I32", "shape": [3, 4], "data_offsets": [0, 48]}})"), "I32"},
      {"3-d shape", st(R"({"a": {"dtype": "F32", "shape": [3, 2, 2], "data_offsets": [0, 48]}})"), "[3, 2, 2]"},
  };
  for (const auto& c : st_cases) {
    INFO(c.what);
    const auto path = dir / "bad.safetensors";
    write_bytes(path, c.bytes);
    const std::string msg = input_error([&] { sparseact::load_safetensors(path, "a"); });
    CHECK_THAT(msg, Catch::StartsWith(path.string() + ": ") && Catch::Contains(c.expect));
    CHECK(msg.find('\n') == std::string::npos);
  }
}
