#include "metrics/trace.hpp"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <iterator>
#include <mutex>
#include <utility>
#include <vector>

#include "util/clock.hpp"

namespace trainio::metrics::trace {

namespace {

constexpr std::size_t kFlushAt = 1u << 20;
// Files a thread remembers having named (FH), by hash modulo this: 128 KiB per traced thread.
constexpr std::size_t kNamedFiles = 1u << 14;

struct State {
  std::mutex mutex;
  std::unique_ptr<Sink> sink;
  std::exception_ptr error;  // the sink's first failure: tracing stops, finish() rethrows it
  int rank = 0;
  std::uint64_t every = 1;
  std::int64_t shift_ns = 0;  // monotonic nanoseconds + shift = nanoseconds since the time origin
  std::atomic<bool> on{false};
  std::atomic<std::uint64_t> next_id{0};
  std::atomic<std::uint64_t> session{0};  // which start() the events belong to
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

thread_local std::string thread_label;  // set by name_thread()

// A thread's pending events, written out when full and when the thread ends, and what it has
// named in the current trace.
struct ThreadBuffer {
  std::string text;
  std::uint64_t calls = 0;
  std::uint64_t session = 0;
  bool named = false;                // its thread_name is written
  std::vector<std::uint64_t> files;  // hashes it named, at hash % kNamedFiles; made on first use
  long tid = ::syscall(SYS_gettid);
  ~ThreadBuffer() {
    if (session == state().session.load(std::memory_order_relaxed)) write_out(text);
  }
};

ThreadBuffer& local() {
  thread_local ThreadBuffer b;
  return b;
}

// A JSON string: quotes, backslashes and control characters escaped; other bytes as they are.
void put_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  out += '"';
}

// Nanoseconds as microseconds with three decimals. A reader's double gives back the nanoseconds
// for times below 2^51 ns (26 days) from the origin; from the Unix epoch it would not (0.25 us).
void put_us(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

// A metadata event; `args` is its args object's members.
void put_metadata(std::string& out, std::string_view name, long tid, std::string_view args) {
  State& s = state();
  fmt::format_to(std::back_inserter(out), R"({{"id":{},"name":"{}","cat":"trainio","ph":"M","pid":{},"tid":{},"args":{{{}}}}})",
                 s.next_id.fetch_add(1, std::memory_order_relaxed), name, s.rank, tid, args);
  out += '\n';
}

// The calling thread's buffer for the current trace.
ThreadBuffer& buffer() {
  ThreadBuffer& b = local();
  if (const auto session = state().session.load(std::memory_order_relaxed); b.session != session) {
    b.text.clear();  // left from an earlier trace, whose sink is gone
    b.calls = 0;
    b.named = false;
    b.files.clear();
    b.session = session;
  }
  return b;
}

// The thread's name, before its first event.
void ensure_named(ThreadBuffer& b) {
  if (b.named) return;
  std::string args = R"("name":)";
  put_string(args, thread_label.empty() ? fmt::format("thread {}", b.tid) : thread_label);
  put_metadata(b.text, "thread_name", b.tid, args);
  b.named = true;
}

// dftracer's FH entry for the call's file, unless this thread named it lately.
void name_file(ThreadBuffer& b, const storage::OpEvent& e) {
  if (e.file == 0 || e.path.empty()) return;
  if (b.files.empty()) b.files.assign(kNamedFiles, 0);
  std::uint64_t& slot = b.files[e.file % kNamedFiles];
  if (slot == e.file) return;
  slot = e.file;
  std::string args = R"("name":)";
  put_string(args, storage::hashed_path(e.path));
  fmt::format_to(std::back_inserter(args), R"(,"value":"{:016x}")", e.file);
  put_metadata(b.text, "FH", b.tid, args);
}

void add(ThreadBuffer& b, std::string_view name, std::string_view category, std::int64_t start_ns, std::int64_t dur_ns,
         std::string_view args) {
  State& s = state();
  fmt::format_to(std::back_inserter(b.text), R"({{"id":{},"name":"{}","cat":"{}","pid":{},"tid":{},"ts":)",
                 s.next_id.fetch_add(1, std::memory_order_relaxed), name, category, s.rank, b.tid);
  put_us(b.text, start_ns + s.shift_ns);
  b.text += R"(,"dur":)";
  put_us(b.text, std::max<std::int64_t>(0, dur_ns));
  b.text += R"(,"ph":"X")";
  if (!args.empty()) fmt::format_to(std::back_inserter(b.text), R"(,"args":{{{}}})", args);
  b.text += "}\n";
  if (b.text.size() >= kFlushAt) write_out(b.text);
}

}  // namespace

std::int64_t wall_clock_us() {
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  return static_cast<std::int64_t>(wall.tv_sec) * 1'000'000 + wall.tv_nsec / 1000;
}

void start(std::unique_ptr<Sink> sink, const Process& process, std::uint64_t every) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.sink = std::move(sink);
  s.error = nullptr;
  s.rank = process.rank;
  s.every = every == 0 ? 1 : every;
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  const std::int64_t mono = util::now_ns();
  s.shift_ns = static_cast<std::int64_t>(wall.tv_sec) * 1'000'000'000 + wall.tv_nsec - mono - process.origin_unix_us * 1000;
  s.session.fetch_add(1);
  s.next_id = 0;

