#pragma once
// Reading a Parquet file's footer as pyarrow's ParquetFile does (one read of the file's last
// 64 KiB, or all of it if smaller; a second read of the metadata's start when it is longer), and
// the structural checks the reader and validate share.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/parquet/metadata.hpp"
#include "format/parquet/schema.hpp"
#include "storage/file.hpp"

namespace trainio::format::parquet {

// Arrow's kDefaultFooterReadSize.
inline constexpr std::uint64_t kFooterReadSize = 64 * 1024;

struct Footer {
  FileMeta meta;
  std::uint64_t file_size = 0;
  std::uint64_t metadata_offset = 0;  // where FileMetaData starts; column chunks end before it
};

// Reads and decodes the footer of the open file `f` of `size` bytes; returns what is wrong instead
// when it is not a Parquet footer. `scratch` is reused across calls.
std::optional<std::string> read_footer(storage::File& f, std::uint64_t size, std::string& scratch, Footer& out);

// The names of the schema's top-level fields, in order.
std::vector<std::string> top_level_names(const std::vector<SchemaNode>& schema);

// What is wrong with the footer of a file that should hold `rows` rows of `columns` (one leaf
// each), or nullopt: row counts, column counts and names, chunks inside the data area, in order,
// not overlapping.
std::optional<std::string> check_structure(const Footer& f, const std::vector<Column>& columns, std::uint64_t rows);

}  // namespace trainio::format::parquet
