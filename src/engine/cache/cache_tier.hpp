#pragma once
// A cache tier in front of the dataset's storage (docs/caching.md), shared by the ranks of a node:
//  - local_ssd stands for a persistent client cache on node-local SSDs (Lustre PCC, BeeGFS
//    OnDemand): a file's first read copies it whole from the dataset's file system into a
//    node-local folder (streamed through a 1 MiB buffer), and the reader then reads the copy,
//    with the framework's calls; later reads go to the copy directly.
//  - memory stands for a memory cache shared by the node's ranks (Quiver): the file is copied
//    into node shared memory, and a hit copies the sample's share out (memcpy), with no storage call.
// Either way the tier's room is cache.capacity per node, and its policy (lru, fifo, static)
// decides what leaves. A file that does not get in (a full static tier, another reader filling
// it) is read past the tier, from the dataset, as without one.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "engine/cache/node_memory.hpp"
#include "format/format.hpp"
#include "metrics/io_recorder.hpp"
#include "metrics/tier_stats.hpp"
#include "mpi/comm.hpp"
#include "plan/layout.hpp"
#include "storage/aligned_buffer.hpp"
#include "engine/cache/tier_directory.hpp"

namespace trainio::engine {

class CacheTier {
 public:
  // Collective. Null when the workload has no tier.
  static std::unique_ptr<CacheTier> make(const config::Workload& w, const plan::DatasetLayout& layout,
                                         const mpi::Comm& comm);
  CacheTier(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm);
  ~CacheTier();
  CacheTier(const CacheTier&) = delete;
  CacheTier& operator=(const CacheTier&) = delete;

  // Collective, before the first epoch with staging before_first_epoch: the node's ranks copy
  // the dataset's files in (file keys node_rank, node_rank + node_size, ...) until it is full,
  // evicting nothing. Returns what this rank copied and how long it took.
  struct Staged {
    metrics::TierStats stats;
    metrics::IoRecorder io;
    double seconds = 0;
  };
  Staged stage(const mpi::Comm& comm);

  // Collective: empties the page cache of the local tier's resident copies (reader.evict
  // fadvise), as the dataset's is before each epoch, so hits are served by the tier's drive.
  void evict_copies(config::Evict how, const mpi::Comm& comm);

  // Collective, at the end of the run: the local folder is removed unless cache.keep_files (a
  // failure to remove it is a warning). A tier destroyed without close() (a failed run) removes
  // its folder too.
  void close(const mpi::Comm& comm);

  bool in_memory() const { return memory_; }
  TierDirectory& directory() { return *directory_; }
  // The path of the local copy that fill `generation` of the file with key `file` made, into
  // `out` (no allocation once grown).
  void copy_path_into(std::uint64_t file, std::uint32_t generation, std::string& out) const;
  const std::string& folder() const { return folder_; }
  bool direct_backing() const { return direct_; }

 private:
  void remove_folder();
  const plan::DatasetLayout& layout_;
  bool memory_ = false;
  bool direct_ = false;   // reader.odirect: fills read the dataset with O_DIRECT
  bool keep_files_ = false;
  bool stage_eval_ = false;  // staging copies the evaluation files too
  std::string folder_;    // local_ssd: <cache.path>/trainio-tier.<host>
  std::string extension_; // the dataset files' extension, kept on the copies
  int lock_fd_ = -1;      // the node's first rank: the lock on the folder's marker
  bool closed_ = false;
  std::unique_ptr<NodeMemory> memory_segment_;
  std::unique_ptr<TierDirectory> directory_;
};

// One reader thread's door to the tier: routes each sample to the tier or past it, fills on a
// miss, and keeps the thread's figures and the storage calls of each side apart.
class TierReader {
 public:
  explicit TierReader(CacheTier& tier);

  // Where a sample's bytes come from. A route pins its file in the tier until it is dropped.
  class Route {
   public:
    enum class Source { memory, copy, backing };
    Route() = default;
    Route(Route&& o) noexcept { *this = std::move(o); }
    Route& operator=(Route&& o) noexcept;
    ~Route();
    Source source = Source::backing;
    bool hit = false;
    std::uint64_t bytes = 0;  // memory: the sample bytes it delivered
   private:
    friend class TierReader;
    TierDirectory* pinned_ = nullptr;
    std::uint64_t file_ = 0;
  };

  // Routes request `r`: a memory hit is served here (its bytes copied out); a copy route reads
  // the local copy at copy_path(); a backing route reads `r` as it is. A miss the tier admits is
  // filled first, then served from the tier.
  Route route(const format::SampleRequest& r);
  // Counts the sample once read (`bytes`: what the reader returned, or the route's for memory).
  void count(const Route& route, std::uint64_t bytes);
  const std::string& copy_path() const { return copy_path_; }
  const CacheTier& tier() const { return tier_; }

  // Copies file `file` (at `path` in the dataset) into the tier when it is admitted, and leaves it
  // pinned in `held` (the caller releases it). `may_evict` false: only into free room (staging).
  // busy: resident or being filled by another reader; refused: the policy made no room (or the
  // file is larger than the tier).
  enum class Fill { filled, busy, refused };
  Fill fill(std::uint64_t file, const std::string& path, bool may_evict, TierDirectory::Held& held);

  // The storage calls on each side, observed apart (the caller installs them as observers).
  metrics::IoRecorder& backing_io() { return backing_io_; }
  metrics::IoRecorder& tier_io() { return tier_io_; }
  // Moves the thread's figures into `stats` and the calls into `io`, and resets them.
  void collect(metrics::TierStats& stats, metrics::IoRecorder& io);

 private:
  std::uint64_t copy_out(const TierDirectory::Held& held, const format::SampleRequest& r);
  CacheTier& tier_;
  TierDirectory& dir_;
  metrics::TierStats stats_;
  metrics::IoRecorder backing_io_, tier_io_;
  storage::AlignedBuffer buffer_;  // fills: one 1 MiB piece at a time
  std::string copy_path_, victim_path_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> victims_;  // copies evicted by a fill, to remove
  std::vector<char> sample_;        // memory hits copy the sample here
};

}  // namespace trainio::engine
