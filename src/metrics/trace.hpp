#pragma once
// trace-<rank>-of-<size>.pfw: Chrome trace events in dftracer's layout (DLIO's traces): a "["
// line, then one JSON object per line with no commas, then a "]" (no newline after it). Perfetto
// reads it as it is; dftracer's tools read it line by line. It is not one JSON document.
//
// Events are complete ("X") spans: epochs, phases, steps with their batch wait and compute,
// checkpoints, and the storage calls (name = the call, cat "POSIX", args: file hash, bytes,
// offset). `ts` and `dur` are microseconds with three decimals (nanoseconds); `ts` counts from
// the time origin that every rank takes from rank 0, written once as wall-clock microseconds.
// pid is the rank, tid the thread. With `every` > 1 only one storage call in `every` per thread
// is written (steps and phases always are).
//
// Metadata ("M") events name things: the rank (process_name "rank R on host H",
// process_sort_index, and dftracer's "PR" entries rank, hostname, time_origin_unix_us), each
// thread that writes events (thread_name, before its first event), and each file hash
// (dftracer's "FH": args.name the path, args.value the hash), written by a thread before its
// first event on that file. A thread remembers the last files it named in a fixed table, so a
// file may be named again by the same thread after many others, and by each thread that uses it.
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

// Whose trace it is and where its times count from.
struct Process {
  int rank = 0;
  std::string host;
  // Wall-clock time (Unix epoch, whole microseconds) that `ts` counts from: the same on every rank.
  std::int64_t origin_unix_us = 0;
};

// Starts tracing into `sink`; the calling thread is the one that calls finish().
void start(std::unique_ptr<Sink> sink, const Process& process, std::uint64_t every);
bool enabled();
// The time origin to pass to start(): now, in wall-clock microseconds.
std::int64_t wall_clock_us();
// Names the calling thread in traces (thread_name); a thread never named is "thread <tid>".
void name_thread(std::string name);
// A storage call (from IoRecorder).
void storage_call(const storage::OpEvent& e);
// A span on the calling thread; `args` is a JSON object's members without braces, or empty.
void span(std::string_view name, std::string_view category, std::int64_t start_ns, std::int64_t end_ns,
          std::string_view args = {});
// Writes the calling thread's pending events and the closing "]", and commits the sink; no events
// are taken after it. Throws the first error the sink raised (the trace is then not committed).
void finish();

}  // namespace trainio::metrics::trace
