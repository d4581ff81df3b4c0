#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "config/load.hpp"
#include "engine/generate/generator.hpp"
#include "format/parquet/footer.hpp"
#include "format/parquet/metadata.hpp"
#include "format/parquet/ranges.hpp"
#include "format/parquet/reader.hpp"
#include "format/parquet/thrift.hpp"
#include "format/parquet/validate.hpp"
#include "format/parquet/writer.hpp"
#include "storage/file.hpp"
#include "unit/format/random_content.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::format::parquet;

namespace {

config::Workload workload(const std::string& extra) {
  return config::load_text(fmt::format("dataset:\n  format: parquet\n  num_files_train: 1\n{}", extra), "test", "parquet");
}

plan::DataFile data_file(const std::string& path, std::uint64_t rows, std::uint64_t sample_bytes = 16) {
  plan::DataFile f;
  f.path = path;
  f.sample.push(sample_bytes);
  f.num_samples = rows;
  return f;
}

std::uint64_t write(const config::Workload& w, const plan::DataFile& f) {
  Writer writer(w);
  test::RandomContent content(7);
  engine::write_data_file(writer, f, content);
  return storage::File::open(f.path).size();
}

class RangeTrace : public storage::IoObserver {
 public:
  void on_op(const storage::OpEvent& e) override {
    if (e.op == storage::Op::read) reads.push_back({e.offset, e.bytes});
    if (e.op == storage::Op::open) ++opens;
  }
  std::vector<Range> reads;
  int opens = 0;
};

const char* kColumns = R"(  parquet:
    row_group_size: 100
    columns:
      - {name: label, dtype: float32}
      - {name: dense, dtype: float32, size: 13}
      - {name: cat, dtype: int8, size: 3}
      - {name: id, dtype: uint64, read: false}
      - {name: half, dtype: float16, size: 2}
)";

}  // namespace

TEST_CASE("thrift compact: field deltas, long ids, negative numbers and nested structs read back") {
  std::string out;
  thrift::Writer w(out);
  w.field_i32(1, -3);
  w.field_i64(20, 1ll << 40);  // a delta over 15: the long field header
  w.begin_struct(21);
  w.field_binary(2, "abc");
  w.field_bool(3, false);
  w.end_struct();
  w.begin_list(22, thrift::Type::i32, 20);
  for (int i = 0; i < 20; ++i) w.list_i32(i - 10);
  w.stop();
  CHECK(static_cast<unsigned char>(out[0]) == 0x15);  // delta 1, i32
  CHECK(static_cast<unsigned char>(out[1]) == 5);     // zigzag(-3)
  thrift::Reader r(out);
  std::int16_t id;
  thrift::Type t;
  REQUIRE(r.next_field(id, t));
  CHECK((id == 1 && r.read_int(t) == -3));
  REQUIRE(r.next_field(id, t));
  CHECK((id == 20 && r.read_int(t) == (1ll << 40)));
  REQUIRE(r.next_field(id, t));
  CHECK(id == 21);
  r.skip(t);
  REQUIRE(r.next_field(id, t));
  CHECK(id == 22);
  thrift::Type e;
  REQUIRE(r.read_list(e) == 20);
  for (int i = 0; i < 20; ++i) CHECK(r.read_int(e) == i - 10);
  CHECK_FALSE(r.next_field(id, t));
  CHECK(r.position() == out.size());
  thrift::Reader cut(std::string_view(out).substr(0, out.size() - 3));
  CHECK_THROWS_AS([&] { while (cut.next_field(id, t)) cut.skip(t); }(), thrift::ThriftError);
}

