#include "config/codecs.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include "util/checked.hpp"
#include "util/units.hpp"

namespace trainio::config::detail {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The number's text without YAML's digit separators and leading '+' ("+1_000" -> "1000"); false
// when what is left has a sign of its own ("+-5"), which YAML reads as text, not a number.
bool number_text(const std::string& raw, std::string& s) {
  for (char c : raw)
    if (c != '_') s += c;
  if (s.empty() || s[0] != '+') return true;
  s.erase(0, 1);
  return s.empty() || (s[0] != '-' && s[0] != '+');
}

// Parses an integer written as YAML would: "8", "+8", "1_000", "8.0" (an integral float).
bool parse_integer(const std::string& raw, std::int64_t& out) {
  std::string s;
  if (!number_text(raw, s)) return false;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec == std::errc() && ptr == end && !s.empty()) return true;
  double d = 0;
  auto [dptr, dec] = std::from_chars(begin, end, d);
  if (dec != std::errc() || dptr != end) return false;
  const auto whole = util::to_int64(d);  // refuses 1e300, 2.5, inf
  if (whole) out = *whole;
  return whole.has_value();
}

// The same for an unsigned integer, over the whole unsigned range.
bool parse_unsigned(const std::string& raw, std::uint64_t& out) {
  std::string s;
  if (!number_text(raw, s)) return false;
  if (!s.empty() && s[0] != '-') {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && ptr == s.data() + s.size()) return true;
  }
  std::int64_t v = 0;  // an integral float ("16.0"), or refused
  if (!parse_integer(raw, v) || v < 0) return false;
  out = static_cast<std::uint64_t>(v);
  return true;
}

bool parse_double(const std::string& raw, double& out) {
  std::string s;
  if (!number_text(raw, s)) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && !s.empty() && std::isfinite(out);
}

std::string range_text(std::int64_t min, std::int64_t max) {
  constexpr auto lo = std::numeric_limits<std::int64_t>::min();
  constexpr auto hi = std::numeric_limits<std::int64_t>::max();
  if (min == lo && max == hi) return "an integer";
  if (max == hi) return fmt::format("an integer >= {}", min);
  if (min == lo) return fmt::format("an integer <= {}", max);
  return fmt::format("an integer from {} to {}", min, max);
}

}  // namespace

std::string scalar_text(const YAML::Node& node, const std::string& expected) {
  if (!node.IsScalar()) throw BadValue{expected};
  return node.Scalar();
}

std::string flow_text(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

std::string print_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<std::int64_t>(v));
  return fmt::format("{}", v);
}

Codec<std::int64_t> integer(std::int64_t min, std::int64_t max) {
  Codec<std::int64_t> c;
  c.expected = range_text(min, max);
  c.parse = [expected = c.expected, min, max](const YAML::Node& node) {
    std::int64_t v = 0;
    if (!parse_integer(scalar_text(node, expected), v) || v < min || v > max) throw BadValue{expected};
    return v;
  };
  c.print = [](const std::int64_t& v) { return std::to_string(v); };
  return c;
}

Codec<std::int64_t> integer_or_unset(std::int64_t min) {
  Codec<std::int64_t> c = integer(-1);
  c.expected = fmt::format("an integer >= {}, or -1 for not set", min);
  c.parse = [expected = c.expected, min](const YAML::Node& node) {
    std::int64_t v = 0;
    if (!parse_integer(scalar_text(node, expected), v) || (v != -1 && v < min)) throw BadValue{expected};
    return v;
  };
  return c;
}

Codec<std::uint64_t> unsigned_integer(std::uint64_t min) {
  Codec<std::uint64_t> c;
  c.expected = fmt::format("an integer >= {}", min);
  c.parse = [expected = c.expected, min](const YAML::Node& node) {
    std::uint64_t v = 0;
    if (!parse_unsigned(scalar_text(node, expected), v) || v < min) throw BadValue{expected};
    return v;
  };
  c.print = [](const std::uint64_t& v) { return std::to_string(v); };
  return c;
}

Codec<double> number(double min, double max) {
  Codec<double> c;
  if (std::isinf(min) && std::isinf(max)) c.expected = "a number";
  else if (std::isinf(max)) c.expected = fmt::format("a number >= {}", print_number(min));
  else c.expected = fmt::format("a number from {} to {}", print_number(min), print_number(max));
  c.parse = [expected = c.expected, min, max](const YAML::Node& node) {
    double v = 0;
    if (!parse_double(scalar_text(node, expected), v) || v < min || v > max) throw BadValue{expected};
    return v;
  };
  c.print = [](const double& v) { return print_number(v); };
  return c;
}

