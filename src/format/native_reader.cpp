#include "format/native_reader.hpp"

namespace trainio::format {
NativeReader::NativeReader(const storage::EngineOptions& engine, std::unique_ptr<ExtentFinder> extents)
    : extents_(std::move(extents)), engine_(storage::make_read_engine(engine)) {}

void NativeReader::locate(std::size_t i, std::uint64_t file_size) {
  const Extent e = extents_->find(batch_[i], file_size);
  reads_[i].offset = e.offset;
  reads_[i].length = e.length;
}

std::uint64_t NativeReader::read_batch(std::span<const SampleRequest> batch) {
  batch_ = batch;
  reads_.clear();
  std::uint64_t bytes = 0;
  for (const auto& r : batch) {
    reads_.push_back({.file = r.file, .path = r.path});
    bytes += r.shape.bytes();
  }
  engine_->read(reads_, *this);
  return bytes;
}

}  // namespace trainio::format
