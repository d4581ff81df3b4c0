#include "report/reshard_json.hpp"

#include <fmt/format.h>

#include "util/units.hpp"

namespace trainio::report {

namespace {

nlohmann::ordered_json layout_json(const metrics::ReshardLoad::Layout& l) {
  return {{"tensor", l.tensor}, {"pipeline", l.pipeline}, {"data", l.data}, {"ranks", l.tensor * l.pipeline * l.data}};
}

std::string layout_text(const metrics::ReshardLoad::Layout& l) {
  const int ranks = l.tensor * l.pipeline * l.data;
  return fmt::format("tensor {} x pipeline {} x data {} ({} rank{})", l.tensor, l.pipeline, l.data, ranks, ranks == 1 ? "" : "s");
}

}  // namespace

nlohmann::ordered_json reshard_json(const metrics::ReshardSummary& r) {
  return {{"saved_layout", layout_json(r.saved)},
          {"load_layout", layout_json(r.load)},
          {"ranks", r.ranks},
          {"shard_bytes", r.shard_bytes},
          {"unsaved_bytes", r.unsaved_bytes},
          {"data_bytes", r.data_bytes},
          {"index_bytes", r.index_bytes},
          {"bytes_read", r.data_bytes + r.index_bytes},
          {"pieces", r.pieces},
          {"read_amplification", r.read_amplification},
          {"rank_read_amplification_max", r.rank_read_amplification_max},
          {"rank_read_amplification_max_rank", r.rank_read_amplification_max_rank},
          {"files_read", r.files_read},
          {"readers_per_file_max", r.readers_per_file_max},
          {"readers_per_file_min", r.readers_per_file_min},
          {"readers_per_file_mean", r.readers_per_file_mean},
          {"most_read_file", r.most_read_file}};
}

std::string reshard_line(const metrics::ReshardSummary& r) {
  return fmt::format("  resharded: saved {}, loaded {}; read {:.3f}x the shards ({} for {}; {} of it indexes and "
                     "headers; largest rank {:.3f}x, rank {}); {} file{}, {}-{} readers each (mean {:.2f})",
                     layout_text(r.saved), layout_text(r.load), r.read_amplification,
                     util::format_bytes(static_cast<double>(r.data_bytes + r.index_bytes)),
                     util::format_bytes(static_cast<double>(r.shard_bytes)), util::format_bytes(static_cast<double>(r.index_bytes)),
                     r.rank_read_amplification_max, r.rank_read_amplification_max_rank, r.files_read,
                     r.files_read == 1 ? "" : "s", r.readers_per_file_min, r.readers_per_file_max, r.readers_per_file_mean);
}

}  // namespace trainio::report
