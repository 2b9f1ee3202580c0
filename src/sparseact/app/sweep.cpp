// Records, grids, checkpoints and .sweep folders (sweep.hpp); the runner is in sweep_runner.cpp.
#include <sparseact/app/sweep.hpp>
#include <sparseact/app/sweep_files.hpp>
#include <sparseact/core/byte_io.hpp>

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

namespace sparseact::app {

namespace fs = std::filesystem;

using byte_io::put;
using Reader = byte_io::Reader;

// --- Grid ----------------------------------------------------------------------------------------

std::size_t Grid::count() const {
  std::size_t n = 1;
  for (std::size_t s : sizes) n *= s;
  return n;
}

std::vector<std::size_t> Grid::coords(std::size_t index) const {
  std::vector<std::size_t> c(sizes.size());
  for (std::size_t a = sizes.size(); a-- > 0;) {
    c[a] = index % sizes[a];
    index /= sizes[a];
  }
  return c;
}

std::size_t Grid::index(const std::vector<std::size_t>& coords) const {
  if (coords.size() != sizes.size()) throw std::invalid_argument("Grid::index: wrong number of coordinates");
  std::size_t i = 0;
  for (std::size_t a = 0; a < sizes.size(); ++a) {
    if (coords[a] >= sizes[a]) throw std::out_of_range("Grid::index: coordinate out of range");
    i = i * sizes[a] + coords[a];
  }
  return i;
}

std::string list_items(const Sweep& sweep) {
  std::string out;
  for (std::size_t i = 0; i < sweep.count; ++i)
    out += nlohmann::json{{"index", i}, {"key", sweep.key ? sweep.key(i) : std::to_string(i)}, {"cost", sweep.cost ? sweep.cost(i) : 1.0}}.dump() + "\n";
  return out;
}

int device_for_local_rank(int local_rank, int device_count) {
  if (device_count <= 0 || local_rank < 0) return -1;
  return local_rank % device_count;
}

std::string params_digest(const nlohmann::json& params) {
  const std::string text = params.dump();
  const uLong crc = crc32_z(0L, reinterpret_cast<const Bytef*>(text.data()), text.size());
  return fmt::format("{:08x}", static_cast<unsigned long>(crc));
}

// --- Files under <out>/.sweep ----------------------------------------------------------------------

namespace sweep_files {

fs::path dir(const fs::path& out) { return out / ".sweep"; }
fs::path items_dir(const fs::path& out) { return dir(out) / "items"; }
fs::path item_path(const fs::path& out, std::size_t index) { return items_dir(out) / fmt::format("{:08d}.rec", index); }

void write_atomic(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.parent_path() / fmt::format(".tmp-{}-{}", ::getpid(), path.filename().string());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    }
  }
  fs::rename(tmp, path);
}

namespace {
constexpr char kMagic[8] = {'S', 'P', 'S', 'W', 'I', 'T', 'E', '1'};
}

void write_item(const fs::path& out, std::size_t index, const std::string& record_bytes) {
  std::string file(kMagic, sizeof kMagic);
  put<std::uint64_t>(file, index);
  put<std::uint64_t>(file, record_bytes.size());
  put<std::uint32_t>(file, static_cast<std::uint32_t>(crc32_z(0L, reinterpret_cast<const Bytef*>(record_bytes.data()), record_bytes.size())));
  file += record_bytes;
  write_atomic(item_path(out, index), file);
}

std::optional<std::string> read_item(const fs::path& path, std::size_t index) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string file = ss.str();
  try {
    Reader r{file, "item file"};
    if (r.take(sizeof kMagic) != std::string_view(kMagic, sizeof kMagic)) return std::nullopt;
    if (r.get<std::uint64_t>() != index) return std::nullopt;
    const auto n = r.get<std::uint64_t>();
    const auto crc = r.get<std::uint32_t>();
    const std::string_view payload = r.take(n);
    if (r.pos != file.size()) return std::nullopt;
    if (crc32_z(0L, reinterpret_cast<const Bytef*>(payload.data()), payload.size()) != crc) return std::nullopt;
    deserialize(payload);  // a record, not only matching bytes
    return std::string(payload);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::size_t> item_index(const fs::path& path) {
  const std::string name = path.filename().string();
  if (name.size() < 5 || name.substr(name.size() - 4) != ".rec" || name[0] == '.') return std::nullopt;
  std::size_t v = 0;
  for (std::size_t k = 0; k + 4 < name.size(); ++k) {
    if (name[k] < '0' || name[k] > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(name[k] - '0');
  }
  return v;
}

}  // namespace sweep_files

SweepFolder read_sweep_folder(const fs::path& out) {
  SweepFolder folder;
  const fs::path dir = sweep_files::dir(out);
  const auto read_json = [](const fs::path& p) {
    std::ifstream f(p);
    if (!f) return nlohmann::json();
    auto j = nlohmann::json::parse(f, nullptr, false);
    return j.is_discarded() ? nlohmann::json() : j;
  };
  if (!fs::is_directory(dir)) throw std::runtime_error(fmt::format("{}: no .sweep folder (run with --resume or under mpirun)", out.string()));
  folder.manifest = read_json(dir / "manifest.json");
  folder.run = read_json(dir / "run.json");
  if (folder.run.is_object() && folder.run.contains("items"))
    for (const auto& item : folder.run["items"]) {
      folder.item_seconds.push_back(item.value("seconds", 0.0));
      folder.item_rank.push_back(item.value("resumed", false) ? -1 : item.value("rank", 0));
    }
  std::error_code ec;
  if (fs::is_directory(sweep_files::items_dir(out), ec))
    for (const auto& entry : fs::directory_iterator(sweep_files::items_dir(out))) {
      const auto index = sweep_files::item_index(entry.path());
      if (!index) continue;
      if (auto bytes = sweep_files::read_item(entry.path(), *index)) folder.items.emplace(*index, deserialize(*bytes));
      else folder.corrupt.push_back(*index);
    }
  return folder;
}

}  // namespace sparseact::app
