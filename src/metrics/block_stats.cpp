#include "metrics/block_stats.hpp"

#include <algorithm>

namespace trainio::metrics {

void BlockAccumulator::add(const StepTiming& s) {
  if (steps_ < exclude_start_) {
    head_proc_ += s.load + s.compute;
    head_compute_ += s.compute;
  }
  ++steps_;
  sum_load_ += s.load;
  sum_compute_ += s.compute;
  sum_barrier_ += s.barrier;
  if (exclude_end_ > 0) {
    tail_.push_back(s);
    if (tail_.size() > exclude_end_) tail_.pop_front();
  }
}

BlockResult BlockAccumulator::result(std::uint64_t batch_size, DlioFormula formula) const {
  BlockResult r;
  r.steps = steps_;
  r.duration = static_cast<double>(end_ns_ - start_ns_ - paused_ns_) * 1e-9;
  r.total_load = sum_load_;
  r.total_compute = sum_compute_;
  r.total_barrier = sum_barrier_;
  double excluded_proc = 0, excluded_compute = 0;
  std::uint64_t excluded = 0;
  if (steps_ > exclude_start_ + exclude_end_) {
    excluded_proc = head_proc_;
    excluded_compute = head_compute_;
    for (const auto& s : tail_) {
      excluded_proc += s.load + s.compute;
      excluded_compute += s.compute;
    }
    excluded = exclude_start_ + exclude_end_;
  } else {
    r.degenerate = exclude_start_ + exclude_end_ > 0;
  }
  r.window_steps = steps_ - excluded;
  r.window_time = r.duration - excluded_proc;
  r.window_compute = sum_compute_ - excluded_compute;
  // trainio's exact figure: over the whole block when nothing could be excluded.
  if (r.window_time > 0) r.throughput = static_cast<double>(r.window_steps * batch_size) / r.window_time;
  const double batch = static_cast<double>(batch_size);
  if (formula == DlioFormula::train) {
    // DLIO's T leaves the excluded steps out; with nothing left, there is no T.
    const bool window = !r.degenerate && r.window_steps > 0 && r.window_time > 0;
    if (window) r.au = r.window_compute / r.window_time;
    if (window && steps_ >= kMinDlioTrainSteps)
      r.throughput_dlio = (static_cast<double>(steps_) - 2.0) * batch / r.window_time;
  } else if (steps_ > 0 && r.duration > 0) {
    // Evaluation: DLIO's AU over the window like training, throughput over the whole duration.
    if (!r.degenerate && r.window_time > 0) r.au = r.window_compute / r.window_time;
    r.throughput_dlio = static_cast<double>(steps_) * batch / r.duration;
  }
  return r;
}

std::optional<double> step_weighted_mean(const std::vector<std::pair<std::uint64_t, std::optional<double>>>& blocks) {
  double weighted = 0, steps = 0;
  for (const auto& [n, value] : blocks) {
    if (!value) continue;
    weighted += static_cast<double>(n) * *value;
    steps += static_cast<double>(n);
  }
  if (steps > 0) return weighted / steps;
  return std::nullopt;
}

}  // namespace trainio::metrics
