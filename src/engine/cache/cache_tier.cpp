#include "engine/cache/cache_tier.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "engine/cache_control.hpp"
#include "engine/together.hpp"
#include "storage/file.hpp"
#include "storage/fs.hpp"
#include "storage/new_file.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/host_info.hpp"
#include "util/paths.hpp"
#include "util/units.hpp"

#include <spdlog/spdlog.h>

namespace trainio::engine {

namespace {

constexpr std::size_t kPieceBytes = 1u << 20;  // fills move the file in pieces of this size
constexpr std::size_t kDirectAlignment = 4096;
constexpr const char* kMarker = ".trainio-tier";

TierPolicy policy_of(config::CachePolicy p) {
  switch (p) {
    case config::CachePolicy::lru: return TierPolicy::lru;
    case config::CachePolicy::fifo: return TierPolicy::fifo;
    case config::CachePolicy::fill_once: return TierPolicy::fill_once;
  }
  return TierPolicy::lru;
}

std::string extension_of(const plan::DatasetLayout& layout) {
  std::string path;
  layout.path_into(layout.num_files(plan::Split::train) > 0 ? plan::Split::train : plan::Split::eval, 0, path);
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  return dot != std::string::npos && (slash == std::string::npos || dot > slash) ? path.substr(dot) : std::string();
}

// The local folder of this node's tier: made (or emptied of an earlier run's copies) by the
// node's first rank, which holds a lock on its marker for the run: a second run on the node with
// the same cache.path is refused instead of emptying the first one's tier. A folder of that name
// that trainio did not make is never touched. Returns the locked marker's descriptor.
int prepare_folder(const std::string& folder, std::uint64_t capacity) {
  const std::string marker = util::join(folder, kMarker);
  const bool existed = storage::is_dir(folder);
  if (existed && !storage::file_size(marker))
    throw config_error(fmt::format("cache.path holds a folder '{}' that trainio did not make", folder),
                       "move it away, or give cache.path another folder");
  if (!existed) {
    storage::make_dirs(folder);
    storage::write_file_replace(marker, "trainio's cache tier: its files are removed with it\n");
  }
  const int fd = ::open(marker.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw io_error(fmt::format("cannot open {}: {}", marker, std::strerror(errno)), "check the permissions of cache.path");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw config_error(fmt::format("another trainio run on this node is using the cache tier in '{}'", folder),
                       "give this run another cache.path, or wait for the other run to end");
  }
  if (existed)  // an earlier run's copies (it ended without removing them, or kept them)
    for (const auto& name : storage::list_dir(folder))
      if (name != kMarker) storage::remove_file(util::join(folder, name));
  const auto space = storage::fs_space(folder);
  if (space.free_bytes < capacity) {
    ::close(fd);
    if (!existed) {  // leave cache.path as it was
      storage::remove_file(marker);
      storage::remove_empty_dir(folder);
    }
    throw config_error(fmt::format("cache.capacity {} is more than the {} free under cache.path ({})",
                                   util::format_bytes(static_cast<double>(capacity)),
                                   util::format_bytes(static_cast<double>(space.free_bytes)), folder),
                       "lower cache.capacity, or free space on the node-local drive");
  }
  return fd;
}

}  // namespace

std::unique_ptr<CacheTier> CacheTier::make(const config::Workload& w, const plan::DatasetLayout& layout,
                                           const mpi::Comm& comm) {
  if (w.cache.tier == config::CacheTier::none) return nullptr;
  return std::make_unique<CacheTier>(w, layout, comm);
}

CacheTier::CacheTier(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm)
    : layout_(layout),
      memory_(w.cache.tier == config::CacheTier::memory),
      direct_(w.reader.odirect),
      keep_files_(w.cache.keep_files),
      stage_eval_(w.workflow.evaluation) {
  const TierGeometry geometry{layout.num_files(plan::Split::train) + layout.num_files(plan::Split::eval),
                                       w.cache.capacity, memory_};
  const bool first = comm.node_rank() == 0;
  if (!memory_) {
    folder_ = util::join(w.cache.path, "trainio-tier." + util::hostname());
    extension_ = extension_of(layout);
    together(comm, [&] {
      if (first) lock_fd_ = prepare_folder(folder_, w.cache.capacity);
    });
  }
  try {
    memory_segment_ = std::make_unique<NodeMemory>(comm, tier_segment_bytes(geometry),
                                                   memory_ ? "the memory cache tier" : "the cache tier's index");
    together(comm, [&] {  // the node's first rank lays the directory out before any rank attaches
      if (first) TierDirectory(memory_segment_->data(), geometry, policy_of(w.cache.policy), true);
    });
    directory_ = std::make_unique<TierDirectory>(memory_segment_->data(), geometry, policy_of(w.cache.policy), false);
  } catch (...) {
    if (lock_fd_ >= 0) {  // the destructor will not run: leave cache.path as it was
      try {
        remove_folder();
      } catch (...) {  // the error that matters is the one being thrown
      }
      ::close(lock_fd_);
    }
    throw;
  }
}

CacheTier::~CacheTier() {
  // A run that failed before close(): its copies go too (best effort; nothing may throw here).
  if (!closed_ && lock_fd_ >= 0 && !keep_files_) {
    try {
      remove_folder();
    } catch (...) {
    }
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void CacheTier::remove_folder() {
  for (const auto& name : storage::list_dir(folder_))
    if (name != kMarker) storage::remove_file(util::join(folder_, name));
  storage::remove_file(util::join(folder_, kMarker));
  storage::remove_empty_dir(folder_);
}

void CacheTier::copy_path_into(std::uint64_t file, std::uint32_t generation, std::string& out) const {
  out.assign(folder_);
  out += '/';
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, file).ptr);
  out += '.';
  out.append(digits, std::to_chars(digits, digits + sizeof digits, generation).ptr);
  out += extension_;
}

CacheTier::Staged CacheTier::stage(const mpi::Comm& comm) {
  Staged out;
  const std::int64_t t0 = util::now_ns();
  together(comm, [&] {
    TierReader reader(*this);
    std::string path;
    std::uint64_t left_out = 0;  // files of this rank's share that did not get in
    bool full = false;
    // The training files, then the evaluation files when the run evaluates.
    const std::uint64_t train = layout_.num_files(plan::Split::train);
    const std::uint64_t files = train + (stage_eval_ ? layout_.num_files(plan::Split::eval) : 0);
    for (std::uint64_t key = static_cast<std::uint64_t>(comm.node_rank()); key < files;
         key += static_cast<std::uint64_t>(comm.node_size())) {
      if (full) {
        ++left_out;
        continue;
      }
      const plan::Split split = key < train ? plan::Split::train : plan::Split::eval;
      layout_.path_into(split, key < train ? key : key - train, path);
      TierDirectory::Held held;
      const TierReader::Fill filled = reader.fill(key, path, false, held);
      if (filled == TierReader::Fill::filled) {
        directory_->release(key);
        continue;
      }
      ++left_out;
      full = filled == TierReader::Fill::refused && !directory_->too_large(key);  // no room left
    }
    reader.collect(out.stats, out.io);
    out.stats.not_admitted += left_out;
  });
  out.seconds = util::ns_to_s(util::now_ns() - t0);
  return out;
}

void CacheTier::evict_copies(config::Evict how, const mpi::Comm& comm) {
  // drop_caches has emptied the whole page cache already; fadvise goes file by file.
  if (memory_ || how != config::Evict::fadvise) return;
  std::vector<std::string> paths;
  if (comm.node_rank() == 0)
    directory_->for_each_resident([&](std::uint64_t file, std::uint32_t generation) {
      copy_path_into(file, generation, paths.emplace_back());
    });
  evict_files(paths, how, comm);
}

void CacheTier::close(const mpi::Comm& comm) {
  closed_ = true;
  if (memory_) return;
  comm.barrier();  // every rank has stopped reading the copies
  if (lock_fd_ < 0 || keep_files_) return;
  // The run's results stand whatever happens here: a copy that cannot be removed is a warning.
  try {
    remove_folder();
  } catch (const Error& e) {
    spdlog::warn("the cache tier's folder {} was not removed: {}", folder_, e.what());
  }
}

TierReader::TierReader(CacheTier& tier) : tier_(tier), dir_(tier.directory()) {
  copy_path_.reserve(tier.folder().size() + 32);
}

TierReader::Route& TierReader::Route::operator=(Route&& o) noexcept {
  if (this != &o) {
    if (pinned_ != nullptr) pinned_->release(file_);
    source = o.source;
    hit = o.hit;
    bytes = o.bytes;
    pinned_ = std::exchange(o.pinned_, nullptr);
    file_ = o.file_;
  }
  return *this;
}

TierReader::Route::~Route() {
  if (pinned_ != nullptr) pinned_->release(file_);
}

// Reads `size` bytes of `source` from `offset` into `piece`, in one piece of at most kPieceBytes.
namespace {
void read_piece(storage::File& source, const std::string& path, char* piece, std::size_t want, std::uint64_t offset,
                std::uint64_t size, bool direct) {
  // O_DIRECT reads whole aligned pieces; the last one comes back short at the end of the file.
  const std::size_t ask = direct ? (want + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment : want;
  std::size_t got = 0;
  while (got < want) {
    const std::size_t n = source.pread_some(piece + got, ask - got, offset + got);
    if (n == 0)
      throw data_error(fmt::format("{} ended at {} bytes while the cache tier copied it ({} expected)", path, offset + got, size),
                       "check the dataset with 'trainio validate', or regenerate it with 'trainio generate'");
    got += n;
  }
}
}  // namespace

TierReader::Fill TierReader::fill(std::uint64_t file, const std::string& path, bool may_evict,
                                  TierDirectory::Held& held) {
  if (!dir_.may_admit(file)) return dir_.taken(file) ? Fill::busy : Fill::refused;
  const std::int64_t t0 = util::now_ns();
  storage::File source;
  std::uint64_t size = 0;
  {
    const storage::ScopedObserver observe(&backing_io_);
    source = storage::File::open(path, {.access = storage::Access::read, .direct = tier_.direct_backing()});
    size = source.size();
  }
  // Copies the policy evicts are noted under the directory's lock and removed after it: each
  // fill's copy has a name of its own, so a refill of the same file is never the one removed.
  victims_.clear();
  const bool admitted = dir_.reserve(
      file, size, may_evict,
      [&](std::uint64_t evicted, std::uint32_t generation) {
        if (!tier_.in_memory()) victims_.emplace_back(evicted, generation);
      },
      stats_.evictions, held);
  for (const auto& [victim, generation] : victims_) {
    const storage::ScopedObserver observe(&tier_io_);
    tier_.copy_path_into(victim, generation, victim_path_);
    storage::remove_file(victim_path_);
  }
  if (!admitted) {
    const storage::ScopedObserver observe(&backing_io_);
    source.close();
    return dir_.taken(file) ? Fill::busy : Fill::refused;
  }
  try {
    char* piece = buffer_.reserve(kPieceBytes, kDirectAlignment);
    std::unique_ptr<storage::NewFile> copy;
    if (!tier_.in_memory()) {
      tier_.copy_path_into(file, held.generation, copy_path_);
      const storage::ScopedObserver observe(&tier_io_);
      copy = std::make_unique<storage::NewFile>(copy_path_, storage::NewFileOptions{.remove_leftover = true});
    }
    TierDirectory::PageCursor pages = dir_.cursor(held, 0);
    for (std::uint64_t offset = 0; offset < size;) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kPieceBytes, size - offset));
      {
        const storage::ScopedObserver observe(&backing_io_);
        read_piece(source, path, piece, want, offset, size, tier_.direct_backing());
      }
      if (copy) {
        const storage::ScopedObserver observe(&tier_io_);
        copy->write_at(piece, want, offset);
      } else {
        for (std::size_t done = 0; done < want; done += kTierPageBytes)
          std::memcpy(dir_.next(pages), piece + done, std::min<std::size_t>(kTierPageBytes, want - done));
      }
      offset += want;
      stats_.tier_write_bytes += want;
    }
    {
      const storage::ScopedObserver observe(&backing_io_);
      source.close();
    }
    if (copy) {
      const storage::ScopedObserver observe(&tier_io_);
      copy->commit();
    }
  } catch (Error& e) {
    dir_.abandon(file);
    e.with_hint(tier_.in_memory() ? std::string("check the dataset file named above ('trainio validate')")
                                  : fmt::format("check the free space and permissions of cache.path ({}), and the dataset "
                                                "file ('trainio validate')", tier_.folder()));
    throw;
  } catch (...) {
    dir_.abandon(file);
    throw;
  }
  held = dir_.commit(file);  // still pinned: the caller reads it next
  ++stats_.fills;
  stats_.fill_ns += static_cast<std::uint64_t>(util::now_ns() - t0);
  return Fill::filled;
}

