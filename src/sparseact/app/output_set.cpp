#include <sparseact/app/output_set.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sparseact::app {
namespace fs = std::filesystem;

namespace {

const std::string kTag = ".sparseact-";

std::string staging_prefix(const fs::path& out) { return "." + out.filename().string() + kTag; }

/// The files a result JSON says belong to its run: itself, its tables and its figures.
std::set<std::string> files_of_run(const fs::path& json_file) {
  std::set<std::string> files;
  std::ifstream in(json_file);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return files;
  files.insert(json_file.filename().string());
  for (const char* key : {"files", "figures"})
    if (j.contains(key) && j[key].is_array())
      for (const auto& f : j[key])
        if (f.is_string()) files.insert(f.get<std::string>());
  return files;
}

bool exchange(const fs::path& a, const fs::path& b) {
  return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

}  // namespace

fs::path normalise_out(const fs::path& out) {
  fs::path p = fs::absolute(out).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p;
}

int remove_stale_staging(const fs::path& out) {
  const fs::path parent = out.parent_path();
  const std::string prefix = staging_prefix(out);
  std::error_code ec;
  int removed = 0;
  if (!fs::is_directory(parent, ec)) return 0;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;  // still running
    fs::remove_all(entry.path(), ec);
    removed += !ec;
  }
  return removed;
}

fs::path make_staging(const fs::path& out) {
  fs::create_directories(out.parent_path());
  const fs::path staging = out.parent_path() / (staging_prefix(out) + std::to_string(::getpid()));
  fs::remove_all(staging);
  fs::create_directory(staging);
  return staging;
}

void publish(const fs::path& staging, const fs::path& out, const std::string& json_name) {
  std::error_code ec;
  if (!fs::exists(out, ec)) {
    fs::rename(staging, out);
    return;
  }
  const std::set<std::string> old_run = files_of_run(out / json_name);
  bool only_ours = true;
  for (const auto& entry : fs::directory_iterator(out))
    if (!old_run.count(entry.path().filename().string())) only_ours = false;

  if (only_ours) {
    if (exchange(staging, out)) {
      fs::remove_all(staging, ec);  // now the old set
      return;
    }
    // No RENAME_EXCHANGE on this file system: two renames, a moment without --out between them.
    const fs::path old = staging.string() + ".old";
    fs::rename(out, old);
    fs::rename(staging, out);
    fs::remove_all(old, ec);
    return;
  }
  // A folder shared with other files: never touch them. The old JSON goes first (its set is then
  // visibly incomplete), the new JSON comes last.
  fs::remove(out / json_name, ec);
  for (const std::string& f : old_run) fs::remove(out / f, ec);
  for (const auto& entry : fs::directory_iterator(staging))
    if (entry.path().filename() != json_name) fs::rename(entry.path(), out / entry.path().filename());
  fs::rename(staging / json_name, out / json_name);
  fs::remove(staging, ec);
}

}  // namespace sparseact::app
