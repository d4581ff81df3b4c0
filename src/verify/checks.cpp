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
  const std::optional<double> r = number_of(reported);
  const bool typed = reported == nullptr || reported->is_number() || reported->is_null();
  bool ok = typed && r.has_value() == recomputed.has_value();
  double diff = 0;
  if (typed && r && recomputed) {
    diff = std::fabs(*r - *recomputed);
    ok = diff <= t.absolute + t.relative * std::max(std::fabs(*r), std::fabs(*recomputed));
  }
  // Most checks agree and are not shown: their text is made only when it will be read.
  if (ok && !headline && !on_check) return count_agreed();
  Check c{figure, typed ? (reported == nullptr ? "absent" : shown(r)) : reported->dump(), shown(recomputed), {}, ok, headline};
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
  const bool ok = reported != nullptr && reported->is_string() && reported->get_ref<const std::string&>() == recomputed;
  if (ok && !headline && !on_check) return count_agreed();
  const std::string r = reported == nullptr ? "absent" : reported->is_string() ? reported->get<std::string>() : reported->dump();
  add({figure, r, recomputed, {}, ok, headline});
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
