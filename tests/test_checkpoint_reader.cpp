// Tests of the whole-checkpoint reader (core/checkpoint.hpp, issue 16): the same matrices written by
// NumPy and Python's struct module as safetensors of every loadable dtype, a sharded index, .npz
// (stored, deflated, zip64) and .npy, compared exactly; every kind of bad input, which must end in
// a one-line InputError naming the file (and the tensor); and a sparse 40 GB file that must open
// without reading its data.
#include <catch2/catch.hpp>

#include "support.hpp"

#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <sparseact/core/checkpoint.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/npy.hpp>

namespace fs = std::filesystem;
using sparseact::InputError;
using sparseact::TensorInfo;

namespace {

using test_support::input_error;
using test_support::read_bytes;
using test_support::TempDir;
using test_support::write_bytes;

bool python_has_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

// Python helpers shared by the scripts: the test matrices and a hand-written safetensors writer.
const std::string prelude = R"(
import io, json, os, struct, sys, zipfile, zlib
import numpy as np
d = sys.argv[1]
w = (np.arange(12, dtype=np.float64).reshape(3, 4) - 5.5) / 4    # exact in every dtype below
k = (np.arange(24, dtype=np.float64).reshape(2, 3, 2, 2) - 12) / 4  # conv kernel: out, in, kh, kw
c = (np.arange(12, dtype=np.float64).reshape(2, 3, 2) - 6) / 8
v = np.arange(5, dtype=np.float64) * 0.375 - 0.75
s = np.array(7.25)
def enc(a, dt):
    if dt == "F64": return a.astype("<f8").tobytes()
    if dt == "F32": return a.astype("<f4").tobytes()
    if dt == "F16": return a.astype("<f2").tobytes()
    if dt == "BF16":  # the upper half of float32; exact for these values
        u = np.ascontiguousarray(a, dtype="<f4").view("<u4")
        assert ((u & 0xffff) == 0).all()
        return (u >> 16).astype("<u2").tobytes()
def write_st(path, tensors):
    header, buf = {"__metadata__": {"format": "pt"}}, b""
    for name, dt, a in tensors:
        data = enc(a, dt)
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [len(buf), len(buf) + len(data)]}
        buf += data
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + buf)
)";

void run_python(const TempDir& dir, const std::string& script) {
  write_bytes(dir / "gen.py", prelude + script);
  const std::string cmd = "/usr/bin/python3 '" + (dir / "gen.py").string() + "' '" + dir.path.string() + "' > '" +
                          (dir / "gen.log").string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) FAIL("python failed: " << read_bytes(dir / "gen.log"));
}

std::string uint_bytes(std::uint64_t v, int n) {
  std::string s(static_cast<std::size_t>(n), '\0');
  for (int i = 0; i < n; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string f32_bytes(float v) { return uint_bytes(std::bit_cast<std::uint32_t>(v), 4); }
std::string safetensors_bytes(const std::string& json, const std::string& data) {
  return uint_bytes(json.size(), 8) + json + data;
}

// The matrices of the prelude, as load_tensor must return them.
double w_value(int r, int c) { return (r * 4 + c - 5.5) / 4; }
double k_value(int o, int i, int h, int l) { return (((o * 3 + i) * 2 + h) * 2 + l - 12) / 4.0; }

bool same(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

void require_w(const Eigen::MatrixXd& m) {
  REQUIRE(m.rows() == 3);
  REQUIRE(m.cols() == 4);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) CHECK(m(r, c) == w_value(r, c));
}

// The 2 x 3 x 2 x 2 kernel flattened row-major: element (o, (i*kh + h)*kw + l).
void require_kernel(const Eigen::MatrixXd& m) {
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 12);
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i)
      for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 2; ++l) CHECK(m(o, (i * 2 + h) * 2 + l) == k_value(o, i, h, l));
}

const TensorInfo& find(const sparseact::Checkpoint& c, const std::string& name) {
  for (const TensorInfo& t : c.tensors)
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  throw std::logic_error("unreachable");
}

