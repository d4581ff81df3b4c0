#include "format/parquet/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "format/parquet/compress.hpp"
#include "format/parquet/statistics.hpp"
#include "format/stream_writer.hpp"
#include "util/error.hpp"
#include "util/vector_clones.hpp"

namespace trainio::format::parquet {

namespace {

void varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// Widens `count` narrow integers (int8/int16, signed or not) into little-endian int32: one loop
// per type, which the compiler vectorises (a branch per element did not).
template <typename Narrow>
[[gnu::always_inline]] inline void widen_as(const char* in, char* out, std::uint64_t count) {
  for (std::uint64_t i = 0; i < count; ++i) {
    Narrow v;
    std::memcpy(&v, in + i * sizeof(Narrow), sizeof(Narrow));
    const std::int32_t w = v;
    std::memcpy(out + 4 * i, &w, 4);
  }
}
TRAINIO_VECTOR_CLONES void widen_i8(const char* in, char* out, std::uint64_t n) { widen_as<std::int8_t>(in, out, n); }
TRAINIO_VECTOR_CLONES void widen_u8(const char* in, char* out, std::uint64_t n) { widen_as<std::uint8_t>(in, out, n); }
TRAINIO_VECTOR_CLONES void widen_i16(const char* in, char* out, std::uint64_t n) { widen_as<std::int16_t>(in, out, n); }
TRAINIO_VECTOR_CLONES void widen_u16(const char* in, char* out, std::uint64_t n) { widen_as<std::uint16_t>(in, out, n); }

void widen(const char* in, char* out, std::uint64_t count, std::uint32_t from, bool is_signed) {
  if (from == 1) (is_signed ? widen_i8 : widen_u8)(in, out, count);
  else (is_signed ? widen_i16 : widen_u16)(in, out, count);
}

bool is_signed(config::ElementType t) {
  using config::ElementType;
  return t == ElementType::int8 || t == ElementType::int16 || t == ElementType::int32 || t == ElementType::int64;
}

using PageShape = Writer::PageShape;

void page_levels(const Column& c, std::uint64_t rows, PageShape& p) {
  p.rows = rows;
  p.values = rows * c.size;
  p.repetition.clear();
  p.definition.clear();
  if (c.list) list_levels(rows, c.size, p.repetition, p.definition);
}

// The uncompressed body of a page before its values: v1 prefixes each level run with its length.
std::uint64_t levels_bytes(const PageShape& p, int version) {
  if (p.repetition.empty()) return 0;
  return p.repetition.size() + p.definition.size() + (version == 1 ? 8 : 0);
}

PageHeader header_of(const Schema& s, const PageShape& p, std::uint64_t values_bytes, std::uint64_t stored_bytes) {
  PageHeader h;
  h.type = s.page_version == 2 ? PageType::data_page_v2 : PageType::data_page;
  h.uncompressed_page_size = static_cast<std::int32_t>(levels_bytes(p, s.page_version) + values_bytes);
  h.compressed_page_size = static_cast<std::int32_t>(stored_bytes);
  h.num_values = static_cast<std::int32_t>(p.values);
  h.num_rows = static_cast<std::int32_t>(p.rows);
  h.definition_levels_byte_length = static_cast<std::int32_t>(p.definition.size());
  h.repetition_levels_byte_length = static_cast<std::int32_t>(p.repetition.size());
  h.is_compressed = s.codec != Codec::uncompressed;
  return h;
}

ColumnChunkMeta chunk_meta(const Schema& s, const Column& c, std::uint64_t rows) {
  ColumnChunkMeta m;
  m.type = c.physical;
  m.path = c.path();
  m.codec = s.codec;
  m.num_values = static_cast<std::int64_t>(rows * c.size);
  m.has_statistics = s.statistics;
  return m;
}

std::string footer_of(const FileMeta& meta) {
  std::string f = encode_file_meta(meta);
  put_u32(f, static_cast<std::uint32_t>(f.size()));
  f.append(kMagic);
  return f;
}

}  // namespace

void list_levels(std::uint64_t rows, std::uint64_t size, std::string& repetition, std::string& definition) {
  // RLE runs: a header varint (count << 1), then the value in one byte (bit width 1).
  for (std::uint64_t r = 0; r < rows; ++r) {
    varint(repetition, 1 << 1);
    repetition.push_back(0);
    if (size > 1) {
      varint(repetition, (size - 1) << 1);
      repetition.push_back(1);
    }
  }
  varint(definition, (rows * size) << 1);
  definition.push_back(1);
}

std::uint64_t Writer::layout(const Schema& s, std::uint64_t rows, FileMeta& meta) {
  meta = FileMeta{};
  meta.schema = s.nodes();
  meta.num_rows = static_cast<std::int64_t>(rows);
  meta.created_by = "trainio";
  std::uint64_t pos = kMagic.size();
  PageShape p;
  std::string header;
  for (std::uint64_t first = 0; first < rows; first += s.row_group_rows) {
    const std::uint64_t rg_rows = std::min(s.row_group_rows, rows - first);
    RowGroupMeta rg;
    rg.num_rows = static_cast<std::int64_t>(rg_rows);
    for (const auto& c : s.columns) {
      ColumnChunkMeta m = chunk_meta(s, c, rg_rows);
      m.data_page_offset = static_cast<std::int64_t>(pos);
      const std::uint64_t per_page = rows_per_page(c);
      for (std::uint64_t done = 0; done < rg_rows; done += per_page) {
        page_levels(c, std::min(per_page, rg_rows - done), p);
        const std::uint64_t body = levels_bytes(p, s.page_version) + p.values * c.value_bytes;
        header.clear();
        append_page_header(header, header_of(s, p, p.values * c.value_bytes, body));
        pos += header.size() + body;
        m.total_uncompressed_size += static_cast<std::int64_t>(header.size() + body);
      }
      m.total_compressed_size = m.total_uncompressed_size;
      if (s.statistics && c.has_min_max_statistics()) {
        m.statistics.has_min_max = true;
        m.statistics.min_value.assign(c.value_bytes, '\0');
        m.statistics.max_value.assign(c.value_bytes, '\0');
      }
      rg.total_byte_size += m.total_uncompressed_size;
      rg.columns.push_back(std::move(m));
    }
    meta.row_groups.push_back(std::move(rg));
  }
  return pos + footer_of(meta).size();
}

std::optional<std::uint64_t> Writer::expected_size(const plan::DataFile& file) const {
  const Schema s = schema_of(workload_, file);
  if (s.codec != Codec::uncompressed) return std::nullopt;
  // A float chunk of only NaNs has no min/max: its footer is shorter. Such files are recognised by writing.
  for (const auto& c : s.columns)
    if (s.statistics && (c.physical == PhysicalType::float32 || c.physical == PhysicalType::float64)) return std::nullopt;
  FileMeta meta;
  return layout(s, file.num_samples, meta);
}

void Writer::prepare(const plan::DataFile& file) {
  ByteWriter::prepare(file);
  // A file's footer metadata (a ColumnChunk per column and row group) and page scratch are heap
  // memory: made once here, their pages are the process's before the first file is timed (that
  // file took ~200 page faults more than the next).
  const Schema s = schema_of(workload_, file);
  FileMeta meta;
  layout(s, file.num_samples, meta);
  std::uint64_t page = 0;
  for (const auto& c : s.columns) page = std::max(page, rows_per_page(c) * c.row_bytes());
  page_.assign(page, '\0');
  packed_.assign(page, '\0');
}

void Writer::write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) {
  const Schema s = schema_of(workload_, file);
  const std::uint64_t rows = file.num_samples;
  page_starts_.clear();
  StreamWriter w(out, buffer_, beside_);
  w.append(kMagic);
  FileMeta meta;
  meta.schema = s.nodes();
  meta.num_rows = static_cast<std::int64_t>(rows);
  meta.created_by = "trainio";
  for (std::uint64_t first = 0; first < rows; first += s.row_group_rows) {
    const std::uint64_t rg_rows = std::min(s.row_group_rows, rows - first);
    RowGroupMeta rg;
    rg.num_rows = static_cast<std::int64_t>(rg_rows);
    for (const auto& c : s.columns) {
      ColumnChunkMeta m = chunk_meta(s, c, rg_rows);
      m.data_page_offset = static_cast<std::int64_t>(w.position());
      Extremes extremes;
      const std::uint64_t per_page = rows_per_page(c);
      for (std::uint64_t done = 0; done < rg_rows; done += per_page) {
        const PageStart& start = page_start(s, c, std::min(per_page, rg_rows - done));
        const std::size_t levels = start.levels.size();
        const std::uint64_t values = start.shape.values;
        const std::uint64_t values_bytes = values * c.value_bytes;
        if (s.codec == Codec::uncompressed) {
          // Sizes are known before the values: header and levels go first, and the values are made
          // in the write buffer where they fit there (in page_ where they would straddle a write).
          w.append(start.header);
          w.append(start.levels);
          char* at = w.append_in_place(values_bytes);
          const bool in_place = at != nullptr;
          if (!in_place) {
            page_.resize(values_bytes);
            at = page_.data();
          }
          make_values(c, at, values, content);
          if (s.statistics) fold_values(c, at, values, extremes);
          if (!in_place) w.append(page_);
          m.total_uncompressed_size += static_cast<std::int64_t>(start.header.size() + levels + values_bytes);
          m.total_compressed_size += static_cast<std::int64_t>(start.header.size() + levels + values_bytes);
          continue;
        }
        page_.assign(start.levels);
        page_.resize(levels + values_bytes);
        char* at = page_.data() + levels;
        make_values(c, at, values, content);
        if (s.statistics) fold_values(c, at, values, extremes);
        std::string_view stored;
        std::string_view levels_kept;  // v2: levels stay uncompressed, ahead of the compressed values
        if (s.page_version == 2) {
          levels_kept = std::string_view(page_).substr(0, levels);
          compress(s.codec, s.codec_level, std::string_view(page_).substr(levels), packed_);
        } else {
          compress(s.codec, s.codec_level, page_, packed_);
        }
        stored = packed_;
        header_.clear();
        append_page_header(header_, header_of(s, start.shape, values_bytes, levels_kept.size() + stored.size()));
        w.append(header_);
        w.append(levels_kept);
        w.append(stored);
        m.total_uncompressed_size += static_cast<std::int64_t>(header_.size() + levels + values_bytes);
        m.total_compressed_size += static_cast<std::int64_t>(header_.size() + levels_kept.size() + stored.size());
      }
      if (s.statistics && c.has_min_max_statistics() && extremes.any) {
        m.statistics.has_min_max = true;
        m.statistics.min_value = std::move(extremes.min);
        m.statistics.max_value = std::move(extremes.max);
      }
      rg.total_byte_size += m.total_uncompressed_size;
      rg.columns.push_back(std::move(m));
    }
    meta.row_groups.push_back(std::move(rg));
  }
  w.append(footer_of(meta));
  w.flush();
}

