#pragma once
// Chrome-trace JSON lines as dftracer writes them (DLIO's traces) and as trainio's --trace writes
// them (metrics/trace.hpp): "[" then one event object per line. POSIX-category "X" events become
// capture events, named by the C call (open64, pread64, __xstat64, ...); files are named by
// args.fname (older dftracer) or by args.fhash and the "FH" metadata events that map a hash to
// its path. Bytes are args.ret when it is a count, else args.size; ts and dur are microseconds.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "capture/event.hpp"

namespace trainio::capture {

class PfwReader {
 public:
  PfwReader(std::string name, EventSink sink);
  void line(std::string_view text);
  void finish();  // throws a usage error naming the input when it held no trace events
  // Whether dftracer wrote the trace and it holds no stat call: dftracer 1.0.8 under glibc 2.36
  // records none of Python's fstat calls (DLIO's traces show none), so its stats are unknown.
  bool stats_unrecorded() const { return dftracer_ && stats_ == 0; }

 private:
  void event(std::string_view text);
  void foreign(std::string_view text);  // counts a line that is no trace event, keeping the first

  std::string name_;
  EventSink sink_;
  std::unordered_map<std::string, std::string> paths_;  // fhash -> path
  std::unordered_map<std::string, std::uint64_t> positions_;  // (thread, path) -> where the next call starts
  std::int64_t last_ns_ = 0;
  bool dftracer_ = false;   // an event of dftracer's own category was seen
  std::uint64_t stats_ = 0;  // stat calls seen
  std::uint64_t lines_ = 0, events_ = 0, foreign_ = 0, first_foreign_line_ = 0;
  std::string first_foreign_;
};

// The capture call a dftracer/trainio event name stands for; false when it moves no file data or
// metadata capture counts.
bool pfw_call(std::string_view name, Call* call);

}  // namespace trainio::capture
