#include "format/parquet/reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "format/crc32c.hpp"
#include "storage/s3/s3_client.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "util/error.hpp"

namespace trainio::format::parquet {

namespace {

// Large row-group reads go through a buffer of this size (Python's read(n) allocates n bytes; a
// row group of tens of MiB is not held whole).
constexpr std::size_t kReadPiece = 8u << 20;

Error damaged(const std::string& path, const std::string& what) {
  const char* noun = path.starts_with("s3://") ? "object" : "file";
  return data_error(fmt::format("Parquet {} '{}' {}", noun, path, what),
                    "the file is damaged or was written for other settings: check it with 'trainio validate', regenerate the dataset");
}

}  // namespace

Reader::Reader(const config::Workload& w)
    : workload_(w),
      pattern_(w.storage.storage_type == config::StorageType::parallel_fs ? ReadPattern::chunks : ReadPattern::span),
      pre_buffer_(w.dataset.parquet.pre_buffer) {
  if (pre_buffer_) pattern_ = ReadPattern::chunks;
  if (w.storage.storage_type == config::StorageType::s3)
    s3_ = std::make_unique<storage::s3::Client>(storage::s3::endpoint_of(w.storage.storage_options));
}

Reader::~Reader() = default;

void Reader::get_object_range(const FileIndex& f, const std::string& path, std::size_t group, std::uint64_t offset,
                              std::uint64_t length) {
  const std::uint64_t got = s3_->get_counted(f.bucket, f.key, offset, length);
  if (got != length)
    throw damaged(path, fmt::format("ends inside row group {} ({} bytes at {}, {} received)", group, length, offset, got));
}

void Reader::begin_epoch() {
  indexed_ = FileBitmap{};
  held_ = HeldRows{};
}

Reader::FileIndex& Reader::index_for(const SampleRequest& r) {
  FileIndex* kept = files_.find(r.file);
  if (kept && indexed_.contains(r.file)) return *kept;
  // A new epoch (or a file not read before): the fork's reader flushes its footer cache at the
  // epoch's end, so the footer is read again.
  const std::string& path = *r.path;
  FileIndex idx;
  Footer footer;
  std::string_view meta;
  if (s3_) {
    // pyarrow's ParquetFile over the fork's range file: GetSize() seeks to the end, which asks
    // the object's size (HEAD); each ReadAt() is one read(n), one ranged GET.
    const storage::s3::ObjectPath object = storage::s3::parse_object_path(path);
    idx.bucket = object.bucket;
    idx.key = object.key;
    const auto size = s3_->size_of(idx.bucket, idx.key);
    if (!size) throw damaged(path, "is missing (HEAD: 404)");
    const auto get = [&](char* dest, std::uint64_t length, std::uint64_t offset) {
      const std::uint64_t got = s3_->get(idx.bucket, idx.key, {dest, static_cast<std::size_t>(length)}, offset, length);
      if (got != length)
        throw damaged(path, fmt::format("gave {} bytes of the {} asked at {} for its footer", got, length, offset));
    };
    if (auto wrong = read_footer_bytes(get, *size, scratch_, meta, footer)) throw damaged(path, *wrong);
  } else {
    idx.file = storage::File::open(path);
    const auto read_at = [&f = idx.file](char* dest, std::uint64_t length, std::uint64_t offset) {
      f.pread_exact(dest, length, offset);
    };
    if (auto wrong = read_footer_bytes(read_at, idx.file.size(), scratch_, meta, footer)) throw damaged(path, *wrong);
  }
  // The footer the thread decoded last epoch, byte for byte (length and CRC-32C): its checks
  // passed and its row groups' reads stand, so only the reads above are made again.
  const FooterKey key{footer.file_size, meta.size(), crc32c::value(meta.data(), meta.size()), r.shape.bytes(),
                      r.samples_in_file};
  if (kept && kept->footer == key) {
    kept->file = pattern_ == ReadPattern::span ? storage::File() : std::move(idx.file);
    kept->read.assign(kept->read.size(), false);
    indexed_.insert(r.file);
    return *kept;
  }
  idx.footer = key;
  if (auto wrong = decode_footer(meta, footer)) throw damaged(path, *wrong);
  const std::vector<Column> columns = columns_of(workload_, r.shape.bytes());
  if (auto wrong = check_structure(footer, columns, r.samples_in_file)) throw damaged(path, *wrong);
  const auto& groups = footer.meta.row_groups;
  idx.row_starts.reserve(groups.size() + 1);
  idx.first_range.reserve(groups.size() + 1);
  std::uint64_t row = 0;
  for (const auto& g : groups) {
    idx.row_starts.push_back(row);
    row += static_cast<std::uint64_t>(g.num_rows);
    idx.first_range.push_back(static_cast<std::uint32_t>(idx.ranges.size()));
    chunk_ranges_.clear();
    for (std::size_t c = 0; c < columns.size(); ++c)
      if (columns[c].read)
        chunk_ranges_.push_back({static_cast<std::uint64_t>(g.columns[c].start()),
                                 static_cast<std::uint64_t>(g.columns[c].total_compressed_size)});
    if (pattern_ == ReadPattern::span) {
      idx.ranges.push_back(span_of(chunk_ranges_));
    } else if (pre_buffer_) {
      for (const Range& x : coalesce(chunk_ranges_)) idx.ranges.push_back(x);
    } else {
      idx.ranges.insert(idx.ranges.end(), chunk_ranges_.begin(), chunk_ranges_.end());
    }
  }
  idx.row_starts.push_back(row);
  idx.first_range.push_back(static_cast<std::uint32_t>(idx.ranges.size()));
  idx.read.assign(groups.size(), false);
  // Span reads open the file anew for each row group (the fork's raw reads): the footer's
  // descriptor is not needed after it.
  if (pattern_ == ReadPattern::span) idx.file = storage::File();
  indexed_.insert(r.file);
  return files_.insert(r.file, std::move(idx));
}

void Reader::read_row_group(FileIndex& f, const std::string& path, std::size_t group) {
  if (buffer_.size() < kReadPiece) buffer_.resize(kReadPiece);
  for (std::uint32_t i = f.first_range[group]; i < f.first_range[group + 1]; ++i) {
    const Range& x = f.ranges[i];
    if (s3_) {
      get_object_range(f, path, group, x.offset, x.length);
    } else if (pattern_ == ReadPattern::span) {
      // with open(filename, "rb") as fh: fh.seek(start); fh.read(length)
      span_file_.open(path);
      span_file_.seek(static_cast<std::int64_t>(x.offset), SEEK_SET);
      if (span_file_.readinto_discard(x.length, buffer_.data(), buffer_.size()) != x.length) {
        span_file_.close();
        throw damaged(path, fmt::format("ends inside row group {} ({} bytes at {})", group, x.length, x.offset));
      }
      span_file_.close();
    } else {
      for (std::uint64_t done = 0; done < x.length;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(x.length - done, buffer_.size()));
        f.file.pread_exact(buffer_.data(), n, x.offset + done);
        done += n;
      }
    }
  }
}

