#pragma once
// The layout of <out>/.sweep (internal to app/):
//   manifest.json      analysis, version, params and their digest, item count
//   items/NNNNNNNN.rec one finished item: "SPSWITE1", u64 index, u64 length, u32 CRC-32, the record
//   run.json           ranks, hosts, per-item seconds, resumed or computed (execution details)
//   progress.json      done/total, ETA, rewritten while the sweep runs
// Every file is written under a ".tmp" name and renamed into place.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace sparseact::app::sweep_files {

std::filesystem::path dir(const std::filesystem::path& out);
std::filesystem::path items_dir(const std::filesystem::path& out);
std::filesystem::path item_path(const std::filesystem::path& out, std::size_t index);
void write_atomic(const std::filesystem::path& path, const std::string& bytes);
void write_item(const std::filesystem::path& out, std::size_t index, const std::string& record_bytes);
/// The record bytes of an item file, or nothing when it fails its digest (truncated, damaged).
std::optional<std::string> read_item(const std::filesystem::path& path, std::size_t index);
/// The index an item file's name states; nothing for other names (.tmp files included).
std::optional<std::size_t> item_index(const std::filesystem::path& path);

}  // namespace sparseact::app::sweep_files
