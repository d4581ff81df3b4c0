// The POSIX read engine: per read, open (or find the file kept open), fstat when the format needs
// the size, pread until the sample's bytes are in, close. With O_DIRECT, the aligned range around
// the sample into an aligned buffer.

#include "storage/aligned_buffer.hpp"
#include "storage/read_engine_parts.hpp"

namespace trainio::storage {
namespace {

class PreadEngine final : public ReadEngine {
 public:
  explicit PreadEngine(const EngineOptions& options) : opener_(options) {}

  void read(std::span<SampleRead> reads, Locator& where) override {
    for (std::size_t i = 0; i < reads.size(); ++i) {
      File& f = opener_.open(reads[i], fresh_);
      where.locate(i, where.needs_file_size() ? f.size() : 0);
      const ByteRange range = opener_.range_of(reads[i]);
      char* buffer = buffer_.reserve(range.length, opener_.buffer_alignment());
      std::size_t got = 0;
      while (got < range.length) {
        const std::size_t n = f.pread_some(buffer + got, range.length - got, range.offset + got);
        if (n == 0) break;
        got += n;
      }
      check_complete(reads[i], range, got);
      fresh_.close();  // reports a failing close; a kept file stays open
    }
  }

 private:
  FileOpener opener_;
  AlignedBuffer buffer_;
  File fresh_;  // the handle of files not kept open, reopened per read
};

}  // namespace

std::unique_ptr<ReadEngine> make_pread_engine(const EngineOptions& options) {
  return std::make_unique<PreadEngine>(options);
}

}  // namespace trainio::storage
