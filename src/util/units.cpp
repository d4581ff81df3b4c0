#include "util/units.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace trainio::util {

namespace {

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(c));
  return out;
}

std::optional<double> unit_factor(std::string_view unit) {
  const std::string u = lower(unit);
  if (u.empty() || u == "b") return 1.0;
  static constexpr struct {
    const char* name;
    double factor;
  } kUnits[] = {
      {"k", 1024.0},        {"kib", 1024.0},        {"kb", 1e3},
      {"m", 1048576.0},     {"mib", 1048576.0},     {"mb", 1e6},
      {"g", 1073741824.0},  {"gib", 1073741824.0},  {"gb", 1e9},
      {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
  };
  for (const auto& entry : kUnits)
    if (u == entry.name) return entry.factor;
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s = s.substr(start);
  if (s.empty() || s[0] == '-' || s[0] == '+') return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
  const auto factor = unit_factor(std::string_view(end));
  if (!factor) return std::nullopt;
  const double bytes = value * *factor;
  if (bytes > static_cast<double>(std::numeric_limits<std::uint64_t>::max() / 2)) return std::nullopt;
  const double rounded = std::round(bytes);
  if (std::fabs(rounded - bytes) > 1e-6 * std::max(1.0, bytes)) return std::nullopt;  // "1.3 B"
  return static_cast<std::uint64_t>(rounded);
}

std::string format_bytes(double bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024.0 && i < 5) {
    bytes /= 1024.0;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.2f} {}", bytes, kNames[i]);
}

std::string format_rate(double bytes_per_second) { return format_bytes(bytes_per_second) + "/s"; }

std::string format_duration(double seconds) {
  if (seconds < 0) return std::string("-").append(format_duration(-seconds));
  if (seconds < 1e-6) return fmt::format("{:.0f} ns", seconds * 1e9);
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1.0) return fmt::format("{:.2f} ms", seconds * 1e3);
  if (seconds < 120.0) return fmt::format("{:.2f} s", seconds);
  const auto total = static_cast<std::uint64_t>(std::llround(seconds));
  if (total < 7200) return fmt::format("{} min {} s", total / 60, total % 60);
  return fmt::format("{} h {} min", total / 3600, (total % 3600) / 60);
}

std::string format_count(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  const size_t lead = digits.size() % 3;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (i + 3 - lead) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace trainio::util
