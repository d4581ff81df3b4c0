#pragma once
// Parquet's footer (FileMetaData) and page headers, encoded and decoded with the Thrift compact
// protocol (field ids from the format's parquet.thrift). Only the fields trainio writes are
// encoded; decoding keeps what readers and validate need and skips the rest.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainio::format::parquet {

inline constexpr std::string_view kMagic = "PAR1";

enum class PhysicalType : std::int32_t {
  boolean = 0, int32 = 1, int64 = 2, int96 = 3, float32 = 4, float64 = 5, byte_array = 6, fixed_len_byte_array = 7,
};
enum class Codec : std::int32_t { uncompressed = 0, snappy = 1, gzip = 2, zstd = 6 };
enum class PageType : std::int32_t { data_page = 0, dictionary_page = 2, data_page_v2 = 3 };
inline constexpr std::int32_t kPlain = 0, kRle = 3;
// ConvertedType values trainio writes.
inline constexpr std::int32_t kConvertedList = 3;
enum class Repetition : std::int32_t { required = 0, optional = 1, repeated = 2 };

struct Statistics {
  std::string min_value, max_value;  // little-endian values of the column's physical type
  bool has_min_max = false;
};

struct ColumnChunkMeta {
  PhysicalType type = PhysicalType::int32;
  std::vector<std::string> path;  // written; not kept by decoding
  Codec codec = Codec::uncompressed;
  std::int64_t num_values = 0;
  std::int64_t total_uncompressed_size = 0;  // page headers included
  std::int64_t total_compressed_size = 0;    // page headers included
  std::int64_t data_page_offset = 0;
  std::int64_t dictionary_page_offset = 0;  // 0: none
  bool has_statistics = false;
  Statistics statistics;
  // Where the chunk's bytes start: its dictionary page if it has one (as pyarrow and the fork compute it).
  std::int64_t start() const { return dictionary_page_offset > 0 ? dictionary_page_offset : data_page_offset; }
};

struct RowGroupMeta {
  std::vector<ColumnChunkMeta> columns;
  std::int64_t total_byte_size = 0;
  std::int64_t num_rows = 0;
};

// A SchemaElement. Logical types: only those trainio writes are named; others decode as `other`.
struct SchemaNode {
  enum class Logical { none, list, integer, float16, other };
  std::string name;
  std::int32_t type = -1;  // PhysicalType, -1 for groups
  std::int32_t type_length = 0;
  std::int32_t repetition = -1;  // Repetition, -1 when absent (the root)
  std::int32_t num_children = 0;
  std::int32_t converted_type = -1;
  Logical logical = Logical::none;
  std::int32_t bit_width = 0;  // integer logical type
  bool is_signed = true;
};

struct FileMeta {
  std::int32_t version = 1;
  std::vector<SchemaNode> schema;  // depth-first, the root first
  std::int64_t num_rows = 0;
  std::vector<RowGroupMeta> row_groups;
  std::string created_by;
};

struct PageHeader {
  PageType type = PageType::data_page;
  std::int32_t uncompressed_page_size = 0;
  std::int32_t compressed_page_size = 0;
  std::int32_t num_values = 0;
  std::int32_t encoding = kPlain;
  // data page v2
  std::int32_t num_rows = 0;
  std::int32_t definition_levels_byte_length = 0;
  std::int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
};

std::string encode_file_meta(const FileMeta& m);
// Throws thrift::ThriftError on malformed input.
FileMeta decode_file_meta(std::string_view bytes);

void append_page_header(std::string& out, const PageHeader& h);
// Decodes a page header at the start of `bytes`; `consumed` is its length. Throws
// thrift::ThriftError when it is malformed or longer than `bytes`.
PageHeader decode_page_header(std::string_view bytes, std::size_t& consumed);

}  // namespace trainio::format::parquet
