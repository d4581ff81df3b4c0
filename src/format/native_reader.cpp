#include "format/native_reader.hpp"

namespace trainio::format {
namespace {

storage::EngineKind engine_kind(config::IoEngine e) {
  switch (e) {
    case config::IoEngine::posix: return storage::EngineKind::posix;
    case config::IoEngine::mmap: return storage::EngineKind::mmap;
    case config::IoEngine::io_uring: return storage::EngineKind::io_uring;
  }
  return storage::EngineKind::posix;
}

}  // namespace

NativeReader::NativeReader(const config::Workload& w, std::unique_ptr<ExtentFinder> extents)
    : extents_(std::move(extents)),
      engine_(storage::make_read_engine({.kind = engine_kind(w.reader.io_engine),
                                         .direct = w.reader.odirect,
                                         .keep_open = w.reader.read_type == config::ReadType::memory,
                                         .depth = static_cast<unsigned>(w.reader.io_depth)})) {}

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
