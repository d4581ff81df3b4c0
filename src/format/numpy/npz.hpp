#pragma once
// NPZ: a ZIP archive holding x.npy (the file's samples, shape (d1, d2, samples) as DLIO writes
// them) and y.npy (int64 labels, one per sample), byte-compatible with numpy.savez.
// The reader re-enacts DLIO's NPZReader: np.load(path, allow_pickle=True)['x'] per sample.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "format/format.hpp"
#include "format/per_file_shape.hpp"
#include "format/python_io.hpp"
#include "format/archive/zip.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

// `deflate_level` < 0 writes stored members (numpy.savez); 0-9 deflates them at that level
// (numpy.savez_compressed, DLIO's dataset.compression: zip).
class NpzWriter final : public ByteWriter {
 public:
  explicit NpzWriter(int deflate_level = -1) : deflate_level_(deflate_level) {}
  std::optional<std::uint64_t> expected_size(const plan::DataFile& file) const override;
  // Stored files that fit the buffer: the x header's CRC is patched in the buffer, then one write.
  bool writes_in_one_call(const plan::DataFile& file) const override { return fits_stream_buffer(file); }

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;

 private:
  // What every stored file of one sample shape and count shares (headers, offsets, the labels'
  // member, the end records): worked out once, not per file (small files spent a tenth of their
  // generation time formatting them). Kept for the last shape; one writer per thread.
  struct Stored;
  const Stored& stored(const plan::DataFile& file) const;
  void write_deflated(const plan::DataFile& file, storage::Output& out, ContentSource& content);
  int deflate_level_;
  util::Bytes input_;  // uncompressed bytes waiting for deflate
  mutable PerFileShape<std::shared_ptr<const Stored>> stored_;
};

// What is wrong with an NPZ file (structure, CRCs, shapes), or nullopt.
std::optional<std::string> validate_npz(const plan::DataFile& expected);

class NpzReader final : public SampleReader {
 public:
  explicit NpzReader(std::size_t python_buffer_size = 0);
  ~NpzReader() override;
  std::uint64_t read(const SampleRequest& r) override;

 private:
  // zipfile's _SharedFile.read + ZipExtFile state for one opened member.
  struct Member {
    std::uint64_t file_pos = 0;         // _SharedFile._pos
    std::uint64_t compress_left = 0;
    std::uint64_t left = 0;
    bool deflated = false;
    bool eof = false;
    std::array<char, 4096> readbuffer{};  // ZipExtFile._readbuffer (never more than MIN_READ_SIZE)
    std::size_t readbuffer_len = 0;
    std::size_t readbuffer_offset = 0;
  };
  std::size_t shared_read(Member& m, char* dest, std::size_t n);
  void open_member(Member& m, const zip::Member& info, const std::string& path);
  std::size_t member_read(Member& m, char* dest, std::size_t n, const std::string& path);
  // ZipExtFile._read1 (and _read2): up to max(n, MIN_READ_SIZE) bytes of member data into `out`.
  std::size_t read1(Member& m, char* out, std::size_t n, const std::string& path);
  void member_read_exact(Member& m, char* dest, std::size_t n, const std::string& path, const char* what);

  PyBufferedFile file_;
  util::Bytes scratch_;  // numpy's 256 KiB chunk, reused: its content is not needed
  std::string central_directory_, header_;  // read per sample into memory kept from the last one
  // Deflated members: zlib's decompressobj and its unconsumed_tail.
  void* inflater_ = nullptr;
  util::Bytes compressed_;
  std::size_t tail_ = 0;
};

}  // namespace trainio::format
