#include "verify/checks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace trainio::verify {

namespace {

std::string shown(std::optional<double> v) {
  if (!v) return "null";
  if (*v == std::floor(*v) && std::fabs(*v) < 1e15) return fmt::format("{:.0f}", *v);
  return fmt::format("{:.9g}", *v);
}

std::optional<double> number_of(const nlohmann::json* v) {
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

}  // namespace

Tolerance printed(int decimals) { return {0, 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9)}; }

void Checks::number(const std::string& figure, const nlohmann::json* reported, std::optional<double> recomputed,
                    Tolerance t, bool headline) {
  Check c{figure, {}, shown(recomputed), {}, true, headline};
  const std::optional<double> r = number_of(reported);
  if (reported != nullptr && !reported->is_number() && !reported->is_null()) {
    c.reported = reported->dump();
    c.ok = false;
  } else {
    c.reported = reported == nullptr ? "absent" : shown(r);
    if (r && recomputed) {
      const double diff = std::fabs(*r - *recomputed);
      const double allowed = t.absolute + t.relative * std::max(std::fabs(*r), std::fabs(*recomputed));
      c.ok = diff <= allowed;
      c.difference = diff == 0 ? "0" : fmt::format("{:.3g}", *recomputed != 0 ? diff / std::fabs(*recomputed) : diff) +
                                           (*recomputed != 0 ? " (relative)" : "");
    } else {
      c.ok = r.has_value() == recomputed.has_value();
    }
  }
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
  const std::string r = reported == nullptr ? "absent" : reported->is_string() ? reported->get<std::string>() : reported->dump();
  add({figure, r, recomputed, {}, reported != nullptr && reported->is_string() && r == recomputed, headline});
}

void Checks::flag(const std::string& figure, const nlohmann::json* reported, bool recomputed, bool headline) {
  const std::string r = reported == nullptr ? "absent" : reported->dump();
  add({figure, r, recomputed ? "true" : "false", {}, reported != nullptr && reported->is_boolean() && reported->get<bool>() == recomputed,
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
  if (c.headline) headlines_.push_back(std::move(c));
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

}  // namespace trainio::verify
