// The io_uring read engine: every file of the batch opened (or found kept), then all of its reads
// in flight at once, up to the ring's depth, into as many buffers.

#include <algorithm>
#include <vector>

#include "storage/aligned_buffer.hpp"
#include "storage/read_engine_parts.hpp"
#include "storage/uring.hpp"

namespace trainio::storage {
namespace {

class UringEngine final : public ReadEngine {
 public:
  explicit UringEngine(const EngineOptions& options) : opener_(options), ring_(options.depth) {}

  bool overlaps_reads() const override { return true; }

  void read(std::span<SampleRead> reads, Locator& where) override {
    // Kept files serve a batch only when the batch's files fit in what is kept.
    const bool may_keep = opener_.keeps_open() && opener_.may_keep_all(reads);
    if (fresh_.size() < reads.size()) fresh_.resize(reads.size());  // handles for this batch only, reused
    // Each read's file and byte range first; the buffers, once the largest read is known. Nobody
    // keeps a sample's bytes, so the reads in flight share depth buffers.
    ranges_.clear();
    async_.clear();
    std::size_t largest = 0;
    for (std::size_t i = 0; i < reads.size(); ++i) {
      File& f = opener_.open(reads[i], fresh_[i], may_keep);
      where.locate(i, where.needs_file_size() ? f.size() : 0);
      const ByteRange& range = ranges_.emplace_back(opener_.range_of(reads[i]));
      async_.push_back({&f, nullptr, range.length, range.offset, 0});
      largest = std::max(largest, range.length);
    }
    const std::size_t slot = padded(largest);
    char* slots = buffer_.reserve(slot * ring_.depth(), opener_.buffer_alignment());
    ring_.read_all(async_, slots, slot);
    for (std::size_t i = 0; i < reads.size(); ++i) check_complete(reads[i], ranges_[i], async_[i].done);
    for (std::size_t i = 0; i < reads.size(); ++i) fresh_[i].close();
  }

 private:
  // Each buffer starts where the first does: on a page, or what O_DIRECT needs.
  std::size_t padded(std::size_t length) const {
    const std::size_t a = opener_.buffer_alignment();
    return (length + a - 1) / a * a;
  }

  FileOpener opener_;
  Uring ring_;
  AlignedBuffer buffer_;  // the ring's depth in buffers of the batch's largest read
  std::vector<File> fresh_;
  std::vector<ByteRange> ranges_;
  std::vector<AsyncRead> async_;
};

}  // namespace

std::unique_ptr<ReadEngine> make_uring_engine(const EngineOptions& options) {
  return std::make_unique<UringEngine>(options);
}

}  // namespace trainio::storage
