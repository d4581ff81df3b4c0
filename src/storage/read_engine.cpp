#include "storage/read_engine.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "storage/aligned_buffer.hpp"
#include "storage/read_engine_parts.hpp"
#include "util/error.hpp"

namespace trainio::storage {

std::unique_ptr<ReadEngine> make_read_engine(const EngineOptions& options) {
  switch (options.kind) {
    case EngineKind::posix: return make_pread_engine(options);
    case EngineKind::mmap: return make_mmap_engine();
    case EngineKind::io_uring: return make_uring_engine(options);
  }
  throw internal_error("unknown read engine");
}

File& FileOpener::open(const SampleRead& r, File& fresh, bool may_keep) {
  if (direct_ && alignment_ == 1) {
    const DirectAlignment a = direct_alignment(*r.path);
    alignment_ = a.offset;
    buffer_alignment_ = std::max(buffer_alignment_, a.memory);
  }
  const OpenOptions options{.direct = direct_};
  if (keep_open_ && may_keep) return kept_.get_or_insert(r.file, [&] { return File::open(*r.path, options); });
  fresh.reopen(*r.path, options);
  return fresh;
}

bool FileOpener::may_keep_all(std::span<const SampleRead> reads) {
  if (reads.size() <= kMaxKeptFiles) return true;
  distinct_.clear();
  for (const SampleRead& r : reads) distinct_.push_back(r.file);
  std::sort(distinct_.begin(), distinct_.end());
  return static_cast<std::size_t>(std::unique(distinct_.begin(), distinct_.end()) - distinct_.begin()) <= kMaxKeptFiles;
}

ByteRange FileOpener::range_of(const SampleRead& r) const {
  if (!direct_) return {r.offset, static_cast<std::size_t>(r.length), 0};
  const std::uint64_t a = alignment_;
  const std::uint64_t start = r.offset / a * a;
  const std::uint64_t end = (r.offset + r.length + a - 1) / a * a;
  return {start, static_cast<std::size_t>(end - start), static_cast<std::size_t>(r.offset - start)};
}

void check_complete(const SampleRead& r, const ByteRange& range, std::size_t got) {
  if (range.skip + r.length <= got) return;
  throw data_error(fmt::format("'{}' ends early: {} bytes at offset {} were expected", *r.path, r.length, r.offset),
                   "the file is truncated: regenerate the dataset with 'trainio generate'");
}

}  // namespace trainio::storage
