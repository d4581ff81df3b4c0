#pragma once
// trace-<rank>-of-<size>.pfw: Chrome trace events, one JSON object per line between a "[" line and
// a "]" line (DLIO's dftracer layout; Perfetto opens it as is). Events are complete ("X") spans:
// epochs, phases, steps with their batch wait and compute, checkpoints, and the storage calls
// (name = the call, cat "POSIX", args: file hash, bytes, offset). Times are microseconds since the
// Unix epoch; pid is the rank, tid the thread. With `every` > 1 only one storage call in `every`
// per thread is written (steps and phases always are).
//
// Each thread collects its events in its own buffer and hands them to the sink when the buffer
// is full and when the thread ends, so tracing costs no lock per event and bounded memory. The
// sink (report/trace_file.hpp) writes the file; a failed write stops tracing and is rethrown by
// finish(), so a trace cut short never passes for a whole one.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/io_observer.hpp"

namespace trainio::metrics::trace {

// Where the trace's text goes, in order; calls are serialised by the trace.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(std::string_view text) = 0;
  // After the last write: the text is complete.
  virtual void commit() = 0;
};

// Starts tracing into `sink`.
void start(std::unique_ptr<Sink> sink, int rank, std::uint64_t every);
bool enabled();
// A storage call (from IoRecorder).
void storage_call(const storage::OpEvent& e);
// A span on the calling thread; `args` is a JSON object's members without braces, or empty.
void span(std::string_view name, std::string_view category, std::int64_t start_ns, std::int64_t end_ns,
          std::string_view args = {});
// Writes the calling thread's pending events and the closing "]", and commits the sink; no events
// are taken after it. Throws the first error the sink raised (the trace is then not committed).
void finish();

}  // namespace trainio::metrics::trace
