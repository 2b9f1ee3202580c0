// Hostile checkpoint files (issue 26): headers of many keys read in linear time and refuse duplicate
// keys; .npz members' CRC-32 verified; a deflated member's claimed size proven by inflating before
// anything is allocated for it; matrices larger than the machine refused before a byte is read.
#include <catch2/catch.hpp>

#include "support.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sparseact/core/checkpoint.hpp>
#include <sparseact/core/errors.hpp>

namespace fs = std::filesystem;
using sparseact::TensorInfo;
using test_support::input_error;
using test_support::read_bytes;
using test_support::TempDir;
using test_support::write_bytes;

namespace {

std::string le64(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string safetensors_bytes(const std::string& json, const std::string& data) { return le64(json.size()) + json + data; }

std::string error_of(const fs::path& path) {
  return input_error([&] {
    for (const TensorInfo& t : sparseact::open_checkpoint(path).tensors)
      if (t.loadable) sparseact::load_tensor(t);
  });
}

bool python_has_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

void run_python(const TempDir& dir, const std::string& script) {
  write_bytes(dir / "gen.py", "import struct, sys, zipfile, zlib\nimport numpy as np\nd = sys.argv[1]\n" + script);
  const std::string cmd = "/usr/bin/python3 '" + (dir / "gen.py").string() + "' '" + dir.path.string() + "' > '" +
                          (dir / "gen.log").string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) FAIL("python failed: " << read_bytes(dir / "gen.log"));
}

}  // namespace

TEST_CASE("a safetensors header of 100,000 keys reads in order; unknown fields and metadata are skipped", "[io][checkpoint]") {
  TempDir dir;
  // Empty tensors hold no bytes: the header alone is the file. Under an insertion-ordered JSON
  // document this took minutes (each key searched the ones before it).
  constexpr int n = 100'000;
  std::string json = R"({"__metadata__": {"format": "pt", "nested": {"deep": [1, {"x": null}]}, "format": "again"})";
  for (int i = 0; i < n; ++i)
    fmt::format_to(std::back_inserter(json), R"(, "t{}": {{"dtype": "F32", "shape": [0, {}], "data_offsets": [0, 0], "extra": {{"k": [1, 2]}}}})", i, i % 7);
  json += "}";
  write_bytes(dir / "many.safetensors", safetensors_bytes(json, ""));
  const auto ck = sparseact::open_checkpoint(dir / "many.safetensors");
  REQUIRE(ck.tensors.size() == static_cast<std::size_t>(n));
  for (int i : {0, 1, 4567, n - 1}) {
    CHECK(ck.tensors[static_cast<std::size_t>(i)].name == fmt::format("t{}", i));
    CHECK(ck.tensors[static_cast<std::size_t>(i)].shape == std::vector<std::uint64_t>{0, static_cast<std::uint64_t>(i % 7)});
  }
  CHECK(sparseact::load_tensor(ck.tensors[3]).size() == 0);
}

TEST_CASE("duplicate keys and runaway shapes in headers and indexes are refused, naming the key", "[io][checkpoint]") {
  TempDir dir;
  const std::string a = R"("a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  const std::string z = R"("z": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]})";
  struct Case {
    std::string what, json;
    std::vector<std::string> expect;
  };
  std::string many_dims = R"("b": {"dtype": "F32", "shape": [1)";
  for (int i = 0; i < 64; ++i) many_dims += ", 1";
  many_dims += R"(], "data_offsets": [0, 4]})";
  const std::vector<Case> cases = {
      {"a tensor twice", "{" + a + ", " + z + ", " + a + "}", {"'a'", "twice"}},
      {"a field twice", R"({"a": {"dtype": "F32", "shape": [1], "dtype": "F64", "data_offsets": [0, 4]}})", {"'a'", "'dtype'", "twice"}},
      {"metadata twice", R"({"__metadata__": {}, )" + a + R"(, "__metadata__": {}})", {"__metadata__", "twice"}},
      {"65 dimensions", "{" + many_dims + "}", {"'b'", "65 dimensions"}},
      {"a float in the shape", R"({"a": {"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}})", {"'a'", "non-negative integers"}},
      {"a negative offset", R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [-3, 4]}})", {"'a'", "negative value -3"}},
      {"three offsets", R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 4]}})", {"'a'", "[begin, end]"}},
      {"an entry that is a list", R"({"a": [1, 2]})", {"'a'", "not a JSON object"}},
      {"a header that is a list", R"([1, 2])", {"not a JSON object"}},
      {"invalid JSON after a valid entry", "{" + a + ", ", {"not valid JSON"}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    write_bytes(dir / "bad.safetensors", safetensors_bytes(c.json, "\x01\x02\x03\x04"));
    const std::string msg = error_of(dir / "bad.safetensors");
    INFO(msg);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THAT(msg, Catch::Contains("bad.safetensors"));
    for (const std::string& s : c.expect) CHECK_THAT(msg, Catch::Contains(s));
  }

  const fs::path m = dir / "m";
  fs::create_directories(m);
  write_bytes(m / "s1.safetensors", safetensors_bytes("{" + a + ", " + z + "}", "\x01\x02\x03\x04"));
  const auto index = [&](const std::string& text) { write_bytes(m / "model.safetensors.index.json", text); };
  index(R"({"metadata": {"total_size": 4, "x": [{"y": 1}]}, "weight_map": {"a": "s1.safetensors", "z": "s1.safetensors"}})");
  CHECK(sparseact::open_checkpoint(m).tensors.size() == 2);
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {R"({"weight_map": {"a": "s1.safetensors", "z": "s1.safetensors", "a": "s1.safetensors"}})", {"'a'", "twice"}},
           {R"({"weight_map": {"a": "s1.safetensors"}, "weight_map": {"z": "s1.safetensors"}})", {"weight_map", "twice"}},
           {R"({"weight_map": {"a": ["s1.safetensors"]}})", {"'a'", "not a file name"}},
           {R"({"weight_map": ["a"]})", {"weight_map"}},
           {R"({"weight_map": {}})", {"empty"}}}) {
    INFO(text);
    index(text);
    const std::string msg = input_error([&] { sparseact::open_checkpoint(m); });
    INFO(msg);
    CHECK_THAT(msg, Catch::Contains("model.safetensors.index.json"));
    for (const std::string& s : expect) CHECK_THAT(msg, Catch::Contains(s));
  }
}

