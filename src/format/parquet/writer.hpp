#pragma once
// Writes Parquet files as pyarrow's ParquetWriter lays them out for the DLIO fork's generator:
// "PAR1", then per row group each column's chunk (data pages: levels, then PLAIN values, each
// page optionally compressed), then the FileMetaData footer, its length and "PAR1". Values are
// the generated content (int8/int16 columns widened to INT32 as Parquet stores them).

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "config/workload.hpp"
#include "format/format.hpp"
#include "format/parquet/schema.hpp"

namespace trainio::format::parquet {

class Writer final : public ByteWriter {
 public:
  // A data page's rows, values and levels (without their v1 length prefix).
  struct PageShape {
    std::uint64_t rows = 0, values = 0;
    std::string repetition, definition;
  };
  explicit Writer(const config::Workload& w) : workload_(w) {}
  // Known when the pages are not compressed and every chunk's statistics have a known size.
  std::optional<std::uint64_t> expected_size(const plan::DataFile& file) const override;
  // The write buffer, and the memory a file's pages and footer take, touched before the clock.
  void prepare(const plan::DataFile& file) override;

  // The footer (FileMetaData) and the total size of `file` without writing it: the layout the
  // writer makes when nothing is compressed (statistics sized but not computed).
  static std::uint64_t layout(const Schema& s, std::uint64_t rows, FileMeta& meta);

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;

 private:
  // What a page holds before its values: its shape, its levels as stored (v1: each after its
  // length) and, uncompressed, its header. Every page of the same rows and column shape has the
  // same: made once per file for each, not per page (DLRM's files have 2,000 pages each).
  struct PageStart {
    PageShape shape;
    std::string levels, header;
  };
  const PageStart& page_start(const Schema& s, const Column& c, std::uint64_t rows);
  // `count` values of column `c` from the content stream, as Parquet stores them, at `at`.
  void make_values(const Column& c, char* at, std::uint64_t count, ContentSource& content);
  config::Workload workload_;
  std::string page_, packed_, header_;  // reused across pages and files
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t, bool>, PageStart> page_starts_;  // this file's
};

// The RLE/bit-packed hybrid levels of a page of `rows` lists of `size` elements (bit width 1):
// repetition (0 at each row's start, 1 after) and definition (all 1: every element present).
void list_levels(std::uint64_t rows, std::uint64_t size, std::string& repetition, std::string& definition);

}  // namespace trainio::format::parquet
