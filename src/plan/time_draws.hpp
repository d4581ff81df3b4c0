#pragma once
// Emulated durations (computation_time, eval_time, preprocess_time), drawn from the workload's
// distribution. A draw is a pure function of (seed, index), so a run can be replayed exactly and
// each rank and step gets its own value without shared generator state.

#include <cstdint>

#include "config/time_spec.hpp"
#include "util/rng.hpp"

namespace trainio::plan {

// One draw in seconds, never negative (DLIO takes abs() of the draw; so does trainio).
double draw_seconds(const config::TimeSpec& spec, util::Rng& rng);

class TimeDraws {
 public:
  TimeDraws() = default;
  TimeDraws(const config::TimeSpec& spec, std::uint64_t seed) : spec_(spec), seed_(seed) {}

  bool is_zero() const { return spec_.is_zero(); }
  double at(std::uint64_t index) const {
    if (spec_.kind == config::TimeSpec::Kind::constant) return spec_.mean;
    util::Rng rng(util::derive_seed(seed_, index));
    return draw_seconds(spec_, rng);
  }

 private:
  config::TimeSpec spec_;
  std::uint64_t seed_ = 0;
};

// Seed for the draws of a phase ("compute", "eval", "preprocess") of one rank in one epoch.
enum class TimePhase : std::uint64_t { compute = 1, eval = 2, preprocess = 3 };
std::uint64_t time_seed(std::uint64_t run_seed, TimePhase phase, std::uint64_t epoch, int rank);

}  // namespace trainio::plan
