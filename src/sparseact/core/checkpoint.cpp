// Whole-checkpoint reader (issue 16): headers of every file first, then one tensor at a time.
//
// Every number here comes from untrusted files, as in core/safetensors.cpp and core/npy.cpp, whose
// header parsers this file reuses: sizes and offsets are validated against the files' actual sizes
// with overflow-checked arithmetic before anything is allocated or read. New here are the
// containers: the sharded index (a JSON map from tensor to shard file) and the .npz zip archive,
// whose end record, central directory and local headers are parsed and checked the same way.
#include <sparseact/core/checkpoint.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <sparseact/core/binary_input.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/json_events.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/core/safetensors.hpp>

namespace sparseact {
namespace {

namespace fs = std::filesystem;
using namespace io;
using std::uint64_t;

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const fs::path& p, std::string_view suffix) { return lowercase(p.filename().string()).ends_with(suffix); }

std::string who(const std::string& tensor) { return fmt::format("tensor {}", quote_name(tensor)); }

// rows = shape[0], cols = the product of the rest, both as Eigen indices; nothing when either, or
// their product (the element count), does not fit one. Files bound the product of non-empty shapes,
// but a zero dimension lets the others be anything.
std::optional<std::pair<Eigen::Index, Eigen::Index>> matrix_dims(const std::vector<uint64_t>& shape) {
  constexpr auto max_index = static_cast<uint64_t>(std::numeric_limits<Eigen::Index>::max());
  if (shape.empty()) return std::pair<Eigen::Index, Eigen::Index>{1, 1};
  const uint64_t rows = shape.size() == 1 ? 1 : shape[0];
  const auto cols = checked_product(std::vector<uint64_t>(shape.begin() + (shape.size() == 1 ? 0 : 1), shape.end()), 1);
  const auto count = cols ? checked_mul(rows, *cols) : std::nullopt;
  if (!cols || !count || rows > max_index || *cols > max_index || *count > max_index) return std::nullopt;
  return std::pair{static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(*cols)};
}

std::string shape_text(const std::vector<uint64_t>& shape) { return fmt::format("[{}]", join_dims(shape, ", ")); }

// Checks every open_checkpoint applies to a listed tensor, whatever its format.
void check_listed(const TensorInfo& t) {
  if (t.loadable && !matrix_dims(t.shape))
    fail(t.file, fmt::format("{} has shape {}, too large for a matrix", who(t.name), shape_text(t.shape)));
}

// ---------------------------------------------------------------------------------------------
// .safetensors, one file or the shards of an index.

std::vector<TensorInfo> safetensors_tensors(const fs::path& path) {
  InputFile file(path);
  const SafetensorsHeader h = read_safetensors_header(file);
  std::vector<TensorInfo> out;
  for (const SafetensorsEntry& e : h.tensors) {
    TensorInfo t;
    t.name = e.name;
    t.shape = e.shape;
    t.dtype = e.dtype;  // the format's spellings are ours (F64, F32, F16, BF16)
    t.loadable = safetensors_dtype(e.dtype).has_value();
    t.file = path;
    t.offset = h.buffer_start + e.begin;  // both within the file size: no overflow
    t.stored_bytes = e.end - e.begin;
    check_listed(t);
    out.push_back(std::move(t));
  }
  return out;
}

// A shard named in an index must be a file beside it: a name with a separator or a dot-name could
// point anywhere on the machine.
bool plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find_first_of(std::string_view("/\\\0", 3)) == std::string::npos;
}

// An index's JSON as events (core/json_events.hpp): the weight_map's pairs in document order, every
// other key skipped unread; time linear in the index, memory the pairs (issue 26).
class IndexReader final : public JsonReader {
 public:
  explicit IndexReader(const fs::path& path) : path_(path) {}
  std::vector<std::pair<std::string, std::string>> weight_map;  // tensor, shard
  bool found = false;  // a "weight_map" object

  void key(int depth, std::string& k) override {
    if (depth == 1) {
      in_map_ = k == "weight_map";
      if (in_map_ && found) fail(path_, "key \"weight_map\" appears twice");
    } else {
      tensor_ = std::move(k);
    }
  }
  JsonNext value(int depth, const JsonValue& v) override {
    const JsonNext past = v.is_container() ? JsonNext::skip : JsonNext::go_on;
    if (depth == 0) {
      if (v.kind != JsonValue::Kind::object) not_an_index();
      return JsonNext::go_on;
    }
    if (depth == 1) {
      if (!in_map_) return past;
      if (v.kind != JsonValue::Kind::object) not_an_index();
      found = true;
      return JsonNext::go_on;
    }
    if (v.kind != JsonValue::Kind::string) fail(path_, fmt::format("{}: weight_map value is not a file name", who(tensor_)));
    weight_map.emplace_back(std::move(tensor_), std::move(*v.text));
    return past;
  }
  [[noreturn]] void not_an_index() const {
    fail(path_, "not a safetensors index: expected a JSON object with a \"weight_map\" object");
  }

