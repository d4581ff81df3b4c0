#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "report/json_stream.hpp"

using trainio::report::JsonStream;
using json = nlohmann::ordered_json;

namespace {

// Streams `doc` through JsonStream, arrays of numbers value by value, everything else whole.
void stream(const json& doc, JsonStream& out) {
  if (doc.is_object()) {
    out.begin_object();
    for (const auto& [k, v] : doc.items()) {
      out.key(k);
      stream(v, out);
    }
    out.end_object();
  } else if (doc.is_array()) {
    out.begin_array();
    for (const auto& v : doc) stream(v, out);
    out.end_array();
  } else if (doc.is_number_float()) {
    out.number(doc.get<double>());
  } else {
    out.value(doc);
  }
}

std::string streamed(const json& doc) {
  std::string text;
  JsonStream out([&](std::string_view piece) { text += piece; });
  stream(doc, out);
  out.finish();
  return text;
}

}  // namespace

TEST_CASE("the JSON stream writes what nlohmann's dump(4) writes") {
  json doc;
  doc["host"] = "node\"1\"";
  doc["empty_object"] = json::object();
  doc["empty_array"] = json::array();
  doc["count"] = 8;
  json lists = json::object();
  lists["block1"] = {0.0, 1.0, 2.5, 1e-4, 9.99e-5, 1e-5, 1.5e-7, 123456.789, 1e15, 1e16, 3e20,
                     static_cast<double>(0.018341651f), static_cast<double>(3.0e-6f), -0.25};
  lists["eval"] = json::array();
  doc["1"] = {{"load", lists}, {"au", {{"block1", nullptr}}}, {"meminfo", {{"MemTotal", "24 kB"}}}, {"end", "t"}};
  doc["nested"] = json::array({json::array({1, 2}), json::object({{"a", json::array()}})});
  CHECK(streamed(doc) == doc.dump(4));
}

TEST_CASE("the JSON stream writes numbers as nlohmann does, across magnitudes") {
  std::string mismatches;
  for (int e = -12; e <= 20; ++e)
    for (const double mantissa : {1.0, 1.5, 2.0 / 3.0, 9.999999}) {
      const double v = mantissa * std::pow(10.0, e);
      std::string ours;
      trainio::report::append_json_number(ours, v);
      if (ours != json(v).dump()) mismatches += ours + " vs " + json(v).dump() + "\n";
    }
  CHECK(mismatches == "");
  std::string nan;
  trainio::report::append_json_number(nan, std::numeric_limits<double>::quiet_NaN());
  CHECK(nan == "null");
}

TEST_CASE("the JSON stream hands its text over in pieces, in order") {
  json doc = json::array();
  for (int i = 0; i < 50000; ++i) doc.push_back(i * 0.001);
  std::size_t pieces = 0;
  std::string text;
  JsonStream out([&](std::string_view piece) {
    ++pieces;
    text += piece;
  });
  stream(doc, out);
  out.finish();
  CHECK(pieces > 1);
  CHECK(text == doc.dump(4));
}
