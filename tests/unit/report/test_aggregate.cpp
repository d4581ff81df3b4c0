#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "report/aggregate.hpp"

using namespace trainio;

namespace {

// A run as report reads it back: a summary holding the figures, one configuration for all.
report::RunResult run_of(int index, double samples_per_second, double mb_per_second) {
  report::RunResult r;
  r.folder = "run" + std::to_string(index);
  r.workload = "default";
  r.start = "2026-01-01T00:0" + std::to_string(index) + ":00.000000";
  r.end = "2026-01-01T00:0" + std::to_string(index) + ":30.000000";
  r.summary = {{"num_accelerators", 1},
               {"num_hosts", 1},
               {"metric",
                {{"train_throughput_mean_samples_per_second", samples_per_second},
                 {"train_io_mean_MB_per_second", mb_per_second}}}};
  return r;
}

std::string row_of(const std::string& text, const std::string& figure) {
  const auto at = text.find("  " + figure + " ");
  if (at == std::string::npos) return {};
  return text.substr(at, text.find('\n', at) - at);
}

}  // namespace

TEST_CASE("aggregate: one run has no stdev, CV or spread, and no verdict on the 5% spread") {
  const std::vector<report::Aggregate> groups = {report::aggregate_runs({run_of(0, 150, 10)}, false)};
  const auto json = nlohmann::json::parse(report::aggregate_json(groups));
  const auto& f = json.at("figures").at("train_throughput_mean_samples_per_second");
  CHECK(f.at("values") == nlohmann::json::array({150.0}));
  CHECK(f.at("mean") == 150.0);
  for (const char* key : {"stdev", "cv", "spread", "within_5_percent"}) {
    INFO(key);
    CHECK(f.at(key).is_null());
  }
  const std::string text = report::aggregate_text(groups);
  const std::string row = row_of(text, "train_throughput_mean_samples_per_second");
  REQUIRE_FALSE(row.empty());
  // Mean, then stdev, CV and spread: n/a each.
  CHECK(row.find("150.00 samples/s") != std::string::npos);
  CHECK(row.substr(row.find("samples/s")).find_first_of("0123456789") == std::string::npos);
  std::size_t count = 0;
  for (auto at = row.find("n/a"); at != std::string::npos; at = row.find("n/a", at + 1)) ++count;
  CHECK(count == 3);
  CHECK(row.find("SPREAD") == std::string::npos);
  CHECK(text.find("default: 1 run\n") != std::string::npos);
  bool explained = false;
  for (const auto& n : json.at("notes")) explained = explained || n.get<std::string>().find("2 or more runs") != std::string::npos;
  CHECK(explained);
}

TEST_CASE("aggregate: two runs have a stdev, CV and spread; a zero mean has no CV or spread") {
  const std::vector<report::Aggregate> groups = {report::aggregate_runs({run_of(0, 100, 0), run_of(1, 110, 0)}, false)};
  const auto json = nlohmann::json::parse(report::aggregate_json(groups));
  const auto& f = json.at("figures").at("train_throughput_mean_samples_per_second");
  CHECK(f.at("mean") == Approx(105));
  CHECK(f.at("stdev") == Approx(5));          // population stdev (numpy's default)
  CHECK(f.at("cv") == Approx(5.0 / 105));
  CHECK(f.at("spread") == Approx(10.0 / 105));
  CHECK(f.at("within_5_percent") == false);
  CHECK(row_of(report::aggregate_text(groups), "train_throughput_mean_samples_per_second").find("SPREAD > 5%") !=
        std::string::npos);
  // Both runs measured 0: the stdev is 0, but a ratio to a mean of 0 has no value.
  const auto& zero = json.at("figures").at("train_io_mean_MB_per_second");
  CHECK(zero.at("stdev") == 0.0);
  CHECK(zero.at("cv").is_null());
  CHECK(zero.at("spread").is_null());
  CHECK(zero.at("within_5_percent").is_null());
}