 private:
  const fs::path& path_;
  bool in_map_ = false;
  std::string tensor_;
};

void open_index(const fs::path& index, Checkpoint& c) {
  InputFile file(index);
  constexpr uint64_t max_index = 64 << 20;  // indexes of the largest models are a few MB
  if (file.size() > max_index)
    fail(index, fmt::format("index of {} bytes exceeds the limit of {} bytes", file.size(), max_index));
  const std::string text = file.read_string(0, static_cast<std::size_t>(file.size()));
  if (!json_nesting_within(text, 8)) fail(index, "not a safetensors index (JSON nested too deeply)");
  IndexReader map(index);
  if (const auto at = read_json(text, map)) fail(index, fmt::format("index is not valid JSON (error at byte {})", *at));
  if (!map.found) map.not_an_index();
  if (map.weight_map.empty()) fail(index, "\"weight_map\" is empty");

  // shard -> the tensors the index puts there, shards in name order.
  std::map<std::string, std::vector<std::string>> shards;
  std::unordered_set<std::string_view> listed;
  for (const auto& [tensor, name] : map.weight_map) {
    if (!listed.insert(tensor).second) fail(index, fmt::format("{} appears twice in \"weight_map\"", who(tensor)));
    if (!plain_file_name(name))
      fail(index, fmt::format("{} maps to {}; shards must be plain file names in the index's folder", who(tensor),
                              quote_name(name)));
    shards[name].push_back(tensor);
  }
  const fs::path folder = index.parent_path();
  // Every shard must exist before any is parsed: a partial download fails at once, naming what is missing.
  for (const auto& [shard, tensors] : shards) {
    std::error_code ec;
    if (!fs::exists(folder / shard, ec))
      fail(index, fmt::format("shard {} is missing (it holds {}{})", quote_name(shard), who(tensors.front()),
                              tensors.size() > 1 ? fmt::format(" and {} more", tensors.size() - 1) : ""));
  }
  c.files.push_back(index);
  for (const auto& [shard, tensors] : shards) {
    const fs::path path = folder / shard;
    std::vector<TensorInfo> found = safetensors_tensors(path);
    std::unordered_set<std::string_view> held;
    for (const TensorInfo& t : found) held.insert(t.name);
    for (const std::string& tensor : tensors)
      if (!held.contains(tensor))
        fail(index, fmt::format("{} maps to shard {}, which does not hold it", who(tensor), quote_name(shard)));
    // A shard's tensors that the index does not list are loaded too: the shard's header says what
    // it holds, the index is only a lookup table (transformers loads whole shards the same way).
    c.files.push_back(path);
    for (TensorInfo& t : found) c.tensors.push_back(std::move(t));
  }
}

// ---------------------------------------------------------------------------------------------
// .npz: a zip archive of .npy files. numpy writes it with Python's zipfile, every member with
// force_zip64 (zip64 extra fields in the local headers; in the central directory once a size or
// offset passes 4 GiB), stored (np.savez) or deflated (np.savez_compressed).

constexpr uint32_t sig_local = 0x04034b50, sig_central = 0x02014b50, sig_end = 0x06054b50,
                   sig_end64 = 0x06064b50, sig_locator64 = 0x07064b50;

uint64_t le(const unsigned char* p, std::size_t n) { return load_uint(p, n, false); }

struct ZipMember {
  std::string name;
  uint64_t method = 0, flags = 0;
  uint64_t compressed = 0, uncompressed = 0;
  uint64_t local_offset = 0;
  uint64_t data_offset = 0;  // after the local header
  uint32_t crc = 0;
};

std::string member(const std::string& name) { return fmt::format("member {}", quote_name(name)); }

struct ZipDirectory {
  uint64_t entries = 0, cd_offset = 0, cd_size = 0;
};

