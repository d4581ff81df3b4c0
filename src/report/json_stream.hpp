#pragma once
// Writes a JSON document piece by piece, in exactly the layout nlohmann's dump(4) gives a DOM
// (four-space indent, "key": value, empty containers as {} and []), so that documents of
// millions of values (DLIO's per-step lists) are written without holding them in memory.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainio::report {

class JsonStream {
 public:
  // `sink` receives the text in pieces of up to about 64 KiB, in order.
  explicit JsonStream(std::function<void(std::string_view)> sink);

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The key of the next value (inside an object).
  void key(std::string_view name);
  // A number as nlohmann writes a double (shortest round trip; "1.0" for whole numbers; null
  // when not finite).
  void number(double value);
  // Any small value, written as its dump(4) would be at this depth.
  void value(const nlohmann::ordered_json& v);
  // key(name), then value(v).
  void field(std::string_view name, const nlohmann::ordered_json& v) {
    key(name);
    value(v);
  }
  // Hands the rest of the text to the sink; the document must be complete.
  void finish();

 private:
  void before_value();
  void newline_and_indent(std::size_t depth);
  void maybe_drain();
  std::function<void(std::string_view)> sink_;
  std::string text_;
  std::vector<std::size_t> counts_;  // values written in each open container
  bool after_key_ = false;
};

// The text nlohmann's dump() gives a double, without its DOM.
void append_json_number(std::string& out, double value);

}  // namespace trainio::report
