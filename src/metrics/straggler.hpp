#pragma once
// The straggler of a phase (docs/metrics.md, "Stragglers"). Every step ends in a barrier, so all
// ranks end a phase together and their wall times cannot tell who held the others up. What can is
// the split of each rank's step time: its own batch wait and compute, then its wait at the
// barrier for the others. The straggler is the rank whose batch wait the others wait for there.

#include <vector>

namespace trainio::metrics {

struct RankFigures;

struct Straggler {
  bool known = false;  // more than one rank took part
  int rank = 0, host = 0;
  double batch_wait = 0;          // seconds: its own batch wait over the phase
  double others_batch_wait = 0;   // the other ranks' mean
  double others_barrier = 0;      // the other ranks' mean wait at the step-end barrier
  // Its batch wait stood out and the others spent it at the barrier (the thresholds below).
  bool held_others = false;
};

// A rank whose batch wait exceeds the others' mean by at least this share of the mean step time
// (wait + compute + barrier), while the others spent at least kBarrierShare of that excess at the
// barrier, held them up.
inline constexpr double kStragglerExcessShare = 0.05;
inline constexpr double kStragglerBarrierShare = 0.5;

// `ranks` in rank order, with their batch_wait, compute and barrier sums.
Straggler find_straggler(const std::vector<RankFigures>& ranks);

}  // namespace trainio::metrics
