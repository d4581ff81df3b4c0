// How one YAML value becomes one typed field and back (config/codecs.hpp): values, bounds, the
// "expected" text of a refusal, and print-then-parse round trips.
#include <catch2/catch.hpp>

#include <string>

#include "config/codecs.hpp"
#include "unit/text.hpp"

using namespace trainio::config;
using namespace trainio::config::detail;
using trainio::test::contains;

namespace {

template <typename T>
T parse(const Codec<T>& c, const std::string& yaml) {
  return c.parse(YAML::Load(yaml));
}

// The "expected" text a codec refuses `yaml` with; fails the test when it accepts it.
template <typename T>
std::string refusal(const Codec<T>& c, const std::string& yaml) {
  try {
    c.parse(YAML::Load(yaml));
  } catch (const BadValue& e) {
    return e.expected;
  }
  FAIL("'" << yaml << "' was accepted");
  return {};
}

}  // namespace

TEST_CASE("integers are read as YAML writes them, within their bounds") {
  const auto any = integer();
  CHECK(parse(any, "8") == 8);
  CHECK(parse(any, "+8") == 8);
  CHECK(parse(any, "-3") == -3);
  CHECK(parse(any, "1_000") == 1000);
  CHECK(parse(any, "8.0") == 8);  // an integral float
  CHECK(parse(any, "9223372036854775807") == INT64_MAX);
  CHECK(parse(any, "-9223372036854775808") == INT64_MIN);
  CHECK(refusal(any, "2.5") == "an integer");
  CHECK(refusal(any, "1e300") == "an integer");
  CHECK(refusal(any, "9223372036854775808") == "an integer");  // 2^63: one past the top
  CHECK(refusal(any, "eight") == "an integer");
  CHECK(refusal(any, "''") == "an integer");
  CHECK(refusal(any, "[1, 2]") == "an integer");
  CHECK(refusal(any, "{a: 1}") == "an integer");
  CHECK(refusal(any, "+-5") == "an integer");  // one sign, not two

  const auto ranged = integer(1, 10);
  CHECK(parse(ranged, "1") == 1);
  CHECK(parse(ranged, "10") == 10);
  CHECK(refusal(ranged, "0") == "an integer from 1 to 10");
  CHECK(refusal(ranged, "11") == "an integer from 1 to 10");
  CHECK(integer(0).expected == "an integer >= 0");
  CHECK(integer(INT64_MIN, 5).expected == "an integer <= 5");
}

TEST_CASE("an integer that may be unset takes -1 and values from its minimum") {
  const auto c = integer_or_unset(1);
  CHECK(parse(c, "-1") == -1);
  CHECK(parse(c, "1") == 1);
  CHECK(refusal(c, "0") == "an integer >= 1, or -1 for not set");
  CHECK(refusal(c, "-2") == "an integer >= 1, or -1 for not set");
}

TEST_CASE("unsigned integers take every value of their type and nothing negative") {
  const auto c = unsigned_integer();
  CHECK(parse(c, "0") == 0u);
  CHECK(parse(c, "4_096") == 4096u);
  CHECK(parse(c, "16.0") == 16u);
  // Above the signed range: still an integer >= 0, as the refusal would say.
  CHECK(parse(c, "9223372036854775808") == 9223372036854775808ULL);
  CHECK(parse(c, "18446744073709551615") == UINT64_MAX);
  CHECK(refusal(c, "18446744073709551616") == "an integer >= 0");  // 2^64
  CHECK(refusal(c, "-1") == "an integer >= 0");
  CHECK(refusal(c, "+-1") == "an integer >= 0");
  CHECK(refusal(c, "1.5") == "an integer >= 0");
  CHECK(refusal(unsigned_integer(2), "1") == "an integer >= 2");
}

TEST_CASE("numbers are finite and within their bounds") {
  const auto any = number();
  CHECK(any.expected == "a number");
  CHECK(parse(any, "0.25") == 0.25);
  CHECK(parse(any, "-1e-3") == -0.001);
  CHECK(parse(any, "+2") == 2.0);
  CHECK(parse(any, "1_000.5") == 1000.5);
  CHECK(refusal(any, ".inf") == "a number");
  CHECK(refusal(any, ".nan") == "a number");
  CHECK(refusal(any, "1e400") == "a number");  // overflows to infinity
  CHECK(refusal(any, "+-2") == "a number");
  CHECK(refusal(any, "two") == "a number");
  CHECK(refusal(number(0), "-0.5") == "a number >= 0");
  CHECK(refusal(number(0, 1), "1.5") == "a number from 0 to 1");
  CHECK(parse(number(0, 1), "1") == 1.0);
  CHECK(number(-1).expected == "a number >= -1");
}