std::vector<std::string> names(const sparseact::Checkpoint& c) {
  std::vector<std::string> n;
  for (const TensorInfo& t : c.tensors) n.push_back(t.name);
  return n;
}

// The InputError of `f`: one line, naming `file` and each of `also`.
template <class F>
std::string one_line_error(F&& f, const std::string& file, const std::vector<std::string>& also = {}) {
  const std::string msg = input_error(std::forward<F>(f));
  INFO("message: " << msg);
  CHECK(msg.find('\n') == std::string::npos);
  CHECK_THAT(msg, Catch::Contains(file));
  for (const std::string& s : also) CHECK_THAT(msg, Catch::Contains(s));
  return msg;
}

}  // namespace

TEST_CASE("safetensors of every loadable dtype load the same values exactly, at any rank", "[io][checkpoint]") {
  if (!python_has_numpy()) {
    WARN("/usr/bin/python3 has no numpy: skipping");
    return;
  }
  TempDir dir;
  run_python(dir, R"(
for dt in ["F64", "F32", "F16", "BF16"]:
    write_st(f"{d}/{dt.lower()}.safetensors", [("w", dt, w), ("kernel", dt, k), ("cube", dt, c), ("v", dt, v), ("s", dt, s)])
np.save(f"{d}/kernel_flat.npy", k.reshape(2, -1))
np.save(f"{d}/cube_flat.npy", c.reshape(2, -1))
)");
  const Eigen::MatrixXd kernel_flat = sparseact::load_npy(dir / "kernel_flat.npy");
  const Eigen::MatrixXd cube_flat = sparseact::load_npy(dir / "cube_flat.npy");
  for (const std::string dtype : {"F64", "F32", "F16", "BF16"}) {
    INFO(dtype);
    std::string file = dtype + ".safetensors";
    for (char& ch : file) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto c = sparseact::open_checkpoint(dir / file);
    CHECK(c.format == "safetensors");
    CHECK(c.files == std::vector<fs::path>{dir / file});
    REQUIRE(names(c) == std::vector<std::string>{"w", "kernel", "cube", "v", "s"});
    for (const TensorInfo& t : c.tensors) {
      CHECK(t.dtype == dtype);
      CHECK(t.loadable);
      CHECK(t.file == dir / file);
    }
    CHECK(find(c, "kernel").shape == std::vector<std::uint64_t>{2, 3, 2, 2});
    CHECK(sparseact::describe(find(c, "kernel")) == file + ": kernel");
    require_w(sparseact::load_tensor(find(c, "w")));
    const Eigen::MatrixXd kernel = sparseact::load_tensor(find(c, "kernel"));
    require_kernel(kernel);
    CHECK(same(kernel, kernel_flat));  // numpy's k.reshape(2, -1)
    CHECK(same(sparseact::load_tensor(find(c, "cube")), cube_flat));
    CHECK(same(sparseact::load_tensor(find(c, "v")), (Eigen::RowVectorXd(5) << -0.75, -0.375, 0, 0.375, 0.75).finished()));
    CHECK(same(sparseact::load_tensor(find(c, "s")), Eigen::MatrixXd::Constant(1, 1, 7.25)));
  }
}

