#include "verify/json_view.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <limits>

namespace trainio::verify {

namespace {

constexpr int kMaxDepth = 256;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

const char* kind_name(JsonKind k) {
  switch (k) {
    case JsonKind::null: return "null";
    case JsonKind::boolean: return "a boolean";
    case JsonKind::number: return "a number";
    case JsonKind::string: return "a string";
    case JsonKind::array: return "an array";
    case JsonKind::object: return "an object";
  }
  return "?";
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::uint32_t hex4(std::string_view s, std::size_t at) {
  std::uint32_t v = 0;
  if (at + 4 > s.size() || std::from_chars(s.data() + at, s.data() + at + 4, v, 16).ptr != s.data() + at + 4)
    throw JsonError("a bad \\u escape in a string");
  return v;
}

}  // namespace

bool read_text_file(const std::string& path, std::string& out) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return false;
  out.clear();
  char chunk[1 << 16];
  std::fseek(f.get(), 0, SEEK_END);
  if (const long size = std::ftell(f.get()); size > 0) out.reserve(static_cast<std::size_t>(size));
  std::fseek(f.get(), 0, SEEK_SET);
  while (const std::size_t n = std::fread(chunk, 1, sizeof chunk, f.get())) out.append(chunk, n);
  return true;
}

std::string json_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        std::uint32_t cp = hex4(s, i + 1);
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 2 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u') {
          const std::uint32_t low = hex4(s, i + 3);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
        append_utf8(out, cp);
        break;
      }
      default: out += c;  // \" \\ \/
    }
  }
  return out;
}

// Recursive descent over the text; each value appends its token, containers patch theirs when
// their last child is in. Pointers, not indices: this loop is most of verify's parsing time.
std::uint32_t JsonDoc::value(std::size_t& pos, int depth) {
  const char* const base = text_.data();
  const char* const end = base + text_.size();
  const char* p = base + pos;
  auto fail = [&](const char* what) -> JsonError {
    return JsonError(fmt::format("not valid JSON at byte {}: {}", p - base, what));
  };
  while (p < end && is_space(*p)) ++p;
  if (p >= end) throw fail("the text ends where a value should be");
  if (depth > kMaxDepth) throw fail("nested too deeply");
  const auto index = static_cast<std::uint32_t>(tokens_.size());
  tokens_.emplace_back();
  Token t;
  t.begin = static_cast<std::uint32_t>(p - base);
  const char c = *p;
  if (c == '{' || c == '[') {
    const bool object = c == '{';
    t.kind = object ? JsonKind::object : JsonKind::array;
    const char close = object ? '}' : ']';
    ++p;
    while (p < end && is_space(*p)) ++p;
    if (p < end && *p == close) {
      ++p;
    } else {
      while (true) {
        if (object) {
          while (p < end && is_space(*p)) ++p;
          if (p >= end || *p != '"') throw fail("a key should be here");
          pos = static_cast<std::size_t>(p - base);
          value(pos, depth + 1);
          p = base + pos;
          while (p < end && is_space(*p)) ++p;
          if (p >= end || *p != ':') throw fail("':' should follow a key");
          ++p;
        }
        pos = static_cast<std::size_t>(p - base);
        value(pos, depth + 1);
        p = base + pos;
        ++t.count;
        while (p < end && is_space(*p)) ++p;
        if (p < end && *p == ',') {
          ++p;
          continue;
        }
        if (p < end && *p == close) {
          ++p;
          break;
        }
        throw fail(object ? "',' or '}' should be here" : "',' or ']' should be here");
      }
    }
    t.length = static_cast<std::uint32_t>(p - base - t.begin);
  } else if (c == '"') {
    t.kind = JsonKind::string;
    ++p;
    t.begin = static_cast<std::uint32_t>(p - base);
    while (true) {
      if (p >= end) throw fail("a string does not end");
      const auto x = static_cast<unsigned char>(*p);
      if (x == '"') break;
      if (x == '\\') {
        t.escaped = true;
        if (++p >= end) throw fail("a string does not end");
      } else if (x < 0x20) {
        throw fail("a control character in a string");
      }
      ++p;
    }
    t.length = static_cast<std::uint32_t>(p - base - t.begin);
    ++p;
  } else if (c == '-' || is_digit(c)) {
    t.kind = JsonKind::number;
    if (*p == '-') ++p;
    if (p >= end || !is_digit(*p)) throw fail("a number without digits");
    if (*p == '0') ++p;
    else while (p < end && is_digit(*p)) ++p;
    if (p < end && *p == '.') {
      if (++p >= end || !is_digit(*p)) throw fail("a number without digits after its point");
      while (p < end && is_digit(*p)) ++p;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p < end && (*p == '+' || *p == '-')) ++p;
      if (p >= end || !is_digit(*p)) throw fail("a number without digits in its exponent");
      while (p < end && is_digit(*p)) ++p;
    }
    t.length = static_cast<std::uint32_t>(p - base - t.begin);
  } else {
    const auto word = [&](std::string_view w, JsonKind k) {
      if (static_cast<std::size_t>(end - p) < w.size() || std::string_view(p, w.size()) != w) return false;
      t.kind = k;
      t.length = static_cast<std::uint32_t>(w.size());
      p += w.size();
      return true;
    };
    if (!word("null", JsonKind::null) && !word("true", JsonKind::boolean) && !word("false", JsonKind::boolean))
      throw fail("not the start of a value");
  }
  pos = static_cast<std::size_t>(p - base);
  t.next = static_cast<std::uint32_t>(tokens_.size());
  tokens_[index] = t;
  return index;
}