  const long tid = local().tid;
  std::string head = "[\n";
  std::string args = R"("name":)";
  put_string(args, fmt::format("rank {} on host {}", process.rank, process.host));
  put_metadata(head, "process_name", tid, args);
  put_metadata(head, "process_sort_index", tid, fmt::format(R"("sort_index":{})", process.rank));
  put_metadata(head, "PR", tid, fmt::format(R"("name":"rank","value":{})", process.rank));
  args = R"("name":"hostname","value":)";
  put_string(args, process.host);
  put_metadata(head, "PR", tid, args);
  put_metadata(head, "PR", tid, fmt::format(R"("name":"time_origin_unix_us","value":{})", process.origin_unix_us));
  s.sink->write(head);
  s.on = true;
}

bool enabled() { return state().on.load(std::memory_order_relaxed); }

void name_thread(std::string name) {
  thread_label = std::move(name);
  // Named after its first event of this trace: the new name follows (a later thread_name wins).
  if (enabled() && local().session == state().session.load(std::memory_order_relaxed)) local().named = false;
}

void storage_call(const storage::OpEvent& e) {
  if (!enabled()) return;
  ThreadBuffer& b = buffer();
  if (b.calls++ % state().every != 0) return;
  ensure_named(b);
  name_file(b, e);
  // The hash as a hex string: JSON readers hold numbers as doubles, exact only to 2^53.
  std::string args = fmt::format(R"("fhash":"{:016x}","size":{})", e.file, e.bytes);
  if (e.has_offset) args += fmt::format(R"(,"offset":{})", e.offset);
  add(b, storage::op_name(e.op), "POSIX", e.start_ns, e.ns, args);
}

void span(std::string_view name, std::string_view category, std::int64_t start_ns, std::int64_t end_ns,
          std::string_view args) {
  if (!enabled()) return;
  ThreadBuffer& b = buffer();
  ensure_named(b);
  add(b, name, category, start_ns, end_ns - start_ns, args);
}

void finish() {
  State& s = state();
  if (local().session == s.session.load(std::memory_order_relaxed)) write_out(local().text);
  s.on = false;
  std::lock_guard lock(s.mutex);
  const std::unique_ptr<Sink> sink = std::move(s.sink);  // dropped uncommitted on an error
  if (!sink) return;
  if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
  sink->write("]");  // no newline after it: Perfetto refuses anything after the closing bracket
  sink->commit();
}

}  // namespace trainio::metrics::trace
