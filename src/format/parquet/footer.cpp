#include "format/parquet/footer.hpp"

#include <fmt/format.h>

#include <cstring>

#include "format/parquet/thrift.hpp"

namespace trainio::format::parquet {

std::optional<std::string> read_footer_bytes(const ReadAt& read_at, std::uint64_t size, std::string& scratch,
                                             std::string_view& meta, Footer& out) {
  constexpr std::uint64_t kTail = 8;  // metadata length + magic
  if (size < kMagic.size() + kTail) return fmt::format("is {} bytes, too short for a Parquet file", size);
  const std::uint64_t first = std::min(size, kFooterReadSize);
  scratch.resize(first);
  read_at(scratch.data(), first, size - first);
  if (std::string_view(scratch).substr(first - 4) != kMagic) return std::string("does not end with the Parquet magic PAR1");
  std::uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len |= static_cast<std::uint32_t>(static_cast<unsigned char>(scratch[first - 8 + i])) << (8 * i);
  if (len + kTail + kMagic.size() > size)
    return fmt::format("has a footer length of {} bytes, more than the file holds ({} bytes)", len, size);
  out.file_size = size;
  out.metadata_offset = size - kTail - len;
  if (len + kTail <= first) {
    meta = std::string_view(scratch).substr(first - kTail - len, len);
  } else {
    // Arrow reads the whole metadata again, not only the part the first read missed.
    scratch.resize(len);
    read_at(scratch.data(), len, out.metadata_offset);
    meta = scratch;
  }
  return std::nullopt;
}

std::optional<std::string> decode_footer(std::string_view meta, Footer& out) {
  try {
    out.meta = decode_file_meta(meta);
  } catch (const thrift::ThriftError& e) {
    return fmt::format("has a damaged footer (FileMetaData): {}", e.what());
  }
  return std::nullopt;
}

std::optional<std::string> read_footer(const ReadAt& read_at, std::uint64_t size, std::string& scratch, Footer& out) {
  std::string_view meta;
  if (auto wrong = read_footer_bytes(read_at, size, scratch, meta, out)) return wrong;
  return decode_footer(meta, out);
}

std::optional<std::string> read_footer(storage::File& f, std::uint64_t size, std::string& scratch, Footer& out) {
  return read_footer([&f](char* dest, std::uint64_t length, std::uint64_t offset) { f.pread_exact(dest, length, offset); },
                     size, scratch, out);
}

std::vector<std::string> top_level_names(const std::vector<SchemaNode>& schema) {
  std::vector<std::string> names;
  if (schema.empty()) return names;
  // Depth-first: skip each child's subtree to reach the next top-level field.
  std::size_t i = 1;
  for (std::int32_t child = 0; child < schema[0].num_children && i < schema.size(); ++child) {
    names.push_back(schema[i].name);
    std::int64_t pending = 1;
    while (pending > 0 && i < schema.size()) {
      pending += schema[i].num_children - 1;
      ++i;
    }
  }
  return names;
}

std::optional<std::string> check_structure(const Footer& f, const std::vector<Column>& columns, std::uint64_t rows) {
  const FileMeta& m = f.meta;
  if (m.num_rows < 0 || static_cast<std::uint64_t>(m.num_rows) != rows)
    return fmt::format("holds {} rows, expected {}", m.num_rows, rows);
  const auto names = top_level_names(m.schema);
  if (names.size() != columns.size())
    return fmt::format("has {} columns, expected {}", names.size(), columns.size());
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] != columns[i].name) return fmt::format("column {} is '{}', expected '{}'", i, names[i], columns[i].name);
  std::uint64_t counted = 0, next = kMagic.size();
  for (std::size_t g = 0; g < m.row_groups.size(); ++g) {
    const RowGroupMeta& rg = m.row_groups[g];
    if (rg.num_rows <= 0) return fmt::format("row group {} holds {} rows", g, rg.num_rows);
    counted += static_cast<std::uint64_t>(rg.num_rows);
    if (rg.columns.size() != columns.size())
      return fmt::format("row group {} has {} column chunks, expected {}", g, rg.columns.size(), columns.size());
    for (std::size_t c = 0; c < rg.columns.size(); ++c) {
      const ColumnChunkMeta& k = rg.columns[c];
      const std::uint64_t want_values = static_cast<std::uint64_t>(rg.num_rows) * columns[c].size;
      if (k.num_values < 0 || static_cast<std::uint64_t>(k.num_values) != want_values)
        return fmt::format("row group {} column '{}' holds {} values, expected {}", g, columns[c].name, k.num_values, want_values);
      if (k.start() < 0 || k.total_compressed_size <= 0 || static_cast<std::uint64_t>(k.start()) < next ||
          static_cast<std::uint64_t>(k.start()) + static_cast<std::uint64_t>(k.total_compressed_size) > f.metadata_offset)
        return fmt::format("row group {} column '{}': its chunk ({} bytes at {}) is outside the data area or overlaps another",
                           g, columns[c].name, k.total_compressed_size, k.start());
      next = static_cast<std::uint64_t>(k.start() + k.total_compressed_size);
    }
  }
  if (counted != rows) return fmt::format("row groups hold {} rows, the footer says {}", counted, rows);
  return std::nullopt;
}

}  // namespace trainio::format::parquet