void JsonDoc::parse(std::string_view text) {
  if (text.size() >= std::numeric_limits<std::uint32_t>::max()) throw JsonError("a document over 4 GiB");
  text_ = text;
  tokens_.clear();
  std::size_t pos = 0;
  value(pos, 0);
  while (pos < text.size() && is_space(text[pos])) ++pos;
  if (pos != text.size()) throw JsonError(fmt::format("not valid JSON at byte {}: text after the value", pos));
}

JsonKind JsonValue::kind() const {
  if (doc_ == nullptr) throw JsonError(key_.empty() ? "a value is absent" : fmt::format("no '{}'", key_));
  return doc_->tokens_[at_].kind;
}

std::uint32_t JsonValue::next() const { return doc_->tokens_[at_].next; }

void JsonValue::wrong(const char* wanted) const {
  const std::string what = valid() ? kind_name(kind()) : "nothing";
  if (key_.empty()) throw JsonError(fmt::format("{} where {} should be", what, wanted));
  throw JsonError(fmt::format("'{}' is {}, not {}", key_, what, wanted));
}

JsonValue JsonValue::find(std::string_view key) const {
  if (!is_object()) wrong("an object");
  const auto& t = doc_->tokens_;
  for (std::uint32_t i = at_ + 1; i < t[at_].next;) {
    const auto& k = t[i];
    const std::string_view name = doc_->text_.substr(k.begin, k.length);
    if (k.escaped ? json_unescape(name) == key : name == key) return JsonValue(doc_, i + 1, name);
    i = t[i + 1].next;
  }
  return {};
}

JsonValue JsonValue::at(std::string_view key) const {
  JsonValue v = find(key);
  if (!v.valid()) throw JsonError(fmt::format("no '{}'{}", key, key_.empty() ? "" : fmt::format(" in '{}'", key_)));
  return v;
}

JsonValue JsonValue::at(std::size_t i) const {
  if (!is_array()) wrong("an array");
  const auto& t = doc_->tokens_;
  std::uint32_t at = at_ + 1;
  for (std::size_t n = 0; n < i && at < t[at_].next; ++n) at = t[at].next;
  if (i >= t[at_].count) throw JsonError(fmt::format("{} has no element {}", key_.empty() ? "an array" : fmt::format("'{}'", key_), i));
  return JsonValue(doc_, at, key_);
}

JsonValue::Iterator& JsonValue::Iterator::operator++() {
  at_ = doc_->tokens_[at_].next;
  return *this;
}

JsonValue::Iterator JsonValue::begin() const {
  if (!is_array()) wrong("an array");
  return Iterator(doc_, at_ + 1);
}

JsonValue::Iterator JsonValue::end() const {
  if (!is_array()) wrong("an array");
  return Iterator(doc_, next());
}

std::size_t JsonValue::size() const {
  if (!is_array() && !is_object()) wrong("an array or object");
  return doc_->tokens_[at_].count;
}

bool JsonValue::is_unsigned() const {
  if (!is_number()) return false;
  const std::string_view r = raw();
  return r.find_first_not_of("0123456789") == std::string_view::npos;
}

std::uint64_t JsonValue::u64() const {
  if (!is_unsigned()) wrong("an unsigned integer");
  const std::string_view r = raw();
  std::uint64_t v = 0;
  if (std::from_chars(r.data(), r.data() + r.size(), v).ec != std::errc()) wrong("an unsigned integer in range");
  return v;
}

std::int64_t JsonValue::i64() const {
  const std::string_view r = raw();
  if (!is_number() || r.find_first_of(".eE") != std::string_view::npos) wrong("an integer");
  std::int64_t v = 0;
  if (std::from_chars(r.data(), r.data() + r.size(), v).ec != std::errc()) wrong("an integer in range");
  return v;
}

int JsonValue::i32() const {
  const std::int64_t v = i64();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) wrong("an integer in range");
  return static_cast<int>(v);
}

double JsonValue::f64() const {
  if (!is_number()) wrong("a number");
  const std::string_view r = raw();
  double v = 0;
  const auto [end, ec] = std::from_chars(r.data(), r.data() + r.size(), v);
  // Out of range: JSON allows it, strtod's overflow value (inf, or 0 when too small) is as good.
  if (ec == std::errc::result_out_of_range) return std::strtod(std::string(r).c_str(), nullptr);
  if (ec != std::errc()) wrong("a number");
  return v;
}

bool JsonValue::boolean() const {
  if (!is_bool()) wrong("a boolean");
  return raw() == "true";
}

std::string JsonValue::str() const {
  if (!is_string()) wrong("a string");
  const auto& t = doc_->tokens_[at_];
  const std::string_view content = doc_->text_.substr(t.begin, t.length);
  return t.escaped ? json_unescape(content) : std::string(content);
}

bool JsonValue::equals(std::string_view s) const {
  if (!is_string()) return false;
  const auto& t = doc_->tokens_[at_];
  const std::string_view content = doc_->text_.substr(t.begin, t.length);
  return t.escaped ? json_unescape(content) == s : content == s;
}

std::string_view JsonValue::raw() const {
  const auto& t = doc_->tokens_[at_];
  if (t.kind == JsonKind::string) return doc_->text_.substr(t.begin - 1, t.length + 2);
  return doc_->text_.substr(t.begin, t.length);
}

}  // namespace trainio::verify