ZipDirectory read_end_records(InputFile& file) {
  const fs::path& path = file.path();
  const uint64_t size = file.size();
  if (size < 22) fail(path, fmt::format("truncated .npz file ({} bytes; a zip archive takes at least 22)", size));
  // The end record is the last 22 bytes but for a comment of up to 65535 bytes: search backwards
  // for its signature with a comment length that reaches exactly the end of the file.
  const uint64_t tail_size = std::min<uint64_t>(size, 22 + 65535);
  const std::string tail = file.read_string(size - tail_size, static_cast<std::size_t>(tail_size));
  const auto* t = reinterpret_cast<const unsigned char*>(tail.data());
  std::optional<uint64_t> at;  // in `tail`
  for (uint64_t i = tail_size - 22 + 1; i-- > 0;)
    if (le(t + i, 4) == sig_end && i + 22 + le(t + i + 20, 2) == tail_size) {
      at = i;
      break;
    }
  if (!at) fail(path, "not a zip archive, or truncated: no end-of-central-directory record");
  const unsigned char* e = t + *at;
  const uint64_t end_pos = size - tail_size + *at;
  ZipDirectory d{le(e + 10, 2), le(e + 16, 4), le(e + 12, 4)};
  if (le(e + 4, 2) != 0 || le(e + 6, 2) != 0 || le(e + 8, 2) != le(e + 10, 2))
    fail(path, "multi-volume zip archives are not supported");
  uint64_t directory_limit = end_pos;  // the central directory ends before the end records
  // zip64: a locator just before the end record points to the zip64 end record, whose 64-bit
  // counts replace the 16- and 32-bit ones (saturated at 0xffff... when too large).
  if (end_pos >= 20) {
    unsigned char loc[20];
    file.read(end_pos - 20, loc, 20);
    if (le(loc, 4) == sig_locator64) {
      const uint64_t rec = le(loc + 8, 8);
      if (rec > end_pos - 20 || end_pos - 20 - rec < 56)
        fail(path, fmt::format("zip64 end record offset {} out of bounds (truncated or corrupt archive)", rec));
      unsigned char r[56];
      file.read(rec, r, 56);
      if (le(r, 4) != sig_end64) fail(path, "zip64 end record not found where its locator points (corrupt archive)");
      if (le(r + 16, 4) != 0 || le(r + 20, 4) != 0 || le(r + 24, 8) != le(r + 32, 8))
        fail(path, "multi-volume zip archives are not supported");
      d = {le(r + 32, 8), le(r + 48, 8), le(r + 40, 8)};
      directory_limit = rec;
    }
  }
  if (d.cd_offset > directory_limit || d.cd_size > directory_limit - d.cd_offset)
    fail(path, fmt::format("central directory ({} bytes at offset {}) runs past its end at {} (truncated or corrupt "
                           "archive)",
                           d.cd_size, d.cd_offset, directory_limit));
  if (d.entries > d.cd_size / 46)  // 46: the fixed part of an entry
    fail(path, fmt::format("central directory of {} bytes cannot hold the {} entries the end record counts",
                           d.cd_size, d.entries));
  return d;
}

