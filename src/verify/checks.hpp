#pragma once
// What `trainio verify` found: each figure as reported and as recomputed from the records, the
// difference, and whether it is within the figure's stated tolerance. A run of thousands of epochs
// makes millions of checks, so only the headline figures and the mismatches are kept; every check
// can be streamed as it is made (`--all`).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "verify/json_view.hpp"

namespace trainio::verify {

// How far a recomputed value may be from the reported one, and why (docs/results.md).
struct Tolerance {
  double relative = 0, absolute = 0;
};
inline constexpr Tolerance kExact{0, 0};
// Sums of doubles taken in another order (across ranks, MPI's reduction order is its own).
inline constexpr Tolerance kRounding{1e-9, 1e-12};
// A CSV cell printed with `decimals` decimals: half a unit of the last one.
Tolerance printed(int decimals);

struct Check {
  std::string figure;
  std::string reported, recomputed, difference;
  bool ok = true;
  bool headline = false;
};

class Checks {
 public:
  // Every check as it is made (for --all); none by default.
  std::function<void(const Check&)> on_check;
  // Each headline figure as it is made, instead of keeping it (a run's are a few an epoch).
  std::function<void(const Check&)> on_headline;

  // A number: null or absent on both sides agree; a value on one side only is a mismatch.
  void number(const std::string& figure, const nlohmann::json* reported, std::optional<double> recomputed, Tolerance t,
              bool headline = false);
  // A CSV cell or another number printed as text ("" for no value).
  void cell(const std::string& figure, const std::string& reported, std::optional<double> recomputed, Tolerance t);
  void text(const std::string& figure, const nlohmann::json* reported, const std::string& recomputed, bool headline = false);
  void flag(const std::string& figure, const nlohmann::json* reported, bool recomputed, bool headline = false);
  // The same, with the reported value in a parsed document (an invalid value: absent).
  void number(const std::string& figure, const JsonValue& reported, std::optional<double> recomputed, Tolerance t,
              bool headline = false);
  void text(const std::string& figure, const JsonValue& reported, const std::string& recomputed, bool headline = false);
  void flag(const std::string& figure, const JsonValue& reported, bool recomputed, bool headline = false);
  // Something that is wrong without two numbers to compare (a row missing, a record cut short).
  void problem(const std::string& figure, const std::string& what);

  std::uint64_t count() const { return count_; }
  std::uint64_t mismatches() const { return mismatches_; }
  const std::vector<Check>& headlines() const { return headlines_; }
  const std::vector<Check>& failed() const { return failed_; }  // the first kKeptMismatches
  static constexpr std::size_t kKeptMismatches = 200;

 private:
  struct Reported;
  void number(const std::string& figure, const Reported& reported, std::optional<double> recomputed, Tolerance t, bool headline);
  void text(const std::string& figure, const Reported& reported, const std::string& recomputed, bool headline);
  void flag(const std::string& figure, const Reported& reported, bool recomputed, bool headline);
  void add(Check c);
  void count_agreed() { ++count_; }
  std::uint64_t count_ = 0, mismatches_ = 0;
  std::vector<Check> headlines_, failed_;
};

// The value at a '/'-separated path of a JSON document (array elements by index); null when the
// path does not exist.
const nlohmann::json* find(const nlohmann::json& doc, const std::string& path);
JsonValue find(const JsonValue& doc, std::string_view path);  // invalid when the path does not exist

}  // namespace trainio::verify
