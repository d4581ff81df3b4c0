#pragma once
// Reading a Parquet file's footer as pyarrow's ParquetFile does (one read of the file's last
// 64 KiB, or all of it if smaller; when the metadata is longer than that read holds, a second
// read of all of it, as Arrow's ParseMetaData does), and the structural checks the reader and
// validate share.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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

// Reads `length` bytes at `offset` into `dest` (a file's pread, an object's ranged GET).
using ReadAt = std::function<void(char* dest, std::uint64_t length, std::uint64_t offset)>;

// Reads and decodes the footer of a file of `size` bytes through `read_at`; returns what is wrong
// instead when it is not a Parquet footer. `scratch` is reused across calls.
std::optional<std::string> read_footer(const ReadAt& read_at, std::uint64_t size, std::string& scratch, Footer& out);
// The same through the open file `f`.
std::optional<std::string> read_footer(storage::File& f, std::uint64_t size, std::string& scratch, Footer& out);

// read_footer() in two halves: the reads, leaving `meta` viewing the FileMetaData's bytes in
// `scratch` (and out's sizes set), then decoding them into out.meta.
std::optional<std::string> read_footer_bytes(const ReadAt& read_at, std::uint64_t size, std::string& scratch,
                                             std::string_view& meta, Footer& out);
std::optional<std::string> decode_footer(std::string_view meta, Footer& out);

// The names of the schema's top-level fields, in order.
std::vector<std::string> top_level_names(const std::vector<SchemaNode>& schema);

// What is wrong with the footer of a file that should hold `rows` rows of `columns` (one leaf
// each), or nullopt: row counts, column counts and names, chunks inside the data area, in order,
// not overlapping.
std::optional<std::string> check_structure(const Footer& f, const std::vector<Column>& columns, std::uint64_t rows);

}  // namespace trainio::format::parquet