TEST_CASE("a sharded checkpoint opens from its folder and from its index", "[io][checkpoint]") {
  if (!python_has_numpy()) {
    WARN("/usr/bin/python3 has no numpy: skipping");
    return;
  }
  TempDir dir;
  run_python(dir, R"(
os.makedirs(f"{d}/model")
write_st(f"{d}/model/model-00001-of-00002.safetensors", [("w", "BF16", w), ("kernel", "F32", k)])
# "extra" is in the shard but not in the weight map: it is listed all the same.
write_st(f"{d}/model/model-00002-of-00002.safetensors", [("v", "F16", v), ("cube", "F64", c), ("extra", "F32", s)])
wm = {"v": "model-00002-of-00002.safetensors", "w": "model-00001-of-00002.safetensors",
      "cube": "model-00002-of-00002.safetensors", "kernel": "model-00001-of-00002.safetensors"}
json.dump({"metadata": {"total_size": 1}, "weight_map": wm}, open(f"{d}/model/model.safetensors.index.json", "w"))
open(f"{d}/model/README.md", "w").write("not weights")
os.makedirs(f"{d}/plain")  # no index: every .safetensors, in name order
write_st(f"{d}/plain/b.safetensors", [("v", "F16", v)])
write_st(f"{d}/plain/a.safetensors", [("w", "F32", w)])
)");
  const fs::path model = dir / "model";
  const auto from_folder = sparseact::open_checkpoint(model);
  const auto from_index = sparseact::open_checkpoint(model / "model.safetensors.index.json");
  CHECK(from_folder.format == "folder of safetensors-sharded");
  CHECK(from_index.format == "safetensors-sharded");
  for (const auto* c : {&from_folder, &from_index}) {
    CHECK(c->files == std::vector<fs::path>{model / "model.safetensors.index.json",
                                            model / "model-00001-of-00002.safetensors",
                                            model / "model-00002-of-00002.safetensors"});
    REQUIRE(names(*c) == std::vector<std::string>{"w", "kernel", "v", "cube", "extra"});
    CHECK(find(*c, "cube").file == model / "model-00002-of-00002.safetensors");
    require_w(sparseact::load_tensor(find(*c, "w")));
    require_kernel(sparseact::load_tensor(find(*c, "kernel")));
    CHECK(sparseact::load_tensor(find(*c, "cube")).cols() == 6);
    CHECK(same(sparseact::load_tensor(find(*c, "extra")), Eigen::MatrixXd::Constant(1, 1, 7.25)));
  }
  const auto plain = sparseact::open_checkpoint(dir / "plain");
  CHECK(plain.format == "folder of safetensors");
  CHECK(names(plain) == std::vector<std::string>{"w", "v"});
  require_w(sparseact::load_tensor(plain.tensors[0]));
}

TEST_CASE(".npz (stored, deflated, zip64) and .npy files", "[io][checkpoint]") {
  if (!python_has_numpy()) {
    WARN("/usr/bin/python3 has no numpy: skipping");
    return;
  }
  TempDir dir;
  run_python(dir, R"(
arrays = dict(w=w, kernel=k, kf=np.asfortranarray(k), cf=np.asfortranarray(c), v=v.astype(np.float32), s=s,
              h=w.astype(np.float16), be=np.asfortranarray(w.astype(">f4")), i=np.arange(6).reshape(2, 3),
              big=np.random.default_rng(0).standard_normal((300, 70)))
np.savez(f"{d}/stored.npz", **arrays)
np.savez_compressed(f"{d}/deflated.npz", **arrays)
np.save(f"{d}/big.npy", arrays["big"])
np.save(f"{d}/k16.npy", k.astype(np.float16))
np.save(f"{d}/kf.npy", np.asfortranarray(k.astype(">f8")))
np.save(f"{d}/ints.npy", np.arange(6))
np.save(f"{d}/cube_flat.npy", c.reshape(2, -1))

# A zip64 archive in the form Python's zipfile writes for members past 4 GiB: sizes and offsets in
# the central directory saturated at 0xffffffff with their values in zip64 extra fields, and the
# zip64 end record with its locator.
def npy_bytes(a):
    f = io.BytesIO()
    np.lib.format.write_array(f, a)
    return f.getvalue()
out, central = b"", b""
members = [("w.npy", npy_bytes(w)), ("kernel.npy", npy_bytes(k))]
for name, data in members:
    n, crc, off = name.encode(), zlib.crc32(data), len(out)
    lx = struct.pack("<HHQQ", 1, 16, len(data), len(data))
    out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0, crc, 0xffffffff, 0xffffffff, len(n), len(lx)) + n + lx + data
    cx = struct.pack("<HHQQQ", 1, 24, len(data), len(data), off)
    central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0, crc, 0xffffffff, 0xffffffff,
                           len(n), len(cx), 0, 0, 0, 0, 0xffffffff) + n + cx
