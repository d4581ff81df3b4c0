#pragma once
// Which rank generates which file. With equal file sizes, file k goes to rank k % ranks (as
// DLIO). When sizes vary (record_length_bytes_stdev), files are dealt by bytes instead: largest
// first, each to the rank with the fewest bytes so far (LPT), so no rank writes far longer than
// the others. Pure and identical on every rank.

#include <cstdint>
#include <vector>

#include "plan/layout.hpp"

namespace trainio::plan {

// Global file indices (see DatasetLayout::file_by_global_index) that `rank` generates, ascending.
std::vector<std::uint64_t> files_to_generate(const DatasetLayout& layout, int rank, int ranks);

}  // namespace trainio::plan
