#include "util/clock.hpp"

#include <fmt/format.h>
#include <sys/time.h>
#include <time.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace trainio::util {

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void sleep_until_ns(std::int64_t deadline_ns) {
  timespec ts;
  ts.tv_sec = deadline_ns / 1'000'000'000;
  ts.tv_nsec = deadline_ns % 1'000'000'000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

namespace {
struct WallNow {
  tm local;
  long micros;
};
// Wall time in microseconds = the monotonic clock plus one offset, taken when first needed: every
// wall time a run writes derives from the monotonic clock by the same mapping, so the difference
// of two is the monotonic span between them (to the microsecond), whatever the wall clock does
// meanwhile (NTP steps and slews it).
std::int64_t wall_offset_us() {
  static const std::int64_t offset = [] {
    timeval tv;
    gettimeofday(&tv, nullptr);
    return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000 + tv.tv_usec - now_ns() / 1000;
  }();
  return offset;
}

WallNow wall_of_us(std::int64_t us) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(us / 1'000'000);
  tv.tv_usec = static_cast<suseconds_t>(us % 1'000'000);
  WallNow w{};
  localtime_r(&tv.tv_sec, &w.local);
  w.micros = tv.tv_usec;
  return w;
}

WallNow wall_of(std::int64_t mono_ns) { return wall_of_us(wall_us_of(mono_ns)); }
}  // namespace

std::int64_t wall_us_of(std::int64_t mono_ns) { return wall_offset_us() + mono_ns / 1000; }

std::string wall_time_iso() { return wall_time_iso_of(now_ns()); }

std::string wall_time_iso_of(std::int64_t mono_ns) { return wall_time_iso_of_us(wall_us_of(mono_ns)); }

std::string wall_time_iso_of_us(std::int64_t wall_us) {
  const WallNow w = wall_of_us(wall_us);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}", w.local.tm_year + 1900,
                     w.local.tm_mon + 1, w.local.tm_mday, w.local.tm_hour, w.local.tm_min,
                     w.local.tm_sec, w.micros);
}

std::string wall_time_compact() {
  const WallNow w = wall_of(now_ns());
  return fmt::format("{:04}{:02}{:02}-{:02}{:02}{:02}", w.local.tm_year + 1900, w.local.tm_mon + 1,
                     w.local.tm_mday, w.local.tm_hour, w.local.tm_min, w.local.tm_sec);
}

std::optional<std::int64_t> process_start_ns() {
  std::FILE* f = std::fopen("/proc/self/stat", "re");
  if (f == nullptr) return std::nullopt;
  char text[1024];
  const std::size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  text[n] = '\0';
  // Fields after the command name (which may hold spaces and parentheses): state is field 3,
  // starttime field 22.
  const char* p = std::strrchr(text, ')');
  if (p == nullptr) return std::nullopt;
  unsigned long long ticks = 0;
  if (std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &ticks) != 1)
    return std::nullopt;
  const long hz = ::sysconf(_SC_CLK_TCK);
  timespec boot{}, mono{};
  if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0 || clock_gettime(CLOCK_MONOTONIC, &mono) != 0) return std::nullopt;
  const auto ns = [](const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; };
  const auto since_boot = static_cast<std::int64_t>(ticks) * (1'000'000'000 / hz);
  return ns(mono) - (ns(boot) - since_boot);
}

double seconds_between(const std::string& start, const std::string& end) {
  auto parse = [](const std::string& s, double& out) {
    std::tm tm{};
    double micros = 0;
    if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d.%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                    &tm.tm_sec, &micros) != 7)
      return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    out = static_cast<double>(std::mktime(&tm)) + micros * 1e-6;
    return true;
  };
  double from = 0, to = 0;
  return parse(start, from) && parse(end, to) ? to - from : 0.0;
}

}  // namespace trainio::util