TEST_CASE(".npz members: CRC-32 verified, a deflated member's claimed size proven by inflating before anything is allocated",
          "[io][checkpoint]") {
  if (!python_has_numpy()) {
    WARN("/usr/bin/python3 has no numpy: skipping");
    return;
  }
  TempDir dir;
  run_python(dir, R"(
w = np.arange(2000, dtype=np.float64).reshape(40, 50) / 8
np.savez(f"{d}/stored.npz", w=w, v=w[0])
np.savez_compressed(f"{d}/deflated.npz", w=w, v=w[0])
def directory_entry(b, name):
    cd_size, cd_off = struct.unpack("<II", b[-10:-2])
    return b.index(name, cd_off) - 46
# One flipped bit in w's data: numpy's reader refuses it (BadZipFile), so must ours.
s = bytearray(open(f"{d}/stored.npz", "rb").read())
zf = zipfile.ZipFile(f"{d}/stored.npz")
info = zf.getinfo("w.npy")
n, x = struct.unpack("<HH", s[info.header_offset + 26 : info.header_offset + 30])
s[info.header_offset + 30 + n + x + 500] ^= 0x10
open(f"{d}/flipped_stored.npz", "wb").write(s)
# A deflated member whose directory records another CRC (a flip inside a deflate stream is as
# likely to break the stream as to change the data; this is the change alone).
c = bytearray(open(f"{d}/deflated.npz", "rb").read())
e = directory_entry(c, b"w.npy")
c[e + 16] ^= 0x01
open(f"{d}/flipped_deflated.npz", "wb").write(c)
# A forged size: a member whose .npy header promises 8 million float64 and whose directory
# agrees (64 MB, within deflate's 1032-fold bound of its 160 KB stream), while the stream holds
# only 160 KB of random bytes. The old reader allocated the 64 MB first.
def forged(path, count, descr, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, count)
    header += " " * (-(len(header) + 11) % 64) + "\n"
    npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.npy", npy)
    b = bytearray(open(path, "rb").read())
    e = directory_entry(b, b"big.npy")
    claimed = 10 + len(header) + count * int(descr[-1])
    b[e + 24 : e + 28] = struct.pack("<I", claimed)
    open(path, "wb").write(b)
rng = np.random.default_rng(3)
forged(f"{d}/forged.npz", 8_000_000, "<f8", rng.bytes(160_000))
)");
  const auto stored = sparseact::open_checkpoint(dir / "stored.npz");
  REQUIRE(stored.tensors.size() == 2);
  CHECK(sparseact::load_tensor(stored.tensors[0])(39, 49) == 1999.0 / 8);  // an intact member verifies
  const auto deflated = sparseact::open_checkpoint(dir / "deflated.npz");
  CHECK(sparseact::load_tensor(deflated.tensors[0])(39, 49) == 1999.0 / 8);

  for (const std::string file : {"flipped_stored.npz", "flipped_deflated.npz"}) {
    INFO(file);
    const auto ck = sparseact::open_checkpoint(dir / file);  // headers intact: it opens
    CHECK(sparseact::load_tensor(ck.tensors[1]).cols() == 50);  // the other member loads
    const std::string msg = input_error([&] { sparseact::load_tensor(ck.tensors[0]); });
    INFO(msg);
    CHECK_THAT(msg, Catch::Contains(file) && Catch::Contains("'w.npy'") && Catch::Contains("CRC-32"));
  }
  {
    const auto ck = sparseact::open_checkpoint(dir / "forged.npz");
    REQUIRE(ck.tensors.size() == 1);
    const std::string msg = input_error([&] { sparseact::load_tensor(ck.tensors[0]); });
    INFO(msg);
    CHECK_THAT(msg, Catch::Contains("'big'") && Catch::Contains("inflates to"));
  }
}

TEST_CASE("a tensor larger than the machine's memory is refused before a byte of it is read", "[io][checkpoint]") {
  TempDir dir;
  // A sparse file holding a 10^6 × 10^6 float32 tensor: 4 TB on disk as a hole, 8 TB as float64.
  const fs::path path = dir / "vast.safetensors";
  const std::string json = R"({"vast": {"dtype": "F32", "shape": [1000000, 1000000], "data_offsets": [0, 4000000000000]}})";
  write_bytes(path, safetensors_bytes(json, ""));
  if (::truncate(path.c_str(), static_cast<off_t>(8 + json.size() + 4'000'000'000'000ULL)) != 0) {
    WARN("cannot make a sparse 4 TB file here: skipping");
    return;
  }
  const auto ck = sparseact::open_checkpoint(path);
  const std::string msg = input_error([&] { sparseact::load_tensor(ck.tensors.at(0)); });
  INFO(msg);
  CHECK_THAT(msg, Catch::Contains("'vast'") && Catch::Contains("8000000000000 bytes") && Catch::Contains("memory"));
}
