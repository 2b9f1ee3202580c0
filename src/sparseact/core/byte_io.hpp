#pragma once
// Little-endian byte framing shared by records (core/record), sweep item files and sweep messages
// (app/): append a trivially copyable value, read one back with bounds checks. C++17.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace sparseact::byte_io {

template <class T>
void put(std::string& out, T v) {
  static_assert(std::is_trivially_copyable<T>::value, "byte_io::put: trivially copyable values only");
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

/// Reads values and byte runs in order; throws std::runtime_error("<what>: truncated") past the end.
struct Reader {
  std::string_view in;
  const char* what = "bytes";
  std::size_t pos = 0;

  template <class T>
  T get() {
    if (in.size() - pos < sizeof(T)) throw std::runtime_error(std::string(what) + ": truncated");
    T v;
    std::memcpy(&v, in.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string_view take(std::uint64_t n) {
    if (in.size() - pos < n) throw std::runtime_error(std::string(what) + ": truncated");
    const std::string_view s = in.substr(pos, static_cast<std::size_t>(n));
    pos += static_cast<std::size_t>(n);
    return s;
  }
  bool done() const { return pos == in.size(); }
};

}  // namespace sparseact::byte_io
