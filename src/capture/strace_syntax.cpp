#include <cctype>
#include <string>
#include <string_view>

#include "capture/strace_reader.hpp"

namespace trainio::capture {

namespace strace_syntax {

int split_args(std::string_view args, std::string_view* out, int max) {
  int n = 0;
  std::size_t start = 0;
  scan_outside_strings(args, 0, [&](std::size_t i, char c, int depth) {
    if (c == ',' && depth == 0) {
      if (n < max) out[n++] = args.substr(start, i - start);
      start = i + 1;
    }
    return false;
  });
  if (n < max && start < args.size()) out[n++] = args.substr(start);
  for (int i = 0; i < n; ++i) {
    while (!out[i].empty() && out[i].front() == ' ') out[i].remove_prefix(1);
    while (!out[i].empty() && out[i].back() == ' ') out[i].remove_suffix(1);
  }
  return n;
}

std::string unquote(std::string_view arg) {
  std::string out;
  if (arg.empty() || arg.front() != '"') return std::string(arg);
  for (std::size_t i = 1; i < arg.size(); ++i) {
    char c = arg[i];
    if (c == '"') break;
    if (c != '\\' || i + 1 >= arg.size()) {
      out += c;
      continue;
    }
    c = arg[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'v': out += '\v'; break;
      case 'f': out += '\f'; break;
      case 'x': {
        int v = 0, digits = 0;
        while (digits < 2 && i + 1 < arg.size() && std::isxdigit(static_cast<unsigned char>(arg[i + 1]))) {
          const char h = arg[++i];
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++digits;
        }
        out += static_cast<char>(v);
        break;
      }
      default:
        if (c >= '0' && c <= '7') {  // octal, up to three digits
          int v = c - '0', digits = 1;
          while (digits < 3 && i + 1 < arg.size() && arg[i + 1] >= '0' && arg[i + 1] <= '7') {
            v = v * 8 + (arg[++i] - '0');
            ++digits;
          }
          out += static_cast<char>(v);
        } else {
          out += c;  // \" \\ and anything else stands for itself
        }
    }
  }
  return out;
}

long long number(std::string_view text, bool* ok) {
  constexpr long long kMost = 0x0fffffffffffffffLL;
  bool neg = false;
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') neg = true, ++i;
  long long v = 0;
  bool any = false;
  if (i + 1 < text.size() && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
    for (i += 2; i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i])); ++i, any = true) {
      const char h = text[i];
      if (v > kMost / 16) return ok ? (*ok = false, 0) : 0;  // beyond 64 bits: no number of a trace
      v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
    }
  } else {
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, any = true) {
      if (v > kMost / 10) return ok ? (*ok = false, 0) : 0;
      v = v * 10 + (text[i] - '0');
    }
  }
  if (ok) *ok = any;
  return neg ? -v : v;
}

}  // namespace strace_syntax

}  // namespace trainio::capture
