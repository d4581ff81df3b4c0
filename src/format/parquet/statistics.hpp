#pragma once
// A column chunk's min/max statistics, folded page by page over the values as Parquet stores
// them: in the column's sort order (unsigned for uint columns), floats in numeric order with NaN
// left out and -0 below +0. Every value of a dataset passes through here once, so the loops are
// written to vectorise and are compiled for AVX-512 and AVX2 as well, picked at run time.

#include <cstdint>
#include <string>

#include "format/parquet/schema.hpp"

namespace trainio::format::parquet {

// The extremes of the values folded so far, as the column's bytes (little-endian values).
struct Extremes {
  bool any = false;  // false while no value (or only NaNs) was folded
  std::string min, max;
};

// Folds `count` values of column `c` (its physical values: int8/int16 widened to int32) at `data`
// into `e`. Columns without min/max statistics (float16) are left alone.
void fold_values(const Column& c, const char* data, std::uint64_t count, Extremes& e);

}  // namespace trainio::format::parquet