TEST_CASE("numbers print the shortest way that reads back exactly") {
  CHECK(print_number(0.323) == "0.323");
  CHECK(print_number(146600628.0) == "146600628");
  CHECK(print_number(-2.0) == "-2");
  CHECK(print_number(0.0) == "0");
  CHECK(print_number(0.1 + 0.2) == "0.30000000000000004");
  const auto c = number();
  for (const double v : {0.323, 1e15, 1e-7, -123456.75, 0.1 + 0.2, 4.0e20})
    CHECK(parse(c, print_number(v)) == v);
}

TEST_CASE("byte counts take numbers and unit text") {
  const auto c = bytes();
  CHECK(parse(c, "262144") == 262144u);
  CHECK(parse(c, "256KiB") == 262144u);
  CHECK(parse(c, "4MiB") == 4u << 20);
  CHECK(contains(refusal(c, "lots"), "a byte count >= 0"));
  CHECK(refusal(bytes(1), "0") == "a byte count >= 1 (e.g. 262144 or 256KiB)");
  CHECK(c.print(4096) == "4096");
}

TEST_CASE("booleans take YAML's spellings in any case and nothing else") {
  const auto c = boolean();
  for (const char* yes : {"true", "True", "YES", "on", "1"}) CHECK(parse(c, yes));
  for (const char* no : {"false", "FALSE", "no", "Off", "0"}) CHECK_FALSE(parse(c, no));
  CHECK(refusal(c, "maybe") == "true or false");
  CHECK(refusal(c, "2") == "true or false");
  CHECK(c.print(true) == "true");
}

TEST_CASE("text values are scalars and print as YAML quotes them") {
  const auto c = text();
  CHECK(parse(c, "hello") == "hello");
  CHECK(refusal(c, "[a]") == "a text value");
  CHECK(c.print("plain") == "plain");
  CHECK(parse(c, c.print("a: b")) == "a: b");  // quoted, so it reads back as one text
}

TEST_CASE("lists of unsigned integers: one number stands for a list of one, null for none") {
  const auto c = unsigned_list();
  CHECK(parse(c, "[256, 256]") == std::vector<std::uint64_t>{256, 256});
  CHECK(parse(c, "7") == std::vector<std::uint64_t>{7});
  CHECK(parse(c, "~").empty());
  CHECK(parse(c, "[]").empty());
  CHECK(refusal(c, "[1, -2]") == "a list of non-negative integers, e.g. [256, 256]");
  CHECK(refusal(c, "{a: 1}") == "a list of non-negative integers, e.g. [256, 256]");
  CHECK(c.print({}) == "[]");
  CHECK(c.print({1, 2, 3}) == "[1, 2, 3]");
  CHECK(parse(c, c.print({5, 0, 9})) == std::vector<std::uint64_t>{5, 0, 9});
}

TEST_CASE("lists of names: a single name is a list of one") {
  const auto c = text_list();
  CHECK(parse(c, "[a, b]") == std::vector<std::string>{"a", "b"});
  CHECK(parse(c, "a") == std::vector<std::string>{"a"});
  CHECK(parse(c, "~").empty());
  CHECK(refusal(c, "[a, [b]]") == "a list of names");
  CHECK(parse(c, c.print({"x", "y z"})) == std::vector<std::string>{"x", "y z"});
}

