#include "format/indexed/indexed_binary.hpp"

#include <fmt/format.h>

#include <cstring>

#include "format/stream_writer.hpp"
#include "storage/fs.hpp"
#include "storage/new_file.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace {

// Writes `count` uint64 values value(i) to `path` through a temporary name (and `sync`).
template <typename Value>
void write_index(const std::string& path, std::uint64_t count, Value&& value, util::Bytes& buffer,
                 storage::SyncQueue* sync) {
  storage::NewFile out(path, {.remove_leftover = true, .sync = sync});
  {
    StreamWriter w(out, buffer, nullptr, 1u << 20);
    char word[8];
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t v = value(i);
      for (int b = 0; b < 8; ++b) word[b] = static_cast<char>((v >> (8 * b)) & 0xff);
      w.append({word, 8});
    }
    w.flush();
  }
  out.commit();
}

}  // namespace

void IndexedBinaryWriter::write_bytes(const plan::DataFile& f, storage::Output& out, ContentSource& content) {
  {
    StreamWriter w(out, buffer_, beside_);
    w.append_content(f.data_bytes(), content);
    w.flush();
  }
  write_indexes(f);
}

void IndexedBinaryWriter::write_indexes(const plan::DataFile& f) {
  // Offsets are absolute (DLIO's generator restarts them at 0 for every generation buffer: a
  // DLIO bug for files larger than generation_buffer_size).
  const std::uint64_t size = f.sample.bytes();
  write_index(indexed_binary::offsets_path(f.path), f.num_samples, [&](std::uint64_t i) { return i * size; }, index_buffer_,
              sync_);
  write_index(indexed_binary::sizes_path(f.path), f.num_samples, [&](std::uint64_t) { return size; }, index_buffer_, sync_);
}

std::uint64_t IndexedBinaryWriter::write_shared(const plan::DataFile& f, const std::string& path, SharedWriting& job,
                                                ContentSource& content) {
  constexpr std::uint64_t kChunk = 4u << 20;
  const SampleRange mine = share_of(f.num_samples, job.rank(), job.ranks());
  const std::uint64_t first = mine.first * f.sample.bytes();
  const std::uint64_t bytes = (mine.last - mine.first) * f.sample.bytes();
  if (buffer_.size() < kChunk) buffer_.resize(kChunk);
  content.seek(first);
  const auto file = job.create(path);
  const std::uint64_t largest = largest_share(f.num_samples, job.ranks()) * f.sample.bytes();
  const std::uint64_t rounds = (largest + kChunk - 1) / kChunk;  // the same on every rank
  for (std::uint64_t r = 0; r < rounds; ++r) {
    const std::uint64_t at = std::min(bytes, r * kChunk);
    const std::uint64_t n = std::min(kChunk, bytes - at);
    content.fill(buffer_.data(), n);
    file->write_at_all(first + at, buffer_.data(), n);
  }
  file->close();
  if (job.rank() == 0) write_indexes(f);
  return bytes;
}

std::optional<std::string> validate_indexed_binary(const plan::DataFile& f) {
  const auto data = storage::file_size(f.path);
  if (!data) return std::string("missing");
  if (*data != f.data_bytes()) return fmt::format("size {} bytes, expected {}", *data, f.data_bytes());
  const std::uint64_t size = f.sample.bytes();
  util::Bytes chunk = util::chunk_buffer(std::max<std::uint64_t>(*data, 8 * f.num_samples));
  {
    // The samples have no checksum, but every byte must be readable.
    storage::File in = storage::File::open(f.path);
    for (std::uint64_t at = 0; at < *data;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), *data - at));
      in.pread_exact(chunk.data(), n, at);
      at += n;
    }
  }
  for (const bool offsets : {true, false}) {
    const std::string path = offsets ? indexed_binary::offsets_path(f.path) : indexed_binary::sizes_path(f.path);
    const auto bytes = storage::file_size(path);
    if (!bytes) return fmt::format("its index {} is missing", path);
    if (*bytes != 8 * f.num_samples) return fmt::format("its index {} holds {} bytes, expected {}", path, *bytes, 8 * f.num_samples);
    storage::File in = storage::File::open(path);
    for (std::uint64_t i = 0; i < f.num_samples;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size() / 8, f.num_samples - i));
      in.pread_exact(chunk.data(), n * 8, i * 8);
      for (std::size_t k = 0; k < n; ++k, ++i) {
        std::uint64_t v = 0;
        std::memcpy(&v, chunk.data() + 8 * k, 8);
        const std::uint64_t want = offsets ? i * size : size;
        if (v != want) return fmt::format("{}: entry {} is {}, expected {}", path, i, v, want);
      }
    }
  }
  return std::nullopt;
}

}  // namespace trainio::format