cd_off = len(out)
out += central
z64 = len(out)
out += struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, len(members), len(members), len(central), cd_off)
out += struct.pack("<IIQI", 0x07064b50, 0, z64, 1)
out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
open(f"{d}/zip64.npz", "wb").write(out)
z = np.load(f"{d}/zip64.npz")
assert (z["w"] == w).all() and (z["kernel"] == k).all()  # numpy reads it too

os.makedirs(f"{d}/arrays")  # no safetensors: every .npz and .npy, in name order
np.save(f"{d}/arrays/a.npy", w)
np.savez(f"{d}/arrays/b.npz", kernel=k, v=v)
)");
  const Eigen::MatrixXd big = sparseact::load_npy(dir / "big.npy");
  const Eigen::MatrixXd cube_flat = sparseact::load_npy(dir / "cube_flat.npy");
  for (const char* file : {"stored.npz", "deflated.npz"}) {
    INFO(file);
    const bool deflated = std::string(file) == "deflated.npz";
    const auto c = sparseact::open_checkpoint(dir / file);
    CHECK(c.format == "npz");
    REQUIRE(names(c) == std::vector<std::string>{"w", "kernel", "kf", "cf", "v", "s", "h", "be", "i", "big"});
    for (const TensorInfo& t : c.tensors) CHECK(t.deflated == deflated);
    require_w(sparseact::load_tensor(find(c, "w")));
    require_kernel(sparseact::load_tensor(find(c, "kernel")));
    CHECK(find(c, "kf").fortran_order);
    require_kernel(sparseact::load_tensor(find(c, "kf")));  // Fortran order, rank 4
    CHECK(same(sparseact::load_tensor(find(c, "cf")), cube_flat));
    CHECK(same(sparseact::load_tensor(find(c, "v")), (Eigen::RowVectorXd(5) << -0.75, -0.375, 0, 0.375, 0.75).finished()));
    CHECK(same(sparseact::load_tensor(find(c, "s")), Eigen::MatrixXd::Constant(1, 1, 7.25)));
    CHECK(find(c, "h").dtype == "F16");
    require_w(sparseact::load_tensor(find(c, "h")));
    CHECK(find(c, "be").big_endian);
    require_w(sparseact::load_tensor(find(c, "be")));
    CHECK(same(sparseact::load_tensor(find(c, "big")), big));
    const TensorInfo& ints = find(c, "i");
    CHECK_FALSE(ints.loadable);
    CHECK(ints.dtype == "<i8");
    CHECK(ints.shape == std::vector<std::uint64_t>{2, 3});
    one_line_error([&] { sparseact::load_tensor(ints); }, file, {"'i'", "'<i8'"});
  }

  const auto z64 = sparseact::open_checkpoint(dir / "zip64.npz");
  REQUIRE(names(z64) == std::vector<std::string>{"w", "kernel"});
  require_w(sparseact::load_tensor(z64.tensors[0]));
  require_kernel(sparseact::load_tensor(z64.tensors[1]));

  const auto k16 = sparseact::open_checkpoint(dir / "k16.npy");
  CHECK(k16.format == "npy");
  REQUIRE(names(k16) == std::vector<std::string>{"k16"});
  CHECK(k16.tensors[0].dtype == "F16");
  require_kernel(sparseact::load_tensor(k16.tensors[0]));
  require_kernel(sparseact::load_tensor(sparseact::open_checkpoint(dir / "kf.npy").tensors[0]));
  const auto ints = sparseact::open_checkpoint(dir / "ints.npy");
  CHECK_FALSE(ints.tensors[0].loadable);
  one_line_error([&] { sparseact::load_tensor(ints.tensors[0]); }, "ints.npy", {"'ints'", "'<i8'"});

  const auto arrays = sparseact::open_checkpoint(dir / "arrays");
  CHECK(arrays.format == "folder of npz/npy");
  CHECK(arrays.files == std::vector<fs::path>{dir / "arrays" / "a.npy", dir / "arrays" / "b.npz"});
  REQUIRE(names(arrays) == std::vector<std::string>{"a", "kernel", "v"});
  require_w(sparseact::load_tensor(arrays.tensors[0]));
  require_kernel(sparseact::load_tensor(arrays.tensors[1]));
}

