// torch.save and torch.load re-enacted on an Archive: the Python-level writes and miniz's reads.
#include "format/torch/torch_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "format/torch/torch_zip.hpp"
#include "format/archive/zip.hpp"
#include "util/error.hpp"

namespace trainio::format::torch {

namespace {

Error not_the_archive(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' is not the checkpoint file this layout writes: {}", path, what),
                    "the checkpoint folder holds other files: write the checkpoints first (num_checkpoints_write), or "
                    "point checkpoint.checkpoint_folder elsewhere");
}

}  // namespace

namespace {

// The Python-level writes torch.save makes, handed to a sink; `crcs` collects each record's CRC.
template <typename Sink>
void write_archive(const Archive& a, Sink& sink, TensorContent& content) {
  std::vector<std::uint32_t> crcs;
  const auto& records = a.records();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    // miniz writes the fixed header, the name and the extra field separately.
    sink.bytes(r.local_header.data(), zip::kLocalHeaderFixed);
    sink.bytes(r.local_header.data() + zip::kLocalHeaderFixed, r.name.size());
    sink.bytes(r.local_header.data() + zip::kLocalHeaderFixed + r.name.size(),
               r.local_header.size() - zip::kLocalHeaderFixed - r.name.size());
    std::uint32_t crc = 0;
    if (r.tensor) {
      std::uint64_t at = 0;
      sink.generated(r.size, [&](char* dest, std::size_t n) {
        content.fill_crc32(*r.tensor, at, dest, n, crc);
        at += n;
      });
    } else {
      const std::string_view data = i == 0 ? std::string_view(a.pickle()) : std::string_view("3\n");
      crc = zip::crc32(0, data.data(), data.size());
      sink.bytes(data.data(), data.size());
    }
    crcs.push_back(crc);
    const std::string d = a.descriptor(i, crc);
    sink.bytes(d.data(), d.size());
  }
  // The central directory in one write, then each end record.
  const std::string t = a.trailer(crcs);
  const std::size_t cd = static_cast<std::size_t>(a.central_directory_size());
  sink.bytes(t.data(), cd);
  sink.bytes(t.data() + cd, kZip64EndSize);
  sink.bytes(t.data() + cd + kZip64EndSize, kLocatorSize);
  sink.bytes(t.data() + cd + kZip64EndSize + kLocatorSize, kEndSize);
}

struct PythonSink {
  PyBufferedWriter& out;
  util::Bytes& scratch;
  Overlap& beside;
  void bytes(const char* data, std::size_t n) { out.write(data, n); }
  template <typename Fill>
  void generated(std::uint64_t n, Fill&& fill) {
    out.write_generated(n, scratch.data(), scratch.size() / 2, beside, fill);
  }
};

// Stages the stream in half the scratch buffer (a piece, as the buffered path writes) and writes
// whole aligned pieces.
struct DirectSink {
  storage::File& out;
  util::Bytes& scratch;
  std::size_t alignment;
  std::size_t used = 0;
  std::size_t capacity() const { return scratch.size() / 2; }

  void spill() {
    const std::size_t whole = used / alignment * alignment;
    if (whole == 0) return;
    out.write_all(scratch.data(), whole);
    std::memmove(scratch.data(), scratch.data() + whole, used - whole);
    used -= whole;
  }
  void bytes(const char* data, std::size_t n) {
    while (n > 0) {
      const std::size_t take = std::min(n, capacity() - used);
      std::memcpy(scratch.data() + used, data, take);
      used += take;
      data += take;
      n -= take;
      if (used == capacity()) spill();
    }
  }
  template <typename Fill>
  void generated(std::uint64_t n, Fill&& fill) {
    while (n > 0) {
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, capacity() - used));
      fill(scratch.data() + used, take);
      used += take;
      n -= take;
      if (used == capacity()) spill();
    }
  }
  void finish() {
    spill();
    if (used == 0) return;
    out.clear_direct();  // the unaligned tail cannot go through O_DIRECT
    out.write_all(scratch.data(), used);
    used = 0;
  }
};

// Into an object store's upload: the archive's bytes in order, tensors generated a piece at a
// time into the scratch buffer (S3Writer takes torch.save's writes and makes parts of them).
struct OutputSink {
  storage::Output& out;
  util::Bytes& scratch;
  std::uint64_t at = 0;
  void bytes(const char* data, std::size_t n) {
    out.write_at(data, n, at);
    at += n;
  }
  template <typename Fill>
  void generated(std::uint64_t n, Fill&& fill) {
    while (n > 0) {
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, scratch.size() / 2));
      fill(scratch.data(), take);
      bytes(scratch.data(), take);
      n -= take;
    }
  }
};

}  // namespace

