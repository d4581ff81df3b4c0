#pragma once
// NPZ: a ZIP archive holding x.npy (the file's samples, shape (d1, d2, samples) as DLIO writes
// them) and y.npy (int64 labels, one per sample), byte-compatible with numpy.savez.
// The reader re-enacts DLIO's NPZReader: np.load(path, allow_pickle=True)['x'] per sample.

#include <array>
#include <vector>

#include "format/format.hpp"
#include "format/python_io.hpp"

namespace trainio::format {

class NpzWriter final : public FileWriter {
 public:
  std::uint64_t write(const plan::DataFile& file, storage::File& out, ContentSource& content) override;
  std::uint64_t expected_size(const plan::DataFile& file) const override;

 private:
  std::vector<char> buffer_;
};

class NpzReader final : public SampleReader {
 public:
  explicit NpzReader(std::size_t python_buffer_size = 0);
  std::uint64_t read(const std::string& path, const plan::SampleShape& shape, std::uint64_t samples_in_file,
                     std::uint64_t sample) override;

 private:
  // zipfile's _SharedFile.read + ZipExtFile state for one opened member.
  struct Member {
    std::uint64_t file_pos = 0;         // _SharedFile._pos
    std::uint64_t compress_left = 0;
    std::uint64_t left = 0;
    std::array<char, 4096> readbuffer{};  // ZipExtFile._readbuffer (never more than MIN_READ_SIZE)
    std::size_t readbuffer_len = 0;
    std::size_t readbuffer_offset = 0;
  };
  std::size_t shared_read(Member& m, char* dest, std::size_t n);
  void open_member(Member& m, std::uint64_t header_offset, std::uint64_t size, const std::string& path);
  std::size_t member_read(Member& m, char* dest, std::size_t n);
  void member_read_exact(Member& m, char* dest, std::size_t n, const std::string& path, const char* what);

  PyBufferedFile file_;
  std::vector<char> scratch_;  // numpy's 256 KiB chunk, reused: its content is not needed
};

}  // namespace trainio::format
