// What `trainio verify` records of each comparison (verify/checks.hpp): tolerances, a value on
// one side only, wrong types, what is kept of millions of checks, and paths into the documents.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "verify/checks.hpp"

using namespace trainio::verify;
using nlohmann::json;

TEST_CASE("numbers agree within their tolerance, and null agrees with no value") {
  Checks c;
  const json ten = 10.0, null_value;
  c.number("a", &ten, 10.0, kExact);
  c.number("b", &ten, 10.0 + 1e-10, kRounding);  // relative 1e-11
  c.number("c", &null_value, std::nullopt, kExact);
  c.number("d", nullptr, std::nullopt, kExact);  // absent on both sides
  CHECK(c.count() == 4u);
  CHECK(c.mismatches() == 0u);
  CHECK(c.failed().empty());

  c.number("e", &ten, 10.001, kRounding);
  c.number("f", &ten, std::nullopt, kExact);      // a value on one side only
  c.number("g", &null_value, 3.0, kExact);
  const json text = "10";
  c.number("h", &text, 10.0, kExact);             // a number written as text is wrong
  CHECK(c.count() == 8u);
  CHECK(c.mismatches() == 4u);
  REQUIRE(c.failed().size() == 4u);
  CHECK(c.failed()[0].figure == "e");
  CHECK(c.failed()[0].reported == "10");
  CHECK(c.failed()[0].recomputed == "10.001");
  CHECK(c.failed()[0].difference == "0.0001 (relative)");
  CHECK(c.failed()[1].recomputed == "null");
  CHECK(c.failed()[2].reported == "null");
  CHECK(c.failed()[3].reported == "\"10\"");
}

TEST_CASE("a printed cell is within half a unit of its last decimal") {
  CHECK(printed(2).absolute == Approx(0.005));
  Checks c;
  c.cell("x", "1.2345", 1.23454, printed(4));
  c.cell("y", "1.2345", 1.23456, printed(4));
  c.cell("z", "", std::nullopt, kExact);     // an empty cell is no value
  c.cell("w", "", 0.0, kExact);              // and a value is not nothing
  c.cell("v", "1.5x", 1.5, printed(1));      // not a number at all
  CHECK(c.count() == 5u);
  CHECK(c.mismatches() == 3u);
  CHECK(c.failed()[0].figure == "y");
  CHECK(c.failed()[1].figure == "w");
  CHECK(c.failed()[2].reported == "\"1.5x\"");
}

TEST_CASE("texts, flags and problems") {
  Checks c;
  const json name = "resnet", yes = true, one = 1;
  c.text("t1", &name, "resnet");
  c.text("t2", &name, "unet");
  c.text("t3", nullptr, "unet");
  c.flag("f1", &yes, true);
  c.flag("f2", &one, true);  // 1 is not true
  c.problem("p", "row missing");
  CHECK(c.count() == 6u);
  CHECK(c.mismatches() == 4u);
  CHECK(c.failed()[1].reported == "absent");
  CHECK(c.failed()[3].figure == "p");
  CHECK(c.failed()[3].reported == "row missing");
  REQUIRE(c.headlines().size() == 1u);  // a problem is always a headline
}

TEST_CASE("headlines are kept, mismatches past the first 200 only counted, every check streamed") {
  Checks c;
  std::size_t streamed = 0;
  c.on_check = [&](const Check&) { ++streamed; };
  const json one = 1.0;
  c.number("headline", &one, 1.0, kExact, true);
  for (int i = 0; i < 250; ++i) c.number("bad", &one, 2.0, kExact);
  c.number("good", &one, 1.0, kExact);
  CHECK(streamed == 252u);
  CHECK(c.count() == 252u);
  CHECK(c.mismatches() == 250u);
  CHECK(c.failed().size() == Checks::kKeptMismatches);
  REQUIRE(c.headlines().size() == 1u);
  CHECK(c.headlines()[0].ok);
  CHECK(c.headlines()[0].difference == "0");
}

TEST_CASE("paths into a document: keys and array indexes split by '/'") {
  const json doc = {{"metric", {{"au", {90.5, 91.5}}}}, {"a/b", 1}};
  REQUIRE(find(doc, "metric/au/1") != nullptr);
  CHECK(*find(doc, "metric/au/1") == 91.5);
  CHECK(find(doc, "metric/au/2") == nullptr);
  CHECK(find(doc, "metric/au/x") == nullptr);
  CHECK(find(doc, "metric/au/-1") == nullptr);
  CHECK(find(doc, "metric/missing") == nullptr);
  CHECK(find(doc, "metric/au/0/deeper") == nullptr);
  CHECK(find(doc, "metric")->is_object());
}
