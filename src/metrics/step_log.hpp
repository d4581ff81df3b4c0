#pragma once
// Every training and evaluation step's times, in the order the steps ran, for DLIO's per-rank
// lists (<rank>_output.json). A run of millions of steps must not hold them in memory, so the
// log is an interface: the engine appends, the report reads back by ranges at the end. The run
// uses a spill file (engine/step_spill.hpp); tests and small tools may keep them in memory.

#include <cstdint>
#include <span>
#include <vector>

namespace trainio::metrics {

// One step as DLIO lists it (seconds): waiting for the batch, the step before the barrier
// ("proc": load + compute), and the emulated compute.
struct StepTimes {
  float load = 0, proc = 0, compute = 0;
};

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
