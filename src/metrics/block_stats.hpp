#pragma once
// The timing of a block of training steps (an epoch, or the steps between two checkpoints) and
// DLIO's accelerator-utilisation and throughput formulas over it (REFERENCE §5). Streaming: a
// block of millions of steps costs a few numbers, not a list per step.

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>


namespace trainio::metrics {

// One step as the training loop saw it (seconds).
struct StepTiming {
  double load = 0;     // waiting for the batch
  double compute = 0;  // emulated accelerator time
  double barrier = 0;  // waiting for the other ranks (stands in for the gradient all-reduce)
};

struct BlockResult {
  std::uint64_t steps = 0;
  double duration = 0;       // block wall time
  double window_time = 0;    // duration minus the excluded steps' load+compute (DLIO's T)
  double window_compute = 0; // compute inside the window
  std::uint64_t window_steps = 0;
  bool degenerate = false;   // too few steps for the exclusions: the window is empty
  // DLIO's figures, absent where its formulas have no value: AU needs steps left after the
  // exclusions and T > 0; training throughput needs more than 2 steps (DLIO's "steps - 2").
  std::optional<double> au;              // window_compute / window_time (a fraction)
  std::optional<double> throughput_dlio; // samples/s by DLIO's formula (see result())
  double throughput = 0;     // trainio's: window_steps * batch / window_time (whole block when degenerate)
  double total_load = 0, total_compute = 0, total_barrier = 0;
};

class BlockAccumulator {
 public:
  BlockAccumulator(std::uint64_t exclude_start, std::uint64_t exclude_end)
      : exclude_start_(exclude_start), exclude_end_(exclude_end) {}

  void start(std::int64_t t_ns) { start_ns_ = t_ns; }
  void end(std::int64_t t_ns) { end_ns_ = t_ns; }
  // Time inside the block that belongs to something else (a checkpoint between steps).
  void pause(std::int64_t ns) { paused_ns_ += ns; }
  void add(const StepTiming& s);

  // DLIO computes training throughput as (steps - 2) * batch / T and evaluation throughput as
  // steps * batch / duration; `formula` picks which `throughput_dlio` follows.
  enum class DlioFormula { train, eval };
  BlockResult result(std::uint64_t batch_size, DlioFormula formula) const;

  std::uint64_t steps() const { return steps_; }

 private:
  std::uint64_t exclude_start_, exclude_end_;
  std::int64_t start_ns_ = 0, end_ns_ = 0, paused_ns_ = 0;
  std::uint64_t steps_ = 0;
  double sum_load_ = 0, sum_compute_ = 0, sum_barrier_ = 0;
  double head_proc_ = 0, head_compute_ = 0;  // first exclude_start steps
  std::deque<StepTiming> tail_;               // last exclude_end steps
};

// DLIO's epoch value from its blocks: the blocks' values weighted by their step counts. Blocks
// without a value are left out; no value when no block has one. Pairs of (steps, value).
std::optional<double> step_weighted_mean(const std::vector<std::pair<std::uint64_t, std::optional<double>>>& blocks);

// The training figure's minimum steps: DLIO's (steps - 2) / T has no value below 3.
inline constexpr std::uint64_t kMinDlioTrainSteps = 3;

}  // namespace trainio::metrics
