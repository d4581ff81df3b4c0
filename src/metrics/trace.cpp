#include "metrics/trace.hpp"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <utility>

#include "util/clock.hpp"

namespace trainio::metrics::trace {

namespace {

constexpr std::size_t kFlushAt = 1u << 20;

struct State {
  std::mutex mutex;
  std::unique_ptr<Sink> sink;
  std::exception_ptr error;  // the sink's first failure: tracing stops, finish() rethrows it
  int rank = 0;
  std::uint64_t every = 1;
  std::int64_t wall_minus_mono_us = 0;  // converts monotonic nanoseconds to wall-clock microseconds
  std::atomic<bool> on{false};
  std::atomic<std::uint64_t> next_id{0};
};

State& state() {
  static State s;
  return s;
}

// Hands a thread's events to the sink. Never throws: it runs in thread-exit destructors.
void write_out(std::string& buffer) {
  if (buffer.empty()) return;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.sink && !s.error) {
    try {
      s.sink->write(buffer);
    } catch (...) {
      s.error = std::current_exception();
      s.on = false;
    }
  }
  buffer.clear();
}

// A thread's pending events, written out when full and when the thread ends.
struct ThreadBuffer {
  std::string text;
  std::uint64_t calls = 0;
  long tid = ::syscall(SYS_gettid);
  ~ThreadBuffer() { write_out(text); }
};

ThreadBuffer& local() {
  thread_local ThreadBuffer b;
  return b;
}

std::int64_t wall_us(std::int64_t mono_ns) { return mono_ns / 1000 + state().wall_minus_mono_us; }

void add(ThreadBuffer& b, std::string_view name, std::string_view category, std::int64_t start_ns, std::int64_t dur_ns,
         std::string_view args) {
  State& s = state();
  fmt::format_to(std::back_inserter(b.text), R"({{"id":{},"name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"ph":"X")",
                 s.next_id.fetch_add(1, std::memory_order_relaxed), name, category, s.rank, b.tid, wall_us(start_ns),
                 std::max<std::int64_t>(0, dur_ns / 1000));
  if (!args.empty()) fmt::format_to(std::back_inserter(b.text), R"(,"args":{{{}}})", args);
  b.text += "}\n";
  if (b.text.size() >= kFlushAt) write_out(b.text);
}

}  // namespace

void start(std::unique_ptr<Sink> sink, int rank, std::uint64_t every) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.sink = std::move(sink);
  s.error = nullptr;
  s.rank = rank;
  s.every = every == 0 ? 1 : every;
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  s.wall_minus_mono_us = (static_cast<std::int64_t>(wall.tv_sec) * 1'000'000 + wall.tv_nsec / 1000) - util::now_ns() / 1000;
  s.sink->write(fmt::format(R"([
{{"id":0,"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":"rank {}"}}}}
)",
                            rank, rank));
  s.next_id = 1;
  s.on = true;
}

bool enabled() { return state().on.load(std::memory_order_relaxed); }

void storage_call(const storage::OpEvent& e) {
  if (!enabled()) return;
  ThreadBuffer& b = local();
  if (b.calls++ % state().every != 0) return;
  // The hash as a hex string: JSON readers hold numbers as doubles, exact only to 2^53.
  std::string args = fmt::format(R"("fhash":"{:016x}","size":{})", e.file, e.bytes);
  if (e.has_offset) args += fmt::format(R"(,"offset":{})", e.offset);
  add(b, storage::op_name(e.op), "POSIX", e.start_ns, e.ns, args);
}

void span(std::string_view name, std::string_view category, std::int64_t start_ns, std::int64_t end_ns,
          std::string_view args) {
  if (!enabled()) return;
  add(local(), name, category, start_ns, end_ns - start_ns, args);
}

void finish() {
  State& s = state();
  write_out(local().text);
  s.on = false;
  std::lock_guard lock(s.mutex);
  const std::unique_ptr<Sink> sink = std::move(s.sink);  // dropped uncommitted on an error
  if (!sink) return;
  if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
  sink->write("]\n");
  sink->commit();
}

}  // namespace trainio::metrics::trace