std::vector<ZipMember> read_zip_members(InputFile& file) {
  const fs::path& path = file.path();
  const ZipDirectory d = read_end_records(file);
  constexpr uint64_t max_directory = 256 << 20;  // 2 million members of 100-byte names
  if (d.cd_size > max_directory)
    fail(path, fmt::format("central directory of {} bytes exceeds the limit of {} bytes", d.cd_size, max_directory));
  const std::string cd = file.read_string(d.cd_offset, static_cast<std::size_t>(d.cd_size));
  const auto* p = reinterpret_cast<const unsigned char*>(cd.data());

  std::vector<ZipMember> members;
  uint64_t pos = 0;
  for (uint64_t i = 0; i < d.entries; ++i) {
    const auto corrupt = [&](std::string_view what) {
      fail(path, fmt::format("central directory entry {}: {} (corrupt archive)", i, what));
    };
    if (d.cd_size - pos < 46 || le(p + pos, 4) != sig_central) corrupt("no entry signature");
    const unsigned char* e = p + pos;
    const uint64_t name_len = le(e + 28, 2), extra_len = le(e + 30, 2), comment_len = le(e + 32, 2);
    if (d.cd_size - pos - 46 < name_len + extra_len + comment_len) corrupt("runs past the central directory");
    ZipMember m;
    m.name.assign(reinterpret_cast<const char*>(e + 46), static_cast<std::size_t>(name_len));
    m.flags = le(e + 8, 2);
    m.method = le(e + 10, 2);
    m.crc = static_cast<uint32_t>(le(e + 16, 4));
    m.compressed = le(e + 20, 4);
    m.uncompressed = le(e + 24, 4);
    m.local_offset = le(e + 42, 4);
    // zip64 extra field (id 1): the 64-bit values of exactly those fields saturated at 0xffffffff,
    // in this order.
    const bool need_u = m.uncompressed == 0xffffffff, need_c = m.compressed == 0xffffffff,
               need_o = m.local_offset == 0xffffffff;
    bool have64 = false;
    for (const unsigned char *x = e + 46 + name_len, *x_end = x + extra_len; x_end - x >= 4;) {
      const uint64_t id = le(x, 2), len = le(x + 2, 2);
      if (static_cast<uint64_t>(x_end - x - 4) < len) fail(path, member(m.name) + ": extra field runs past its entry");
      if (id == 1) {
        const unsigned char* v = x + 4;
        const uint64_t needed = 8 * (need_u + need_c + need_o);
        if (len < needed) fail(path, member(m.name) + ": zip64 extra field too short");
        if (need_u) m.uncompressed = le(v, 8), v += 8;
        if (need_c) m.compressed = le(v, 8), v += 8;
        if (need_o) m.local_offset = le(v, 8);
        have64 = true;
      }
      x += 4 + len;
    }
    if ((need_u || need_c || need_o) && !have64) fail(path, member(m.name) + ": zip64 sizes missing");
    if (m.flags & 1) fail(path, member(m.name) + " is encrypted");
    if (m.method != 0 && m.method != 8)
      fail(path, fmt::format("{} uses compression method {}; only stored (0) and deflated (8) are supported",
                             member(m.name), m.method));
    if (m.method == 0 && m.compressed != m.uncompressed)
      fail(path, fmt::format("{} is stored but its sizes differ ({} and {} bytes)", member(m.name), m.compressed,
                             m.uncompressed));
    // Deflate expands at most 1032-fold: a larger inflated size is a forged directory, which would
    // otherwise have load_tensor allocate for data the stream cannot hold.
    if (const auto most = checked_mul(m.compressed, 1032); m.method == 8 && (!most || m.uncompressed > *most + 1024))
      fail(path, fmt::format("{}: {} bytes cannot inflate to {} (deflate expands at most 1032-fold; corrupt archive)",
                             member(m.name), m.compressed, m.uncompressed));
    members.push_back(std::move(m));
    pos += 46 + name_len + extra_len + comment_len;
  }

  // Local headers: the data follow each one; they must lie before the central directory, one
  // member's bytes never another's.
  for (ZipMember& m : members) {
    if (m.local_offset > d.cd_offset || d.cd_offset - m.local_offset < 30)
      fail(path, fmt::format("{}: local header offset {} out of bounds", member(m.name), m.local_offset));
    unsigned char h[30];
    file.read(m.local_offset, h, 30);
    if (le(h, 4) != sig_local) fail(path, member(m.name) + ": no local header where the directory points");
    const uint64_t name_len = le(h + 26, 2), extra_len = le(h + 28, 2);
    m.data_offset = m.local_offset + 30 + name_len + extra_len;  // < 2^64: offset < size, lengths < 2^17
    if (m.data_offset > d.cd_offset || m.compressed > d.cd_offset - m.data_offset)
      fail(path, fmt::format("{}: {} bytes of data at offset {} run past the central directory (truncated or "
                             "corrupt archive)",
                             member(m.name), m.compressed, m.data_offset));
    if (file.read_string(m.local_offset + 30, static_cast<std::size_t>(name_len)) != m.name)
      fail(path, member(m.name) + ": local header names another file (corrupt archive)");
  }
  std::vector<const ZipMember*> by_offset;
  for (const ZipMember& m : members) by_offset.push_back(&m);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const ZipMember* a, const ZipMember* b) { return a->local_offset < b->local_offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->local_offset < by_offset[i - 1]->data_offset + by_offset[i - 1]->compressed)
      fail(path, fmt::format("{} and {} overlap", member(by_offset[i - 1]->name), member(by_offset[i]->name)));
  return members;
}

