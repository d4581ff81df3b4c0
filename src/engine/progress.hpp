#pragma once
// Progress of a long phase on rank 0: a self-updating line on a terminal, a plain line every few
// seconds otherwise (logs, CI). Estimates the whole job from rank 0's share of the work.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace trainio::engine {

class Progress {
 public:
  // `kind` names the phase for the live stream (generate, validate); `units` and `bytes` are this
  // rank's share; `scale` multiplies them to the whole job.
  Progress(const std::string& kind, std::string label, std::uint64_t units, std::uint64_t bytes, int scale, bool enabled);
  void advance(std::uint64_t units, std::uint64_t bytes);
  void finish();

 private:
  void print(bool final);
  std::string label_;
  std::uint64_t total_units_, total_bytes_;
  int scale_;
  bool enabled_, tty_;
  std::uint64_t units_ = 0, bytes_ = 0;
  std::int64_t start_ns_, last_print_ns_;
  bool printed_ = false;
};

// Progress of a training or evaluation phase on rank 0: steps done, AU and samples/s so far,
// the bytes this rank's storage calls returned per second (measured, metrics/live_bytes.hpp),
// and the time left. On a terminal the line starts after the first second, updates itself and
// is cleared at the end, where the epoch's line takes its place; elsewhere (logs, CI) a line
// every 10 seconds, after the first 5.
class StepProgress {
 public:
  // `samples_per_step`: the whole job's (batch x ranks).
  // `kind`: train or eval, for the live stream (metrics/live_status.hpp), which every tracker
  // feeds whether or not it prints.
  StepProgress(const std::string& kind, std::string label, std::uint64_t steps, double samples_per_step, int ranks,
               bool enabled);
  void step(double compute_seconds);
  void finish();

 private:
  std::string label_;
  std::uint64_t total_, done_ = 0;
  double samples_per_step_, compute_ = 0;
  int ranks_;
  bool enabled_, tty_, printed_ = false;
  std::int64_t start_ns_, last_print_ns_;
  std::uint64_t read_at_start_;
};

// A live line for a long phase whose work happens inside few long calls (a checkpoint's writes
// and reads): a thread on rank 0 redraws "<label>: <bytes> written|read (rank 0), <rate>, <time>"
// from the measured bytes of this process, as StepProgress paces its lines, and clears it when
// the scope ends. Does nothing when not enabled.
class LiveLine {
 public:
  enum class Direction { read, write };
  LiveLine(std::string label, Direction direction, int ranks, bool enabled);
  ~LiveLine();
  LiveLine(const LiveLine&) = delete;
  LiveLine& operator=(const LiveLine&) = delete;

 private:
  void run();
  std::string label_;
  Direction direction_;
  int ranks_;
  bool tty_;
  std::int64_t start_ns_;
  std::uint64_t bytes_at_start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false, printed_ = false;
  std::thread thread_;
};

}  // namespace trainio::engine