TEST_CASE("page headers round-trip, v1 and v2") {
  for (const auto type : {PageType::data_page, PageType::data_page_v2}) {
    PageHeader h;
    h.type = type;
    h.uncompressed_page_size = 1 << 20;
    h.compressed_page_size = 12345;
    h.num_values = 4096;
    h.num_rows = 512;
    h.definition_levels_byte_length = 3;
    h.repetition_levels_byte_length = 2048;
    std::string out;
    append_page_header(out, h);
    out += "values";
    std::size_t used = 0;
    const PageHeader back = decode_page_header(out, used);
    CHECK(used == out.size() - 6);
    CHECK(back.type == type);
    CHECK(back.uncompressed_page_size == h.uncompressed_page_size);
    CHECK(back.compressed_page_size == h.compressed_page_size);
    CHECK(back.num_values == h.num_values);
    if (type == PageType::data_page_v2) {
      CHECK(back.num_rows == 512);
      CHECK(back.repetition_levels_byte_length == 2048);
    }
  }
}

TEST_CASE("repetition and definition levels are RLE runs of bit width 1") {
  std::string rep, def;
  list_levels(2, 3, rep, def);
  // per row: run of one 0, run of two 1s
  CHECK(rep == std::string("\x02\x00\x04\x01\x02\x00\x04\x01", 8));
  CHECK(def == std::string("\x0c\x01", 2));  // six 1s
  rep.clear();
  def.clear();
  list_levels(1, 200, rep, def);
  CHECK(rep == std::string("\x02\x00\x8e\x03\x01", 5));  // 199 << 1 = 398 as a varint
}

TEST_CASE("pre_buffer coalescing merges holes up to 8 KiB and stops at 32 MiB") {
  const std::vector<Range> in = {{100000, 10}, {0, 1000}, {1000 + 8192, 50}, {20000, 5}};
  const auto out = coalesce(in);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == Range{0, 1000 + 8192 + 50});  // a hole of exactly 8192 bytes is merged
  CHECK(out[1] == Range{20000, 5});             // 10758 bytes away: its own range
  CHECK(out[2] == Range{100000, 10});
  const std::uint64_t mib = 1 << 20;
  const auto big = coalesce({{0, 20 * mib}, {20 * mib, 20 * mib}, {40 * mib, 1}});
  REQUIRE(big.size() == 2);  // 40 MiB would pass the 32 MiB cap
  CHECK(big[1] == Range{20 * mib, 20 * mib + 1});
  CHECK(span_of(std::vector<Range>{{50, 10}, {10, 5}}) == Range{10, 50});
}

TEST_CASE("the footer of a written file decodes to the schema, row groups and chunk layout") {
  test::TempDir dir("parquet-footer");
  const auto w = workload(kColumns);
  const auto f = data_file(dir / "a.parquet", 250);
  const std::uint64_t size = write(w, f);
  storage::File in = storage::File::open(f.path);
  Footer footer;
  std::string scratch;
  REQUIRE(read_footer(in, size, scratch, footer) == std::nullopt);
  const auto& m = footer.meta;
  CHECK(m.num_rows == 250);
  REQUIRE(m.row_groups.size() == 3);
  CHECK(m.row_groups[2].num_rows == 50);
  CHECK(top_level_names(m.schema) == std::vector<std::string>{"label", "dense", "cat", "id", "half"});
  REQUIRE(m.row_groups[0].columns.size() == 5);
  CHECK(m.row_groups[0].columns[1].num_values == 1300);
  CHECK(m.row_groups[0].columns[0].start() == 4);
  // label: a page header + 100 float32 values, nothing else
  CHECK(m.row_groups[0].columns[0].total_compressed_size > 400);
  CHECK(m.row_groups[0].columns[0].total_compressed_size < 440);
  const Schema s = schema_of(w, f);
  CHECK(check_structure(footer, s.columns, 250) == std::nullopt);
  CHECK(check_structure(footer, s.columns, 251) == std::string("holds 250 rows, expected 251"));
  CHECK(format::parquet::validate_file(w, f) == std::nullopt);
}