// A deflated member, inflated on demand: first its head (kept, for the .npy header parser, which
// rereads), then the rest in order, straight into the caller's buffer. Memory: the head, and one
// chunk of compressed input.
class Inflater {
 public:
  Inflater(InputFile& file, uint64_t offset, uint64_t compressed, std::string subject)
      : file_(file), in_pos_(offset), in_left_(compressed), subject_(std::move(subject)) {
    if (inflateInit2(&z_, -MAX_WBITS) != Z_OK) fail("cannot initialise zlib");  // raw deflate, as in zip
  }
  ~Inflater() { inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Random access to the first bytes (the .npy header). Inflates no further than asked, so a
  // member whose data are cut short still lists, and fails when loaded.
  void head(uint64_t pos, void* dst, std::size_t n) {
    if (pos + n > head_.size()) {
      const auto want = static_cast<std::size_t>(pos + n);  // the parser asks for at most 1 MiB + 12
      const std::size_t have = head_.size();
      head_.resize(want);
      if (inflate_into(head_.data() + have, want - have) != want - have) ended_early();
    }
    std::memcpy(dst, head_.data() + pos, n);
  }

  // The bytes from `pos` on, asked for in order: first what head() already inflated, then more.
  void stream(uint64_t pos, void* dst, std::size_t n) {
    if (pos != next_) fail(fmt::format("internal error: read at {} of a stream positioned at {}", pos, next_));
    auto* out = static_cast<char*>(dst);
    if (pos < head_.size()) {
      const auto k = static_cast<std::size_t>(std::min<uint64_t>(n, head_.size() - pos));
      std::memcpy(out, head_.data() + pos, k);
      out += k;
      n -= k;
      next_ += k;
    }
    if (n > 0) {
      if (inflate_into(out, n) != n) ended_early();
      next_ += n;
    }
  }
  void skip_to(uint64_t pos) { next_ = pos; }  // (only forward within the head: the data follow the header)

  // The stream must end exactly after `total` bytes: more output means a header that lies.
  void expect_end(uint64_t total) {
    char extra;
    if (head_.size() > total || (!ended_ && inflate_into(&extra, 1) != 0))
      fail(fmt::format("deflate stream holds more than the {} bytes its .npy header promises", total));
  }

  // Inflates the whole stream into a scratch chunk: its size and CRC-32, before anyone allocates for it.
  std::pair<uint64_t, uint32_t> size_and_crc() {
    std::vector<char> scratch(chunk);
    uint64_t total = 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    for (std::size_t got; (got = inflate_into(scratch.data(), scratch.size())) > 0; total += got)
      crc = crc32(crc, reinterpret_cast<const Bytef*>(scratch.data()), static_cast<uInt>(got));
    return {total, static_cast<uint32_t>(crc)};
  }

 private:
  static constexpr std::size_t chunk = 1 << 16;

  [[noreturn]] void fail(std::string_view what) { io::fail(file_.path(), subject_ + std::string(what)); }
  [[noreturn]] void ended_early() { fail("deflate stream ends early (truncated or corrupt member)"); }

  // Inflates up to n bytes into dst; fewer only at the end of the stream.
  std::size_t inflate_into(char* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n && !ended_) {
      if (z_.avail_in == 0 && in_left_ > 0) {
        in_.resize(static_cast<std::size_t>(std::min<uint64_t>(chunk, in_left_)));
        file_.read(in_pos_, in_.data(), in_.size());
        in_pos_ += in_.size();
        in_left_ -= in_.size();
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(in_.size());
      }
      const auto step = static_cast<uInt>(std::min<std::size_t>(n - done, 1u << 30));
      z_.next_out = reinterpret_cast<Bytef*>(dst + done);
      z_.avail_out = step;
      const int rc = ::inflate(&z_, Z_NO_FLUSH);
      done += step - z_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc == Z_BUF_ERROR && z_.avail_in == 0 && in_left_ == 0) {
        ended_early();  // all compressed bytes consumed, no end-of-stream marker
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(fmt::format("corrupt deflate stream ({})", z_.msg ? printable(z_.msg, 80) : std::to_string(rc)));
      }
    }
    return done;
  }

  InputFile& file_;
  uint64_t in_pos_, in_left_;
  std::string subject_;
  z_stream z_{};
  std::vector<unsigned char> in_;
  std::string head_;
  uint64_t next_ = 0;
  bool ended_ = false;
};

// Fills the format-specific fields of a .npy's TensorInfo from its header.
void describe_npy(TensorInfo& t, const NpyHeader& h) {
  t.shape = h.shape;
  t.loadable = h.dtype.has_value();
  t.dtype = !h.dtype ? h.descr : h.dtype->scalar == Scalar::f64 ? "F64" : h.dtype->scalar == Scalar::f32 ? "F32" : "F16";
  t.big_endian = h.dtype && h.dtype->big_endian;
  t.fortran_order = h.fortran_order;
}

