#pragma once
// Waits until a deadline to within microseconds, for the emulated accelerator's compute: a step
// must last what the workload says. A plain sleep wakes late by the thread's timer slack (50 us by
// default) and the kernel's wake-up latency (114 us in all on the development VM: 30% of DLRM's
// 375 us step), which would lengthen every step and raise AU. So the thread's timer slack is set
// to 1 ns, and where the thread has a core of its own (`spin`) it sleeps until the deadline less
// the lateness its recent wake-ups showed (at most kMaxSpinNs) and spins the rest (a yield there
// hands the core to any other process, and the step waits for the end of its slice). The spin's CPU
// time is kept apart, as the batch wait's polling is (docs/metrics.md).

#include <cstdint>

namespace trainio::util {

class PreciseSleeper {
 public:
  static constexpr std::int64_t kMaxSpinNs = 200'000;
  explicit PreciseSleeper(bool spin) : spin_(spin) {}
  void until(std::int64_t deadline_ns);
  // The margin it sleeps short of a deadline by, to spin the rest.
  std::int64_t margin_ns() const;
  // CPU time spent spinning since the last call.
  std::int64_t take_spin_cpu_ns();

 private:
  bool spin_;
  bool slack_set_ = false;
  std::int64_t spin_cpu_ns_ = 0;
  // The lateness of wake-ups from the sleep: a smoothed mean and mean deviation (as TCP keeps
  // its round-trip time), so a margin of mean + 2 deviations covers most wake-ups.
  double late_mean_ns_ = 0, late_dev_ns_ = 0;
};

}  // namespace trainio::util
