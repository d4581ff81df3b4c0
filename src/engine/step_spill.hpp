#pragma once
// The step log of a run, spilled to a hidden file in the results folder as the steps happen:
// 16 bytes per step on disk and a fixed buffer in memory, whatever the number of steps. The
// file is removed when the log is destroyed (after the results are written); a crashed run
// leaves it under a temporary name (storage::temp_path_for) that is recognised as such.

#include <string>
#include <vector>

#include "metrics/step_log.hpp"
#include "storage/file.hpp"

namespace trainio::engine {

class StepSpill final : public metrics::StepLog {
 public:
  // Creates the spill for `rank` in `folder` (the results folder, which exists).
  StepSpill(const std::string& folder, int rank);
  ~StepSpill() override;
  StepSpill(const StepSpill&) = delete;
  StepSpill& operator=(const StepSpill&) = delete;

  void append(const metrics::StepTimes& step) override;
  std::uint64_t size() const override { return written_ + pending_.size(); }
  void read(std::uint64_t first, std::span<metrics::StepTimes> out) override;

  const std::string& path() const { return path_; }

 private:
  void flush();
  static constexpr std::size_t kBufferSteps = 4096;  // 48 KiB written at a time
  std::string path_;
  storage::File file_;
  std::vector<metrics::StepTimes> pending_;  // appended, not yet written
  std::uint64_t written_ = 0;                // steps in the file
};

}  // namespace trainio::engine
