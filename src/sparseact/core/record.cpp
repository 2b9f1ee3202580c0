// Record and its serialisation (core/record.hpp).
#include <sparseact/core/record.hpp>
#include <sparseact/core/byte_io.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace sparseact {

static_assert(std::endian::native == std::endian::little, "records are written little-endian: add byte swaps for this host");

// --- Record ------------------------------------------------------------------------------------

Record& Record::set(const std::string& key, double v) { fields_[key] = v; return *this; }
Record& Record::set(const std::string& key, std::string v) { fields_[key] = std::move(v); return *this; }
Record& Record::set(const std::string& key, std::vector<double> v) { fields_[key] = std::move(v); return *this; }

namespace {
template <class T>
const T& field(const std::map<std::string, Record::Value>& fields, const std::string& key, const char* kind) {
  const auto it = fields.find(key);
  if (it == fields.end()) throw std::out_of_range(fmt::format("record: no field '{}'", key));
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  throw std::out_of_range(fmt::format("record: field '{}' is not {}", key, kind));
}
std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
}  // namespace

double Record::num(const std::string& key) const { return field<double>(fields_, key, "a number"); }
const std::string& Record::str(const std::string& key) const { return field<std::string>(fields_, key, "a string"); }
const std::vector<double>& Record::arr(const std::string& key) const { return field<std::vector<double>>(fields_, key, "an array"); }

bool Record::operator==(const Record& other) const {
  if (fields_.size() != other.fields_.size()) return false;
  for (auto a = fields_.begin(), b = other.fields_.begin(); a != fields_.end(); ++a, ++b) {
    if (a->first != b->first || a->second.index() != b->second.index()) return false;
    if (const double* x = std::get_if<double>(&a->second)) {
      if (bits(*x) != bits(std::get<double>(b->second))) return false;
    } else if (const std::string* s = std::get_if<std::string>(&a->second)) {
      if (*s != std::get<std::string>(b->second)) return false;
    } else {
      const auto& u = std::get<std::vector<double>>(a->second);
      const auto& v = std::get<std::vector<double>>(b->second);
      if (u.size() != v.size() || (!u.empty() && std::memcmp(u.data(), v.data(), u.size() * sizeof(double)) != 0)) return false;
    }
  }
  return true;
}

// --- Serialisation: u32 field count; per field u32 key length, key, u8 kind, then
// kind 0: u64 bits | kind 1: u64 length, bytes | kind 2: u64 count, count × u64 bits.

using byte_io::put;
using Reader = byte_io::Reader;

std::string serialize(const Record& record) {
  std::string out;
  put<std::uint32_t>(out, static_cast<std::uint32_t>(record.fields().size()));
  for (const auto& [key, value] : record.fields()) {
    put<std::uint32_t>(out, static_cast<std::uint32_t>(key.size()));
    out += key;
    put<std::uint8_t>(out, static_cast<std::uint8_t>(value.index()));
    if (const double* x = std::get_if<double>(&value)) {
      put<std::uint64_t>(out, bits(*x));
    } else if (const std::string* s = std::get_if<std::string>(&value)) {
      put<std::uint64_t>(out, s->size());
      out += *s;
    } else {
      const auto& v = std::get<std::vector<double>>(value);
      put<std::uint64_t>(out, v.size());
      const std::size_t at = out.size();
      out.resize(at + v.size() * sizeof(double));
      if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size() * sizeof(double));
    }
  }
  return out;
}

Record deserialize(std::string_view bytes) {
  Reader r{bytes, "record"};
  Record record;
  const auto count = r.get<std::uint32_t>();
  for (std::uint32_t f = 0; f < count; ++f) {
    const std::string key(r.take(r.get<std::uint32_t>()));
    const auto kind = r.get<std::uint8_t>();
    if (kind == 0) {
      record.set(key, std::bit_cast<double>(r.get<std::uint64_t>()));
    } else if (kind == 1) {
      record.set(key, std::string(r.take(r.get<std::uint64_t>())));
    } else if (kind == 2) {
      const auto n = r.get<std::uint64_t>();
      if (n > (bytes.size() - r.pos) / sizeof(double)) throw std::runtime_error("record: truncated");
      std::vector<double> v(n);
      if (n) std::memcpy(v.data(), r.take(n * sizeof(double)).data(), n * sizeof(double));
      record.set(key, std::move(v));
    } else {
      throw std::runtime_error(fmt::format("record: unknown field kind {}", kind));
    }
  }
  if (r.pos != bytes.size()) throw std::runtime_error("record: trailing bytes");
  return record;
}

}  // namespace sparseact
