#pragma once
// What capture keeps of a trace: aggregates per file, per folder and per process, fixed-size
// histograms and a fixed-size timeline, never the events themselves. Memory grows with the
// number of distinct files, folders and processes the trace touches (each file keeps at most
// kOffsetsKept read offsets; each process at most kVisitsKept open times), not with its length.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capture/event.hpp"
#include "capture/histogram.hpp"

namespace trainio::capture {

// Which tracer wrote the trace: strace adds its own cost to every call it reports.
enum class Tracer : std::uint8_t { strace, pfw, darshan };
const char* tracer_name(Tracer t);

struct FileStats {
  static constexpr std::size_t kOffsetsKept = 256;
  std::string path;
  std::uint32_t dir = 0;
  std::uint64_t size = 0;    // the largest st_size a stat of it reported; 0 if none did
  std::uint64_t extent = 0;  // the furthest byte read or written
  std::uint64_t calls[kCallCount] = {};
  std::uint64_t read_bytes = 0, write_bytes = 0;
  std::int64_t first_ns = -1, last_ns = 0;
  bool opened_for_write = false;
  // The offsets reads started at, with how often each was read at and the first read's size (the
  // first kOffsetsKept offsets seen).
  struct Offset {
    std::uint64_t offset;
    std::uint32_t times;
    std::uint32_t bytes;
  };
  std::vector<Offset> offsets;
  // The sizes of its writes larger than Python's 4 KiB buffer, in order (the first
  // kLargeWritesKept): torch.save writes each such tensor's bytes in one write.
  static constexpr std::size_t kLargeWritesKept = 64;
  static constexpr std::uint64_t kLargeWrite = 4096;
  std::vector<std::uint64_t> large_writes;
  // How many times the file was read through: the median of those counts (0 if never read).
  std::uint32_t passes() const;
  std::uint64_t known_size() const { return size ? size : extent; }
};

struct DirStats {
  std::string path;
  std::vector<std::uint32_t> files;
  std::uint64_t calls[kCallCount] = {};
  std::uint64_t read_bytes = 0, write_bytes = 0;
  LogHistogram read_sizes, read_latency, inter_arrival;
  LogHistogram write_sizes;  // weighted by bytes, not counted: a checkpoint's bytes go in its large writes
  // Reads in flight over time, as each read finds it when it starts (itself included): their
  // sum and count, and the ends of the reads still in flight (as many as run at once).
  double depth_sum = 0;
  std::uint64_t depth_count = 0;
  std::vector<std::int64_t> in_flight_ends;
  double mean_depth() const { return depth_count ? depth_sum / static_cast<double>(depth_count) : 0; }
  std::int64_t first_read_ns = -1, last_read_ns = -1, last_read_end_ns = 0;
  double busy_ns = 0;                  // the reads' time, where the trace timed them
  std::uint64_t visit_pairs = 0, visit_up = 0;  // a process's consecutive opens here; of them, to a later name
  // A process's consecutive reads (of 4 KiB or more) of one file; of them, further on.
  std::uint64_t read_pairs = 0, read_up = 0;
  std::int64_t first_write_ns = -1, last_write_ns = -1;
};

struct ProcessStats {
  static constexpr std::size_t kVisitsKept = 8192;
  long pid = 0, parent = 0;
  bool thread = false;                  // shares its parent's descriptors
  std::uint64_t reads = 0, read_bytes = 0, writes = 0;
  std::int64_t first_read_ns = -1, last_read_ns = -1;
  // Batches handed to the main process: PyTorch's workers put each batch's tensors in new
  // /dev/shm/torch_* segments; segments made with no data file opened between them are one batch.
  std::uint64_t batches_handed = 0, opens_handed = 0;
  std::uint64_t opens_since_handoff = 0;
  std::vector<std::pair<std::uint32_t, std::int64_t>> visits;  // (folder, time) of its opens for reading
  std::uint32_t last_open_file = UINT32_MAX, last_read_file = UINT32_MAX;
  std::uint64_t last_read_offset = 0;
  std::vector<std::uint32_t> read_dirs;  // folders it read from
};

class Profile {
 public:
  explicit Profile(Tracer tracer = Tracer::strace) : tracer_(tracer) {}
  void add(const Event& e);

  Tracer tracer() const { return tracer_; }
  // Whether the tracer records calls of this kind: Darshan's DXT only reads and writes, a dftracer
  // trace may hold no stat (pfw_reader.hpp).
  bool records(Call c) const { return (unrecorded_ & (1u << static_cast<int>(c))) == 0; }
  void set_unrecorded(Call c) { unrecorded_ |= 1u << static_cast<int>(c); }
  // The finest time step the trace gives (DXT prints seconds to 4 decimals: 100 us).
  std::int64_t time_step_ns() const { return time_step_ns_; }
  void set_time_step_ns(std::int64_t ns) { time_step_ns_ = ns; }
  void set_tracer(Tracer t) { tracer_ = t; }
  const std::vector<FileStats>& files() const { return files_; }
  const std::vector<DirStats>& dirs() const { return dirs_; }
  const std::unordered_map<long, ProcessStats>& processes() const { return processes_; }
  long first_pid() const { return first_pid_; }
  std::uint64_t events() const { return events_; }
  std::int64_t first_ns() const { return first_ns_; }
  std::int64_t last_ns() const { return last_ns_; }
  // The latest time the trace reached, with or without a file (its end).
  std::int64_t end_ns() const { return end_ns_; }
  // Training steps the application's own spans named (0 when the trace has none), and their time.
  std::uint64_t steps() const { return steps_; }
  std::int64_t step_ns() const { return step_ns_; }

  // Whether a path can be the job's data: not the system's or Python's own files.
  static bool is_data_path(std::string_view path);

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::uint32_t file(std::string_view path);
  std::uint32_t dir(std::string_view path);

  Tracer tracer_;
  std::uint32_t unrecorded_ = 0;  // bits of Call
  std::int64_t time_step_ns_ = 1000;
  std::vector<FileStats> files_;
  std::vector<DirStats> dirs_;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> file_index_, dir_index_;
  std::unordered_map<long, ProcessStats> processes_;
  long first_pid_ = 0;
  std::uint64_t events_ = 0;
  std::int64_t first_ns_ = -1, last_ns_ = 0, end_ns_ = 0;
  std::uint64_t steps_ = 0;
  std::int64_t step_ns_ = 0;
};

}  // namespace trainio::capture