TEST_CASE("bad safetensors and indexes throw one-line InputErrors naming file and tensor", "[io][checkpoint]") {
  TempDir dir;
  std::string d48;
  for (int i = 0; i < 12; ++i) d48 += f32_bytes(static_cast<float>(i) / 4);
  const std::string a = R"("a": {"dtype": "F32", "shape": [3, 4], "data_offsets": )";
  struct Case {
    std::string what, bytes;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"truncated file", "\x10\x00\x00", {"truncated"}},
      {"header length beyond the file", uint_bytes(1000, 8) + "{}", {"header size 1000"}},
      {"malformed JSON", safetensors_bytes(R"({"a": {"dtype": )", d48), {"not valid JSON"}},
      {"out-of-bounds offsets", safetensors_bytes("{" + a + "[0, 48]}}", d48.substr(0, 40)), {"'a'", "past the end"}},
      {"overlapping offsets",
       safetensors_bytes("{" + a + R"([0, 48]}, "b": {"dtype": "F32", "shape": [12], "data_offsets": [40, 88]}})",
                         d48 + d48.substr(0, 40)),
       {"'a'", "'b'", "overlap"}},
      {"data cut short", safetensors_bytes("{" + a + "[0, 48]}}", d48.substr(0, 44)), {"'a'", "past the end"}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    write_bytes(dir / "bad.safetensors", c.bytes);
    one_line_error([&] { sparseact::open_checkpoint(dir / "bad.safetensors"); }, "bad.safetensors", c.expect);
  }

  // An unknown dtype lists, and fails to load.
  write_bytes(dir / "odd.safetensors",
              safetensors_bytes(R"({"q": {"dtype": "Q7", "shape": [2], "data_offsets": [0, 3]}, )" + a + "[3, 51]}}",
                                "xyz" + d48));
  const auto odd = sparseact::open_checkpoint(dir / "odd.safetensors");
  REQUIRE(names(odd) == std::vector<std::string>{"q", "a"});
  CHECK_FALSE(odd.tensors[0].loadable);
  CHECK(odd.tensors[0].dtype == "Q7");
  one_line_error([&] { sparseact::load_tensor(odd.tensors[0]); }, "odd.safetensors", {"'q'", "Q7"});
  CHECK(sparseact::load_tensor(odd.tensors[1])(2, 3) == 11.0 / 4);

  // Indexes.
  const fs::path m = dir / "m";
  fs::create_directories(m);
  write_bytes(m / "s1.safetensors", safetensors_bytes("{" + a + "[0, 48]}}", d48));
  const auto index = [&](const std::string& weight_map) {
    write_bytes(m / "model.safetensors.index.json", R"({"weight_map": )" + weight_map + "}");
  };
  index(R"({"a": "s1.safetensors", "v": "model-00002-of-00002.safetensors", "u": "model-00002-of-00002.safetensors"})");
  for (const fs::path& p : {m, m / "model.safetensors.index.json"})
    one_line_error([&] { sparseact::open_checkpoint(p); }, "model.safetensors.index.json",
                   {"model-00002-of-00002.safetensors", "missing", "'v'"});
  index(R"({"a": "../s1.safetensors"})");
  one_line_error([&] { sparseact::open_checkpoint(m); }, "model.safetensors.index.json", {"../s1.safetensors", "'a'"});
  index(R"({"a": "/tmp/s1.safetensors"})");
  one_line_error([&] { sparseact::open_checkpoint(m); }, "model.safetensors.index.json", {"/tmp/s1.safetensors"});
  index(R"({"a": "s1.safetensors", "b": "s1.safetensors"})");
  one_line_error([&] { sparseact::open_checkpoint(m); }, "model.safetensors.index.json", {"'b'", "s1.safetensors"});
  index(R"({"a": "s1.safetensors",)");
  one_line_error([&] { sparseact::open_checkpoint(m); }, "model.safetensors.index.json", {"JSON"});
  index(R"({"a": "s2.safetensors"})");
  write_bytes(m / "s2.safetensors", safetensors_bytes("{" + a + "[0, 48]}}", d48.substr(0, 47)));
  one_line_error([&] { sparseact::open_checkpoint(m); }, "s2.safetensors", {"'a'"});  // the shard itself is bad
  // The same tensor in two shards is ambiguous.
  write_bytes(m / "s2.safetensors",
              safetensors_bytes("{" + a + R"([0, 48]}, "x": {"dtype": "F32", "shape": [12], "data_offsets": [48, 96]}})",
                                d48 + d48));
  index(R"({"a": "s1.safetensors", "x": "s2.safetensors"})");
  one_line_error([&] { sparseact::open_checkpoint(m); }, "s2.safetensors", {"'a'", "unique"});

  const fs::path empty = dir / "empty";
  fs::create_directories(empty / "sub");
  write_bytes(empty / "notes.txt", "no weights here");
  CHECK(one_line_error([&] { sparseact::open_checkpoint(empty); }, "empty") ==
        "no weights (.safetensors, model.safetensors.index.json, .npz, .npy) in " + empty.string());
  one_line_error([&] { sparseact::open_checkpoint(dir / "absent"); }, "absent", {"no such file"});
}

