#pragma once
// The one event stream every trace reader produces: a storage call of the traced job, with the
// file it was on already resolved from the descriptor. Readers stream; nothing here is kept.

#include <cstdint>
#include <functional>
#include <string_view>

namespace trainio::capture {

// mark: no call, only a time the trace reached (its end), for how long the job ran. step: no
// call either, a training step's compute as the application's own spans give it (DLIO's
// TorchFramework.compute in its dftracer traces), with its duration.
enum class Call : std::uint8_t { open, close, read, write, stat, seek, mmap, fsync, spawn, mark, step };
inline constexpr int kCallCount = 11;
const char* call_name(Call c);

struct Event {
  Call call = Call::read;
  long pid = 0;                // process (or thread) the trace names; 0 when it names none
  std::string_view path;       // the file; empty when the trace does not say (valid during the call only)
  std::uint64_t bytes = 0;     // bytes moved (reads, writes; the mapped length for mmap)
  std::uint64_t offset = 0;    // where a read or write began in the file
  bool has_offset = false;
  std::int64_t start_ns = 0;   // since the trace's own origin (strace: midnight of its day)
  std::int64_t dur_ns = -1;    // how long the call took; -1 when the trace does not say
  bool failed = false;         // returned an error (= -1 ENOENT ...)
  bool for_write = false;      // open: with O_WRONLY, O_RDWR or O_CREAT
  std::uint64_t file_size = 0; // stat: the st_size reported; 0 when not known
  long child = 0;              // spawn: the new process or thread
  bool shares_files = false;   // spawn: the child shares the parent's descriptors (threads)
};

// Where a reader sends its events, in the order the trace holds them.
using EventSink = std::function<void(const Event&)>;

}  // namespace trainio::capture
