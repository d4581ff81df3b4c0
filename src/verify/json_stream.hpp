#pragma once
// A JSON document read piece by piece from its file, for `trainio verify`: the members of an
// object or elements of an array one at a time, each value's text handed over whole (then parsed
// with JsonDoc) or skipped. Verify reads a run's per-rank files and summary this way, epoch by
// epoch, so that its memory does not grow with the run's epochs.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace trainio::verify {

class JsonStream {
 public:
  JsonStream() = default;
  ~JsonStream();
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  // False when the file cannot be opened. `offset`: where to start reading.
  bool open(const std::string& path, std::uint64_t offset = 0);
  // The file offset of the next character not yet read.
  std::uint64_t offset() const { return file_offset_ - (buffer_.size() - pos_); }

  // The next character after whitespace, not consumed ('\0' at the end of the file).
  char peek();
  // Enters the object or array that comes next (throws a JsonError when another value comes).
  void enter(char open);
  // Moves to the next member or element of the innermost container entered: true with the
  // member's key (its text between the quotes, escapes as written) read with its colon; false
  // when the container closes.
  bool next(std::string* key);
  // The value that comes next, its text appended to `text` (skipped when null).
  void value(std::string* text);
  // Nothing but whitespace is left.
  void end();

 private:
  bool fill();  // reads more; false at the end of the file
  char get();   // the next character, consumed (throws at the end of the file)
  [[noreturn]] void fail(const std::string& what) const;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::size_t pos_ = 0;
  std::uint64_t file_offset_ = 0;  // of the end of buffer_
  std::vector<bool> first_;        // per container entered: no member read yet
};

}  // namespace trainio::verify
