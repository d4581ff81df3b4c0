#include "format/parquet/ranges.hpp"

#include <algorithm>

namespace trainio::format::parquet {

std::vector<Range> coalesce(std::vector<Range> ranges, std::uint64_t hole_limit, std::uint64_t size_limit) {
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.offset < b.offset; });
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (r.length == 0) continue;
    if (!out.empty()) {
      Range& last = out.back();
      const bool near = r.offset <= last.end() + hole_limit;
      const std::uint64_t joined = std::max(last.end(), r.end()) - last.offset;
      if (near && joined <= size_limit) {
        last.length = joined;
        continue;
      }
    }
    out.push_back(r);
  }
  return out;
}

Range span_of(std::span<const Range> chunks) {
  if (chunks.empty()) return {};
  std::uint64_t lo = chunks.front().offset, hi = chunks.front().end();
  for (const Range& r : chunks) {
    lo = std::min(lo, r.offset);
    hi = std::max(hi, r.end());
  }
  return {lo, hi - lo};
}

}  // namespace trainio::format::parquet
