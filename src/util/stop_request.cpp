#include "util/stop_request.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <time.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>

namespace trainio::util {

namespace {

std::atomic<int> first_signal{0};
std::atomic<std::int64_t> first_at_ns{0};
// A repeat sooner than this is the launcher's, not the user's: Slurm's step teardown and srun both
// send SIGTERM at a time limit, milliseconds apart.
constexpr std::int64_t kRepeatAfterNs = 1'000'000'000;

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A launcher that is ending the job (mpirun aborting) stops reading the ranks' output: a rank that
// writes to that pipe would block there and never reach its step boundary. From the first signal
// on, output into a pipe or socket is given up when it cannot be written at once.
void stop_blocking_on_output() {
  for (const int fd : {1, 2}) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) continue;  // a terminal: shared with the shell
    const int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  }
}

extern "C" void on_stop_signal(int signal) {
  int none = 0;
  if (first_signal.compare_exchange_strong(none, signal)) {  // the first: a stop at the next step
    first_at_ns.store(monotonic_ns());
    stop_blocking_on_output();
    return;
  }
  if (first_signal.load() != signal) return;  // mpirun relaying a Ctrl-C as SIGTERM
  if (monotonic_ns() - first_at_ns.load() < kRepeatAfterNs) return;
  // The same signal again: end now, as the signal's default would (async-signal-safe calls only).
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int stop_signal() { return first_signal.load(std::memory_order_relaxed); }

void request_stop(int signal) {
  int none = 0;
  first_signal.compare_exchange_strong(none, signal);
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

int stop_exit_code(int signal) { return 128 + signal; }

}  // namespace trainio::util
