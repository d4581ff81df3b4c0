#pragma once
// Where this process's run stands, for a live stream read while the run goes on (--live-json):
// the current phase and how far it is, published by the phases' progress trackers
// (engine/progress.hpp) and read by a writer thread. Publishing costs nothing until a reader
// activates it (rank 0 with --live-json), and then one uncontended lock per step or file.

#include <cstdint>
#include <string>

namespace trainio::metrics::live {

void activate(bool on);

// A phase begins: `kind` is generate, train, eval, checkpoint_save or checkpoint_load; `label`
// as the console says it ("epoch 2/5"); `total` its steps (files when generating, 0 unknown);
// `samples_per_unit` the whole job's samples per step (0 where samples do not apply).
void begin_phase(const std::string& kind, const std::string& label, std::uint64_t total, double samples_per_unit);
// `units` more steps (files) done, with `compute_seconds` of emulated compute among them.
void advance(std::uint64_t units, double compute_seconds);
// The phase is over: its figures stay as they ended until the next phase begins.
void end_phase();

struct Snapshot {
  std::string kind = "setup", label;
  std::uint64_t done = 0, total = 0;
  double compute_seconds = 0, samples_per_unit = 0;
  std::int64_t phase_start_ns = 0;
  std::int64_t phase_end_ns = 0;  // 0 while the phase runs
};
Snapshot snapshot();

}  // namespace trainio::metrics::live