void save_to(const Archive& archive, storage::Output& out, TensorContent& content, util::Bytes& scratch) {
  OutputSink sink{out, scratch};
  write_archive(archive, sink, content);
}

void save(const Archive& archive, PyBufferedWriter& out, TensorContent& content, util::Bytes& scratch,
          Overlap& beside) {
  PythonSink sink{out, scratch, beside};
  write_archive(archive, sink, content);
  out.flush();  // torch.save flushes the file object at the end
}

void save_direct(const Archive& archive, storage::File& out, TensorContent& content, util::Bytes& scratch,
                 std::size_t alignment) {
  if (scratch.size() < 2 * alignment || scratch.size() % (2 * alignment) != 0)
    throw internal_error("the O_DIRECT staging buffer is not a multiple of the alignment");
  DirectSink sink{out, scratch, alignment};
  write_archive(archive, sink, content);
  sink.finish();
}

std::uint64_t load(const Archive& archive, PyBufferedFile& in, util::Bytes& scratch,
                   const std::function<void()>& before_scratch) {
  const std::string& path = in.path();
  char small[4096];
  auto read_exact = [&](std::uint64_t offset, std::size_t n, char* dest) {
    in.seek(static_cast<std::int64_t>(offset), SEEK_SET);
    if (in.readinto(dest, n) != n) throw not_the_archive(path, fmt::format("it ends before byte {}", offset + n));
  };
  // _check_seekable: f.seek(f.tell()); _is_zipfile: four 1-byte reads, then back.
  in.seek(static_cast<std::int64_t>(in.tell()), SEEK_SET);
  const std::uint64_t start = in.tell();
  char magic[4];
  for (char& c : magic)
    if (in.read(&c, 1) != 1) throw not_the_archive(path, "it is empty or shorter than a zip header");
  in.seek(static_cast<std::int64_t>(start), SEEK_SET);
  if (std::memcmp(magic, "PK\x03\x04", 4) != 0) throw not_the_archive(path, "it is not a zip archive");
  // torch.load notes its position; the reader's adapter learns the size.
  in.tell();
  const std::uint64_t here = in.tell();
  const std::uint64_t size = in.seek(0, SEEK_END);
  in.tell();
  in.seek(static_cast<std::int64_t>(here), SEEK_SET);
  if (size != archive.file_size())
    throw not_the_archive(path, fmt::format("it holds {} bytes, this layout writes {}", size, archive.file_size()));
  read_exact(0, 8, small);  // PyTorchStreamReader: the legacy "PYTORCH1" magic?
  // miniz: the last (up to) 4 KiB to find the end record, the end record, the zip64 locator and
  // end record, then the central directory.
  const std::uint64_t tail = size < sizeof small ? size : sizeof small;
  read_exact(size - tail, static_cast<std::size_t>(tail), small);
  read_exact(size - kEndSize, kEndSize, small);
  read_exact(size - kEndSize - kLocatorSize, kLocatorSize, small);
  read_exact(archive.central_directory_offset() + archive.central_directory_size(), kZip64EndSize, small);
  if (before_scratch) before_scratch();
  const std::size_t cd = static_cast<std::size_t>(archive.central_directory_size());
  if (scratch.size() < cd) scratch.resize(cd);
  read_exact(archive.central_directory_offset(), cd, scratch.data());
  // Records: each local header, then its data. "version" first, then data.pkl, then the storages
  // in the order the unpickler asks for them.
  const auto& records = archive.records();
  auto read_record = [&](const Archive::Record& r) -> std::uint64_t {
    read_exact(r.header_offset, zip::kLocalHeaderFixed, small);
    if (std::memcmp(small, "PK\x03\x04", 4) != 0) throw not_the_archive(path, "a local header is not where the layout puts it");
    in.seek(static_cast<std::int64_t>(r.data_offset), SEEK_SET);
    const std::uint64_t got = in.readinto_discard(r.size, scratch.data(), scratch.size() / 2);
    if (got != r.size) throw not_the_archive(path, fmt::format("record {} ends early", r.name));
    return got;
  };
  read_record(records.back());
  read_record(records.front());
  std::uint64_t bytes = 0;
  for (const std::size_t i : archive.load_order()) bytes += read_record(records[i]);
  return bytes;
}

}  // namespace trainio::format::torch
