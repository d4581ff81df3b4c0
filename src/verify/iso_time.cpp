// ISO 8601 wall times of the records as seconds, for `trainio verify`.
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

#include "verify/run_totals.hpp"

namespace trainio::verify {

// Seconds since the epoch of an ISO 8601 local time with microseconds, read as if it were UTC:
// differences between two such times are exact (to the microsecond) outside a clock change.
namespace {

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The records' own shape, YYYY-MM-DDTHH:MM:SS.ffffff, read without sscanf and timegm (verify
// reads two per span, millions in a long run); nullopt for any other text.
std::optional<double> fixed_iso_seconds(const std::string& t) {
  if (t.size() != 26 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != '.')
    return std::nullopt;
  int v[7] = {};
  const int at[7][2] = {{0, 4}, {5, 2}, {8, 2}, {11, 2}, {14, 2}, {17, 2}, {20, 6}};
  for (int i = 0; i < 7; ++i)
    for (int k = 0; k < at[i][1]; ++k) {
      const char c = t[static_cast<std::size_t>(at[i][0] + k)];
      if (c < '0' || c > '9') return std::nullopt;
      v[i] = v[i] * 10 + (c - '0');
    }
  if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 60) return std::nullopt;
  const std::int64_t days = days_from_civil(v[0], static_cast<unsigned>(v[1]), static_cast<unsigned>(v[2]));
  return static_cast<double>(days * 86400 + v[3] * 3600 + v[4] * 60 + v[5]) + v[6] * 1e-6;
}

}  // namespace

std::optional<double> iso_seconds(const std::string& text) {
  if (const auto fixed = fixed_iso_seconds(text)) return fixed;
  std::tm tm{};
  int micros = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%6d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &micros) != 7)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + micros * 1e-6;
}

std::optional<double> iso_span(const std::string& start, const std::string& end) {
  const auto a = iso_seconds(start), b = iso_seconds(end);
  if (!a || !b) return std::nullopt;
  return *b - *a;
}

}  // namespace trainio::verify
