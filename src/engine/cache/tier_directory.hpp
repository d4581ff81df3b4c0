#pragma once
// The index of a cache tier that the ranks of one node share: which dataset files the tier holds,
// the room they take, and the order in which its policy lets them go. It lives in memory that
// every rank of the node maps (engine/cache/node_memory.hpp) and is guarded by one process-shared,
// robust mutex, held only for index updates, never across I/O. The memory tier keeps the files'
// bytes in the same segment, in 4 KiB pages chained per file; the local SSD tier keeps them as
// files and uses the directory for the accounting alone.
//
// A file's life: absent -> filling (one reader copies it in, room reserved) -> resident -> absent
// (evicted). A reader pins what it reads, and pinned files are never evicted.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace trainio::engine {

enum class TierPolicy : std::uint8_t {
  lru,        // evict the least recently read
  fifo,       // evict the first filled
  fill_once,  // never evict ("static"): files enter until one does not fit; then the tier is full
};

inline constexpr std::uint64_t kTierPageBytes = 4096;
// Page numbers one table page holds: a memory-tier file of n pages takes ceil(n / 1024) more.
inline constexpr std::uint64_t kPagesPerTable = kTierPageBytes / sizeof(std::uint32_t);

struct TierGeometry {
  std::uint64_t files = 0;     // entries: the dataset's files (train and eval), by file key
  std::uint64_t capacity = 0;  // bytes; files take whole pages
  bool holds_data = false;     // the memory tier: file bytes live in the segment
};

// Bytes of shared memory a directory of this geometry takes (index, page chain, and pages when
// it holds data).
std::uint64_t tier_segment_bytes(const TierGeometry& g);
// Pages a file of `bytes` takes.
inline std::uint64_t tier_pages(std::uint64_t bytes) { return (bytes + kTierPageBytes - 1) / kTierPageBytes; }

class TierDirectory {
 public:
  // Over `segment`, tier_segment_bytes(g) bytes. Exactly one process initialises it, before any
  // other attaches (initialise = false).
  TierDirectory(void* segment, const TierGeometry& g, TierPolicy policy, bool initialise);

  // A pinned resident file: its size and, in the memory tier, its first page.
  struct Held {
    bool resident = false;
    std::uint64_t size = 0;
    std::uint32_t first_page = 0;  // memory tier: its first table page
    std::uint32_t generation = 0;  // which fill of the file this is (local copies are named by it)
  };
  // When `file` is resident: pins it (release() unpins) and, under lru, marks it most recent.
  Held acquire(std::uint64_t file);
  // Whether `file` is resident now: a hint, read without the lock (cache-aware ordering).
  bool resident(std::uint64_t file) const;
  // Whether `file` is resident or being filled (no lock).
  bool taken(std::uint64_t file) const;
  // Whether `file` was found larger than the whole tier (no lock).
  bool too_large(std::uint64_t file) const;
  // Whether reserve() could admit `file` now (it is absent, not larger than the tier, and the
  // policy could make room): a cheap check before opening the backing file to learn its size.
  bool may_admit(std::uint64_t file);
  // Reserves room for `size` bytes of `file` and marks it filling, pinned by the caller; sets
  // `reserved` (the memory tier's pages to fill, the fill's generation). With `may_evict`, lru and
  // fifo make room by evicting (least recent, first filled; never a pinned file), calling
  // `on_evict(file, generation)` under the lock for each (the local tier notes its copy, to
  // remove it after the lock is released). False when `file` is not absent or no
  // room can be made; nothing is evicted then. A file larger than the whole tier is marked so,
  // and never admitted.
  bool reserve(std::uint64_t file, std::uint64_t size, bool may_evict,
               const std::function<void(std::uint64_t, std::uint32_t)>& on_evict, std::uint64_t& evictions,
               Held& reserved);
  // The caller filled `file`: resident, still pinned by the caller.
  Held commit(std::uint64_t file);
  // Filling `file` failed: its room is released and it is absent again.
  void abandon(std::uint64_t file);
  void release(std::uint64_t file);

  // The memory tier's data pages of a held file, in order from page `k` of it: next() returns
  // one and moves on. Finding page k walks k / 1024 table pages; the rest is a lookup.
  struct PageCursor {
    std::uint32_t table = 0, at = 0;
  };
  PageCursor cursor(const Held& held, std::uint64_t k) const;
  std::byte* next(PageCursor& c) const;

  std::uint64_t capacity_pages() const;
  std::uint64_t used_pages() const;
  std::uint64_t resident_files() const;
  // Every resident file and its fill's generation (under the lock), least recently read (or
  // first filled) first.
  void for_each_resident(const std::function<void(std::uint64_t, std::uint32_t)>& visit);

  struct Header;
  struct Entry;

 private:
  class Lock;
  std::byte* page(std::uint32_t k) const { return pages_ + static_cast<std::size_t>(k) * kTierPageBytes; }
  std::uint32_t table_page(std::uint32_t first, std::uint64_t k) const;
  void unlink(std::uint32_t file);
  void append(std::uint32_t file);
  void evict(std::uint32_t file);
  Header* header_;
  Entry* entries_;
  std::uint32_t* chain_ = nullptr;
  std::byte* pages_ = nullptr;
};

}  // namespace trainio::engine
