#include "util/clock.hpp"

#include <fmt/format.h>
#include <sys/time.h>
#include <time.h>

#include <cerrno>

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
WallNow wall_at(std::int64_t ago_ns) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  const std::int64_t us = static_cast<std::int64_t>(tv.tv_sec) * 1'000'000 + tv.tv_usec - ago_ns / 1000;
  tv.tv_sec = static_cast<time_t>(us / 1'000'000);
  tv.tv_usec = static_cast<suseconds_t>(us % 1'000'000);
  WallNow w{};
  localtime_r(&tv.tv_sec, &w.local);
  w.micros = tv.tv_usec;
  return w;
}
}  // namespace

std::string wall_time_iso() { return wall_time_iso_of(now_ns()); }

std::string wall_time_iso_of(std::int64_t mono_ns) {
  const WallNow w = wall_at(now_ns() - mono_ns);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}", w.local.tm_year + 1900,
                     w.local.tm_mon + 1, w.local.tm_mday, w.local.tm_hour, w.local.tm_min,
                     w.local.tm_sec, w.micros);
}

std::string wall_time_compact() {
  const WallNow w = wall_at(0);
  return fmt::format("{:04}{:02}{:02}-{:02}{:02}{:02}", w.local.tm_year + 1900, w.local.tm_mon + 1,
                     w.local.tm_mday, w.local.tm_hour, w.local.tm_min, w.local.tm_sec);
}

}  // namespace trainio::util
