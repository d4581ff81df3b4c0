#pragma once
// Progress of a long phase on rank 0: a self-updating line on a terminal, a plain line every few
// seconds otherwise (logs, CI). Estimates the whole job from rank 0's share of the work.

#include <cstdint>
#include <string>

namespace trainio::engine {

class Progress {
 public:
  // `units` and `bytes` are this rank's share; `scale` multiplies them to the whole job.
  Progress(std::string label, std::uint64_t units, std::uint64_t bytes, int scale, bool enabled);
  void advance(std::uint64_t units, std::uint64_t bytes);
  void finish();

 private:
  void print(bool final);
  std::string label_;
  std::uint64_t total_units_, total_bytes_;
  int scale_;
  bool enabled_, tty_;
  std::uint64_t units_ = 0, bytes_ = 0;
  std::int64_t start_ns_, last_print_ns_;
  bool printed_ = false;
};

// Progress of a training or evaluation phase on rank 0, for epochs long enough to wonder about
// (nothing is printed in the first 5 seconds): steps done, AU and samples/s so far, and the
// time left. On a terminal the line updates itself and is cleared at the end, where the
// epoch's line takes its place.
class StepProgress {
 public:
  // `samples_per_step`: the whole job's (batch x ranks).
  StepProgress(std::string label, std::uint64_t steps, double samples_per_step, bool enabled);
  void step(double compute_seconds);
  void finish();

 private:
  std::string label_;
  std::uint64_t total_, done_ = 0;
  double samples_per_step_, compute_ = 0;
  bool enabled_, tty_, printed_ = false;
  std::int64_t start_ns_, last_print_ns_;
};

}  // namespace trainio::engine
