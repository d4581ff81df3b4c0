#include "engine/cache/tier_directory.hpp"

#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "util/error.hpp"

namespace trainio::engine {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kMagic = 0x7472616e696f5431ULL;  // "tranioT1"

// kTooLarge: a file larger than the whole tier, never admitted (and its backing file never
// opened for it again).
enum State : std::uint8_t { kAbsent, kFilling, kResident, kTooLarge };

std::uint64_t align_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace

struct TierDirectory::Header {
  std::uint64_t magic;
  pthread_mutex_t mutex;
  TierPolicy policy;
  bool holds_data;
  std::uint64_t files;
  std::uint64_t total_pages;
  std::uint64_t free_pages;
  std::uint32_t free_head;  // memory tier: first free page
  std::uint32_t head, tail; // resident files, eviction order (head goes first)
  std::uint64_t resident_files;
  // A static tier is full from the first file that does not fit: no backing file is opened in
  // vain for it after that.
  bool full;
  std::uint32_t fills;  // files admitted so far: each fill's generation
};

struct TierDirectory::Entry {
  std::atomic<std::uint8_t> state;
  std::uint32_t pins;
  std::uint32_t prev, next;
  std::uint32_t first_page;  // memory tier: its first table page
  std::uint32_t generation;  // fills of the file so far: names each local copy apart
  std::uint64_t pages;       // taken: data pages, and in the memory tier its table pages
  std::uint64_t size;
};

// The robust mutex: a rank that dies holding it leaves it usable (its job is being aborted).
class TierDirectory::Lock {
 public:
  explicit Lock(Header* h) : m_(&h->mutex) {
    const int rc = pthread_mutex_lock(m_);
    if (rc == EOWNERDEAD) pthread_mutex_consistent(m_);
    else if (rc != 0) throw Error(ErrorKind::internal, std::string("cache tier lock: ") + std::strerror(rc));
  }
  ~Lock() { pthread_mutex_unlock(m_); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  pthread_mutex_t* m_;
};

namespace {

struct Offsets {
  std::uint64_t entries, chain, pages, end, total_pages;
};

Offsets offsets_of(const TierGeometry& g) {
  Offsets o{};
  o.total_pages = g.capacity / kTierPageBytes;
  o.entries = align_up(sizeof(TierDirectory::Header), 64);
  o.chain = align_up(o.entries + g.files * sizeof(TierDirectory::Entry), 64);
  o.pages = align_up(o.chain + (g.holds_data ? o.total_pages * sizeof(std::uint32_t) : 0), kTierPageBytes);
  o.end = o.pages + (g.holds_data ? o.total_pages * kTierPageBytes : 0);
  return o;
}

}  // namespace

std::uint64_t tier_segment_bytes(const TierGeometry& g) { return offsets_of(g).end; }

TierDirectory::TierDirectory(void* segment, const TierGeometry& g, TierPolicy policy, bool initialise) {
  if (g.files >= kNone) throw Error(ErrorKind::config, "a cache tier indexes at most 4,294,967,294 files");
  if (g.holds_data && g.capacity / kTierPageBytes >= kNone)
    throw Error(ErrorKind::config, "a memory cache tier holds at most 16 TiB per node");
  const Offsets o = offsets_of(g);
  auto* base = static_cast<std::byte*>(segment);
  header_ = reinterpret_cast<Header*>(base);
  entries_ = reinterpret_cast<Entry*>(base + o.entries);
  if (g.holds_data) {
    chain_ = reinterpret_cast<std::uint32_t*>(base + o.chain);
    pages_ = base + o.pages;
  }
  if (!initialise) {
    if (header_->magic != kMagic) throw Error(ErrorKind::internal, "cache tier directory attached before it was made");
    return;
  }
  Header* h = header_;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&h->mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  h->policy = policy;
  h->holds_data = g.holds_data;
  h->files = g.files;
  h->total_pages = h->free_pages = o.total_pages;
  h->head = h->tail = kNone;
  h->resident_files = 0;
  h->full = false;
  h->fills = 0;
  for (std::uint64_t f = 0; f < g.files; ++f) {
    Entry& e = entries_[f];
    new (&e.state) std::atomic<std::uint8_t>(kAbsent);
    e.pins = 0;
    e.prev = e.next = kNone;
    e.first_page = kNone;
    e.generation = 0;
    e.pages = e.size = 0;
  }
  if (g.holds_data) {
    for (std::uint64_t k = 0; k < o.total_pages; ++k)
      chain_[k] = k + 1 < o.total_pages ? static_cast<std::uint32_t>(k + 1) : kNone;
    h->free_head = o.total_pages > 0 ? 0 : kNone;
  }
  h->magic = kMagic;
}

void TierDirectory::unlink(std::uint32_t f) {
  Entry& e = entries_[f];
  (e.prev == kNone ? header_->head : entries_[e.prev].next) = e.next;
  (e.next == kNone ? header_->tail : entries_[e.next].prev) = e.prev;
  e.prev = e.next = kNone;
}

void TierDirectory::append(std::uint32_t f) {
  Entry& e = entries_[f];
  e.prev = header_->tail;
  e.next = kNone;
  (header_->tail == kNone ? header_->head : entries_[header_->tail].next) = f;
  header_->tail = f;
}

// Returns the file's pages to the free pool (under the lock).
void TierDirectory::evict(std::uint32_t f) {
  Entry& e = entries_[f];
  if (e.state.load() == kResident) {
    unlink(f);
    --header_->resident_files;
  }
  if (header_->holds_data && e.first_page != kNone) {
    std::uint32_t last = e.first_page;
    while (chain_[last] != kNone) last = chain_[last];
    chain_[last] = header_->free_head;
    header_->free_head = e.first_page;
  }
  header_->free_pages += e.pages;
  e.pages = e.size = 0;
  e.first_page = kNone;
  e.state.store(kAbsent);
}

TierDirectory::Held TierDirectory::acquire(std::uint64_t file) {
  if (entries_[file].state.load(std::memory_order_acquire) != kResident) return {};
  const Lock lock(header_);
  Entry& e = entries_[file];
  if (e.state.load() != kResident) return {};
  ++e.pins;
  if (header_->policy == TierPolicy::lru && header_->tail != file) {
    unlink(static_cast<std::uint32_t>(file));
    append(static_cast<std::uint32_t>(file));
  }
  return {true, e.size, e.first_page, e.generation};
}

bool TierDirectory::resident(std::uint64_t file) const {
  return entries_[file].state.load(std::memory_order_relaxed) == kResident;
}

bool TierDirectory::taken(std::uint64_t file) const {
  const auto state = entries_[file].state.load(std::memory_order_acquire);
  return state == kFilling || state == kResident;
}

bool TierDirectory::too_large(std::uint64_t file) const {
  return entries_[file].state.load(std::memory_order_acquire) == kTooLarge;
}

bool TierDirectory::may_admit(std::uint64_t file) {
  if (entries_[file].state.load(std::memory_order_acquire) != kAbsent) return false;
  if (header_->policy != TierPolicy::fill_once) return true;
  const Lock lock(header_);
  return header_->free_pages > 0 && !header_->full;
}

bool TierDirectory::reserve(std::uint64_t file, std::uint64_t size, bool may_evict,
                            const std::function<void(std::uint64_t, std::uint32_t)>& on_evict,
                            std::uint64_t& evictions, Held& reserved) {
  const std::uint64_t data_pages = tier_pages(size);
  // The memory tier keeps a file's page numbers in table pages ahead of its data pages.
  const std::uint64_t table_pages = header_->holds_data ? (data_pages + kPagesPerTable - 1) / kPagesPerTable : 0;
  const std::uint64_t pages = data_pages + table_pages;
  const Lock lock(header_);
  Header& h = *header_;
  Entry& e = entries_[file];
  if (e.state.load() != kAbsent) return false;
  if (pages > h.total_pages) {
    e.state.store(kTooLarge);
    return false;
  }
  if (h.free_pages < pages) {
    if (h.policy == TierPolicy::fill_once) h.full = true;
    if (h.policy == TierPolicy::fill_once || !may_evict) return false;
    // Room the policy can make: every unpinned resident file, in eviction order.
    std::uint64_t evictable = h.free_pages;
    for (std::uint32_t f = h.head; f != kNone && evictable < pages; f = entries_[f].next)
      if (entries_[f].pins == 0) evictable += entries_[f].pages;
    if (evictable < pages) return false;
    for (std::uint32_t f = h.head; f != kNone && h.free_pages < pages;) {
      const std::uint32_t next = entries_[f].next;
      if (entries_[f].pins == 0) {
        on_evict(f, entries_[f].generation);
        evict(f);
        ++evictions;
      }
      f = next;
    }
  }
  h.free_pages -= pages;
  e.size = size;
  e.pages = pages;
  e.pins = 1;
  e.generation = ++h.fills;
  if (h.holds_data && pages > 0) {
    // The next `pages` free pages, still chained: table pages first, then data pages, whose
    // numbers the tables list in order.
    e.first_page = h.free_head;
    std::uint32_t last = h.free_head, data = h.free_head;
    for (std::uint64_t k = 0; k < table_pages; ++k) data = chain_[data];
    for (std::uint64_t k = 0; k < data_pages; ++k, data = chain_[data]) {
      const std::uint32_t table = table_page(e.first_page, k);
      reinterpret_cast<std::uint32_t*>(page(table))[k % kPagesPerTable] = data;
    }
    for (std::uint64_t k = 1; k < pages; ++k) last = chain_[last];
    h.free_head = chain_[last];
    chain_[last] = kNone;
  }
  reserved = {false, size, e.first_page, e.generation};
  e.state.store(kFilling);
  return true;
}

TierDirectory::Held TierDirectory::commit(std::uint64_t file) {
  const Lock lock(header_);
  Entry& e = entries_[file];
  append(static_cast<std::uint32_t>(file));
  ++header_->resident_files;
  e.state.store(kResident, std::memory_order_release);
  return {true, e.size, e.first_page, e.generation};
}

std::uint32_t TierDirectory::table_page(std::uint32_t first, std::uint64_t k) const {
  for (std::uint64_t t = k / kPagesPerTable; t > 0; --t) first = chain_[first];
  return first;
}

TierDirectory::PageCursor TierDirectory::cursor(const Held& held, std::uint64_t k) const {
  return {table_page(held.first_page, k), static_cast<std::uint32_t>(k % kPagesPerTable)};
}

std::byte* TierDirectory::next(PageCursor& c) const {
  std::byte* data = page(reinterpret_cast<const std::uint32_t*>(page(c.table))[c.at]);
  if (++c.at == kPagesPerTable) {
    c.table = chain_[c.table];
    c.at = 0;
  }
  return data;
}

void TierDirectory::abandon(std::uint64_t file) {
  const Lock lock(header_);
  Entry& e = entries_[file];
  e.pins = 0;
  evict(static_cast<std::uint32_t>(file));
}

void TierDirectory::release(std::uint64_t file) {
  const Lock lock(header_);
  if (entries_[file].pins > 0) --entries_[file].pins;
}

std::uint64_t TierDirectory::capacity_pages() const { return header_->total_pages; }

std::uint64_t TierDirectory::used_pages() const {
  const Lock lock(header_);
  return header_->total_pages - header_->free_pages;
}

std::uint64_t TierDirectory::resident_files() const {
  const Lock lock(header_);
  return header_->resident_files;
}

void TierDirectory::for_each_resident(const std::function<void(std::uint64_t, std::uint32_t)>& visit) {
  const Lock lock(header_);
  for (std::uint32_t f = header_->head; f != kNone; f = entries_[f].next) visit(f, entries_[f].generation);
}

}  // namespace trainio::engine
