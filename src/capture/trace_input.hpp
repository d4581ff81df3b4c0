#pragma once
// Trace files in, one profile out: each file (or each file of a folder) is recognised by its
// content — strace text, .pfw JSON lines, or darshan-dxt-parser text, any of them gzip-compressed —
// and streamed through its reader into the profile.

#include <string>
#include <vector>

#include "capture/profile.hpp"

namespace trainio::capture {

struct TraceInput {
  std::vector<std::string> files;  // the files read, in order
  std::uint64_t bytes = 0;         // their text, uncompressed
  double seconds = 0;              // the time reading and aggregating took
};

// Folders contribute their *.pfw and *.pfw.gz files, or when they hold none, every file (strace -ff).
// Throws a usage error naming the file that is missing, unreadable, binary or of no known format.
Profile read_traces(const std::vector<std::string>& paths, TraceInput* input = nullptr);

}  // namespace trainio::capture