std::vector<TensorInfo> npz_tensors(const fs::path& path) {
  InputFile file(path);
  std::vector<TensorInfo> out;
  for (const ZipMember& m : read_zip_members(file)) {
    // np.load names a member "x.npy" as "x"; other members (np.load would return their bytes)
    // are not arrays.
    if (!m.name.ends_with(".npy") || m.name.size() == 4) continue;
    TensorInfo t;
    t.name = m.name.substr(0, m.name.size() - 4);
    t.file = path;
    t.npz_member = true;
    t.member_offset = m.data_offset;
    t.member_size = m.uncompressed;
    t.crc32 = m.crc;
    const std::string subject = fmt::format("{} ({}): ", who(t.name), member(m.name));
    NpyHeader h;
    if (m.method == 0) {
      h = read_npy_header(path, subject, m.uncompressed,
                          [&](uint64_t pos, void* dst, std::size_t n) { file.read(m.data_offset + pos, dst, n); });
      t.offset = m.data_offset + h.data_offset;
      t.stored_bytes = m.uncompressed - h.data_offset;
    } else {
      Inflater z(file, m.data_offset, m.compressed, subject);
      h = read_npy_header(path, subject, m.uncompressed,
                          [&](uint64_t pos, void* dst, std::size_t n) { z.head(pos, dst, n); });
      t.offset = m.data_offset;
      t.stored_bytes = m.compressed;
      t.deflated = true;
    }
    check_npy_data_size(path, subject, h, m.uncompressed);
    describe_npy(t, h);
    check_listed(t);
    out.push_back(std::move(t));
  }
  return out;
}

TensorInfo npy_tensor(const fs::path& path) {
  InputFile file(path);
  TensorInfo t;
  t.name = path.stem().string();
  t.file = path;
  const std::string subject = who(t.name) + ": ";
  const NpyHeader h = read_npy_header(path, subject, file.size(),
                                      [&](uint64_t pos, void* dst, std::size_t n) { file.read(pos, dst, n); });
  check_npy_data_size(path, subject, h, file.size());
  t.offset = h.data_offset;
  t.stored_bytes = file.size() - h.data_offset;
  describe_npy(t, h);
  check_listed(t);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Dispatch.

enum class Kind { safetensors, index, npz, npy };

std::optional<Kind> kind_of(const fs::path& path) {
  if (ends_with(path, ".safetensors")) return Kind::safetensors;
  if (ends_with(path, ".json")) return Kind::index;
  if (ends_with(path, ".npz")) return Kind::npz;
  if (ends_with(path, ".npy")) return Kind::npy;
  return std::nullopt;
}

const char* format_name(Kind k) {
  switch (k) {
    case Kind::safetensors: return "safetensors";
    case Kind::index: return "safetensors-sharded";
    case Kind::npz: return "npz";
    case Kind::npy: return "npy";
  }
  return "";
}

void add_file(Kind k, const fs::path& path, Checkpoint& c) {
  switch (k) {
    case Kind::safetensors:
      c.files.push_back(path);
      for (TensorInfo& t : safetensors_tensors(path)) c.tensors.push_back(std::move(t));
      break;
    case Kind::index: open_index(path, c); break;
    case Kind::npz:
      c.files.push_back(path);
      for (TensorInfo& t : npz_tensors(path)) c.tensors.push_back(std::move(t));
      break;
    case Kind::npy:
      c.files.push_back(path);
      c.tensors.push_back(npy_tensor(path));
      break;
  }
}

void open_folder(const fs::path& folder, Checkpoint& c) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) files.push_back(it->path());
  if (ec) fail(folder, "cannot list the folder (" + ec.message() + ")");
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });

  std::vector<fs::path> indexes, safetensors, arrays;
  for (const fs::path& f : files) {
    if (ends_with(f, ".safetensors.index.json")) indexes.push_back(f);
    else if (ends_with(f, ".safetensors")) safetensors.push_back(f);
    else if (ends_with(f, ".npz") || ends_with(f, ".npy")) arrays.push_back(f);
  }
  if (indexes.size() > 1) {
    std::vector<std::string> names;
    for (const fs::path& f : indexes) names.push_back(f.filename().string());
    fail(folder, fmt::format("holds {} safetensors indexes ({}); name the one to read", names.size(), name_list(names)));
  }
  if (indexes.size() == 1) {
    c.format = "folder of safetensors-sharded";
    open_index(indexes.front(), c);
  } else if (!safetensors.empty()) {
    c.format = "folder of safetensors";
    for (const fs::path& f : safetensors) add_file(Kind::safetensors, f, c);
  } else if (!arrays.empty()) {
    c.format = "folder of npz/npy";
    for (const fs::path& f : arrays) add_file(*kind_of(f), f, c);
  } else {
    throw InputError(fmt::format("no weights (.safetensors, model.safetensors.index.json, .npz, .npy) in {}",
                                 printable(folder.string())));
  }
}

