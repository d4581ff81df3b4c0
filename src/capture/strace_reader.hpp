#pragma once
// strace's text (`strace -f -tt -T -o FILE`, also `-ff` per-process files, `-ttt`, `-y`, and the
// `[pid N]` prefix strace writes to a terminal) turned into capture events. It keeps, per process,
// the open descriptors (path and position) and the calls left `<unfinished ...>`; descriptor
// tables follow clone/fork: threads share one, a forked child starts from a copy.

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "capture/event.hpp"

namespace trainio::capture {

class StraceReader {
 public:
  // `name` names the input in messages; `default_pid` is the process of a `-ff` file (its lines
  // carry no pid).
  StraceReader(std::string name, EventSink sink, long default_pid = 0);
  ~StraceReader();
  StraceReader(const StraceReader&) = delete;
  StraceReader& operator=(const StraceReader&) = delete;

  // One line of the trace, without its newline. Lines that are not strace's are counted; too
  // many of them make finish() refuse the input.
  void line(std::string_view text);
  // Throws a usage error naming the input when it did not look like strace's output.
  void finish();

  std::uint64_t calls() const { return calls_; }

 private:
  struct Fd {
    std::string path;
    std::uint64_t pos = 0;
    bool directory = false;  // opened with O_DIRECTORY: for relative paths only
  };
  using FdTable = std::unordered_map<int, Fd>;
  struct Pending {
    std::string name, args;
    std::int64_t start_ns = 0;
  };

  void call(long pid, std::string_view name, std::string_view args, std::string_view result, std::int64_t start_ns,
            std::int64_t dur_ns);
  std::shared_ptr<FdTable>& table(long pid);
  std::string resolve(long pid, std::string_view dirfd, std::string path);
  void bad(std::string_view text);
  std::int64_t parse_time(std::string_view t);

  std::string name_;
  EventSink sink_;
  long default_pid_;
  std::unordered_map<long, std::shared_ptr<FdTable>> tables_;
  std::unordered_map<long, Pending> pending_;
  std::uint64_t lines_ = 0, calls_ = 0, foreign_ = 0;
  std::uint64_t first_foreign_line_ = 0;
  std::string first_foreign_;
  std::int64_t last_time_ns_ = 0, day_ns_ = 0;
};

// Reads a whole strace text stream.
void read_strace(std::istream& in, const std::string& name, const EventSink& sink, long default_pid = 0);

// The pieces of strace's syntax, for the reader and its tests.
namespace strace_syntax {
// Walks `s` from `from` outside quoted strings: `stop(i, c, depth)` sees each character with the
// depth of brackets around it, before the character itself opens or closes one. Returns the index
// where `stop` returned true, or npos.
template <typename Stop>
std::size_t scan_outside_strings(std::string_view s, std::size_t from, Stop stop) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (stop(i, c, depth)) return i;
    else if (c == '(' || c == '{' || c == '[') ++depth;
    else if (c == ')' || c == '}' || c == ']') --depth;
  }
  return std::string_view::npos;
}
// Splits the text inside a call's parentheses at its top-level commas (strings, braces, brackets
// and parentheses nest). Returns the number of arguments written to `out` (at most `max`).
int split_args(std::string_view args, std::string_view* out, int max);
// A quoted C string as strace writes it ("a\"b\x41\101") without its quotes and escapes; the
// text after the closing quote (`...` of a truncated string) is ignored.
std::string unquote(std::string_view arg);
// The number an argument or result starts with (decimal, 0x hex, or negative); `ok` false if none.
long long number(std::string_view text, bool* ok = nullptr);
}  // namespace strace_syntax

}  // namespace trainio::capture