Codec<std::uint64_t> bytes(std::uint64_t min) {
  Codec<std::uint64_t> c;
  c.expected = fmt::format("a byte count >= {} (e.g. 262144 or 256KiB)", min);
  c.parse = [expected = c.expected, min](const YAML::Node& node) {
    const auto v = util::parse_bytes(scalar_text(node, expected));
    if (!v || *v < min) throw BadValue{expected};
    return *v;
  };
  c.print = [](const std::uint64_t& v) { return std::to_string(v); };
  return c;
}

Codec<bool> boolean() {
  Codec<bool> c;
  c.expected = "true or false";
  c.parse = [expected = c.expected](const YAML::Node& node) {
    const std::string v = lower(scalar_text(node, expected));
    if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
    if (v == "false" || v == "no" || v == "off" || v == "0") return false;
    throw BadValue{expected};
  };
  c.print = [](const bool& v) { return std::string(v ? "true" : "false"); };
  return c;
}

Codec<std::string> text() {
  Codec<std::string> c;
  c.expected = "a text value";
  c.parse = [expected = c.expected](const YAML::Node& node) { return scalar_text(node, expected); };
  c.print = [](const std::string& v) {
    YAML::Emitter out;
    out << v;
    return std::string(out.c_str());
  };
  return c;
}

