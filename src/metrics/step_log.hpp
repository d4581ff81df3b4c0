#pragma once
// Every training and evaluation step's times, in the order the steps ran, for DLIO's per-rank
// lists (<rank>_output.json). A run of millions of steps must not hold them in memory, so the
// log is an interface: the engine appends, the report reads back by ranges at the end. The run
// uses a spill file (engine/step_spill.hpp); tests and small tools may keep them in memory.

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "metrics/block_stats.hpp"

namespace trainio::metrics {

// One step as DLIO lists it (seconds): waiting for the batch, the step before the barrier
// ("proc": load + compute), the emulated compute, and (trainio's) the barrier after it.
struct StepTimes {
  float load = 0, proc = 0, compute = 0, barrier = 0;
};

// A step as the per-rank lists give it, from the clock readings at its start, its batch, the end
// of its compute and of its barrier. The lists hold seconds as 32-bit floats; every figure of the
// step (the blocks' AU and throughput, its latency histograms) is computed from these logged
// values, so anyone can recompute it from the lists (docs/results.md).
inline StepTimes logged_step(std::int64_t start_ns, std::int64_t batch_ns, std::int64_t computed_ns, std::int64_t done_ns) {
  StepTimes s;
  s.load = static_cast<float>(static_cast<double>(batch_ns - start_ns) * 1e-9);
  s.compute = static_cast<float>(static_cast<double>(computed_ns - batch_ns) * 1e-9);
  s.proc = s.load + s.compute;
  s.barrier = static_cast<float>(static_cast<double>(done_ns - computed_ns) * 1e-9);
  return s;
}
inline StepTiming timing_of(const StepTimes& s) { return {s.load, s.compute, s.barrier}; }
// A logged duration in the nanoseconds latency histograms count: round(seconds x 1e9).
inline std::uint64_t logged_ns(float seconds) {
  return seconds <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(static_cast<double>(seconds) * 1e9));
}

class StepLog {
 public:
  virtual ~StepLog() = default;
  virtual void append(const StepTimes& step) = 0;
  // Steps appended so far.
  virtual std::uint64_t size() const = 0;
  // Copies steps [first, first + out.size()) into `out`; the range must lie within size().
  virtual void read(std::uint64_t first, std::span<StepTimes> out) = 0;
};

// The whole log in memory: for tests, and for runs that write no per-rank files.
class MemoryStepLog final : public StepLog {
 public:
  void append(const StepTimes& step) override { steps_.push_back(step); }
  std::uint64_t size() const override { return steps_.size(); }
  void read(std::uint64_t first, std::span<StepTimes> out) override {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = steps_.at(first + i);
  }

 private:
  std::vector<StepTimes> steps_;
};

}  // namespace trainio::metrics
