// What one campaign run showed (campaign/outcome.hpp): the figures read from its summary and the
// line a campaign prints for it, or why there is nothing to show.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "campaign/outcome.hpp"
#include "util/units.hpp"

using namespace trainio;

namespace {
// A summary with these DLIO metrics, and trainio's mean read rate when given.
report::RunResult result(const nlohmann::json& metric, std::optional<double> read_rate = std::nullopt) {
  report::RunResult r;
  r.summary = {{"metric", metric}};
  if (read_rate) r.summary["trainio"] = {{"train", {{"read_bytes_per_second_mean", *read_rate}}}};
  return r;
}
}  // namespace

TEST_CASE("a run's figures: the AU mean, its lowest epoch, throughput, reads and the verdict") {
  const auto f = campaign::figures_of(result({{"train_au_mean_percentage", 92.5},
                                              {"train_au_percentage", {95.0, nullptr, 90.0, 92.5}},
                                              {"train_throughput_mean_samples_per_second", 1234.5},
                                              {"train_au_meet_expectation", "success"}},
                                             1.5e9));
  REQUIRE(f.au_mean);
  REQUIRE(f.au_lowest_epoch);
  REQUIRE(f.samples_per_second);
  REQUIRE(f.read_bytes_per_second);
  CHECK(*f.au_mean == 92.5);
  CHECK(*f.au_lowest_epoch == 90.0);  // an epoch without a value is not the lowest
  CHECK(*f.samples_per_second == 1234.5);
  CHECK(*f.read_bytes_per_second == 1.5e9);
  CHECK(f.verdict == "pass");
  CHECK(campaign::figures_of(result({{"train_au_meet_expectation", "fail"}})).verdict == "fail");
  const auto none = campaign::figures_of(result(nlohmann::json::object()));
  CHECK(none.verdict == "unknown");
  CHECK_FALSE(none.au_mean);
  CHECK_FALSE(none.au_lowest_epoch);
  // A hand-edited summary of the wrong types reads as absent, never as a crash.
  const auto odd = campaign::figures_of(result({{"train_au_percentage", "90"}, {"train_au_mean_percentage", "high"}}));
  CHECK_FALSE(odd.au_lowest_epoch);
  CHECK_FALSE(odd.au_mean);
}

TEST_CASE("the line a campaign prints for a run") {
  campaign::JobOutcome o;
  o.log = "dir/run.log";
  o.exit_code = 1;
  CHECK(campaign::outcome_line(o) == "FAILED (exit 1): see dir/run.log");
  o.exit_code = 0;
  CHECK(campaign::outcome_line(o) == "FAILED: it wrote no summary.json (see dir/run.log)");

  o.result = result({{"train_au_mean_percentage", 97.34},
                     {"train_throughput_mean_samples_per_second", 1234.56},
                     {"train_au_meet_expectation", "success"}},
                    1288490188.8);
  CHECK(campaign::outcome_line(o) ==
        "AU 97.3% PASS  1234.6 samples/s  read " + util::format_rate(1288490188.8));
  o.kept = true;
  CHECK(campaign::outcome_line(o).ends_with("  (finished earlier, kept)"));
  o.kept = false;
  o.result = result({{"train_au_mean_percentage", 50.0}, {"train_au_meet_expectation", "fail"}});
  CHECK(campaign::outcome_line(o) == "AU 50.0% FAIL");
  o.result = result({{"train_au_mean_percentage", 50.0}});
  CHECK(campaign::outcome_line(o) == "AU 50.0% (no verdict)");
  o.result = result(nlohmann::json::object());
  CHECK(campaign::outcome_line(o) == "AU -");
}
