#pragma once
// Byte sizes and durations as people write and read them: "4MiB", "1.5GB", "250ms".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainio::util {

// Binary units as floating point, for figures in MiB/s and GiB.
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;

// Parses "4096", "4KiB", "4 KiB", "1.5GB", "2M" (binary when the unit has an i or is a bare
// K/M/G/T letter, decimal for KB/MB/GB/TB). Returns nullopt when the text is not a size.
std::optional<std::uint64_t> parse_bytes(std::string_view text);

// "4.00 KiB", "146.60 MB"-style human text (binary units) for console output.
std::string format_bytes(double bytes);

// "1.23 GiB/s".
std::string format_rate(double bytes_per_second);

// "850 ns", "12.3 us", "4.56 ms", "1.23 s", "2 min 5 s".
std::string format_duration(double seconds);

// Number with thousands separators: 1234567 -> "1,234,567".
std::string format_count(std::uint64_t n);

}  // namespace trainio::util
