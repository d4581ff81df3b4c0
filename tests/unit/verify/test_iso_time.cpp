#include <catch2/catch.hpp>

#include <string>

#include "verify/run_totals.hpp"

using trainio::verify::iso_seconds;

TEST_CASE("verify reads the records' wall times as timegm does", "[verify]") {
  // A leading space takes the general reader (sscanf and timegm): both must agree to the microsecond.
  for (const std::string t : {"1970-01-01T00:00:00.000000", "1969-12-31T23:59:59.999999", "2000-02-29T12:00:00.500000",
                              "2026-11-27T19:28:06.667656", "2100-03-01T00:00:01.000001", "1900-02-28T23:59:59.000000",
                              "2024-12-31T23:59:60.000000"}) {
    const auto fast = iso_seconds(t), general = iso_seconds(" " + t);
    REQUIRE(fast.has_value());
    REQUIRE(general.has_value());
    CHECK(*fast == *general);
  }
  CHECK(*iso_seconds("2026-11-27T19:28:06.667656") == Approx(1795807686.667656).margin(1e-6));
  CHECK_FALSE(iso_seconds("2026-11-27 19:28").has_value());
}
