#include "engine/step_spill.hpp"

#include <fmt/format.h>

#include "storage/fs.hpp"
#include "storage/io_observer.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::engine {

static_assert(sizeof(metrics::StepTimes) == 16, "the spill holds four floats per step");

StepSpill::StepSpill(const std::string& folder, int rank)
    : path_(storage::temp_path_for(util::join(folder, fmt::format("{}_steps.bin", rank)))) {
  // The spill is trainio's bookkeeping, not the workload's I/O: it is not observed.
  const storage::ScopedObserver unobserved(nullptr);
  storage::remove_file(path_);  // left by an interrupted run into the same folder
  file_ = storage::File::open(path_, {.access = storage::Access::read_write_new});
  // Unnamed from now on: the open descriptor keeps it, and nothing is left in the results folder
  // however the process ends (a launcher's SIGKILL after a stop included).
  storage::remove_file(path_);
  pending_.reserve(kBufferSteps);
}

StepSpill::~StepSpill() {
  const storage::ScopedObserver unobserved(nullptr);
  try {
    file_.close();  // the file was unlinked when it was made: this frees its blocks
  } catch (...) {
  }
}

void StepSpill::append(const metrics::StepTimes& step) {
  pending_.push_back(step);
  if (pending_.size() == kBufferSteps) flush();
}

void StepSpill::flush() {
  if (pending_.empty()) return;
  const storage::ScopedObserver unobserved(nullptr);
  file_.pwrite_all(pending_.data(), pending_.size() * sizeof(metrics::StepTimes), written_ * sizeof(metrics::StepTimes));
  written_ += pending_.size();
  pending_.clear();
}

void StepSpill::read(std::uint64_t first, std::span<metrics::StepTimes> out) {
  if (first + out.size() > size())
    throw internal_error(fmt::format("step log: steps [{}, {}) asked of {}", first, first + out.size(), size()));
  flush();
  const storage::ScopedObserver unobserved(nullptr);
  file_.pread_exact(out.data(), out.size_bytes(), first * sizeof(metrics::StepTimes));
}

}  // namespace trainio::engine
