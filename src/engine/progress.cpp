#include "engine/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "metrics/live_bytes.hpp"
#include "metrics/live_status.hpp"
#include "util/clock.hpp"
#include "util/units.hpp"

namespace trainio::engine {

namespace {

// Pacing of the live lines: on a terminal from the first second, redrawn 4 times a second;
// elsewhere a line every 10 seconds after the first 5, so short phases print nothing.
struct Pace {
  std::int64_t quiet_ns, every_ns;
};
Pace pace(bool tty) { return tty ? Pace{1'000'000'000, 250'000'000} : Pace{5'000'000'000, 10'000'000'000}; }

// "read 1.2 GiB/s" for one rank; "rank 0 read ..." when others read too (each rank measures its own).
std::string measured_rate(const char* verb, std::uint64_t bytes, double seconds, int ranks) {
  return fmt::format("{}{} {}", ranks > 1 ? "rank 0 " : "", verb,
                     util::format_rate(seconds > 0 ? static_cast<double>(bytes) / seconds : 0));
}

void draw(const std::string& line, bool tty) {
  if (tty) std::fprintf(stderr, "\r\033[K%s", line.c_str());
  else std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void clear_line(bool tty) {
  if (!tty) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace

Progress::Progress(const std::string& kind, std::string label, std::uint64_t units, std::uint64_t bytes, int scale,
                   bool enabled)
    : label_(std::move(label)),
      total_units_(units),
      total_bytes_(bytes),
      scale_(scale),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) != 0),
      start_ns_(util::now_ns()),
      last_print_ns_(start_ns_) {
  metrics::live::begin_phase(kind, label_ + " (this rank's files)", units, 0);
}

void Progress::advance(std::uint64_t units, std::uint64_t bytes) {
  units_ += units;
  bytes_ += bytes;
  metrics::live::advance(units, 0);
  if (!enabled_) return;
  const std::int64_t now = util::now_ns();
  const std::int64_t every = tty_ ? 250'000'000 : 5'000'000'000;
  if (now - last_print_ns_ >= every) {
    last_print_ns_ = now;
    print(false);
  }
}

void Progress::finish() {
  metrics::live::end_phase();
  if (enabled_ && printed_) print(true);
}

void Progress::print(bool final) {
  printed_ = true;
  const double elapsed = util::ns_to_s(util::now_ns() - start_ns_);
  const double rate = elapsed > 0 ? static_cast<double>(bytes_) * scale_ / elapsed : 0;
  const double fraction = total_bytes_ ? static_cast<double>(bytes_) / static_cast<double>(total_bytes_)
                                       : (total_units_ ? static_cast<double>(units_) / static_cast<double>(total_units_) : 1);
  const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  std::string line = fmt::format("{}: {:3.0f}%  {}/{} files  {}  {}", label_, fraction * 100, units_ * scale_,
                                 total_units_ * scale_, util::format_bytes(static_cast<double>(bytes_) * scale_),
                                 util::format_rate(rate));
  if (!final) line += fmt::format("  ETA {}", util::format_duration(eta));
  draw(line + (final && tty_ ? "\n" : ""), tty_);
}

StepProgress::StepProgress(const std::string& kind, std::string label, std::uint64_t steps, double samples_per_step,
                           int ranks, bool enabled)
    : label_(std::move(label)),
      total_(steps),
      samples_per_step_(samples_per_step),
      ranks_(ranks),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) != 0),
      start_ns_(util::now_ns()),
      last_print_ns_(start_ns_),
      read_at_start_(enabled ? metrics::live_bytes().read : 0) {
  metrics::live::begin_phase(kind, label_, steps, samples_per_step);
}

void StepProgress::step(double compute_seconds) {
  ++done_;
  compute_ += compute_seconds;
  metrics::live::advance(1, compute_seconds);
  if (!enabled_) return;
  const std::int64_t now = util::now_ns();
  const Pace p = pace(tty_);
  if (now - start_ns_ < p.quiet_ns || (printed_ && now - last_print_ns_ < p.every_ns)) return;
  last_print_ns_ = now;
  printed_ = true;
  const double elapsed = util::ns_to_s(now - start_ns_);
  const double left = done_ ? elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_) : 0;
  draw(fmt::format("{}: step {}/{}  AU {:.1f}%  {:.1f} samples/s  {}  ETA {}", label_, done_, total_,
                   100 * compute_ / elapsed, static_cast<double>(done_) * samples_per_step_ / elapsed,
                   measured_rate("read", metrics::live_bytes().read - read_at_start_, elapsed, ranks_),
                   util::format_duration(left)),
       tty_);
}

void StepProgress::finish() {
  metrics::live::end_phase();
  if (enabled_ && printed_) clear_line(tty_);
}

LiveLine::LiveLine(std::string label, Direction direction, int ranks, bool enabled)
    : label_(std::move(label)), direction_(direction), ranks_(ranks), tty_(isatty(STDERR_FILENO) != 0),
      start_ns_(util::now_ns()), bytes_at_start_(0) {
  metrics::live::begin_phase(direction == Direction::read ? "checkpoint_load" : "checkpoint_save", label_, 0, 0);
  if (!enabled) return;
  const metrics::LiveBytes now = metrics::live_bytes();
  bytes_at_start_ = direction_ == Direction::read ? now.read : now.written;
  thread_ = std::thread([this] { run(); });
}

LiveLine::~LiveLine() {
  metrics::live::end_phase();
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  if (printed_) clear_line(tty_);
}

void LiveLine::run() {
  const Pace p = pace(tty_);
  std::unique_lock lock(mutex_);
  std::int64_t next = start_ns_ + p.quiet_ns;
  while (!wake_.wait_for(lock, std::chrono::nanoseconds(std::max<std::int64_t>(0, next - util::now_ns())),
                         [this] { return stopping_; })) {
    const std::int64_t now = util::now_ns();
    if (now < next) continue;
    next = now + p.every_ns;
    const metrics::LiveBytes b = metrics::live_bytes();
    const std::uint64_t moved = (direction_ == Direction::read ? b.read : b.written) - bytes_at_start_;
    const double elapsed = util::ns_to_s(now - start_ns_);
    const char* verb = direction_ == Direction::read ? "read" : "written";
    draw(fmt::format("{}: {} {}{} at {}  {}", label_, util::format_bytes(static_cast<double>(moved)), verb,
                     ranks_ > 1 ? " by rank 0" : "",
                     util::format_rate(elapsed > 0 ? static_cast<double>(moved) / elapsed : 0),
                     util::format_duration(elapsed)),
         tty_);
    printed_ = true;
  }
}

}  // namespace trainio::engine
