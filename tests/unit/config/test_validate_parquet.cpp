// The Parquet rules (config/validate_parquet.cpp, through the loader): what the DLIO fork's keys
// may combine to, and what trainio's Parquet writer and reader do not do.
#include <catch2/catch.hpp>

#include <string>

#include "config/load.hpp"
#include "util/error.hpp"
#include "unit/config/notes.hpp"

using namespace trainio;

using trainio::test::contains;
using trainio::test::noted;

namespace {

config::Workload parquet(const std::string& extra, const std::vector<std::string>& overrides = {}) {
  return config::load_text("framework: pytorch\nreader:\n  data_loader: pytorch\ndataset:\n  format: parquet\n" + extra,
                           "t.yaml", "t", overrides);
}

// The message of the config error loading refuses the workload with.
std::string refusal(const std::string& extra, const std::vector<std::string>& overrides = {}) {
  try {
    parquet(extra, overrides);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
    return e.what();
  }
  FAIL("the workload was accepted");
  return {};
}

}  // namespace

TEST_CASE("a Parquet dataset with the fork's single column, or with a schema, loads") {
  CHECK(parquet("").dataset.parquet.columns.empty());
  const auto w = parquet("  parquet:\n    columns: [{name: a, dtype: float32, size: 4}, {name: b, dtype: uint8, read: false}]\n");
  REQUIRE(w.dataset.parquet.columns.size() == 2);
  CHECK(parquet("", {"dataset.compression=zstd"}).dataset.compression == config::Compression::zstd);
  CHECK(parquet("", {"storage.storage_options.columns=[data]"}).storage.storage_options.columns.size() == 1);
}

TEST_CASE("what the Parquet writer and reader do not do is refused, naming the key") {
  CHECK(contains(refusal("", {"dataset.compression=bz2"}), "dataset.compression 'bz2' is not a Parquet codec"));
  CHECK(contains(refusal("  parquet:\n    partition_by: label\n"), "dataset.parquet.partition_by 'label'"));
  CHECK(contains(refusal("", {"reader.odirect=true"}), "reader.odirect with dataset.format 'parquet'"));
  CHECK(contains(refusal("  parquet:\n    columns: [a, a]\n"), "names 'a' twice"));
  CHECK(contains(refusal("", {"storage.storage_options.columns=[label]"}), "names 'label', which is not a column"));
  CHECK(contains(refusal("  parquet:\n    columns: [{name: a, read: false}]\n"), "would read no column"));
  CHECK(contains(refusal("  parquet:\n    columns: [a, b]\n", {"storage.storage_options.columns=[c]"}),
                 "names 'c', which is not a column"));
}

TEST_CASE("a column wider than a Parquet page is refused, however its size overflows") {
  // 2^28 float32 elements: exactly 1 GiB per row, one byte past what a page can hold.
  CHECK(contains(refusal("  parquet:\n    columns: [{name: x, dtype: float32, size: 268435456}]\n"),
                 "column 'x' holds 268435456 elements of 4 bytes per row"));
  CHECK_NOTHROW(parquet("  parquet:\n    columns: [{name: x, dtype: float32, size: 268435455}]\n"));
  // 2^62 float32 elements: 2^64 bytes, which wraps to 0 in 64 bits.
  CHECK(contains(refusal("  parquet:\n    columns: [{name: x, dtype: float32, size: 4611686018427387904}]\n"),
                 "column 'x' holds"));
  CHECK(contains(refusal("  parquet:\n    columns: [{name: x, dtype: float64, size: 18446744073709551615}]\n"),
                 "column 'x' holds"));
}

TEST_CASE("Parquet keys on another format, and a stdev that a schema overrides, are noted") {
  const auto npz = config::load_text("framework: pytorch\nreader:\n  data_loader: pytorch\ndataset:\n  format: npz\n"
                                     "  parquet:\n    columns: [a]\n",
                                     "t.yaml", "t");
  CHECK(noted(npz, "dataset.parquet.columns"));
  CHECK(noted(parquet("  record_length_bytes_stdev: 10\n  parquet:\n    columns: [a]\n"), "dataset.record_length_bytes_stdev"));
  CHECK_FALSE(noted(parquet("  record_length_bytes_stdev: 10\n"), "dataset.record_length_bytes_stdev"));
}