const Writer::PageStart& Writer::page_start(const Schema& s, const Column& c, std::uint64_t rows) {
  auto [at, made] = page_starts_.try_emplace({rows, c.size, c.value_bytes, c.list});
  PageStart& start = at->second;
  if (!made) return start;
  page_levels(c, rows, start.shape);
  const PageShape& p = start.shape;
  if (!p.repetition.empty()) {
    if (s.page_version == 1) put_u32(start.levels, static_cast<std::uint32_t>(p.repetition.size()));
    start.levels += p.repetition;
    if (s.page_version == 1) put_u32(start.levels, static_cast<std::uint32_t>(p.definition.size()));
    start.levels += p.definition;
  }
  const std::uint64_t values_bytes = p.values * c.value_bytes;
  if (s.codec == Codec::uncompressed)
    append_page_header(start.header, header_of(s, p, values_bytes, start.levels.size() + values_bytes));
  return start;
}

void Writer::make_values(const Column& c, char* at, std::uint64_t count, ContentSource& content) {
  if (c.element_bytes == c.value_bytes) {
    content.fill(at, count * c.value_bytes);
    return;
  }
  packed_.resize(count * c.element_bytes);
  content.fill(packed_.data(), packed_.size());
  widen(packed_.data(), at, count, c.element_bytes, is_signed(c.dtype));
}

}  // namespace trainio::format::parquet
