#include <catch2/catch.hpp>

#include <string>

#include "verify/json_view.hpp"

using trainio::verify::JsonDoc;
using trainio::verify::JsonError;
using trainio::verify::JsonValue;

namespace {

std::string parse_error(const std::string& text) {
  JsonDoc doc;
  try {
    doc.parse(text);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("verify's JSON reader gives the values a record holds", "[verify]") {
  const std::string text =
      R"({"record":"phase","epoch":3,"ns":-12,"seconds":1.5e-3,"ok":true,"none":null,"name":"a\"b\u00e9\n",)"
      R"("sizes":[[1,2],[3,4]],"io":{"read":{"count":18446744073709551615}},"empty":{},"list":[]})";
  JsonDoc doc;
  doc.parse(text);
  const JsonValue o = doc.root();
  CHECK(o.at("record").equals("phase"));
  CHECK(o.at("epoch").u64() == 3);
  CHECK(o.at("ns").i64() == -12);
  CHECK(o.at("seconds").f64() == 1.5e-3);
  CHECK(o.at("ok").boolean());
  CHECK(o.at("none").is_null());
  CHECK(o.at("name").str() == "a\"b\xc3\xa9\n");
  CHECK(o.at("io").at("read").at("count").u64() == 18446744073709551615ULL);
  CHECK(o.at("empty").size() == 0);
  CHECK(o.at("list").size() == 0);
  std::uint64_t sum = 0;
  for (const JsonValue pair : o.at("sizes")) sum += pair.at(0).u64() * pair.at(1).u64();
  CHECK(sum == 1 * 2 + 3 * 4);
  std::string keys;
  o.at("io").members([&](std::string_view k, const JsonValue&) { keys += k; });
  CHECK(keys == "read");
  CHECK_FALSE(o.find("absent").valid());
  CHECK(o.size() == 11);

  // A document parsed again reuses the reader.
  doc.parse("[1, 2.5, \"x\"]");
  CHECK(doc.root().at(1).f64() == 2.5);
  CHECK(doc.root().at(2).str() == "x");
}

TEST_CASE("verify's JSON reader refuses text cut short or not JSON, saying where", "[verify]") {
  CHECK_THAT(parse_error(R"({"record":"phase","epoch":)"), Catch::Contains("not valid JSON at byte 26"));
  CHECK_THAT(parse_error(R"({"record":"phase")"), Catch::Contains("not valid JSON") && Catch::Contains("'}'"));
  CHECK_THAT(parse_error(R"({"record":"pha)"), Catch::Contains("a string does not end"));
  CHECK_THAT(parse_error(R"({"a":1} x)"), Catch::Contains("text after the value"));
  CHECK_THAT(parse_error(R"({"a":01})"), Catch::Contains("not valid JSON"));
  CHECK_THAT(parse_error(R"({"a":1.})"), Catch::Contains("digits after its point"));
  CHECK_THAT(parse_error(R"({"a":tru})"), Catch::Contains("not the start of a value"));
  CHECK_THAT(parse_error(R"({a:1})"), Catch::Contains("a key should be here"));
  CHECK_THAT(parse_error(""), Catch::Contains("ends where a value should be"));
  CHECK(parse_error(std::string(300, '[') + std::string(300, ']')).find("nested too deeply") != std::string::npos);
}

TEST_CASE("verify's JSON reader names the key of a value missing or of the wrong type", "[verify]") {
  JsonDoc doc;
  doc.parse(R"({"steps":"3","epoch":-1,"seconds":2.5,"io":[1],"big":18446744073709551616})");
  const JsonValue o = doc.root();
  auto message = [](auto&& read) {
    try {
      read();
    } catch (const JsonError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message([&] { o.at("samples"); }) == "no 'samples'");
  CHECK(message([&] { o.at("steps").u64(); }) == "'steps' is a string, not an unsigned integer");
  CHECK(message([&] { o.at("epoch").u64(); }) == "'epoch' is a number, not an unsigned integer");
  CHECK(message([&] { o.at("seconds").i64(); }) == "'seconds' is a number, not an integer");
  CHECK(message([&] { o.at("big").u64(); }) == "'big' is a number, not an unsigned integer in range");
  CHECK(message([&] { o.at("io").at("read"); }) == "'io' is an array, not an object");
  CHECK(message([&] { o.at("io").at(1); }) == "'io' has no element 1");
  CHECK(message([&] { o.at("steps").f64(); }) == "'steps' is a string, not a number");
  CHECK(message([&] { o.at("seconds").str(); }) == "'seconds' is a number, not a string");
}
