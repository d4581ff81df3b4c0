#pragma once
// Darshan's DXT text, as darshan-dxt-parser prints it: per file a "# DXT, file_id: ..., file_name:
// PATH" header, then one line per read or write segment ("X_POSIX RANK read SEGMENT OFFSET LENGTH
// START END", MPI-IO's X_MPIIO too). DXT lists segments file by file, not in time order, and
// records no opens or stats: the reader gathers the segments and hands them on in time order, so
// its memory is the trace's segments (DXT itself keeps a bounded number per file).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "capture/event.hpp"

namespace trainio::capture {

class DarshanReader {
 public:
  DarshanReader(std::string name, EventSink sink);
  void line(std::string_view text);
  void finish();  // sends the segments in time order; throws a usage error when there were none

 private:
  struct Segment {
    std::uint32_t file;
    long rank;
    bool write;
    std::uint64_t offset, length;
    std::int64_t start_ns, end_ns;
  };
  std::string name_;
  EventSink sink_;
  std::vector<std::string> paths_;
  std::vector<Segment> segments_;
  std::uint64_t lines_ = 0, foreign_ = 0;
  bool in_posix_ = true;
};

}  // namespace trainio::capture
