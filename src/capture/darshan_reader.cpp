#include "capture/darshan_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "util/error.hpp"

namespace trainio::capture {

DarshanReader::DarshanReader(std::string name, EventSink sink) : name_(std::move(name)), sink_(std::move(sink)) {}

void DarshanReader::line(std::string_view s) {
  ++lines_;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  if (s.empty()) return;
  if (s.front() == '#') {
    const std::size_t at = s.find("file_name: ");
    if (at != std::string_view::npos) paths_.emplace_back(s.substr(at + 11));
    // MPI-IO segments repeat the POSIX ones below them: only the POSIX module's are used.
    if (s.find("DXT_MPIIO module") != std::string_view::npos) in_posix_ = false;
    if (s.find("DXT_POSIX module") != std::string_view::npos) in_posix_ = true;
    return;
  }
  std::istringstream in{std::string(s)};
  std::string module, op;
  long rank = 0;
  std::uint64_t segment = 0, offset = 0, length = 0;
  double start = 0, end = 0;
  // Seconds since the job's start: beyond 10^9 s (or negative) no clock gave them, and they would
  // not fit nanoseconds in 64 bits.
  constexpr double kLatest = 1e9;
  const auto a_time = [&](double t) { return t >= 0 && t <= kLatest; };  // false for NaN too
  if (!(in >> module >> rank >> op >> segment >> offset >> length >> start >> end) || !module.starts_with("X_") ||
      (op != "read" && op != "write") || paths_.empty() || !a_time(start) || !a_time(end)) {
    ++foreign_;
    return;
  }
  if (!in_posix_ || module != "X_POSIX") return;
  segments_.push_back(Segment{static_cast<std::uint32_t>(paths_.size() - 1), rank, op == "write", offset, length,
                              static_cast<std::int64_t>(start * 1e9), static_cast<std::int64_t>(end * 1e9)});
}

void DarshanReader::finish() {
  if (segments_.empty() || foreign_ * 20 > lines_)
    throw usage_error(fmt::format("{} holds no DXT segments ({} of its {} lines are not darshan-dxt-parser's)", name_,
                                  foreign_, lines_),
                      "give the text darshan-dxt-parser prints for a log written with DXT on (DXT_ENABLE_IO_TRACE=1)");
  std::stable_sort(segments_.begin(), segments_.end(), [](const Segment& a, const Segment& b) { return a.start_ns < b.start_ns; });
  for (const Segment& seg : segments_) {
    Event e;
    e.call = seg.write ? Call::write : Call::read;
    e.pid = seg.rank;
    e.path = paths_[seg.file];
    e.bytes = seg.length;
    e.offset = seg.offset;
    e.has_offset = true;
    e.start_ns = seg.start_ns;
    e.dur_ns = std::max<std::int64_t>(0, seg.end_ns - seg.start_ns);
    sink_(e);
  }
  Event end;
  end.call = Call::mark;
  for (const Segment& seg : segments_) end.start_ns = std::max(end.start_ns, seg.end_ns);
  sink_(end);
}

}  // namespace trainio::capture
