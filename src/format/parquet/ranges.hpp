#pragma once
// Byte ranges a Parquet reader fetches for one row group's projected column chunks.

#include <cstdint>
#include <span>
#include <vector>

namespace trainio::format::parquet {

struct Range {
  std::uint64_t offset = 0, length = 0;
  std::uint64_t end() const { return offset + length; }
  bool operator==(const Range&) const = default;
};

// Arrow's ReadRangeCache defaults, which pyarrow's pre_buffer uses.
inline constexpr std::uint64_t kHoleSizeLimit = 8 * 1024;
inline constexpr std::uint64_t kRangeSizeLimit = 32ull * 1024 * 1024;

// Arrow's range coalescing: ranges sorted by offset; a range joins the one before when the hole
// between them is at most `hole_limit` and the joined range stays within `size_limit` (a range
// already larger than the limit stays whole).
std::vector<Range> coalesce(std::vector<Range> ranges, std::uint64_t hole_limit = kHoleSizeLimit,
                            std::uint64_t size_limit = kRangeSizeLimit);

// The DLIO fork's local and S3 readers: one range from the first projected chunk's start to the
// last one's end (what lies between, unprojected columns included, is read too).
Range span_of(std::span<const Range> chunks);

}  // namespace trainio::format::parquet
