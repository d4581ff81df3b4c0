#include "format/native_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.hpp"

namespace trainio::format {

NativeReader::NativeReader(const config::Workload& w, std::unique_ptr<ExtentFinder> extents)
    : extents_(std::move(extents)),
      engine_(w.reader.io_engine),
      direct_(w.reader.odirect),
      keep_open_(w.reader.read_type == config::ReadType::memory) {
  if (engine_ == config::IoEngine::io_uring)
    uring_ = std::make_unique<storage::Uring>(static_cast<unsigned>(w.reader.io_depth));
}

NativeReader::Range NativeReader::range_of(const Extent& e) const {
  if (!direct_) return {e.offset, static_cast<std::size_t>(e.length), 0};
  const std::uint64_t a = alignment_;
  const std::uint64_t start = e.offset / a * a;
  const std::uint64_t end = (e.offset + e.length + a - 1) / a * a;
  return {start, static_cast<std::size_t>(end - start), static_cast<std::size_t>(e.offset - start)};
}

storage::File& NativeReader::open_file(const SampleRequest& r) {
  const std::string& path = *r.path;
  if (direct_ && alignment_ == 1) alignment_ = storage::direct_alignment(path).offset;
  if (!keep_open_) {
    current_ = storage::File::open(path, {.direct = direct_});
    return current_;
  }
  return files_.get_or_insert(r.file, [&] { return storage::File::open(path, {.direct = direct_}); });
}

void NativeReader::done_with() {
  if (!keep_open_) current_.close();
}

Extent NativeReader::extent_of(storage::File& f, const SampleRequest& r) {
  const std::uint64_t size = extents_->needs_file_size() ? f.size() : 0;
  return extents_->find(r, size);
}

void NativeReader::check_complete(const std::string& path, const Extent& e, const Range& r, std::size_t got) const {
  if (r.skip + e.length <= got) return;
  throw data_error(fmt::format("'{}' ends early: {} bytes at offset {} were expected", path, e.length, e.offset),
                   "the file is truncated: regenerate the dataset with 'trainio generate'");
}

std::uint64_t NativeReader::read(const SampleRequest& r) {
  if (engine_ == config::IoEngine::mmap) {
    storage::MappedFile& map = maps_.get_or_insert(r.file, [&] { return storage::MappedFile::open(*r.path); });
    const Extent e = extents_->find(r, map.size());
    map.touch(e.offset, e.length);
    return r.shape.bytes();
  }
  if (uring_) return read_batch({&r, 1});
  storage::File& f = open_file(r);
  const Extent e = extent_of(f, r);
  const Range range = range_of(e);
  char* buffer = buffer_.reserve(range.length, std::max<std::size_t>(alignment_, 64));
  std::size_t got = 0;
  while (got < range.length) {
    const std::size_t n = f.pread_some(buffer + got, range.length - got, range.offset + got);
    if (n == 0) break;
    got += n;
  }
  check_complete(*r.path, e, range, got);
  done_with();
  return r.shape.bytes();
}

std::uint64_t NativeReader::read_batch(std::span<const SampleRequest> batch) {
  if (!uring_) return SampleReader::read_batch(batch);
  // Open every file of the batch (or find it open), then have all reads in flight at once.
  const bool cached = keep_open_ && batch.size() <= kMaxOpen;
  batch_files_.clear();
  batch_files_.reserve(batch.size());
  batch_open_.clear();
  batch_reads_.clear();
  batch_ranges_.clear();
  batch_extents_.clear();
  std::size_t total = 0;
  for (const auto& req : batch) {
    storage::File* f = nullptr;
    if (cached) {
      f = &open_file(req);
    } else {
      if (direct_ && alignment_ == 1) alignment_ = storage::direct_alignment(*req.path).offset;
      f = &batch_files_.emplace_back(storage::File::open(*req.path, {.direct = direct_}));
    }
    batch_open_.push_back(f);
    const Extent e = extent_of(*f, req);
    batch_extents_.push_back(e);
    batch_ranges_.push_back(range_of(e));
    total += (batch_ranges_.back().length + alignment_ - 1) / alignment_ * alignment_;
  }
  char* buffer = buffer_.reserve(total, std::max<std::size_t>(alignment_, 64));
  std::size_t at = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch_reads_.push_back({batch_open_[i], buffer + at, batch_ranges_[i].length,
                            batch_ranges_[i].offset, 0});
    at += (batch_ranges_[i].length + alignment_ - 1) / alignment_ * alignment_;
  }
  uring_->read_all(batch_reads_);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    check_complete(*batch[i].path, batch_extents_[i], batch_ranges_[i], batch_reads_[i].done);
    bytes += batch[i].shape.bytes();
  }
  batch_files_.clear();  // closes what this batch opened
  return bytes;
}

}  // namespace trainio::format