std::uint64_t TierReader::copy_out(const TierDirectory::Held& held, const format::SampleRequest& r) {
  // The sample's share of the file: what the framework would have taken from it.
  const std::uint64_t per_sample = held.size / std::max<std::uint64_t>(1, r.samples_in_file);
  const std::uint64_t begin = per_sample * r.sample;
  if (sample_.size() < per_sample) sample_.resize(per_sample);
  TierDirectory::PageCursor pages = dir_.cursor(held, begin / kTierPageBytes);
  std::uint64_t at = begin % kTierPageBytes, copied = 0;
  while (copied < per_sample) {
    const std::uint64_t n = std::min<std::uint64_t>(kTierPageBytes - at, per_sample - copied);
    std::memcpy(sample_.data() + copied, dir_.next(pages) + at, n);
    copied += n;
    at = 0;
  }
  return copied;
}

TierReader::Route TierReader::route(const format::SampleRequest& r) {
  Route out;
  TierDirectory::Held held = dir_.acquire(r.file);
  out.hit = held.resident;
  if (!held.resident) {
    // A miss: filled here (and still pinned), else read past the tier.
    const Fill filled = fill(r.file, *r.path, true, held);
    if (filled != Fill::filled) {
      ++(filled == Fill::busy ? stats_.busy : stats_.not_admitted);
      return out;
    }
  }
  out.pinned_ = &dir_;
  out.file_ = r.file;
  if (tier_.in_memory()) {
    out.source = Route::Source::memory;
    stats_.tier_read_bytes += copy_out(held, r);
    out.bytes = r.shape.bytes();
  } else {
    out.source = Route::Source::copy;
    tier_.copy_path_into(r.file, held.generation, copy_path_);
  }
  return out;
}

void TierReader::count(const Route& route, std::uint64_t bytes) {
  (route.hit ? stats_.hit_samples : stats_.miss_samples) += 1;
  (route.hit ? stats_.hit_bytes : stats_.miss_bytes) += bytes;
}

void TierReader::collect(metrics::TierStats& stats, metrics::IoRecorder& io) {
  stats_.backing_read_bytes += backing_io_.bytes_read();
  if (!tier_.in_memory()) stats_.tier_read_bytes += tier_io_.bytes_read();
  stats_.backing_cache.merge(backing_io_.page_cache());
  stats_.tier_cache.merge(tier_io_.page_cache());
  stats.merge(stats_);
  io.merge(backing_io_);
  io.merge(tier_io_);
  stats_ = metrics::TierStats();
  backing_io_.clear();
  tier_io_.clear();
}

}  // namespace trainio::engine
