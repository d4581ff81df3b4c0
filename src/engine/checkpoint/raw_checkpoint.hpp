#pragma once
// Checkpoints laid out as raw tensor files (checkpoint.file_layout per_tensor or per_rank), the
// write strategies storage studies compare with torch.save's archives: each tensor's bytes in a
// file of its own, or all of a rank's tensors back to back in one file (aggregated). No headers:
// a file holds tensor bytes only, so a reference tool (fio) can write exactly the same files.
// Each file is written front to back in calls of checkpoint.write_buffer_bytes (the last call of
// a file shorter), generating the next piece while the last one is written (O_DIRECT) or after it
// (buffered).

#include <cstdint>
#include <string>
#include <vector>

#include "config/enums.hpp"
#include "format/overlap.hpp"
#include "format/torch/torch_file.hpp"
#include "plan/state_dict.hpp"
#include "util/page_aligned.hpp"

namespace trainio::engine {

struct RawFile {
  std::string name;  // inside the checkpoint's folder
  std::vector<plan::TensorSpec> tensors;
  std::uint64_t bytes = 0;
};

// The raw files of a rank whose torch files would be `torch_files` (name, archive) in plan
// order. per_tensor: "<torch file's stem>-<k>.bin" for its storage k (0, 1, ... as torch.load
// numbers them; a tensor shared by several keys once, as torch.save stores it once); per_rank:
// "rank_<rank>.bin" holding those tensors in that order. Empty for a rank that writes nothing.
std::vector<RawFile> raw_files(const std::vector<std::pair<std::string, const format::torch::Archive*>>& torch_files,
                               int rank, config::CheckpointLayout layout);

// The buffer size a raw writer needs: two pieces, a piece being the write buffer, or a whole
// number of write buffers near 8 MiB when the buffer is smaller (so that generating bytes is not
// handed between threads per small call), and never more than the largest file needs.
std::size_t raw_staging_bytes(std::uint64_t write_buffer, std::uint64_t largest_file);

struct RawWriteOptions {
  std::uint64_t write_buffer = 64ull << 20;
  bool direct = false;        // O_DIRECT; the write buffer is then a multiple of `alignment`
  std::size_t alignment = 4096;
  bool fsync = false;         // fsync before close
  bool atomic = true;         // under a temporary name, renamed when complete
};

// Writes `file` at `path`: calls of write_buffer bytes; with O_DIRECT, a last call that is not a
// multiple of the alignment goes out as its aligned part, then the rest after clearing O_DIRECT.
void write_raw(const RawFile& file, const std::string& path, const RawWriteOptions& options,
               format::torch::TensorContent& content, util::Bytes& scratch, format::Overlap& beside);

}  // namespace trainio::engine
