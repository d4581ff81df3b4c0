// The rules of the checkpoint write layout keys (checkpoint.file_layout, write_buffer_bytes):
// what the raw layouts, which only trainio writes, combine with.
#include <fmt/format.h>

#include "config/validate.hpp"
#include "util/error.hpp"

namespace trainio::config {

namespace {


// Two buffers of this size per rank: a bound, so that a typo cannot ask for all of memory.
constexpr std::uint64_t kMaxWriteBuffer = 1ull << 30;
// O_DIRECT needs aligned calls; trainio aligns to the page at least (the device may ask more).
constexpr std::uint64_t kDirectUnit = 4096;

}  // namespace

void validate_checkpoint_layout(Workload& w) {
  const auto& c = w.checkpoint;
  require(c.write_buffer_bytes <= kMaxWriteBuffer,
          fmt::format("checkpoint.write_buffer_bytes = {} is above 1 GiB (each rank holds two such buffers)",
                      c.write_buffer_bytes),
          "set checkpoint.write_buffer_bytes to at most 1GiB (default 64MiB)");
  require(!c.odirect || c.write_buffer_bytes % kDirectUnit == 0,
          fmt::format("checkpoint.write_buffer_bytes = {} with checkpoint.odirect: O_DIRECT writes need a multiple of 4096",
                      c.write_buffer_bytes),
          fmt::format("set checkpoint.write_buffer_bytes to a multiple of 4096 (e.g. {}), or checkpoint.odirect=false",
                      (c.write_buffer_bytes + kDirectUnit - 1) / kDirectUnit * kDirectUnit));
  if (c.file_layout == CheckpointLayout::torch) {
    if (c.write_buffer_bytes != CheckpointSection{}.write_buffer_bytes)
      w.notes.push_back({"checkpoint.write_buffer_bytes",
                         "it sets the write calls of the raw layouts (checkpoint.file_layout per_tensor, per_rank); torch "
                         "archives are written in 64 MiB pieces"});
    return;
  }
  const std::string layout = fmt::format("checkpoint.file_layout '{}'", to_string(c.file_layout));
  // The raw layouts are a write-side experiment: nothing reads them back.
  require(c.num_checkpoints_read <= 0,
          fmt::format("{} writes raw tensor files, which checkpoint loads do not read (num_checkpoints_read = {})", layout,
                      c.num_checkpoints_read),
          "set checkpoint.num_checkpoints_read=0, or checkpoint.file_layout=torch to load checkpoints");
  require(!c.checkpoint_folder.starts_with("s3://"),
          fmt::format("{} writes files; an s3:// checkpoint folder takes torch archives only", layout),
          "set checkpoint.file_layout=torch for an s3:// checkpoint folder");
  require(!c.async, fmt::format("{} does not combine with checkpoint.async", layout),
          "set checkpoint.async=false, or checkpoint.file_layout=torch");
}

}  // namespace trainio::config
