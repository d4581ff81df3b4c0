#include "report/json_stream.hpp"

#include <array>
#include <cmath>

#include "util/error.hpp"

namespace trainio::report {

namespace {
constexpr std::size_t kDrainBytes = 64 * 1024;
}

void append_json_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  // nlohmann's own double formatting (Grisu2, ".0" on whole numbers, its exponent thresholds),
  // so that the streamed text is byte for byte what its dump() writes; fmt's shortest form
  // differs in rare last digits and in where exponents begin.
  std::array<char, 64> buffer{};
  const char* end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.append(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
}

JsonStream::JsonStream(std::function<void(std::string_view)> sink) : sink_(std::move(sink)) {
  text_.reserve(kDrainBytes + 4096);
}

void JsonStream::newline_and_indent(std::size_t depth) {
  text_ += '\n';
  text_.append(4 * depth, ' ');
}

void JsonStream::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (counts_.empty()) return;  // the document's top value
  if (counts_.back()++ > 0) text_ += ',';
  newline_and_indent(counts_.size());
}

void JsonStream::key(std::string_view name) {
  before_value();
  text_ += nlohmann::ordered_json(name).dump();
  text_ += ": ";
  after_key_ = true;
}

void JsonStream::begin_object() {
  before_value();
  text_ += '{';
  counts_.push_back(0);
}

void JsonStream::begin_array() {
  before_value();
  text_ += '[';
  counts_.push_back(0);
}

void JsonStream::end_object() {
  if (counts_.back() > 0) newline_and_indent(counts_.size() - 1);
  counts_.pop_back();
  text_ += '}';
  maybe_drain();
}

void JsonStream::end_array() {
  if (counts_.back() > 0) newline_and_indent(counts_.size() - 1);
  counts_.pop_back();
  text_ += ']';
  maybe_drain();
}

void JsonStream::number(double value) {
  before_value();
  append_json_number(text_, value);
  maybe_drain();
}

void JsonStream::value(const nlohmann::ordered_json& v) {
  before_value();
  const std::string dumped = v.dump(4);
  std::string indent(4 * counts_.size() + 1, ' ');
  indent[0] = '\n';
  for (const char c : dumped) {
    if (c == '\n') text_ += indent;
    else text_ += c;
  }
  maybe_drain();
}

void JsonStream::maybe_drain() {
  if (text_.size() < kDrainBytes) return;
  sink_(text_);
  text_.clear();
}

void JsonStream::finish() {
  if (!counts_.empty()) throw internal_error("JSON stream finished inside an open object or array");
  if (!text_.empty()) sink_(text_);
  text_.clear();
}

}  // namespace trainio::report
