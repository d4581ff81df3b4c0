// per_epoch.csv (report/tables.hpp): a row per phase of each epoch, in order, with empty cells
// for figures without a value.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "report/tables.hpp"

using namespace trainio;

namespace {
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}
}  // namespace

TEST_CASE("per_epoch.csv: one row per phase, figures in their columns, no value left blank") {
  metrics::RunSummary run;
  CHECK(split(report::per_epoch_csv(run), '\n').size() == 1);  // the header alone

  metrics::EpochSummary e;
  e.epoch = 2;
  e.train.steps = 10;
  e.train.duration = 1.5;
  e.train.au = 0.875;
  e.train.throughput = 200;
  e.train.samples = 300;
  e.train.bytes_read = 3000;
  e.train.read_bandwidth = 2000;
  e.train.slowest.rank = 3;
  e.train.fastest.rank = 1;
  e.train.cpu_user = 0.25;
  for (int i = 1; i <= 100; ++i) e.train.wait_ns.record(static_cast<std::uint64_t>(i) * 1000);
  e.evaluated = true;
  e.eval.steps = 4;
  e.eval.throughput_dlio = 12.5;
  e.eval.storage_read_known = true;
  e.eval.storage_read_bytes = 0;
  run.epochs.push_back(e);
  const auto lines = split(report::per_epoch_csv(run), '\n');
  REQUIRE(lines.size() == 3);
  const auto header = split(lines[0], ',');
  const auto train = split(lines[1], ',');
  const auto eval = split(lines[2], ',');
  REQUIRE(train.size() == header.size());
  REQUIRE(eval.size() == header.size());
  auto column = [&](const std::vector<std::string>& row, const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return row[i];
    FAIL("no column " << name);
    return std::string();
  };
  CHECK(column(train, "epoch") == "2");
  CHECK(column(train, "phase") == "train");
  CHECK(column(train, "steps_per_rank") == "10");
  CHECK(column(train, "duration_seconds") == "1.500000");
  CHECK(column(train, "au_percentage") == "87.5000");
  CHECK(column(train, "dlio_throughput_samples_per_second").empty());  // no value: an empty cell
  CHECK(column(train, "storage_read_bytes").empty());                  // not known
  CHECK(column(train, "slowest_rank") == "3");
  CHECK(column(train, "fastest_rank") == "1");
  CHECK(column(train, "cpu_user_seconds") == "0.250");
  // 50 us, within the histogram's bucket width (under 2%), in seconds with nanosecond digits.
  CHECK(std::stod(column(train, "batch_wait_p50_seconds")) == Approx(50e-6).epsilon(0.02));
  CHECK(column(train, "batch_wait_p50_seconds").size() == std::string("0.000050000").size());
  CHECK(column(eval, "phase") == "eval");
  CHECK(column(eval, "au_percentage").empty());
  CHECK(column(eval, "dlio_throughput_samples_per_second") == "12.5000");
  CHECK(column(eval, "storage_read_bytes") == "0");  // known, and zero
}
