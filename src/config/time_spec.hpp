#pragma once
// A duration that may vary from step to step: DLIO's `computation_time`, `preprocess_time` and
// `eval_time`. Written as a number (seconds), as {mean, stdev}, or as {type: ..., ...} naming a
// distribution.

namespace trainio::config {

struct TimeSpec {
  enum class Kind { constant, normal, uniform, gamma, exponential, poisson };
  Kind kind = Kind::constant;
  double mean = 0;   // constant value, normal mean
  double stdev = 0;  // normal
  double min = 0;    // uniform
  double max = 0;    // uniform
  double shape = 0;  // gamma
  double scale = 0;  // gamma, exponential
  double lam = 0;    // poisson

  bool is_zero() const { return kind == Kind::constant && mean == 0; }
  // The long-run mean in seconds, for planning figures such as the read rate a step needs.
  double expected() const;
};

const char* kind_name(TimeSpec::Kind kind);

}  // namespace trainio::config
