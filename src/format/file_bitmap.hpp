#pragma once
// A set of files by their dense number (plan::DatasetLayout::file_key): one bit per file of the
// dataset, however many the run touches. A million files cost 125 KiB.

#include <cstdint>
#include <vector>

namespace trainio::format {

class FileBitmap {
 public:
  // Adds `file`; returns whether it was absent.
  bool insert(std::uint64_t file) {
    const std::uint64_t word = file / 64, bit = std::uint64_t{1} << (file % 64);
    if (word >= words_.size()) words_.resize(word + 1, 0);
    const bool absent = (words_[word] & bit) == 0;
    words_[word] |= bit;
    return absent;
  }
  void erase(std::uint64_t file) {
    if (file / 64 < words_.size()) words_[file / 64] &= ~(std::uint64_t{1} << (file % 64));
  }
  bool contains(std::uint64_t file) const {
    return file / 64 < words_.size() && (words_[file / 64] >> (file % 64) & 1) != 0;
  }
  std::size_t memory_bytes() const { return words_.capacity() * sizeof(std::uint64_t); }

 private:
  std::vector<std::uint64_t> words_;
};

}  // namespace trainio::format
