#pragma once
// Private to src/config: how one YAML value becomes one typed field and back. A codec that
// cannot accept a value throws BadValue with what it expected; the loader adds the key and the
// file position.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "config/enums.hpp"
#include "config/time_spec.hpp"
#include "config/workload.hpp"

namespace trainio::config::detail {

struct BadValue {
  std::string expected;
};

template <typename T>
struct Codec {
  std::string expected;
  std::function<T(const YAML::Node&)> parse;
  std::function<std::string(const T&)> print;  // YAML flow text
};

// Scalar text of a node, or BadValue when it is a list or mapping.
std::string scalar_text(const YAML::Node& node, const std::string& expected);

// The node as YAML flow text ("[1, 2]", "{mean: 1}") for messages.
std::string flow_text(const YAML::Node& node);

Codec<std::int64_t> integer(std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                            std::int64_t max = std::numeric_limits<std::int64_t>::max());
// Like integer(min) but also accepts -1 (DLIO's "not set").
Codec<std::int64_t> integer_or_unset(std::int64_t min);
Codec<std::uint64_t> unsigned_integer(std::uint64_t min = 0);
Codec<double> number(double min = -std::numeric_limits<double>::infinity(),
                     double max = std::numeric_limits<double>::infinity());
// A byte count: a number or "4MiB"-style text.
Codec<std::uint64_t> bytes(std::uint64_t min = 0);
Codec<bool> boolean();
Codec<std::string> text();
Codec<std::vector<std::uint64_t>> unsigned_list();
Codec<TimeSpec> time_spec();
// A list of text values (a single text value stands for a one-element list); null: empty.
Codec<std::vector<std::string>> text_list();
// The DLIO fork's Parquet column schema: a list of {name, dtype, size, read} (a bare name stands
// for a float32 scalar, as in the fork).
Codec<std::vector<ParquetColumn>> parquet_columns();

template <typename E>
Codec<E> enumeration() {
  std::string expected = "one of";
  bool first = true;
  for (const auto& entry : enum_names<E>()) {
    if (entry.alias) continue;
    expected += first ? " " : ", ";
    expected += std::string(entry.name);
    first = false;
  }
  Codec<E> c;
  c.expected = expected;
  c.parse = [expected](const YAML::Node& node) {
    const auto value = enum_from_string<E>(scalar_text(node, expected));
    if (!value) throw BadValue{expected};
    return *value;
  };
  c.print = [](const E& v) { return std::string(to_string(v)); };
  return c;
}

// Prints a double the shortest way that reads back exactly ("0.323", "146600628").
std::string print_number(double v);

}  // namespace trainio::config::detail
