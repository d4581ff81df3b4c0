#include "engine/stall_watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "storage/in_flight.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::engine {

std::string stall_message(int rank, const std::string& call, const std::string& path, double seconds, double timeout_s) {
  return format_error(
      io_error(fmt::format("{}('{}') has not returned for {:.0f} s (--stall-timeout {:g} s): the job stops", call, path,
                           seconds, timeout_s),
               "the file system holding the file may be hung (check the mount, its servers and dmesg); if calls this "
               "slow are expected, raise --stall-timeout (0 turns the watchdog off)")
          .with_rank(rank));
}

StallWatchdog::StallWatchdog(double timeout_s, int rank, std::function<void(const std::string&)> end_job)
    : timeout_s_(timeout_s), rank_(rank), end_job_(std::move(end_job)) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StallWatchdog::watch() {
  // Look often enough to end the job within a tenth of the timeout after it passes (at most 1 s).
  const auto period = std::chrono::duration<double>(std::clamp(timeout_s_ / 10, 0.01, 1.0));
  // At most 10^9 s (31 years): a larger --stall-timeout would not fit in 64-bit nanoseconds.
  const auto timeout_ns = static_cast<std::int64_t>(std::min(timeout_s_, 1e9) * 1e9);
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    const std::int64_t now = util::now_ns();
    if (const auto call = storage::call_in_flight_since(now - timeout_ns)) {
      end_job_(stall_message(rank_, storage::op_name(call->op), call->path, static_cast<double>(now - call->start_ns) * 1e-9,
                             timeout_s_));
      return;
    }
  }
}

}  // namespace trainio::engine
