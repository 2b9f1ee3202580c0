// The adapter from nlohmann's SAX interface to io::JsonReader: depth counting and skipping live here,
// so a header reader only says what it keeps.
#include <sparseact/core/json_events.hpp>

#include <nlohmann/json.hpp>

namespace sparseact::io {
namespace {

using Kind = JsonValue::Kind;

class SaxAdapter {
 public:
  explicit SaxAdapter(JsonReader& reader) : reader_(reader) {}
  std::optional<std::size_t> syntax_error_at;

  bool null() { return scalar(JsonValue{Kind::null}); }
  bool boolean(bool) { return scalar(JsonValue{Kind::boolean}); }
  bool number_integer(std::int64_t v) {  // nlohmann's signed path: a literal with a minus sign
    JsonValue j{Kind::integer};
    j.negative = v < 0;
    j.magnitude = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    return scalar(j);
  }
  bool number_unsigned(std::uint64_t v) {
    JsonValue j{Kind::integer};
    j.magnitude = v;
    return scalar(j);
  }
  bool number_float(double, const std::string&) { return scalar(JsonValue{Kind::floating}); }
  bool string(std::string& s) {
    JsonValue j{Kind::string};
    j.text = &s;
    return scalar(j);
  }
  bool binary(nlohmann::json::binary_t&) { return scalar(JsonValue{Kind::null}); }  // not produced from JSON text
  bool start_object(std::size_t) { return start(Kind::object); }
  bool start_array(std::size_t) { return start(Kind::array); }
  bool end_object() { return finish(); }
  bool end_array() { return finish(); }
  bool key(std::string& k) {
    if (skipping_ == 0) reader_.key(depth_, k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    syntax_error_at = position;
    return false;
  }

 private:
  bool scalar(const JsonValue& v) {
    if (skipping_ == 0) reader_.value(depth_, v);
    return true;
  }
  bool start(Kind kind) {
    if (skipping_ > 0) ++skipping_;
    else if (reader_.value(depth_, JsonValue{kind}) == JsonNext::skip) skipping_ = 1;
    else ++depth_;
    return true;
  }
  bool finish() {
    if (skipping_ > 0) --skipping_;
    else reader_.end(--depth_);
    return true;
  }

  JsonReader& reader_;
  int depth_ = 0;      // containers around the next event that the reader reads
  long skipping_ = 0;  // containers open inside a skipped one, itself included
};

}  // namespace

std::optional<std::size_t> read_json(std::string_view text, JsonReader& reader) {
  SaxAdapter sax(reader);
  nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
  return sax.syntax_error_at;
}

}  // namespace sparseact::io
