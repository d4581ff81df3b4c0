#include <catch2/catch.hpp>

#include <string>

#include "config/load.hpp"
#include "util/error.hpp"
#include "unit/text.hpp"

using namespace trainio;
using namespace trainio::config;
using trainio::test::contains;

namespace {

Workload sized(const std::vector<std::string>& overrides) {
  return load_text("framework: pytorch\nreader:\n  data_loader: pytorch\ndataset:\n  format: npz\n", "t.yaml", "t",
                   overrides);
}

// The config error a load raises.
Error refused(const std::vector<std::string>& overrides) {
  try {
    sized(overrides);
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected the workload to be refused");
  return internal_error("unreachable");
}

}  // namespace

TEST_CASE("a sample size beyond 2^63 bytes is a config error naming record_length_bytes") {
  for (const char* value : {"1e300", "1e19", "9.3e18"}) {
    const Error e = refused({std::string("dataset.record_length_bytes=") + value});
    CHECK(e.kind() == ErrorKind::config);
    CHECK(contains(e.what(), "dataset.record_length_bytes"));
  }
}

TEST_CASE("record_dims whose product overflows are a config error naming record_dims") {
  const Error e = refused({"dataset.record_dims=[4294967296,4294967296,4294967296]"});
  CHECK(e.kind() == ErrorKind::config);
  CHECK(contains(e.what(), "dataset.record_dims"));
  // The element size counts too: 2^61 float64 elements are 2^64 bytes.
  const Error f = refused({"dataset.record_dims=[2305843009213693952]", "dataset.record_element_type=float64"});
  CHECK(contains(f.what(), "dataset.record_dims"));
  CHECK(contains(f.what(), "float64"));
}

TEST_CASE("a stdev that lets a file draw an unrepresentable sample is a config error") {
  const Error e = refused({"dataset.record_length_bytes_stdev=1e300"});
  CHECK(e.kind() == ErrorKind::config);
  CHECK(contains(e.what(), "dataset.record_length_bytes_stdev"));
  // Representable itself, but a file could draw sides of 9 x 2e14 and a sample of 3e30 bytes.
  const Error draw = refused({"dataset.record_length_bytes_stdev=1e17"});
  CHECK(contains(draw.what(), "dataset.record_length_bytes_stdev"));
  CHECK(contains(draw.what(), "stdev above d"));
  CHECK_NOTHROW(sized({"dataset.record_length_bytes=146600628", "dataset.record_length_bytes_stdev=68341808"}));
}

TEST_CASE("files x samples per file beyond 2^63 is a config error naming both keys") {
  const Error e = refused({"dataset.num_files_train=4294967296", "dataset.num_samples_per_file=4294967296"});
  CHECK(e.kind() == ErrorKind::config);
  CHECK(contains(e.what(), "dataset.num_files_train"));
  CHECK(contains(e.what(), "dataset.num_samples_per_file"));
  const Error eval = refused({"dataset.num_files_eval=4294967296", "dataset.num_samples_per_file=4294967296"});
  CHECK(contains(eval.what(), "dataset.num_files_eval"));
}

TEST_CASE("a dataset of more than 2^63 bytes is a config error naming the keys that make it") {
  const Error e = refused({"dataset.num_files_train=4294967296", "dataset.num_samples_per_file=1024",
                           "dataset.record_length_bytes=4194304"});
  CHECK(e.kind() == ErrorKind::config);
  CHECK(contains(e.what(), "dataset.num_files_train"));
  CHECK(contains(e.what(), "dataset.record_length_bytes"));
  // Large but representable datasets load (whether they fit the disk is checked when generating).
  CHECK_NOTHROW(sized(
      {"dataset.num_files_train=1000000", "dataset.num_samples_per_file=1000", "dataset.record_length_bytes=1e9"}));
}

TEST_CASE("integers written as floats become integers only when they are whole and fit") {
  CHECK(sized({"dataset.num_files_train=8.0"}).dataset.num_files_train == 8);
  CHECK(refused({"dataset.num_files_train=1e300"}).kind() == ErrorKind::config);
  CHECK(refused({"dataset.num_files_train=2.5"}).kind() == ErrorKind::config);
  CHECK(refused({"dataset.num_files_train=9.3e18"}).kind() == ErrorKind::config);
}
