#include "engine/stall_watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "storage/in_flight.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::engine {

std::string stall_message(int rank, const std::string& call, const std::string& path, double seconds, double timeout_s) {
  const std::string when = fmt::format("has not returned for {:.0f} s (--stall-timeout {:g} s): the job stops", seconds, timeout_s);
  const char* raise = "if calls this slow are expected, raise --stall-timeout (0 turns the watchdog off)";
  if (path.starts_with("s3://"))
    return format_error(io_error(fmt::format("S3 {} of '{}' {}", call, path, when),
                                 fmt::format("the S3 server may be hung or unreachable: check it at "
                                             "storage.storage_options.endpoint_url; {}", raise))
                            .with_rank(rank));
  return format_error(io_error(fmt::format("{}('{}') {}", call, path, when),
                               fmt::format("the file system holding the file may be hung (check the mount, its servers "
                                           "and dmesg); {}", raise))
                          .with_rank(rank));
}

namespace {

// An S3 request stands in the marks as the storage call it replaces; its message names its
// HTTP method.
const char* call_name(storage::Op op, const std::string& path) {
  if (!path.starts_with("s3://")) return storage::op_name(op);
  switch (op) {
    case storage::Op::read: return "GET";
    case storage::Op::write: return "PUT";
    case storage::Op::stat: return "HEAD";
    case storage::Op::unlink: return "DELETE";
    default: return "POST";
  }
}

}  // namespace

StallWatchdog::StallWatchdog(double timeout_s, int rank, std::function<void(const std::string&)> end_job)
    : timeout_s_(timeout_s), rank_(rank), end_job_(std::move(end_job)) {
  storage::set_stall_timeout(std::max(0.0, timeout_s_));  // S3 clients made from now on keep within it
  if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  storage::set_stall_timeout(0);
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
      end_job_(stall_message(rank_, call_name(call->op, call->path), call->path, static_cast<double>(now - call->start_ns) * 1e-9,
                             timeout_s_));
      return;
    }
  }
}

}  // namespace trainio::engine
