#include <catch2/catch.hpp>

#include "config/load.hpp"
#include "unit/plan/npz_workload.hpp"
#include "plan/fingerprint.hpp"

using namespace trainio;
using namespace trainio::plan;

namespace {
std::string value_of(const Fingerprint& fp, const std::string& key) {
  for (const auto& [k, v] : fp)
    if (k == key) return v;
  return "(absent)";
}
}  // namespace

TEST_CASE("the fingerprint keys on the sample size the dataset has, not on an ignored record_length_bytes") {
  const auto a = dataset_fingerprint(test::npz_workload({"dataset.record_dims=[10,20]"}));
  const auto b =
      dataset_fingerprint(test::npz_workload({"dataset.record_dims=[10,20]", "dataset.record_length_bytes=4096"}));
  CHECK(value_of(a, "dataset.record_length_bytes") == "200");
  CHECK_FALSE(first_difference(a, b));  // the same files: the same dataset
  const auto c =
      dataset_fingerprint(test::npz_workload({"dataset.record_dims=[10,20]", "dataset.record_element_type=float32"}));
  CHECK(value_of(c, "dataset.record_length_bytes") == "800");
  CHECK(first_difference(a, c));
  // Without record_dims the given length is the size, as before (datasets on disk still match).
  CHECK(value_of(dataset_fingerprint(test::npz_workload({"dataset.record_length_bytes=4096"})),
                 "dataset.record_length_bytes") == "4096");
}
