#pragma once
// How sample bytes are fetched, behind one small interface — the way fio's ioengine ops and IOR's
// aiori table do it. A read engine opens (or finds kept) each read's file, asks where the read
// falls once it knows the file's size, and reads those bytes: one at a time (pread, O_DIRECT) or
// all in flight at once (io_uring); or touches them through a memory map. Every engine reports its
// calls through storage::File, so results and traces compare across engines. A new back end for
// the native reader is one more implementation of ReadEngine. (Cache tiers stand in front of every
// reader, framework re-enactments included, so they route requests before the reader instead:
// engine/cache/cache_tier.hpp.)
//
// Engines know neither formats nor workloads: where a sample lies comes from the caller's Locator.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace trainio::storage {

// One read of a sample's bytes.
struct SampleRead {
  std::uint64_t file = 0;              // the file's dense number: the key of kept handles
  const std::string* path = nullptr;
  std::uint64_t offset = 0, length = 0;  // where the bytes lie, set by the Locator
};

// Where each read falls in its file (a format's extents).
class Locator {
 public:
  virtual ~Locator() = default;
  // Whether locate() needs the file's size (the engine then asks the file for it, fstat).
  virtual bool needs_file_size() const = 0;
  // Sets reads[i].offset and .length; `file_size` is 0 unless needs_file_size().
  virtual void locate(std::size_t i, std::uint64_t file_size) = 0;
};

class ReadEngine {
 public:
  virtual ~ReadEngine() = default;
  // Reads every one of `reads` completely; a file that ends before a read does is a dataset
  // error naming the file. `where.locate(i, ...)` is called for reads[i] before it is read.
  virtual void read(std::span<SampleRead> reads, Locator& where) = 0;
  // Whether read() keeps several reads in flight at once (callers then hand it whole batches).
  virtual bool overlaps_reads() const { return false; }
};

enum class EngineKind { posix, mmap, io_uring };

struct EngineOptions {
  EngineKind kind = EngineKind::posix;
  bool direct = false;     // O_DIRECT: aligned ranges around each read into aligned buffers
  bool keep_open = false;  // keep files open between reads (the map is always kept with mmap)
  unsigned depth = 1;      // io_uring: reads in flight
};

std::unique_ptr<ReadEngine> make_read_engine(const EngineOptions& options);

// Files (or maps) an engine keeps at most, the least recently used closed first: a batch of at
// most this many files never closes a file it is still reading.
inline constexpr std::size_t kMaxKeptFiles = 256;

}  // namespace trainio::storage
