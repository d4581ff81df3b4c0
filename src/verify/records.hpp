#pragma once
// The parser of a rank's records (`<rank>_records.jsonl`, docs/results.md) for `trainio verify`:
// each line into plain values, and the sums a phase's figures need across ranks. A line that is
// not what the format says is a data error naming the file and line.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "verify/latency.hpp"

namespace trainio::verify {

class JsonValue;

struct OpTotals {
  std::uint64_t count = 0, bytes = 0, ns = 0;
  Latency latency;
  void merge(const OpTotals& o);
};

// Darshan-style counters of one class of files.
struct Profile {
  std::uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
  std::array<std::uint64_t, 10> read_sizes{}, write_sizes{};
  std::uint64_t sequential_reads = 0, consecutive_reads = 0, sequential_writes = 0, consecutive_writes = 0;
  std::uint64_t metadata_calls = 0, metadata_ns = 0, data_ns = 0;
  // Each rank's own estimate of its distinct files; several ranks' union is only bounded by them.
  double files_low = 0, files_high = 0;
  std::map<std::uint64_t, std::uint64_t> sizes;  // call size -> calls, every rank's table together
  std::uint64_t other_sizes = 0;
  void merge(const Profile& o);
};

struct PageCache {
  std::uint64_t read_bytes = 0, direct_bytes = 0, remote_bytes = 0, probes = 0, probed_pages = 0, resident_pages = 0,
                stayed_out_pages = 0, failed_probes = 0, probe_error = 0, page_bytes = 4096;
  std::string method = "none";  // the largest seen: none < cachestat < mincore
  void merge(const PageCache& o);
};

// One endpoint's share of the requests (storage_options.endpoint_url may list several).
struct EndpointRequests {
  std::uint64_t count = 0, retries = 0, bytes = 0;
  Latency first_byte, total;
  void merge(const EndpointRequests& o);
};

struct Requests {
  std::map<std::string, std::uint64_t> by_kind, by_status, retries_by_status;
  std::uint64_t retries = 0, bytes = 0;
  Latency first_byte, total;
  std::vector<EndpointRequests> by_endpoint;  // in endpoint_url's order
  void merge(const Requests& o);
};

struct Io {
  std::map<std::string, OpTotals> ops;
  // Reads of data files by the depth they started at: lowest depth of the band -> (calls, ns).
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> read_depth;
  Profile data, other;
  PageCache page_cache;
  Requests requests;
  std::uint64_t bytes_read() const;     // read and touch calls
  std::uint64_t bytes_written() const;  // write calls
  void merge(const Io& o);
};

struct Tier {
  std::map<std::string, std::uint64_t> counters;
  PageCache backing, tier;
  void merge(const Tier& o);
  std::uint64_t operator[](const std::string& name) const;
};

struct Block {
  std::string start, end;
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint64_t steps = 0;
};

struct Cpu {
  double user = 0, sys = 0;
};

// One rank's training or evaluation phase.
struct PhaseLine {
  std::string kind;  // train, eval
  std::uint64_t epoch = 0;
  std::string start, end;
  std::int64_t start_ns = 0, end_ns = 0, paused_ns = 0;
  std::uint64_t first_step = 0, steps = 0;
  std::vector<Block> blocks;
  std::uint64_t samples = 0, sample_bytes = 0;
  Latency sample_read;
  Io io;
  Tier tier;
  std::optional<std::uint64_t> process_read_before, process_read_after, device_read_before, device_read_after;
  Cpu cpu_before, cpu_after, cpu_in_checkpoints;
  double cpu_polling = 0;
  // The loader's reads (null in the records: not measured), and the host's CPU ticks (idle, total)
  // before and after the phase.
  bool readers = false;
  std::uint64_t reader_threads = 0, max_in_flight = 0, busy_ns = 0, cpu_ns = 0, at_max_ns = 0;
  std::optional<std::uint64_t> run_delay_ns;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> host_before, host_after;
};

struct CheckpointLine {
  std::string kind;  // save, load
  std::uint64_t index = 0, block = 0, epoch = 0, step = 0;
  std::string folder, start, end;
  double seconds = 0, io_seconds = 0, collective_seconds = 0;
  std::uint64_t files = 0, tensor_bytes = 0, file_bytes = 0;
  std::optional<std::uint64_t> process_read_before, process_read_after;
  std::int64_t first_read_end_ns = 0;  // loads: when the first read of data returned (0: none)
  Io io;
};

struct GenerateLine {
  double seconds = 0;          // to the rank's last write
  double durable_seconds = 0;  // until its files were durable
  std::uint64_t files_written = 0, files_kept = 0;
  Io io;
};

struct StagingLine {
  double seconds = 0;
  Tier tier;
  Io io;
};

struct RankLine {
  int rank = 0, ranks = 1, host_index = 0;
  std::string hostname;
  std::uint64_t batch_size = 0, batch_size_eval = 0, exclude_start = 0, exclude_end = 0;
};

struct EndLine {
  bool stopped_by_time_limit = false;
  bool complete = true;  // no signal stopped the run
  int stop_signal = 0;
  std::optional<std::int64_t> process_start_ns;  // when the kernel started the rank's process
  std::string process_start;                     // the same as wall time ("" when unknown)
};

// The write job a read job resumed from (--resume-from).
struct FailoverLine {
  std::string previous_results, previous_end;
};

// What each line of a records file holds, handed over as it is read.
struct RecordVisitor {
  std::function<void(const RankLine&)> rank;
  std::function<void(const PhaseLine&)> phase;
  std::function<void(const CheckpointLine&)> checkpoint;
  std::function<void(const GenerateLine&)> generate;
  std::function<void(const StagingLine&)> staging;
  std::function<void(const EndLine&)> end;
  std::function<void(const FailoverLine&)> failover;
  // checkpoint.async's lines (`async_save`, `async_overlap`), whole, valid during the call only:
  // verify/async_checkpoint_checks.cpp reads them.
  std::function<void(const std::string& kind, const JsonValue& line)> async;
  // Resharded loads' `reshard_load` lines, whole, valid during the call only (verify/reshard_checks.cpp).
  std::function<void(const JsonValue& line)> reshard;
};

// A records file read line by line, each line looked at before it is handed over (verify reads
// every rank's file epoch by epoch together). Throws a data error naming the file and line when a
// line does not parse, when the first line is not the rank's, or when the closing line is missing.
class RecordsReader {
 public:
  explicit RecordsReader(const std::string& path);  // throws a data error when the file is missing
  ~RecordsReader();
  RecordsReader(const RecordsReader&) = delete;
  RecordsReader& operator=(const RecordsReader&) = delete;
  // Parses the next line unless one waits; false after the closing line (the file's end checked).
  bool peek();
  // The waiting line's record kind, and its epoch (a phase's; 0 for other lines).
  const std::string& kind() const { return kind_; }
  std::uint64_t epoch() const { return epoch_; }
  // Hands the waiting line over to `visit`.
  void hand_over(const RecordVisitor& visit);

 private:
  struct State;
  State* state_;
  std::string kind_;
  std::uint64_t epoch_ = 0;
  bool waiting_ = false;
};

// Reads `path` line by line. Throws a data error naming the file and line when a line does not
// parse, when the first line is not the rank's, or when the closing line is missing (a file cut
// short).
void read_records(const std::string& path, const RecordVisitor& visit);

}  // namespace trainio::verify
