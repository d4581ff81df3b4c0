#include "verify/checks.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace trainio::verify {

namespace {

std::string shown(std::optional<double> v) {
  if (!v) return "null";
  if (*v == std::floor(*v) && std::fabs(*v) < 1e15) return fmt::format("{:.0f}", *v);
  return fmt::format("{:.9g}", *v);
}

}  // namespace

Tolerance printed(int decimals) { return {0, 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9)}; }

// A reported value, from either kind of document.
struct Checks::Reported {
  enum class Kind { absent, null, number, string, boolean, other } kind = Kind::absent;
  double number = 0;
  bool boolean = false;
  std::string text;  // a string's
  const nlohmann::json* json = nullptr;
  JsonValue value;

  explicit Reported(const nlohmann::json* v) : json(v) {
    if (v == nullptr) return;
    if (v->is_null()) kind = Kind::null;
    else if (v->is_number()) kind = Kind::number, number = v->get<double>();
    else if (v->is_boolean()) kind = Kind::boolean, boolean = v->get<bool>();
    else if (v->is_string()) kind = Kind::string, text = v->get<std::string>();
    else kind = Kind::other;
  }
  explicit Reported(const JsonValue& v) : value(v) {
    if (!v.valid()) return;
    if (v.is_null()) kind = Kind::null;
    else if (v.is_number()) kind = Kind::number, number = v.f64();
    else if (v.is_bool()) kind = Kind::boolean, boolean = v.boolean();
    else if (v.is_string()) kind = Kind::string, text = v.str();
    else kind = Kind::other;
  }
  // The value as JSON text (a string with its quotes), made only for a check that is shown.
  std::string dump() const {
    if (kind == Kind::absent) return "absent";
    return json ? json->dump() : std::string(value.raw());
  }
  // A string without its quotes.
  std::string shown() const { return kind == Kind::string ? text : dump(); }
};

void Checks::number(const std::string& figure, const nlohmann::json* reported, std::optional<double> recomputed,
                    Tolerance t, bool headline) {
  number(figure, Reported(reported), recomputed, t, headline);
}

void Checks::number(const std::string& figure, const JsonValue& reported, std::optional<double> recomputed, Tolerance t,
                    bool headline) {
  number(figure, Reported(reported), recomputed, t, headline);
}

void Checks::number(const std::string& figure, const Reported& reported, std::optional<double> recomputed, Tolerance t,
                    bool headline) {
  using Kind = Reported::Kind;
  const std::optional<double> r = reported.kind == Kind::number ? std::optional<double>(reported.number) : std::nullopt;
  const bool typed = reported.kind == Kind::absent || reported.kind == Kind::number || reported.kind == Kind::null;
  bool ok = typed && r.has_value() == recomputed.has_value();
  double diff = 0;
  if (typed && r && recomputed) {
    diff = std::fabs(*r - *recomputed);
    ok = diff <= t.absolute + t.relative * std::max(std::fabs(*r), std::fabs(*recomputed));
  }
  // Most checks agree and are not shown: their text is made only when it will be read.
  if (ok && !headline && !on_check) return count_agreed();
  const std::string shown_reported = !typed ? reported.dump() : reported.kind == Kind::absent ? "absent" : shown(r);
  Check c{figure, shown_reported, shown(recomputed), {}, ok, headline};
  if (typed && r && recomputed)
    c.difference = diff == 0 ? "0" : fmt::format("{:.3g}", *recomputed != 0 ? diff / std::fabs(*recomputed) : diff) +
                                         (*recomputed != 0 ? " (relative)" : "");
  add(std::move(c));
}

void Checks::cell(const std::string& figure, const std::string& reported, std::optional<double> recomputed, Tolerance t) {
  if (reported.empty()) {
    const nlohmann::json null_value;
    number(figure, &null_value, recomputed, t);
    return;
  }
  char* end = nullptr;
  const double v = std::strtod(reported.c_str(), &end);
  const nlohmann::json value = (end != nullptr && *end == '\0') ? nlohmann::json(v) : nlohmann::json(reported);
  number(figure, &value, recomputed, t);
}

void Checks::text(const std::string& figure, const nlohmann::json* reported, const std::string& recomputed, bool headline) {
  text(figure, Reported(reported), recomputed, headline);
}

void Checks::text(const std::string& figure, const JsonValue& reported, const std::string& recomputed, bool headline) {
  // The common case without a copy of the text.
  if (!headline && !on_check && reported.valid() && reported.is_string() && reported.equals(recomputed)) return count_agreed();
  text(figure, Reported(reported), recomputed, headline);
}

void Checks::text(const std::string& figure, const Reported& reported, const std::string& recomputed, bool headline) {
  const bool ok = reported.kind == Reported::Kind::string && reported.text == recomputed;
  if (ok && !headline && !on_check) return count_agreed();
  add({figure, reported.shown(), recomputed, {}, ok, headline});
}

void Checks::flag(const std::string& figure, const nlohmann::json* reported, bool recomputed, bool headline) {
  flag(figure, Reported(reported), recomputed, headline);
}

void Checks::flag(const std::string& figure, const JsonValue& reported, bool recomputed, bool headline) {
  flag(figure, Reported(reported), recomputed, headline);
}

void Checks::flag(const std::string& figure, const Reported& reported, bool recomputed, bool headline) {
  add({figure, reported.dump(), recomputed ? "true" : "false", {}, reported.kind == Reported::Kind::boolean && reported.boolean == recomputed,
       headline});
}

void Checks::problem(const std::string& figure, const std::string& what) { add({figure, what, "-", {}, false, true}); }

void Checks::add(Check c) {
  ++count_;
  if (on_check) on_check(c);
  if (!c.ok) {
    ++mismatches_;
    if (failed_.size() < kKeptMismatches) failed_.push_back(c);
  }
  if (!c.headline) return;
  if (on_headline) on_headline(c);
  else headlines_.push_back(std::move(c));
}

const nlohmann::json* find(const nlohmann::json& doc, const std::string& path) {
  const nlohmann::json* at = &doc;
  std::size_t from = 0;
  while (from <= path.size()) {
    const std::size_t to = std::min(path.find('/', from), path.size());
    const std::string part = path.substr(from, to - from);
    if (at->is_object()) {
      const auto it = at->find(part);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      const auto i = std::stoull(part);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else {
      return nullptr;
    }
    from = to + 1;
  }
  return at;
}

JsonValue find(const JsonValue& doc, std::string_view path) {
  JsonValue at = doc;
  std::size_t from = 0;
  while (from <= path.size() && at.valid()) {
    const std::size_t to = std::min(path.find('/', from), path.size());
    const std::string_view part = path.substr(from, to - from);
    if (at.is_object()) {
      at = at.find(part);
    } else if (at.is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos) {
      std::size_t i = 0;
      if (std::from_chars(part.data(), part.data() + part.size(), i).ec != std::errc() || i >= at.size()) return {};
      at = at.at(i);
    } else {
      return {};
    }
    from = to + 1;
  }
  return at;
}

}  // namespace trainio::verify