TEST_CASE("without compression or float statistics the file's size is known in advance") {
  test::TempDir dir("parquet-size");
  for (const std::string& extra : {std::string("  parquet: {row_group_size: 7}\n"),
                                   std::string("  parquet: {row_group_size: 7, data_page_version: 2}\n"),
                                   fmt::format("{}    write_statistics: false\n", kColumns)}) {
    const auto w = workload(extra);
    for (const std::uint64_t rows : {1u, 7u, 30u}) {
      const auto f = data_file(dir / fmt::format("s{}.parquet", rows), rows, 300);
      Writer writer(w);
      const auto expected = writer.expected_size(f);
      REQUIRE(expected.has_value());
      CHECK(write(w, f) == *expected);
      CHECK(format::parquet::validate_file(w, f) == std::nullopt);
      std::remove(f.path.c_str());
    }
  }
}

TEST_CASE("compressed files validate, with gzip and zstd, v1 and v2 pages") {
  test::TempDir dir("parquet-codecs");
  for (const char* codec : {"gzip", "zstd"}) {
    for (const int version : {1, 2}) {
      const auto w = workload(fmt::format("  compression: {}\n{}    data_page_version: {}\n", codec, kColumns, version));
      const auto f = data_file(dir / fmt::format("{}{}.parquet", codec, version), 120);
      write(w, f);
      INFO(codec << " v" << version);
      CHECK(format::parquet::validate_file(w, f) == std::nullopt);
    }
  }
}

TEST_CASE("validate names what is wrong with a truncated or damaged file") {
  test::TempDir dir("parquet-damage");
  const auto w = workload(kColumns);
  const auto f = data_file(dir / "d.parquet", 150);
  const std::uint64_t size = write(w, f);
  std::string bytes(size, '\0');
  storage::File::open(f.path).pread_exact(bytes.data(), size, 0);
  auto put = [&](const std::string& content) {
    std::remove(f.path.c_str());
    storage::File out = storage::File::open(f.path, {.access = storage::Access::write_new});
    out.pwrite_all(content.data(), content.size(), 0);
  };
  put(bytes.substr(0, size - 1));
  CHECK(format::parquet::validate_file(w, f) == std::string("does not end with the Parquet magic PAR1"));
  put(fmt::format("{}{}", bytes.substr(0, size / 2), bytes.substr(size - 8)));  // the tail kept, the footer gone
  CHECK(format::parquet::validate_file(w, f).has_value());  // what the bytes now at the footer's place decode to varies
  std::string corrupt = bytes;
  corrupt[4] = '\x7f';  // the first page header's first byte
  put(corrupt);
  CHECK(format::parquet::validate_file(w, f).value_or("").find("row group 0 column 'label'") != std::string::npos);
  put(bytes);
  CHECK(format::parquet::validate_file(w, data_file(f.path, 151)) == std::string("holds 150 rows, expected 151"));
}

