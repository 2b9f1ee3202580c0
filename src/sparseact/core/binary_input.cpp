#include <sparseact/core/binary_input.hpp>

#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>

namespace sparseact::io {

namespace fs = std::filesystem;

std::string printable(std::string_view s, std::size_t max_len) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);  // UTF-8 passes through: paths and names stay readable
  }
  return out;
}

void fail(const fs::path& file, std::string_view what) {
  throw InputError(fmt::format("{}: {}", printable(file.string()), what));
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

std::uint64_t open_regular_file(const fs::path& path, std::ifstream& in) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) fail(path, "no such file");
  if (ec) fail(path, "cannot access (" + ec.message() + ")");
  if (st.type() == fs::file_type::directory) fail(path, "is a directory, not a file");
  if (st.type() != fs::file_type::regular) fail(path, "not a regular file");
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) fail(path, "cannot determine size (" + ec.message() + ")");
  errno = 0;
  in.open(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open (") + (errno ? std::strerror(errno) : "unknown error") + ")");
  return size;
}

}  // namespace sparseact::io