Codec<std::vector<std::uint64_t>> unsigned_list() {
  Codec<std::vector<std::uint64_t>> c;
  c.expected = "a list of non-negative integers, e.g. [256, 256]";
  c.parse = [expected = c.expected](const YAML::Node& node) {
    std::vector<std::uint64_t> out;
    if (node.IsNull()) return out;
    const auto element = unsigned_integer(0);
    if (node.IsScalar()) {  // a single number stands for a one-element list
      try {
        out.push_back(element.parse(node));
      } catch (const BadValue&) {
        throw BadValue{expected};
      }
      return out;
    }
    if (!node.IsSequence()) throw BadValue{expected};
    for (const auto& item : node) {
      try {
        out.push_back(element.parse(item));
      } catch (const BadValue&) {
        throw BadValue{expected};
      }
    }
    return out;
  };
  c.print = [](const std::vector<std::uint64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  return c;
}

Codec<TimeSpec> time_spec() {
  Codec<TimeSpec> c;
  c.expected =
      "seconds as a number, {mean: s, stdev: s}, or {type: normal|uniform|gamma|exponential|poisson, ...}";
  c.parse = [expected = c.expected](const YAML::Node& node) {
    TimeSpec t;
    const auto seconds = number(0);
    if (node.IsNull()) return t;
    if (node.IsScalar()) {
      try {
        t.mean = seconds.parse(node);
      } catch (const BadValue&) {
        bool negative = false;
        try {
          negative = number().parse(node) < 0;
        } catch (const BadValue&) {
        }
        if (negative) throw BadValue{"seconds as a number >= 0 (a time must not be negative)"};
        throw BadValue{expected};
      }
      return t;
    }
    if (!node.IsMap()) throw BadValue{expected};
    auto get = [&](const char* key, double fallback) {
      const YAML::Node v = node[key];
      if (!v.IsDefined() || v.IsNull()) return fallback;
      try {
        return seconds.parse(v);
      } catch (const BadValue&) {
        throw BadValue{fmt::format("{}: '{}' must be a number >= 0", expected, key)};
      }
    };
    for (const auto& item : node) {
      const std::string k = item.first.Scalar();
      if (k != "type" && k != "mean" && k != "stdev" && k != "min" && k != "max" && k != "shape" &&
          k != "scale" && k != "lam")
        throw BadValue{fmt::format("{} ('{}' is not one of type, mean, stdev, min, max, shape, scale, lam)",
                                   expected, k)};
    }
    t.mean = get("mean", 0);
    t.stdev = get("stdev", 0);
    t.min = get("min", 0);
    t.max = get("max", 0);
    t.shape = get("shape", 1);
    t.scale = get("scale", 1);
    t.lam = get("lam", 1);
    const YAML::Node type = node["type"];
    if (!type.IsDefined()) {
      t.kind = t.stdev > 0 ? TimeSpec::Kind::normal : TimeSpec::Kind::constant;
      return t;
    }
    const std::string kind = lower(scalar_text(type, expected));
    if (kind == "normal") t.kind = TimeSpec::Kind::normal;
    else if (kind == "uniform") t.kind = TimeSpec::Kind::uniform;
    else if (kind == "gamma") t.kind = TimeSpec::Kind::gamma;
    else if (kind == "exponential") t.kind = TimeSpec::Kind::exponential;
    else if (kind == "poisson") t.kind = TimeSpec::Kind::poisson;
    else throw BadValue{expected};
    if (t.kind == TimeSpec::Kind::uniform && t.max < t.min)
      throw BadValue{"a uniform distribution needs min <= max"};
    return t;
  };
  c.print = [](const TimeSpec& t) {
    switch (t.kind) {
      case TimeSpec::Kind::constant: return print_number(t.mean);
      case TimeSpec::Kind::normal:
        return fmt::format("{{type: normal, mean: {}, stdev: {}}}", print_number(t.mean), print_number(t.stdev));
      case TimeSpec::Kind::uniform:
        return fmt::format("{{type: uniform, min: {}, max: {}}}", print_number(t.min), print_number(t.max));
      case TimeSpec::Kind::gamma:
        return fmt::format("{{type: gamma, shape: {}, scale: {}}}", print_number(t.shape), print_number(t.scale));
      case TimeSpec::Kind::exponential:
        return fmt::format("{{type: exponential, scale: {}}}", print_number(t.scale));
      case TimeSpec::Kind::poisson: return fmt::format("{{type: poisson, lam: {}}}", print_number(t.lam));
    }
    return std::string("0");
  };
  return c;
}

Codec<std::vector<std::string>> text_list() {
  Codec<std::vector<std::string>> c;
  c.expected = "a list of names";
  c.parse = [expected = c.expected](const YAML::Node& node) {
    std::vector<std::string> out;
    if (node.IsNull()) return out;
    if (node.IsScalar()) {
      out.push_back(node.Scalar());
      return out;
    }
    if (!node.IsSequence()) throw BadValue{expected};
    for (const auto& item : node) out.push_back(scalar_text(item, expected));
    return out;
  };
  c.print = [](const std::vector<std::string>& v) {
    YAML::Emitter out;
    out << YAML::Flow << v;
    return std::string(out.c_str());
  };
  return c;
}

Codec<std::vector<ParquetColumn>> parquet_columns() {
  Codec<std::vector<ParquetColumn>> c;
  c.expected = "a list of columns {name: text, dtype: uint8..uint64|int8..int64|float16|float32|float64|list, size: n, read: bool}";
  c.parse = [expected = c.expected](const YAML::Node& node) {
    std::vector<ParquetColumn> out;
    if (node.IsNull()) return out;
    if (!node.IsSequence()) throw BadValue{expected};
    const auto count = unsigned_integer(1);
    const auto flag = boolean();
    for (const auto& item : node) {
      ParquetColumn col;
      if (item.IsScalar()) {
        col.name = item.Scalar();
        out.push_back(col);
        continue;
      }
      if (!item.IsMap()) throw BadValue{expected};
      for (const auto& kv : item) {
        const std::string k = kv.first.Scalar();
        const YAML::Node v = kv.second;
        if (k == "name") {
          col.name = scalar_text(v, "a column name");
        } else if (k == "dtype") {
          const std::string t = scalar_text(v, expected);
          if (t == "list") {
            col.dtype = ElementType::float32;  // the fork's `list`: a float32 list of `size`
          } else if (t == "string" || t == "binary" || t == "bool") {
            throw BadValue{fmt::format("a numeric dtype: column '{}' has dtype '{}', which trainio does not write yet "
                                       "(numeric columns and fixed-size lists only)", col.name, t)};
          } else if (const auto e = enum_from_string<ElementType>(t)) {
            col.dtype = *e;
          } else {
            throw BadValue{fmt::format("{} (column '{}' has dtype '{}')", expected, col.name, t)};
          }
        } else if (k == "size") {
          try {
            col.size = count.parse(v);
          } catch (const BadValue&) {
            throw BadValue{fmt::format("a size >= 1 for column '{}'", col.name)};
          }
        } else if (k == "read") {
          col.read = flag.parse(v);
        } else {
          throw BadValue{fmt::format("{} ('{}' is not one of name, dtype, size, read)", expected, k)};
        }
      }
      if (col.name.empty()) throw BadValue{fmt::format("{} (a column has no name)", expected)};
      out.push_back(col);
    }
    return out;
  };
  c.print = [](const std::vector<ParquetColumn>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
      s += fmt::format("{}{{name: {}, dtype: {}, size: {}, read: {}}}", i ? ", " : "", v[i].name, to_string(v[i].dtype),
                       v[i].size, v[i].read ? "true" : "false");
    return s + "]";
  };
  return c;
}

}  // namespace trainio::config::detail
