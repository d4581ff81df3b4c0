#pragma once
// This process's bytes of data files read and written so far, readable from any thread while the
// calls go on: for the live progress lines, which show measured MiB/s, not the nominal size of
// what was asked for. Each thread adds into its own cache line (no contention on the hot path);
// a reader sums the lines.

#include <cstdint>

namespace trainio::metrics {

// Called by the IoRecorder for every data read (or mapped-page touch) and write.
void add_live_read(std::uint64_t bytes);
void add_live_written(std::uint64_t bytes);

struct LiveBytes {
  std::uint64_t read = 0, written = 0;
};
// The sums so far (monotonic; take differences between two calls).
LiveBytes live_bytes();

}  // namespace trainio::metrics
