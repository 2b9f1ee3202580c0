// Fuzz entry points for the file readers: see fuzz_targets.hpp for the contract.
#include "fuzz_targets.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>
#include <zlib.h>

#include <Eigen/Core>

#include <sparseact/core/checkpoint.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/core/safetensors.hpp>
#include <sparseact/nn/idx.hpp>

namespace {

namespace fs = std::filesystem;
using std::uint64_t;

// ---------------------------------------------------------------------------------------------
// Scratch files: one folder per process, on /dev/shm where it exists (no disk writes per input),
// removed at exit. SPARSEACT_FUZZ_TMP overrides the parent folder.

class Scratch {
 public:
  Scratch() {
    fs::path parent;
    if (const char* env = std::getenv("SPARSEACT_FUZZ_TMP"); env && *env) {
      parent = env;
    } else {
      std::error_code ec;
      parent = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm")
                                                                                      : fs::temp_directory_path();
    }
    dir_ = parent / ("sparseact-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

// Writes `size` bytes to `path` (truncating); a failure here is the harness's, not the reader's.
void write_file(const fs::path& path, const void* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("fuzz harness: cannot create " + path.string());
  const bool ok = (size == 0 || std::fwrite(data, 1, size, f) == size);
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("fuzz harness: cannot write " + path.string());
}

fs::path input_file(const char* name, const void* data, std::size_t size) {
  fs::path p = scratch().dir() / name;
  write_file(p, data, size);
  return p;
}

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("reader invariant broken: " + what); }

// ---------------------------------------------------------------------------------------------
// Checks shared by the checkpoint targets.

std::optional<uint64_t> element_count(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (d != 0 && n > UINT64_MAX / d) return std::nullopt;
    n *= d;
  }
  return n;
}

// load_tensor's promise: rows = shape[0], cols = the rest's product; 0-d 1x1, 1-d 1xn.
void check_shape(const sparseact::TensorInfo& t, const Eigen::MatrixXd& m) {
  uint64_t rows = 1, cols = 1;
  if (t.shape.size() == 1) cols = t.shape[0];
  if (t.shape.size() >= 2) {
    rows = t.shape[0];
    cols = *element_count(std::vector<uint64_t>(t.shape.begin() + 1, t.shape.end()));
  }
  if (static_cast<uint64_t>(m.rows()) != rows || static_cast<uint64_t>(m.cols()) != cols)
    broken("load_tensor(" + sparseact::describe(t) + ") returned " + std::to_string(m.rows()) + "x" +
           std::to_string(m.cols()) + ", shape says " + std::to_string(rows) + "x" + std::to_string(cols));
}

template <class A, class B>
bool same_values(const A& a, const B& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

// Every tensor of an opened checkpoint: a refused dtype must raise InputError; a loadable tensor
// (of at most fuzz_max_load_elements) loads with its listed shape. A .safetensors or .npy tensor
// was validated whole by open_checkpoint and must load; an .npz member may still turn out corrupt
// when its data are read (a deflate stream, the CRC-32 of its bytes: InputError).
// Returns the loaded matrices (empty optional where skipped or refused), in the checkpoint's order.
std::vector<std::optional<Eigen::MatrixXd>> load_all(const sparseact::Checkpoint& c) {
  std::vector<std::optional<Eigen::MatrixXd>> out;
  for (const sparseact::TensorInfo& t : c.tensors) {
    out.emplace_back();
    if (!t.loadable) {
      try {
        (void)sparseact::load_tensor(t);
      } catch (const sparseact::InputError&) {
        continue;
      }
      broken("load_tensor(" + sparseact::describe(t) + ") loaded dtype " + t.dtype + ", listed as not loadable");
    }
    const auto n = element_count(t.shape);
    if (!n || *n > fuzz_max_load_elements) continue;
    try {
      out.back() = sparseact::load_tensor(t);
    } catch (const sparseact::InputError& e) {
      if (!t.deflated && t.file.extension() != ".npz")
        broken("open_checkpoint accepted " + sparseact::describe(t) + " but load_tensor refused it: " + e.what());
      continue;
    }
    check_shape(t, *out.back());
  }
  return out;
}

std::optional<sparseact::Checkpoint> open(const fs::path& p) {
  try {
    return sparseact::open_checkpoint(p);
  } catch (const sparseact::InputError&) {
    return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------------
// Shards for the index target: two small valid .safetensors files, written once per process.
// tests/fuzz/make_corpus.py writes indexes over the same names; keep the two in step.

std::string safetensors_bytes(const std::vector<std::array<std::string, 3>>& entries /* name, dtype, shape */,
                              const std::vector<std::size_t>& sizes) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::string data;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t begin = data.size();
    for (std::size_t k = 0; k < sizes[i]; ++k) data.push_back(static_cast<char>(0x3c + (k * 7 + i) % 5));  // finite values
    header += ",\"" + entries[i][0] + "\":{\"dtype\":\"" + entries[i][1] + "\",\"shape\":" + entries[i][2] +
              ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) out[k] = static_cast<char>((n >> (8 * k)) & 0xff);
  return out + header + data;
}

const fs::path& index_folder() {
  static const fs::path folder = [] {
    fs::path dir = scratch().dir() / "sharded";
    fs::create_directories(dir);
    const std::string s1 = safetensors_bytes({{"a", "F32", "[2,3]"}, {"b", "F64", "[3]"}, {"s", "BF16", "[]"}},
                                             {24, 24, 2});
    const std::string s2 = safetensors_bytes({{"c", "F16", "[2,2]"}, {"i", "I64", "[2]"}, {"t", "F32", "[2,2,2]"}},
                                             {8, 16, 32});
    write_file(dir / "model-00001-of-00002.safetensors", s1.data(), s1.size());
    write_file(dir / "model-00002-of-00002.safetensors", s2.data(), s2.size());
    return dir;
  }();
  return folder;
}

// ---------------------------------------------------------------------------------------------
// IDX: the plain bytes gzipped, to reach the gzip path with valid checksums.

std::string gzip(const std::uint8_t* data, std::size_t size) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("fuzz harness: deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(size)) + 32, '\0');
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("fuzz harness: deflate failed");
  return out;
}

struct IdxOutcome {
  std::optional<sparseact::nn::IdxArray> array;
  std::optional<Eigen::MatrixXd> images;
  std::optional<std::vector<int>> labels;
};

IdxOutcome read_all_idx(const fs::path& p) {
  namespace nn = sparseact::nn;
  IdxOutcome r;
  try {
    r.array = nn::read_idx(p);
  } catch (const sparseact::InputError&) {
  }
  if (r.array) {
    const auto n = element_count(r.array->dims);
    if (!n || *n != static_cast<uint64_t>(r.array->values.size()))
      broken("read_idx returned " + std::to_string(r.array->values.size()) + " values for its dims");
  }
  try {
    r.images = nn::load_idx_images(p);
  } catch (const sparseact::InputError&) {
  }
  if (r.images && r.array && !r.array->dims.empty()) {
    const auto features = element_count(std::vector<uint64_t>(r.array->dims.begin() + 1, r.array->dims.end()));
    if (static_cast<uint64_t>(r.images->cols()) != r.array->dims[0] ||
        static_cast<uint64_t>(r.images->rows()) != *features)
      broken("load_idx_images' matrix does not match read_idx's dims");
  }
  try {
    r.labels = nn::load_idx_labels(p);
  } catch (const sparseact::InputError&) {
  }
  if (r.labels && r.array && (r.array->dims.size() != 1 || r.labels->size() != r.array->dims[0]))
    broken("load_idx_labels returned " + std::to_string(r.labels->size()) + " labels for a file read_idx reads otherwise");
  return r;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entry points.

int fuzz_safetensors(const std::uint8_t* data, std::size_t size) {
  const fs::path p = input_file("input.safetensors", data, size);
  const auto c = open(p);
  std::vector<std::optional<Eigen::MatrixXd>> loaded;
  if (c) loaded = load_all(*c);

  std::optional<std::vector<std::string>> names;
  try {
    names = sparseact::safetensors_names(p);
  } catch (const sparseact::InputError&) {
  }
  if (c) {
    // Both readers validate the same header; open_checkpoint's checks are a superset.
    if (!names) broken("open_checkpoint accepted the file, safetensors_names refused it");
    std::vector<std::string> listed;
    for (const auto& t : c->tensors) listed.push_back(t.name);
    if (listed != *names) broken("open_checkpoint and safetensors_names list different tensors");
  }
  if (!names) return 0;
  for (std::size_t i = 0; i < names->size() && i < 64; ++i) {
    if (c && !loaded[i]) continue;  // too large to load here, or not loadable
    try {
      const Eigen::MatrixXd m = sparseact::load_safetensors(p, (*names)[i]);
      if (c && !same_values(m, *loaded[i])) broken("load_safetensors and load_tensor disagree on " + (*names)[i]);
    } catch (const sparseact::InputError&) {
    }
  }
  return 0;
}

int fuzz_npy(const std::uint8_t* data, std::size_t size) {
  const fs::path p = input_file("input.npy", data, size);
  const auto c = open(p);
  std::vector<std::optional<Eigen::MatrixXd>> loaded;
  if (c) {
    if (c->tensors.size() != 1 || c->tensors[0].name != "input") broken("a .npy file lists other than one tensor 'input'");
    loaded = load_all(*c);
  }
  try {
    const Eigen::MatrixXd m = sparseact::load_npy(p);
    if (c && loaded[0] && !same_values(m, *loaded[0])) broken("load_npy and load_tensor disagree");
  } catch (const sparseact::InputError&) {
  }
  return 0;
}

int fuzz_npz(const std::uint8_t* data, std::size_t size) {
  const fs::path p = input_file("input.npz", data, size);
  if (const auto c = open(p)) (void)load_all(*c);
  return 0;
}

int fuzz_index(const std::uint8_t* data, std::size_t size) {
  const fs::path p = index_folder() / "model.safetensors.index.json";
  write_file(p, data, size);
  const auto c = open(p);
  if (c) (void)load_all(*c);
  // The folder holds the index and its shards: opening the folder reads the index, so the same.
  const auto f = open(index_folder());
  if (f.has_value() != c.has_value() || (c && f->tensors.size() != c->tensors.size()))
    broken("the index and its folder open differently");
  return 0;
}

int fuzz_idx(const std::uint8_t* data, std::size_t size) {
  const fs::path p = input_file("input-idx-ubyte", data, size);
  const IdxOutcome plain = read_all_idx(p);
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) return 0;  // already gzip
  // The same bytes gzipped must read the same: same acceptance, same values.
  const std::string gz = gzip(data, size);
  const fs::path q = input_file("input-idx-ubyte.gz", gz.data(), gz.size());
  const IdxOutcome zipped = read_all_idx(q);
  if (plain.array.has_value() != zipped.array.has_value()) broken("read_idx accepts the plain or the gzipped file only");
  if (plain.array && (plain.array->type != zipped.array->type || plain.array->dims != zipped.array->dims ||
                      plain.array->values.size() != zipped.array->values.size() ||
                      !same_values(plain.array->values, zipped.array->values)))
    broken("read_idx reads the plain and the gzipped file differently");
  if (plain.images.has_value() != zipped.images.has_value() || (plain.images && !same_values(*plain.images, *zipped.images)))
    broken("load_idx_images reads the plain and the gzipped file differently");
  if (plain.labels != zipped.labels) broken("load_idx_labels reads the plain and the gzipped file differently");
  return 0;
}

std::span<const FuzzTarget> fuzz_targets() {
  static constexpr FuzzTarget targets[] = {{"safetensors", fuzz_safetensors},
                                           {"npy", fuzz_npy},
                                           {"npz", fuzz_npz},
                                           {"index", fuzz_index},
                                           {"idx", fuzz_idx}};
  return targets;
}