TEST_CASE("the reader reads the footer once per epoch, then each row group's projected chunks once") {
  test::TempDir dir("parquet-read");
  for (const std::string& storage : {std::string("local_fs"), std::string("parallel_fs")}) {
    const auto w = workload(fmt::format("{}storage:\n  storage_type: {}\n  storage_options: {{columns: [dense, cat, half]}}\n",
                                        kColumns, storage));
    const auto f = data_file(dir / fmt::format("{}.parquet", storage), 250);
    const std::uint64_t size = write(w, f);
    Footer footer;
    std::string scratch;
    storage::File in = storage::File::open(f.path);
    REQUIRE(read_footer(in, size, scratch, footer) == std::nullopt);
    const auto& rg1 = footer.meta.row_groups[1].columns;
    Reader reader(w);
    RangeTrace trace;
    std::uint64_t bytes = 0;
    {
      const storage::ScopedObserver observe(&trace);
      reader.begin_epoch();
      for (const std::uint64_t sample : {150u, 101u, 199u}) bytes = reader.read({&f.path, f.sample, 250, sample, 0});
    }
    INFO(storage);
    CHECK(bytes == 13 * 4 + 3 * 4 + 2 * 2);  // dense, cat widened to int32, half; label and id not read
    REQUIRE(trace.reads.size() >= 2);
    CHECK(trace.reads[0] == Range{0, size});  // a file under 64 KiB: one read of all of it
    std::vector<Range> data(trace.reads.begin() + 1, trace.reads.end());
    const Range dense{static_cast<std::uint64_t>(rg1[1].start()), static_cast<std::uint64_t>(rg1[1].total_compressed_size)};
    const Range cat{static_cast<std::uint64_t>(rg1[2].start()), static_cast<std::uint64_t>(rg1[2].total_compressed_size)};
    const Range half{static_cast<std::uint64_t>(rg1[4].start()), static_cast<std::uint64_t>(rg1[4].total_compressed_size)};
    if (storage == "local_fs") {
      CHECK(data == std::vector<Range>{{dense.offset, half.end() - dense.offset}});  // the fork's span read
    } else {
      CHECK(data == std::vector<Range>{dense, cat, half});  // read_row_group: one read per projected chunk
    }
    // The next epoch reads the footer and the row group again.
    trace.reads.clear();
    {
      const storage::ScopedObserver observe(&trace);
      reader.begin_epoch();
      reader.read({&f.path, f.sample, 250, 120, 0});
    }
    CHECK(trace.reads.size() == data.size() + 1);
  }
}

TEST_CASE("the reader refuses a file that is not the Parquet file the workload describes, naming it") {
  test::TempDir dir("parquet-bad");
  const auto w = workload(kColumns);
  const auto f = data_file(dir / "x.parquet", 150);
  write(w, f);
  Reader reader(w);
  try {
    reader.read({&f.path, f.sample, 151, 0, 0});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("x.parquet") != std::string::npos);
    CHECK(std::string(e.what()).find("holds 150 rows, expected 151") != std::string::npos);
  }
}

TEST_CASE("a footer read again unchanged keeps its index; a changed one is decoded and checked again") {
  test::TempDir dir("parquet-footer-again");
  for (const std::string& storage : {std::string("local_fs"), std::string("parallel_fs")}) {
    INFO(storage);
    const auto w = workload(fmt::format("{}storage:\n  storage_type: {}\n", kColumns, storage));
    const auto f = data_file(dir / fmt::format("{}.parquet", storage), 250);
    write(w, f);
    Reader reader(w);
    RangeTrace first, second;
    for (RangeTrace* trace : {&first, &second}) {
      const storage::ScopedObserver observe(trace);
      reader.begin_epoch();
      for (const std::uint64_t sample : {0u, 120u, 249u}) reader.read({&f.path, f.sample, 250, sample, 0});
    }
    CHECK(second.reads == first.reads);  // the same calls every epoch
    CHECK(second.opens == first.opens);
    // The same file name now holding 150 rows: the new footer is decoded, and refused.
    write(w, data_file(f.path, 150));
    reader.begin_epoch();
    try {
      reader.read({&f.path, f.sample, 250, 0, 0});
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("holds 150 rows, expected 250") != std::string::npos);
    }
  }
}

