#include "metrics/reshard_summary.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace trainio::metrics {

double read_amplification(const ReshardLoad& r) {
  return r.shard_bytes > 0 ? static_cast<double>(r.data_bytes + r.index_bytes) / static_cast<double>(r.shard_bytes) : 0;
}

ReshardSummary summarize_reshard(const CheckpointTimeline& mine, const mpi::Comm& comm) {
  ReshardSummary s;
  const ReshardLoad& r = mine.reshard;
  const auto on = comm.sum(std::vector<std::uint64_t>{r.on ? 1u : 0u})[0];
  if (on == 0) return s;
  s.on = true;
  s.saved = r.saved;
  s.load = r.load;
  const auto sums = comm.sum(std::vector<std::uint64_t>{r.shard_bytes, r.unsaved_bytes, r.data_bytes, r.index_bytes,
                                                       r.pieces, r.shard_bytes > 0 ? 1u : 0u});
  s.shard_bytes = sums[0];
  s.unsaved_bytes = sums[1];
  s.data_bytes = sums[2];
  s.index_bytes = sums[3];
  s.pieces = sums[4];
  s.ranks = static_cast<int>(sums[5]);
  s.read_amplification =
      s.shard_bytes > 0 ? static_cast<double>(s.data_bytes + s.index_bytes) / static_cast<double>(s.shard_bytes) : 0;
  const double own = read_amplification(r);
  s.rank_read_amplification_max = comm.max(own);
  s.rank_read_amplification_max_rank =
      static_cast<int>(comm.min(static_cast<std::int64_t>(own == s.rank_read_amplification_max ? comm.rank() : comm.size())));
  // The files each rank read, to rank 0: one name a line.
  std::string names;
  for (const auto& f : r.files) names += f + "\n";
  const std::vector<std::string> all = comm.gather_strings(names);
  std::map<std::string, std::uint64_t> readers;
  for (const auto& text : all) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) ++readers[line];
  }
  s.files_read = readers.size();
  std::uint64_t total = 0;
  for (const auto& [name, n] : readers) {
    total += n;
    if (n > s.readers_per_file_max) {
      s.readers_per_file_max = n;
      s.most_read_file = name;
    }
    s.readers_per_file_min = s.readers_per_file_min == 0 ? n : std::min(s.readers_per_file_min, n);
  }
  s.readers_per_file_mean = s.files_read > 0 ? static_cast<double>(total) / static_cast<double>(s.files_read) : 0;
  return s;
}

}  // namespace trainio::metrics
