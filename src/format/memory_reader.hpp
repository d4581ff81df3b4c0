#pragma once
// read_type: memory for readers whose open() loads the whole file (npz, npy, csv, jpeg, png):
// DLIO keeps what a worker's open() returned for the rest of the run, so a worker reads each
// file once and later samples of it cost no storage call. trainio remembers which files a
// reader thread has loaded (not their contents: memory stays bounded).

#include <memory>
#include <string>
#include <unordered_set>

#include "format/format.hpp"

namespace trainio::format {

class MemoryReader final : public SampleReader {
 public:
  explicit MemoryReader(std::unique_ptr<SampleReader> inner) : inner_(std::move(inner)) {}
  std::uint64_t read(const std::string& path, const plan::SampleShape& shape, std::uint64_t samples_in_file,
                     std::uint64_t sample) override {
    if (loaded_.insert(path).second) inner_->read(path, shape, samples_in_file, sample);
    return shape.bytes();
  }

 private:
  std::unique_ptr<SampleReader> inner_;
  std::unordered_set<std::string> loaded_;
};

}  // namespace trainio::format