std::uint64_t Reader::read(const SampleRequest& r) {
  FileIndex& f = index_for(r);
  // The row group holding the sample: the last one starting at or before it.
  const auto it = std::upper_bound(f.row_starts.begin(), f.row_starts.end() - 1, r.sample);
  const std::size_t group = static_cast<std::size_t>(std::max<std::ptrdiff_t>(it - f.row_starts.begin() - 1, 0));
  if (!f.read[group]) {
    read_row_group(f, *r.path, group);
    f.read[group] = true;
  }
  held_ = {r.file, f.row_starts[group], f.row_starts[group + 1]};
  if (r.shape.bytes() != projected_for_) {  // files of one sample size share it: computed once
    projected_for_ = r.shape.bytes();
    projected_bytes_ = 0;
    for (const auto& c : columns_of(workload_, projected_for_))
      if (c.read) projected_bytes_ += c.row_bytes();
  }
  return projected_bytes_;
}

bool Reader::read_from_memory(const SampleRequest& r, std::uint64_t& bytes) {
  if (r.file != held_.file || r.sample < held_.first || r.sample >= held_.end || r.shape.bytes() != projected_for_)
    return false;
  bytes = projected_bytes_;
  return true;
}

std::uint64_t Reader::read_run_from_memory(const SampleRequest& r, std::uint64_t stride, std::uint64_t count,
                                           std::uint64_t& bytes) {
  if (count == 0 || stride == 0 || r.file != held_.file || r.sample < held_.first || r.sample >= held_.end ||
      r.shape.bytes() != projected_for_)
    return 0;
  // The run's samples up to the held row group's end.
  const std::uint64_t served = std::min(count, (held_.end - 1 - r.sample) / stride + 1);
  bytes = served * projected_bytes_;
  return served;
}

}  // namespace trainio::format::parquet
