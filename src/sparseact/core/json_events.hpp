#pragma once
// JSON headers of untrusted files (safetensors headers, sharded indexes) read as a stream of events,
// not as a document (issue 26). A parsed nlohmann::ordered_json document cost time quadratic in its
// keys, since each insertion searches the keys before it (64,000 keys: 12 s), and 27–34 times the
// text in memory. A reader here sees each key and value once, in document order, keeps what it needs
// in its own structures and skips the rest: time linear in the text, memory the text plus what the
// reader keeps.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparseact::io {

/// One JSON value as a reader meets it: a scalar with its value, or the start of a container
/// (whose contents follow as further events unless the reader skips them).
struct JsonValue {
  enum class Kind { null, boolean, integer, floating, string, object, array };
  Kind kind = Kind::null;
  bool negative = false;          ///< integer: below zero ("-0" is not)
  std::uint64_t magnitude = 0;    ///< integer: |value|
  std::string* text = nullptr;    ///< string: the decoded text (the reader may move it out)
  bool is_container() const { return kind == Kind::object || kind == Kind::array; }
};

/// What a reader tells the parse after a value's start.
enum class JsonNext {
  go_on,  ///< read what follows, a container's contents included
  skip,   ///< after a container's start: skip its contents whole (no events until its end)
};

/// Receives a document's events. `depth` counts the containers around the event: 0 for the
/// document's own value, 1 for the keys and values of a top-level object, and so on. A reader that
/// finds what it reads malformed throws (InputError): the parse ends there.
class JsonReader {
 public:
  virtual ~JsonReader() = default;
  /// A key of the object at depth - 1 (so a top-level object's keys have depth 1); the reader may
  /// move the text out.
  virtual void key(int depth, std::string& key) = 0;
  /// A value at `depth`: a scalar, or the start of an object or array.
  virtual JsonNext value(int depth, const JsonValue& v) = 0;
  /// The end of a container read with go_on, which began at `depth`.
  virtual void end(int depth) { (void)depth; }
};

/// Streams `text` to `reader`; returns where the text stops being valid JSON (the byte position,
/// as nlohmann counts it), or nothing when all of it is. Exceptions the reader throws propagate.
std::optional<std::size_t> read_json(std::string_view text, JsonReader& reader);

}  // namespace sparseact::io
