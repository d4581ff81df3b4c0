#pragma once
// Saving and loading checkpoints as a training job does: every writing rank writes its files of
// the checkpoint (CheckpointPlan) in parallel, each as torch.save writes it, streaming the
// tensors' bytes through one reusable buffer (2 x 64 MiB at most, less for small files), so
// memory stays bounded whatever the model.
// A save that fails on any rank removes every rank's files of that checkpoint, then all ranks
// stop with the first error.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "engine/overlap_thread.hpp"
#include "engine/checkpoint/raw_checkpoint.hpp"
#include "format/torch/torch_file.hpp"
#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"
#include "plan/checkpoint_plan.hpp"
#include "storage/s3/s3_client.hpp"
#include "util/page_aligned.hpp"

namespace trainio::engine {

class Checkpointer {
 public:
  // Throws a config error when the ranks do not fit the model's parallel layout.
  // `progress`: a live line of the bytes moved while a save or load runs (rank 0 only).
  Checkpointer(const config::Workload& w, const mpi::Comm& comm, std::uint64_t run_seed, bool progress = false);

  // Collective. `index` counts saves (or loads) from 1.
  metrics::CheckpointRecord save(std::uint64_t epoch, std::uint64_t step, std::uint64_t index);
  // Collective. Reads the files this rank wrote for (epoch, step), or with recovery_rank_shift
  // those of the rank one node further on.
  metrics::CheckpointRecord load(std::uint64_t epoch, std::uint64_t step, std::uint64_t index);
  // The staging buffer's size: two pieces and a unit each, the unit being a page or the O_DIRECT
  // alignment if larger. The largest single write or read of tensor bytes is one piece; the
  // other is generated meanwhile. A piece is 64 MiB, or the largest file rounded up to the unit
  // when smaller: no call splits then, and a small model costs no 128 MiB.
  static std::size_t staging_bytes(std::uint64_t largest_file, std::size_t alignment);
  // Collective: empties the page cache of every file saved so far (checkpoint.evict).
  void evict_saved();

  // This rank's files of checkpoint (epoch, step, index), one after the other as save() writes
  // them, with no collective call: save()'s own part, and an asynchronous save's flush. Each
  // path goes into `written` before its file is begun; the caller's observer sees the calls.
  void write_own(std::uint64_t epoch, std::uint64_t step, std::uint64_t index, metrics::CheckpointRecord& rec,
                 std::vector<std::string>& written);
  // Removes the files (and their temporary names) of a checkpoint that failed.
  void remove_written(const std::vector<std::string>& written) const;
  // The bytes of this rank's files of one checkpoint (its shard, with the archives' headers).
  std::uint64_t own_file_bytes() const;
  std::string folder(std::uint64_t epoch, std::uint64_t step) const;
  static metrics::CheckpointRecord new_save(std::uint64_t epoch, std::uint64_t step, std::uint64_t index);

  const plan::CheckpointPlan& plan() const { return plan_; }

 private:
  struct Part {
    plan::CheckpointFile file;
    format::torch::Archive archive;
  };
  std::vector<Part> parts_of(int rank) const;
  void write_file(const Part& part, const std::string& path, std::uint64_t seed);
  // write_own() for a raw checkpoint.file_layout (raw_checkpoint.hpp).
  void write_raw_own(const std::string& dir, std::uint64_t index, metrics::CheckpointRecord& rec,
                     std::vector<std::string>& written);
  void read_file(const Part& part, const std::string& path);
  // Collective, once the ranks agreed a save or load succeeded: its times (`t0` its start,
  // `t_own` the end of this rank's own I/O), and with checkpoint.rank_sync the barrier DLIO adds.
  void finish_times(metrics::CheckpointRecord& rec, std::int64_t t0, std::int64_t t_own) const;

  const config::Workload& w_;
  const mpi::Comm& comm_;
  std::uint64_t run_seed_;
  bool progress_;
  plan::CheckpointPlan plan_;
  std::string root_;
  std::vector<Part> mine_;    // what this rank writes
  std::vector<RawFile> raw_;  // what it writes instead with a raw checkpoint.file_layout
  std::vector<Part> source_;  // what it reads back (another rank's with recovery_rank_shift)
  int source_rank_;
  std::vector<std::string> saved_;  // every file this rank wrote
  util::Bytes scratch_;
  // Checkpoints in an S3 bucket (checkpoint_folder s3://...), as DLIO's pt_s3_save writes them
  // through s3torchconnector's S3Checkpoint: each file a multipart upload; loads HEAD the object
  // (torch.load seeks to its end) and read it whole.
  std::unique_ptr<storage::s3::Client> s3_;
  OverlapThread overlap_;  // generates the next piece of a tensor while the last one is written
  std::size_t alignment_ = 4096;
  std::uint64_t largest_file_ = 0;  // of those this rank writes or reads
};

// Checkpoint-only mode (workflow.checkpoint without train), as DLIO runs it: before each save
// every rank spends time_between_checkpoints of emulated compute and meets the others; then
// num_checkpoints_write saves, the page cache of what was written emptied (checkpoint.evict),
// then num_checkpoints_read loads of the saves in order. Collective; `on_checkpoint` is called on
// every rank after each one.
void run_checkpoints(const config::Workload& w, const mpi::Comm& comm, std::uint64_t run_seed,
                     metrics::RankRecord& record,
                     const std::function<void(const metrics::CheckpointRecord&)>& on_checkpoint, bool progress = false);

}  // namespace trainio::engine
