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

TEST_CASE("a records line of the wrong shape is refused, naming the file, the line and the key", "[verify]") {
  trainio::test::TempDir dir("records-shape");
  const std::string phase_start = R"({"record":"phase","kind":"train","epoch":1,"start":"a","end":"b",)";
  // Truncated in the middle of a value, a count that is text, a key missing, a count below zero.
  write(dir / "cut.jsonl", std::string(kRank) + "\n" + phase_start + R"("start_ns":12)" + "\n" + kEnd + "\n");
  CHECK_THAT(message_of(dir / "cut.jsonl"), Catch::Contains("cut.jsonl") && Catch::Contains("damaged at line 2") &&
                                                  Catch::Contains("not valid JSON"));
  write(dir / "typed.jsonl", std::string(kRank) + "\n" + phase_start + R"("start_ns":"12"})" + "\n" + kEnd + "\n");
  CHECK_THAT(message_of(dir / "typed.jsonl"), Catch::Contains("typed.jsonl") && Catch::Contains("damaged at line 2") &&
                                                    Catch::Contains("'start_ns' is a string, not an integer"));
  write(dir / "missing.jsonl", std::string(kRank) + "\n" + phase_start + R"("start_ns":12})" + "\n" + kEnd + "\n");
  CHECK_THAT(message_of(dir / "missing.jsonl"), Catch::Contains("damaged at line 2") && Catch::Contains("no 'end_ns'"));
  const std::string rank = std::string(kRank).replace(std::string(kRank).find("\"batch_size\":2"), 14, "\"batch_size\":-2");
  write(dir / "negative.jsonl", rank + "\n" + kEnd + "\n");
  CHECK_THAT(message_of(dir / "negative.jsonl"), Catch::Contains("damaged at line 1") &&
                                                       Catch::Contains("'batch_size' is a number, not an unsigned integer"));
  write(dir / "kind.jsonl", std::string(kRank) + "\n" + R"({"record":7})" + "\n" + kEnd + "\n");
  CHECK_THAT(message_of(dir / "kind.jsonl"), Catch::Contains("damaged at line 2") && Catch::Contains("'record' is a number, not a string"));
}
