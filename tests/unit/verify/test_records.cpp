#include <catch2/catch.hpp>

#include <fstream>

#include "unit/temp_dir.hpp"
#include "util/error.hpp"
#include "verify/records.hpp"

using trainio::verify::read_records;

namespace {

const char* kRank =
    R"({"record":"rank","version":1,"rank":0,"ranks":1,"host_index":0,"hostname":"h","batch_size":2,"batch_size_eval":2,)"
    R"("exclude_start_steps":1,"exclude_end_steps":0})";
const char* kEnd = R"({"record":"end","start":"a","end":"b","stopped_by_time_limit":false})";

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string message_of(const std::string& path) {
  try {
    read_records(path, {});
  } catch (const trainio::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a records file with its closing line reads", "[verify]") {
  trainio::test::TempDir dir("records");
  write(dir / "0_records.jsonl", std::string(kRank) + "\n" + kEnd + "\n");
  int ranks = 0;
  bool ended = false;
  trainio::verify::RecordVisitor v;
  v.rank = [&](const trainio::verify::RankLine& r) { ranks += r.ranks; };
  v.end = [&](const trainio::verify::EndLine&) { ended = true; };
  read_records(dir / "0_records.jsonl", v);
  CHECK(ranks == 1);
  CHECK(ended);
}

TEST_CASE("a records file cut short, damaged or missing is refused, naming it and the line", "[verify]") {
  trainio::test::TempDir dir("records-bad");
  write(dir / "cut.jsonl", std::string(kRank) + "\n");
  CHECK_THAT(message_of(dir / "cut.jsonl"), Catch::Contains("cut.jsonl") && Catch::Contains("cut short"));
  write(dir / "damaged.jsonl", std::string(kRank) + "\n{\"record\":\"phase\",\"kind\":\n" + kEnd + "\n");
  CHECK_THAT(message_of(dir / "damaged.jsonl"), Catch::Contains("damaged at line 2"));
  write(dir / "headless.jsonl", std::string(kEnd) + "\n");
  CHECK_THAT(message_of(dir / "headless.jsonl"), Catch::Contains("line 1") && Catch::Contains("not the rank's"));
  CHECK_THAT(message_of(dir / "none.jsonl"), Catch::Contains("missing"));
}
