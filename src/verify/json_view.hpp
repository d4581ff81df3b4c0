#pragma once
// A small read-only JSON parser for `trainio verify`: a document is parsed into a flat list of
// tokens pointing into its text (no node per value on the heap, buffers reused from document to
// document), and read through light views. Verify reads hundreds of megabytes of records; a DOM
// per line spent most of its time in malloc.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainio::verify {

// What is wrong with a document or with a value read from it (the caller names file and line).
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class JsonKind : std::uint8_t { null, boolean, number, string, array, object };

class JsonDoc;

// One value of a parsed document; valid while the document and its text live unchanged.
class JsonValue {
 public:
  JsonValue() = default;
  bool valid() const { return doc_ != nullptr; }
  JsonKind kind() const;
  bool is_null() const { return kind() == JsonKind::null; }
  bool is_number() const { return kind() == JsonKind::number; }
  bool is_string() const { return kind() == JsonKind::string; }
  bool is_bool() const { return kind() == JsonKind::boolean; }
  bool is_array() const { return kind() == JsonKind::array; }
  bool is_object() const { return kind() == JsonKind::object; }
  // An unsigned integer (no fraction, exponent or sign), as the records write counts.
  bool is_unsigned() const;

  // The member `key`: throws when absent or when this is not an object; find() gives an invalid
  // value instead.
  JsonValue at(std::string_view key) const;
  JsonValue find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key).valid(); }
  // Element `i` of an array (throws when out of range): O(i), walk with elements() for many.
  JsonValue at(std::size_t i) const;
  std::size_t size() const;  // elements of an array, members of an object

  // Typed reads; each throws a JsonError naming the key when the value is of another type.
  std::uint64_t u64() const;
  std::int64_t i64() const;
  int i32() const;
  double f64() const;
  bool boolean() const;
  std::string str() const;
  // Equal to `s` (a string value only).
  bool equals(std::string_view s) const;
  // The value's text as it is in the document (a string with its quotes).
  std::string_view raw() const;

  // Elements of an array, for range-for.
  class Iterator {
   public:
    JsonValue operator*() const { return JsonValue(doc_, at_, {}); }
    Iterator& operator++();
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }

   private:
    friend class JsonValue;
    Iterator(const JsonDoc* doc, std::uint32_t at) : doc_(doc), at_(at) {}
    const JsonDoc* doc_;
    std::uint32_t at_;
  };
  Iterator begin() const;
  Iterator end() const;

  // Members of an object as (key, value), elements of an array.
  template <typename F>
  void members(F&& f) const;
  template <typename F>
  void elements(F&& f) const;

 private:
  friend class JsonDoc;
  JsonValue(const JsonDoc* doc, std::uint32_t at, std::string_view key) : doc_(doc), at_(at), key_(key) {}
  [[noreturn]] void wrong(const char* wanted) const;
  std::uint32_t next() const;  // the token after this value's subtree
  const JsonDoc* doc_ = nullptr;
  std::uint32_t at_ = 0;
  std::string_view key_;  // for messages: the key this value was reached by
};

// A parsed document. parse() may be called again with another text: its buffers are reused.
class JsonDoc {
 public:
  // Parses `text` (kept by reference: it must outlive the values). Throws a JsonError saying
  // where the text stops being JSON.
  void parse(std::string_view text);
  JsonValue root() const { return JsonValue(this, 0, {}); }

 private:
  friend class JsonValue;
  struct Token {
    std::uint32_t begin = 0, length = 0;  // the value's text (strings: without quotes)
    std::uint32_t next = 0;               // the token after this value's subtree
    std::uint32_t count = 0;              // elements or members of a container
    JsonKind kind = JsonKind::null;
    bool escaped = false;                 // a string holding escapes
  };
  std::uint32_t value(std::size_t& pos, int depth);
  std::string_view text_;
  std::vector<Token> tokens_;
};

// Reads the whole file at `path` into `out` (its buffer reused); false when it cannot be opened.
bool read_text_file(const std::string& path, std::string& out);

// The text of a JSON string's content with its escapes resolved.
std::string json_unescape(std::string_view content);

template <typename F>
void JsonValue::members(F&& f) const {
  if (!is_object()) wrong("an object");
  const auto& t = doc_->tokens_;
  for (std::uint32_t i = at_ + 1; i < t[at_].next;) {
    const std::uint32_t v = i + 1;
    const auto& k = t[i];
    const std::string_view key = doc_->text_.substr(k.begin, k.length);
    if (k.escaped) {
      const std::string unescaped = json_unescape(key);
      f(std::string_view(unescaped), JsonValue(doc_, v, {}));
    } else {
      f(key, JsonValue(doc_, v, key));
    }
    i = t[v].next;
  }
}

template <typename F>
void JsonValue::elements(F&& f) const {
  if (!is_array()) wrong("an array");
  const auto& t = doc_->tokens_;
  for (std::uint32_t i = at_ + 1; i < t[at_].next; i = t[i].next) f(JsonValue(doc_, i, key_));
}

}  // namespace trainio::verify