// Sniffs a file without a known extension: zip and .npy start with magic numbers.
std::optional<Kind> kind_by_magic(const fs::path& path) {
  InputFile file(path);
  const std::string start = file.read_string(0, static_cast<std::size_t>(std::min<uint64_t>(file.size(), 6)));
  if (start.starts_with("PK\x03\x04") || start.starts_with("PK\x05\x06")) return Kind::npz;
  if (start == "\x93NUMPY") return Kind::npy;
  return std::nullopt;
}

}  // namespace

Checkpoint open_checkpoint(const std::filesystem::path& path) {
  Checkpoint c;
  c.source = path;
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) fail(path, "no such file or folder");
  if (ec) fail(path, "cannot access (" + ec.message() + ")");
  if (st.type() == fs::file_type::directory) {
    open_folder(path, c);
  } else {
    auto k = kind_of(path);
    if (!k) k = kind_by_magic(path);
    if (!k)
      fail(path, "unknown checkpoint format: expected .safetensors, a safetensors index (.json), .npz or .npy, "
                 "or a folder holding them");
    c.format = format_name(*k);
    add_file(*k, path, c);
  }
  // Names identify tensors: the same name twice (in two shards, or x.npy beside an x in a.npz)
  // would make any lookup ambiguous.
  std::unordered_map<std::string_view, const TensorInfo*> seen;
  for (const TensorInfo& t : c.tensors)
    if (const auto [it, fresh] = seen.emplace(t.name, &t); !fresh)
      fail(t.file, fmt::format("{} also in {}; tensor names must be unique within a checkpoint", who(t.name),
                               printable(it->second->file.string())));
  return c;
}

namespace {

// Applies to a column-major (Fortran) array of rank > 2, read as shape[0] × rest with the rest
// in Fortran order, the column permutation to the row-major flattening that load_tensor promises:
// the rest's multi-index (i1, …, ik) sits in column i1 + s1·(i2 + s2·(…)) and must go to column
// ((i1·s2 + i2)·s3 + …). Cycles of column swaps: no second copy of the matrix.
void fortran_to_row_major_columns(Eigen::MatrixXd& m, const std::vector<uint64_t>& shape) {
  const std::vector<uint64_t> dims(shape.begin() + 1, shape.end());
  const auto cols = static_cast<std::size_t>(m.cols());
  if (cols == 0) return;
  std::vector<uint64_t> stride(dims.size(), 1);  // row-major strides of the rest
  for (std::size_t k = dims.size() - 1; k-- > 0;) stride[k] = stride[k + 1] * dims[k + 1];
  std::vector<uint64_t> to(cols);  // Fortran column -> row-major column
  std::vector<uint64_t> idx(dims.size(), 0);
  uint64_t target = 0;
  for (std::size_t j = 0; j < cols; ++j) {
    to[j] = target;
    for (std::size_t k = 0; k < dims.size(); ++k) {  // odometer, first index fastest
      target += stride[k];
      if (++idx[k] < dims[k]) break;
      target -= stride[k] * dims[k];
      idx[k] = 0;
    }
  }
  std::vector<bool> placed(cols, false);
  for (std::size_t i = 0; i < cols; ++i) {
    if (placed[i]) continue;
    // Column i holds the data of Fortran column i; swapping along the cycle puts each in place.
    for (auto j = static_cast<std::size_t>(to[i]); j != i; j = static_cast<std::size_t>(to[j])) {
      m.col(static_cast<Eigen::Index>(i)).swap(m.col(static_cast<Eigen::Index>(j)));
      placed[j] = true;
    }
    placed[i] = true;
  }
}

// The archive's CRC-32 of a whole .npz member against the one computed from its bytes: a flipped byte
// must fail to load, as numpy's reader makes it, not load as a wrong weight.
void check_crc(const TensorInfo& t, uint32_t computed) {
  if (computed != t.crc32)
    fail(t.file, fmt::format("{} (member {}): CRC-32 {:08x} of its bytes differs from the archive's {:08x} (corrupt "
                             "archive)",
                             who(t.name), quote_name(t.name + ".npy"), computed, t.crc32));
}

// Refuses, before any byte is read, a matrix larger than the machine's memory: a deflated member can
// honestly inflate 1032-fold, and a 40 GB sparse file opens from its header, but neither should
// end in an allocation that fails or that the kernel's out-of-memory killer answers later.
void check_fits_memory(const TensorInfo& t, Eigen::Index rows, Eigen::Index cols) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  const auto memory = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  const auto bytes = checked_mul(checked_mul(static_cast<uint64_t>(rows), static_cast<uint64_t>(cols)).value_or(~0ull), 8);
  if (!bytes || *bytes > memory)
    fail(t.file, fmt::format("{} of shape {} needs {} bytes as a float64 matrix, more than this machine's {} bytes of "
                             "memory",
                             who(t.name), shape_text(t.shape), bytes ? std::to_string(*bytes) : "more than 2^64",
                             memory));
}

}  // namespace

