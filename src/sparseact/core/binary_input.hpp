#pragma once
// Shared by the binary readers (core/matrix_io, nn/idx): one-line InputError messages that name the
// file whatever bytes it or its path holds, overflow-checked sizes, and opening a file whose size
// is known before anything is read (what makes validation before allocation possible).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace sparseact::io {

/// `s` with control characters escaped as \xNN (UTF-8 passes through), cut to `max_len` plus "...".
std::string printable(std::string_view s, std::size_t max_len = std::string_view::npos);

/// Throws InputError("FILE: what").
[[noreturn]] void fail(const std::filesystem::path& file, std::string_view what);

/// a·b, or nothing when it overflows 64 bits.
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);

/// Opens `path` (a regular file) for binary reading into `in`; returns its size in bytes. Missing
/// files, folders and unreadable files fail with a one-line InputError naming the path.
std::uint64_t open_regular_file(const std::filesystem::path& path, std::ifstream& in);

}  // namespace sparseact::io
