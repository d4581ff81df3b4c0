#include "engine/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "util/clock.hpp"
#include "util/units.hpp"

namespace trainio::engine {

Progress::Progress(std::string label, std::uint64_t units, std::uint64_t bytes, int scale, bool enabled)
    : label_(std::move(label)),
      total_units_(units),
      total_bytes_(bytes),
      scale_(scale),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) != 0),
      start_ns_(util::now_ns()),
      last_print_ns_(start_ns_) {}

void Progress::advance(std::uint64_t units, std::uint64_t bytes) {
  units_ += units;
  bytes_ += bytes;
  if (!enabled_) return;
  const std::int64_t now = util::now_ns();
  const std::int64_t every = tty_ ? 250'000'000 : 5'000'000'000;
  if (now - last_print_ns_ >= every) {
    last_print_ns_ = now;
    print(false);
  }
}

void Progress::finish() {
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
  if (tty_) std::fprintf(stderr, "\r\033[K%s%s", line.c_str(), final ? "\n" : "");
  else std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

StepProgress::StepProgress(std::string label, std::uint64_t steps, double samples_per_step, bool enabled)
    : label_(std::move(label)),
      total_(steps),
      samples_per_step_(samples_per_step),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) != 0),
      start_ns_(util::now_ns()),
      last_print_ns_(start_ns_) {}

void StepProgress::step(double compute_seconds) {
  ++done_;
  compute_ += compute_seconds;
  if (!enabled_) return;
  const std::int64_t now = util::now_ns();
  constexpr std::int64_t kQuiet = 5'000'000'000;  // short phases print nothing
  const std::int64_t every = tty_ ? 250'000'000 : 10'000'000'000;
  if (now - start_ns_ < kQuiet || (printed_ && now - last_print_ns_ < every)) return;
  last_print_ns_ = now;
  printed_ = true;
  const double elapsed = util::ns_to_s(now - start_ns_);
  const double left = done_ ? elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_) : 0;
  const std::string line = fmt::format("{}: step {}/{}  AU {:.1f}%  {:.1f} samples/s  ETA {}", label_, done_, total_,
                                       100 * compute_ / elapsed, static_cast<double>(done_) * samples_per_step_ / elapsed,
                                       util::format_duration(left));
  if (tty_) std::fprintf(stderr, "\r\033[K%s", line.c_str());
  else std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void StepProgress::finish() {
  if (enabled_ && printed_ && tty_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

}  // namespace trainio::engine