TEST_CASE("times: a number, a mean and stdev, or a named distribution") {
  const auto c = time_spec();
  const TimeSpec constant = parse(c, "0.5");
  CHECK(constant.kind == TimeSpec::Kind::constant);
  CHECK(constant.mean == 0.5);
  CHECK(parse(c, "~").is_zero());

  const TimeSpec normal = parse(c, "{mean: 1, stdev: 0.25}");
  CHECK(normal.kind == TimeSpec::Kind::normal);
  CHECK(normal.stdev == 0.25);
  CHECK(parse(c, "{mean: 1, stdev: 0}").kind == TimeSpec::Kind::constant);  // no spread: a constant

  const TimeSpec uniform = parse(c, "{type: uniform, min: 1, max: 3}");
  CHECK(uniform.kind == TimeSpec::Kind::uniform);
  CHECK(uniform.expected() == 2.0);
  const TimeSpec gamma = parse(c, "{type: gamma, shape: 2, scale: 0.5}");
  CHECK(gamma.kind == TimeSpec::Kind::gamma);
  CHECK(gamma.expected() == 1.0);
  const TimeSpec exponential = parse(c, "{type: exponential}");  // scale defaults to 1
  CHECK(exponential.expected() == 1.0);
  const TimeSpec poisson = parse(c, "{type: Poisson, lam: 4}");
  CHECK(poisson.kind == TimeSpec::Kind::poisson);
  CHECK(poisson.expected() == 4.0);

  CHECK(refusal(c, "-1") == "seconds as a number >= 0 (a time must not be negative)");
  CHECK(refusal(c, "{type: uniform, min: 3, max: 1}") == "a uniform distribution needs min <= max");
  CHECK(contains(refusal(c, "{mean: 1, sigma: 2}"), "('sigma' is not one of type, mean"));
  CHECK(contains(refusal(c, "{mean: -1}"), "'mean' must be a number >= 0"));
  CHECK(contains(refusal(c, "{type: weibull}"), "seconds as a number"));
  CHECK(contains(refusal(c, "[1, 2]"), "seconds as a number"));
  CHECK(contains(refusal(c, "soon"), "seconds as a number"));
}

TEST_CASE("every kind of time prints as text that reads back the same") {
  const auto c = time_spec();
  for (const char* yaml : {"0.25", "{type: normal, mean: 1, stdev: 0.5}", "{type: uniform, min: 0.5, max: 2}",
                           "{type: gamma, shape: 3, scale: 0.25}", "{type: exponential, scale: 0.125}",
                           "{type: poisson, lam: 3}"}) {
    const TimeSpec t = parse(c, yaml);
    CHECK(c.print(t) == yaml);
    const TimeSpec back = parse(c, c.print(t));
    CHECK(back.kind == t.kind);
    CHECK(back.expected() == t.expected());
  }
}

TEST_CASE("Parquet columns: maps of name, dtype, size and read, or bare names") {
  const auto c = parquet_columns();
  const auto cols = parse(c, "[label, {name: image, dtype: uint8, size: 3072}, {name: emb, dtype: list, size: 4, read: no}]");
  REQUIRE(cols.size() == 3);
  CHECK(cols[0] == ParquetColumn{"label", ElementType::float32, 1, true});
  CHECK(cols[1] == ParquetColumn{"image", ElementType::uint8, 3072, true});
  CHECK(cols[2] == ParquetColumn{"emb", ElementType::float32, 4, false});
  CHECK(parse(c, "~").empty());
  CHECK(parse(c, c.print(cols)) == cols);
  CHECK(contains(refusal(c, "[{name: s, dtype: string}]"), "column 's' has dtype 'string'"));
  CHECK(contains(refusal(c, "[{name: x, dtype: complex64}]"), "(column 'x' has dtype 'complex64')"));
  CHECK(refusal(c, "[{name: x, size: 0}]") == "a size >= 1 for column 'x'");
  CHECK(contains(refusal(c, "[{dtype: uint8}]"), "(a column has no name)"));
  CHECK(contains(refusal(c, "[{name: x, width: 2}]"), "('width' is not one of name, dtype, size, read)"));
  CHECK(contains(refusal(c, "label"), "a list of columns"));
}

TEST_CASE("enumerations take DLIO's names and aliases, and list only the names") {
  const auto c = enumeration<Format>();
  CHECK(parse(c, "npz") == Format::npz);
  CHECK(parse(c, "dlio_npz") == Format::npz);  // an alias reads, but is never printed
  CHECK(c.print(Format::npz) == "npz");
  CHECK_FALSE(contains(c.expected, "dlio_"));
  CHECK(contains(c.expected, "one of tfrecord, hdf5, csv, npz"));
  CHECK(refusal(c, "NPZ") == c.expected);  // names are case-sensitive, as DLIO's
}

TEST_CASE("a node prints as YAML flow text in messages") {
  CHECK(flow_text(YAML::Load("~")) == "null");
  CHECK(flow_text(YAML::Node()) == "null");
  CHECK(flow_text(YAML::Load("abc")) == "abc");
  CHECK(flow_text(YAML::Load("[1, 2]")) == "[1, 2]");
  CHECK(flow_text(YAML::Load("{mean: 1}")) == "{mean: 1}");
}
