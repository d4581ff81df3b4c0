#include "util/precise_sleep.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <cmath>

#include "util/clock.hpp"
#include "util/proc_stats.hpp"

namespace trainio::util {

namespace {
// Tells the core a spin is under way (x86's pause: less power, no memory-order stall on exit).
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

std::int64_t PreciseSleeper::margin_ns() const {
  if (!spin_) return 0;
  return std::min<std::int64_t>(kMaxSpinNs, static_cast<std::int64_t>(late_mean_ns_ + 2 * late_dev_ns_));
}

void PreciseSleeper::until(std::int64_t deadline_ns) {
  if (!slack_set_) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // this thread's; failure leaves the default
    slack_set_ = true;
  }
  const std::int64_t wake_at = deadline_ns - margin_ns();
  if (wake_at > now_ns()) {
    sleep_until_ns(wake_at);
    const double late = static_cast<double>(now_ns() - wake_at);
    late_dev_ns_ += (std::abs(late - late_mean_ns_) - late_dev_ns_) / 4;
    late_mean_ns_ += (late - late_mean_ns_) / 8;
  }
  if (!spin_ || now_ns() >= deadline_ns) return;
  const std::int64_t cpu_start = thread_cpu_ns();
  while (now_ns() < deadline_ns) spin_pause();
  spin_cpu_ns_ += thread_cpu_ns() - cpu_start;
}

std::int64_t PreciseSleeper::take_spin_cpu_ns() {
  const std::int64_t spent = spin_cpu_ns_;
  spin_cpu_ns_ = 0;
  return spent;
}

}  // namespace trainio::util