TEST_CASE("Parquet configuration: the fork's keys load; impossible combinations are config errors") {
  const auto w = workload(fmt::format("{}storage:\n  storage_options: {{columns: [dense]}}\n", kColumns));
  REQUIRE(w.dataset.parquet.columns.size() == 5);
  CHECK(w.dataset.parquet.columns[2].dtype == config::ElementType::int8);
  CHECK(w.dataset.parquet.columns[2].size == 3);
  CHECK_FALSE(w.dataset.parquet.columns[3].read);
  CHECK(w.dataset.parquet.row_group_size == 100);
  auto fails = [](const std::string& extra, const std::string& key) {
    try {
      workload(extra);
      return std::string("no error");
    } catch (const Error& e) {
      const std::string m = e.what();
      return m.find(key) != std::string::npos ? std::string("ok") : m;
    }
  };
  CHECK(fails(fmt::format("{}storage:\n  storage_options: {{columns: [nope]}}\n", kColumns), "storage.storage_options.columns") == "ok");
  CHECK(fails("  compression: bz2\n", "dataset.compression") == "ok");
  CHECK(fails("  parquet:\n    columns: [{name: a, dtype: string}]\n", "dataset.parquet.columns") == "ok");
  CHECK(fails("  parquet:\n    columns: [{name: a}, {name: a}]\n", "dataset.parquet.columns") == "ok");
  CHECK(fails("  parquet:\n    columns: [{name: a, read: false}]\n", "read: false") == "ok");
  CHECK(fails("  parquet:\n    row_group_size: 0\n", "dataset.parquet.row_group_size") == "ok");
  CHECK(fails("  parquet:\n    partition_by: day\n", "dataset.parquet.partition_by") == "ok");
  // On S3: Parquet is read (the fork's ParquetReaderS3Iterable); formats neither DLIO nor the fork
  // read from S3 stay config errors naming the key.
  const std::string s3 = "  data_folder: s3://bucket/pq\n  num_subfolders_train: 0\n  num_subfolders_eval: 0\n"
                         "storage:\n  storage_type: s3\n  storage_options: {access_key_id: k, secret_access_key: s, "
                         "endpoint_url: 'http://127.0.0.1:9'}\nframework: pytorch\nreader:\n  data_loader: pytorch\n";
  CHECK(fails(s3, "no error-expected") == "no error");
  try {
    config::load_text(fmt::format("dataset:\n  format: csv\n  num_files_train: 1\n{}", s3), "test", "csv");
    FAIL("csv on S3 loaded");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("dataset.format 'csv' cannot be read from S3") != std::string::npos);
  }
}

TEST_CASE("a footer longer than pyarrow's 64 KiB footer read costs one more read of all the metadata") {
  test::TempDir dir("parquet-long-footer");
  // 60 columns x 200 row groups: about 60 bytes of metadata per chunk, some 700 KB of footer.
  std::string columns = "  parquet:\n    row_group_size: 1\n    columns:\n";
  for (int k = 0; k < 60; ++k) columns += fmt::format("      - {{name: c{}, dtype: int8}}\n", k);
  const auto w = workload(fmt::format("{}storage:\n  storage_type: parallel_fs\n  storage_options: {{columns: [c7]}}\n", columns));
  const auto f = data_file(dir / "long.parquet", 200);
  const std::uint64_t size = write(w, f);
  storage::File in = storage::File::open(f.path);
  Footer footer;
  std::string scratch;
  REQUIRE(read_footer(in, size, scratch, footer) == std::nullopt);
  const std::uint64_t footer_bytes = size - footer.metadata_offset;
  REQUIRE(footer_bytes > kFooterReadSize);
  CHECK(footer.meta.row_groups.size() == 200);
  CHECK(format::parquet::validate_file(w, f) == std::nullopt);
  Reader reader(w);
  RangeTrace trace;
  {
    const storage::ScopedObserver observe(&trace);
    reader.read({&f.path, f.sample, 200, 150, 0});
  }
  REQUIRE(trace.reads.size() == 3);
  CHECK(trace.reads[0] == Range{size - kFooterReadSize, kFooterReadSize});
  // Arrow's ParseMetaData: ReadAt(metadata_start, metadata_len), the bytes already read included.
  CHECK(trace.reads[1] == Range{footer.metadata_offset, footer_bytes - 8});
  const auto& c7 = footer.meta.row_groups[150].columns[7];
  CHECK(trace.reads[2] == Range{static_cast<std::uint64_t>(c7.start()), static_cast<std::uint64_t>(c7.total_compressed_size)});
}
