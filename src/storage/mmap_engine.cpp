// The mmap read engine: each file mapped once (numpy.memmap's calls) and kept mapped, a sample's
// pages touched so that the page faults fetch its bytes.

#include "storage/mapped_file.hpp"
#include "storage/read_engine_parts.hpp"

namespace trainio::storage {
namespace {

class MmapEngine final : public ReadEngine {
 public:
  void read(std::span<SampleRead> reads, Locator& where) override {
    for (std::size_t i = 0; i < reads.size(); ++i) {
      const SampleRead& r = reads[i];
      MappedFile& map = maps_.get_or_insert(r.file, [&] { return MappedFile::open(*r.path); });
      where.locate(i, map.size());
      map.touch(r.offset, r.length);  // a range past the end is a dataset error
    }
  }

 private:
  util::FileCache<MappedFile> maps_{kMaxKeptFiles};
};

}  // namespace

std::unique_ptr<ReadEngine> make_mmap_engine() { return std::make_unique<MmapEngine>(); }

}  // namespace trainio::storage
