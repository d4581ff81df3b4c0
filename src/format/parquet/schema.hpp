#pragma once
// The columns of a Parquet dataset (from the workload: the DLIO fork's column schema, or its single
// `data` column of uint8 lists), how each maps onto Parquet's physical types, and how rows split
// into row groups and pages. Pure functions: the writer, the reader and validate share them.

#include <cstdint>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "format/parquet/metadata.hpp"
#include "plan/layout.hpp"

namespace trainio::format::parquet {

struct Column {
  std::string name;
  config::ElementType dtype = config::ElementType::float32;
  std::uint64_t size = 1;  // elements per row
  bool list = false;       // a fixed-size list (LIST of `size` elements) rather than a scalar
  bool read = true;        // projected by the training reader
  PhysicalType physical = PhysicalType::float32;
  std::uint32_t value_bytes = 4;    // bytes of one value as Parquet stores it (int8 and int16 widen to 4)
  std::uint32_t element_bytes = 4;  // bytes of one element as generated (the dtype's)
  std::uint64_t row_bytes() const { return size * value_bytes; }
  // Leaf path in the schema: [name] or [name, "list", "element"].
  std::vector<std::string> path() const;
  bool has_min_max_statistics() const { return physical != PhysicalType::fixed_len_byte_array; }
};

struct Schema {
  std::vector<Column> columns;
  std::uint64_t row_group_rows = 1024;
  Codec codec = Codec::uncompressed;
  int codec_level = 0;
  bool statistics = true;
  int page_version = 1;
  // SchemaElements, the root first, as FileMetaData lists them.
  std::vector<SchemaNode> nodes() const;
  // Bytes of one row's values, over all columns / the projected ones.
  std::uint64_t row_bytes() const;
  std::uint64_t projected_row_bytes() const;
};

// The schema of `file` (its sample size matters only without dataset.parquet.columns).
Schema schema_of(const config::Workload& w, const plan::DataFile& file);
// The workload's column list (the fork's single `data` column when none is given, sized from
// `sample_elements`), with `read` set from the column flags and storage_options.columns.
std::vector<Column> columns_of(const config::Workload& w, std::uint64_t sample_elements);

// pyarrow's data_page_size: a page holds about this many value bytes (at least one row).
inline constexpr std::uint64_t kPageBytes = 1u << 20;
// pyarrow's data_page_row_count_limit.
inline constexpr std::uint64_t kPageRows = 20000;
std::uint64_t rows_per_page(const Column& c);

}  // namespace trainio::format::parquet
