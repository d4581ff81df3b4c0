#pragma once
// --live-json FILE: one line of JSON per interval while a run goes on (as fio's --status-interval
// and elbencho's --livejson), for dashboards and for watching a long run from elsewhere. Written
// by rank 0: the phase and how far it is, samples/s of the phase so far (the job's: every rank
// steps together), and rank 0's AU and the bytes its storage calls moved, in all and over the
// interval.
// A last line marked "final" when the run ends. The file is new: an existing one is refused.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "report/reporter.hpp"
#include "storage/file.hpp"

namespace trainio::report {

class LiveJson final : public Reporter {
 public:
  LiveJson(const std::string& path, double interval_s, int ranks);
  ~LiveJson() override;
  // A usage error when `path` exists: called before the run writes anything.
  static void check_new(const std::string& path);
  // The run stops before its plan's end (`reason`): the last line says so.
  void stopped(const std::string& reason) override;
  LiveJson(const LiveJson&) = delete;
  LiveJson& operator=(const LiveJson&) = delete;

 private:
  void run();
  void write_line(bool final);
  std::string path_;
  double interval_s_;
  int ranks_;
  storage::File file_;
  std::int64_t start_ns_, last_ns_;
  std::uint64_t last_read_ = 0, last_written_ = 0;
  std::uint64_t complete_bytes_ = 0;  // the file's whole lines
  bool failed_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string stopped_;  // why the run did not complete; empty: it did
  std::thread thread_;
};

}  // namespace trainio::report
