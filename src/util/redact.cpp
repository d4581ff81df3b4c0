#include "util/redact.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace trainio::util {

namespace {

bool key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '+' || c == '~';
}

bool blank_or_quote(char c) { return std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '"' || c == '`'; }

// Where a value that starts at `at` ends: past its closing bracket or quote, else at the next
// blank or quote.
std::size_t value_end(std::string_view text, std::size_t at) {
  if (at >= text.size()) return at;
  const char open = text[at];
  if (open == '[' || open == '{') {
    const char close = open == '[' ? ']' : '}';
    int depth = 0;
    for (std::size_t i = at; i < text.size(); ++i) {
      if (text[i] == open) ++depth;
      if (text[i] == close && --depth == 0) return i + 1;
    }
    return text.size();
  }
  std::size_t i = at;
  while (i < text.size() && !blank_or_quote(text[i])) ++i;
  return i;
}

// The user-info of every URL: "scheme://user:password@host" -> "scheme://***@host".
std::string redact_urls(std::string text) {
  for (std::size_t at = text.find("://"); at != std::string::npos; at = text.find("://", at + 3)) {
    const std::size_t start = at + 3;
    std::size_t end = start;
    while (end < text.size() && !blank_or_quote(text[end]) && text[end] != '/' && text[end] != '?' && text[end] != '#')
      ++end;
    const std::size_t userinfo_end = text.rfind('@', end == start ? start : end - 1);
    if (userinfo_end == std::string::npos || userinfo_end < start || userinfo_end >= end) continue;
    if (text.compare(start, userinfo_end - start, kRedacted) == 0) continue;
    text.replace(start, userinfo_end - start, kRedacted);
  }
  return text;
}

}  // namespace

bool url_has_user_info(std::string_view url) { return redact_urls(std::string(url)) != url; }

bool is_secret_key(std::string_view key) {
  const auto dot = key.rfind('.');
  std::string name(dot == std::string_view::npos ? key : key.substr(dot + 1));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static constexpr std::array<std::string_view, 4> kWords{"secret", "password", "passwd", "token"};
  return std::any_of(kWords.begin(), kWords.end(), [&](std::string_view w) { return name.find(w) != std::string::npos; });
}

std::string redact_value(std::string_view key, std::string_view value) {
  if (is_secret_key(key)) return value.empty() ? std::string() : std::string(kRedacted);
  return redact_urls(std::string(value));
}

std::string redact(std::string_view in) {
  std::string text(in);
  for (std::size_t eq = text.find('='); eq != std::string::npos; eq = text.find('=', eq + 1)) {
    std::size_t key_start = eq;
    while (key_start > 0 && key_char(text[key_start - 1])) --key_start;
    if (key_start == eq || !is_secret_key(std::string_view(text).substr(key_start, eq - key_start))) continue;
    const std::size_t end = value_end(text, eq + 1);
    if (end == eq + 1 || text.compare(eq + 1, end - eq - 1, kRedacted) == 0) continue;
    text.replace(eq + 1, end - eq - 1, kRedacted);
  }
  return redact_urls(std::move(text));
}

}  // namespace trainio::util