TEST_CASE("corrupt .npz archives throw one-line InputErrors naming file and tensor", "[io][checkpoint]") {
  if (!python_has_numpy()) {
    WARN("/usr/bin/python3 has no numpy: skipping");
    return;
  }
  TempDir dir;
  run_python(dir, R"(
big = np.random.default_rng(1).standard_normal((64, 64))
np.savez(f"{d}/a.npz", w=w, big=big)
np.savez_compressed(f"{d}/c.npz", w=w, big=big)
a = open(f"{d}/a.npz", "rb").read()
open(f"{d}/half.npz", "wb").write(a[: len(a) // 2])
# The central directory cut in the middle, the end record kept.
cd_size, cd_off = struct.unpack("<II", a[-10:-2])
open(f"{d}/cd_cut.npz", "wb").write(a[: cd_off + cd_size // 2] + a[-22:])
# Member data past the central directory: the stored size of "big.npy" grown.
e = a.index(b"PK\x01\x02", cd_off)
e = a.index(b"big.npy", cd_off) - 46
size = struct.unpack("<I", a[e + 20 : e + 24])[0]
grown = a[: e + 20] + struct.pack("<II", size + 10**6, size + 10**6) + a[e + 28 :]
open(f"{d}/oob.npz", "wb").write(grown)

c = open(f"{d}/c.npz", "rb").read()
zf = zipfile.ZipFile(f"{d}/c.npz")
def data_offset(name):
    h = zf.getinfo(name).header_offset
    n, x = struct.unpack("<HH", c[h + 26 : h + 30])
    return h + 30 + n + x
# A deflate stream starting with the reserved block type 3.
o = data_offset("w.npy")
open(f"{d}/bad_deflate.npz", "wb").write(c[:o] + b"\xff\xff" + c[o + 2 :])
# A deflate stream cut short: the directory's compressed size of big.npy halved; the .npy header
# is in the first half, so it lists and fails to load.
cd_size, cd_off = struct.unpack("<II", c[-10:-2])
e = c.index(b"big.npy", cd_off) - 46
size = struct.unpack("<I", c[e + 20 : e + 24])[0]
open(f"{d}/short_deflate.npz", "wb").write(c[: e + 20] + struct.pack("<I", size // 2) + c[e + 24 :])
# A member whose bytes are garbage after a valid start: corrupted in the middle of the stream.
o = data_offset("big.npy")
mid = o + size // 2
open(f"{d}/garbled.npz", "wb").write(c[:mid] + bytes(64) + c[mid + 64 :])
open(f"{d}/junk.npz", "wb").write(b"PK\x03\x04" + bytes(100))
)");
  struct Case {
    std::string file;
    std::vector<std::string> expect;
  };
  for (const Case& c : std::vector<Case>{{"half.npz", {"end-of-central-directory"}},
                                         {"cd_cut.npz", {"central directory"}},
                                         {"oob.npz", {"'big.npy'"}},
                                         {"bad_deflate.npz", {"'w'", "deflate"}},
                                         {"junk.npz", {"end-of-central-directory"}}}) {
    INFO(c.file);
    one_line_error([&] { sparseact::open_checkpoint(dir / c.file); }, c.file, c.expect);
  }
  // Cut short or garbled mid-stream: the header inflates, the data do not.
  for (const std::string file : {"short_deflate.npz", "garbled.npz"}) {
    INFO(file);
    const auto ck = sparseact::open_checkpoint(dir / file);
    require_w(sparseact::load_tensor(find(ck, "w")));
    one_line_error([&] { sparseact::load_tensor(find(ck, "big")); }, file, {"'big'", "deflate"});
  }
}

TEST_CASE("mutated checkpoints open and load or throw InputError, never anything else", "[io][checkpoint]") {
  if (!python_has_numpy()) {
    WARN("/usr/bin/python3 has no numpy: skipping");
    return;
  }
  TempDir dir;
  run_python(dir, R"(
arrays = dict(w=w, kernel=np.asfortranarray(k), h=w.astype(np.float16), i=np.arange(6))
np.savez(f"{d}/stored.npz", **arrays)
np.savez_compressed(f"{d}/deflated.npz", **arrays)
write_st(f"{d}/st.safetensors", [("w", "BF16", w), ("kernel", "F32", k), ("v", "F16", v)])
)");
  std::mt19937_64 rng(16);
  for (const std::string name : {"stored.npz", "deflated.npz", "st.safetensors"}) {
    const std::string original = read_bytes(dir / name);
    int threw = 0;
    for (int trial = 0; trial < 400; ++trial) {
      std::string bytes = original;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
      if (trial % 10 == 0) bytes.resize(rng() % bytes.size());
      const fs::path path = dir / ("fuzz-" + name);
      write_bytes(path, bytes);
      INFO(name << " trial " << trial);
      threw += test_support::loads_or_input_error(
          [&] {
            for (const TensorInfo& t : sparseact::open_checkpoint(path).tensors)
              if (t.loadable) sparseact::load_tensor(t);
          },
          "fuzz-" + name);
    }
    CHECK(threw > 0);
  }
}

TEST_CASE("a sparse 40 GB checkpoint opens from its header alone", "[io][checkpoint]") {
  TempDir dir;
  const fs::path path = dir / "huge.safetensors";
  // 10^10 float32 (4·10^10 bytes, a hole) after a small 2 x 3 tensor with real data.
  const std::uint64_t n = 10'000'000'000ULL;
  std::string json = R"({"small": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, )"
                     R"("huge": {"dtype": "F32", "shape": [10000000000], "data_offsets": [24, 40000000024]}})";
  std::string data;
  for (int i = 0; i < 6; ++i) data += f32_bytes(static_cast<float>(i) - 2.5f);
  write_bytes(path, safetensors_bytes(json, data));
  const std::uint64_t total = 8 + json.size() + 24 + 4 * n;
  if (::truncate(path.c_str(), static_cast<off_t>(total)) != 0) {
    WARN("cannot make a sparse 40 GB file here: skipping");
    return;
  }
  const auto c = sparseact::open_checkpoint(path);
  REQUIRE(names(c) == std::vector<std::string>{"small", "huge"});
  CHECK(c.tensors[1].shape == std::vector<std::uint64_t>{n});
  CHECK(c.tensors[1].stored_bytes == 4 * n);
  const Eigen::MatrixXd small = sparseact::load_tensor(c.tensors[0]);
  REQUIRE(small.rows() == 2);
  REQUIRE(small.cols() == 3);
  for (int r = 0; r < 2; ++r)
    for (int col = 0; col < 3; ++col) CHECK(small(r, col) == r * 3 + col - 2.5);
}
