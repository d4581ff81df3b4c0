#pragma once
// Checkpoint files as a trace shows them, for the capture tests: an open for writing, then writes.

#include <cstdint>
#include <string>
#include <vector>

#include "capture/profile.hpp"

namespace trainio::test {

// File `path` opened for writing at `t_ns` by process 1, then one write per size, 1 ms apart, in
// order from offset 0; returns the time of the last write.
inline std::int64_t add_save(capture::Profile& p, const std::string& path, std::int64_t t_ns, const std::vector<std::uint64_t>& writes) {
  using namespace capture;
  Event e;
  e.call = Call::open;
  e.pid = 1;
  e.path = path;
  e.for_write = true;
  e.start_ns = t_ns;
  e.dur_ns = 1000;
  p.add(e);
  e.call = Call::write;
  e.for_write = false;
  e.has_offset = true;
  for (const std::uint64_t bytes : writes) {
    e.start_ns += 1'000'000;
    e.bytes = bytes;
    p.add(e);
    e.offset += bytes;
  }
  return e.start_ns;
}

}  // namespace trainio::test