Eigen::MatrixXd load_tensor(const TensorInfo& t) {
  if (!t.loadable)
    fail(t.file, fmt::format("{} has dtype {}; only F64, F32, F16 and BF16 tensors can be loaded", who(t.name),
                             quote_name(t.dtype)));
  const auto dims = matrix_dims(t.shape);
  if (!dims) fail(t.file, fmt::format("{} has shape {}, too large for a matrix", who(t.name), shape_text(t.shape)));
  const auto [rows, cols] = *dims;
  Dtype dtype{Scalar::f64, t.big_endian, 8, t.dtype};
  if (t.dtype == "F32") dtype = {Scalar::f32, t.big_endian, 4, t.dtype};
  if (t.dtype == "F16") dtype = {Scalar::f16, t.big_endian, 2, t.dtype};
  if (t.dtype == "BF16") dtype = {Scalar::bf16, t.big_endian, 2, t.dtype};
  const bool row_major = !t.fortran_order;

  check_fits_memory(t, rows, cols);
  InputFile file(t.file);
  Eigen::MatrixXd m;
  try {
    if (!t.deflated) {
      // What open_checkpoint saw must still be there (the bytes count was validated then, and fits).
      if (t.offset > file.size() || t.stored_bytes > file.size() - t.offset ||
          checked_product(t.shape, dtype.size) != std::optional<uint64_t>(t.stored_bytes))
        fail(t.file, fmt::format("{}: data no longer where the checkpoint was opened (file changed?)", who(t.name)));
      if (!t.npz_member) {
        m = read_matrix(file, t.offset, dtype, rows, cols, row_major);
      } else {
        // A stored member: its CRC-32 over the .npy header, then over the data as they are read.
        if (t.offset < t.member_offset || t.offset - t.member_offset + t.stored_bytes != t.member_size)
          fail(t.file, fmt::format("{}: member no longer where the checkpoint was opened (file changed?)", who(t.name)));
        const std::string header = file.read_string(t.member_offset, static_cast<std::size_t>(t.offset - t.member_offset));
        uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
        m = read_matrix(
            [&](uint64_t pos, void* dst, std::size_t n) {
              file.read(t.offset + pos, dst, n);
              crc = crc32_z(crc, static_cast<const Bytef*>(dst), n);
            },
            dtype, rows, cols, row_major);
        check_crc(t, static_cast<uint32_t>(crc));
      }
    } else {
      const std::string subject = who(t.name) + " (deflated .npz member): ";
      {
        // Proof first: the stream inflates to the member's size and CRC-32, or nothing is allocated.
        Inflater proof(file, t.offset, t.stored_bytes, subject);
        const auto [size, crc] = proof.size_and_crc();
        if (size != t.member_size)
          fail(t.file, fmt::format("{}inflates to {} bytes; the archive's directory says {} (corrupt archive)", subject,
                                   size, t.member_size));
        check_crc(t, crc);
      }
      Inflater z(file, t.offset, t.stored_bytes, subject);
      const NpyHeader h = read_npy_header(t.file, subject, t.member_size,
                                          [&](uint64_t pos, void* dst, std::size_t n) { z.head(pos, dst, n); });
      if (h.shape != t.shape || h.fortran_order != t.fortran_order || !h.dtype || h.dtype->size != dtype.size ||
          h.dtype->big_endian != t.big_endian)
        fail(t.file, subject + "header differs from when the checkpoint was opened (file changed?)");
      check_npy_data_size(t.file, subject, h, t.member_size);
      z.skip_to(h.data_offset);
      m = read_matrix([&](uint64_t pos, void* dst, std::size_t n) { z.stream(h.data_offset + pos, dst, n); }, dtype,
                      rows, cols, row_major);
      z.expect_end(h.data_offset + static_cast<uint64_t>(m.size()) * dtype.size);
    }
  } catch (const std::bad_alloc&) {
    fail(t.file, fmt::format("{} of shape {} needs {} bytes as a float64 matrix; not enough memory", who(t.name),
                             shape_text(t.shape), static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) * 8));
  }
  if (t.fortran_order && t.shape.size() > 2) fortran_to_row_major_columns(m, t.shape);
  return m;
}

std::string describe(const TensorInfo& t) {
  return fmt::format("{}: {}", printable(t.file.filename().string()), printable(t.name, 200));
}

}  // namespace sparseact
