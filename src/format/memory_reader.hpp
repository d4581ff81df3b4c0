#pragma once
// read_type: memory for readers whose open() loads the whole file (npz, npy, csv, jpeg, png):
// DLIO keeps what a worker's open() returned for the rest of the run, so a worker reads each
// file once and later samples of it cost no storage call. trainio remembers which files a
// reader thread has loaded (not their contents), one bit per file of the dataset.

#include <memory>
#include <string>

#include "format/file_bitmap.hpp"
#include "format/format.hpp"

namespace trainio::format {

class MemoryReader final : public SampleReader {
 public:
  explicit MemoryReader(std::unique_ptr<SampleReader> inner) : inner_(std::move(inner)) {}
  std::uint64_t read(const SampleRequest& r) override {
    if (loaded_.insert(r.file)) inner_->read(r);
    return r.shape.bytes();
  }
  const FileBitmap& loaded() const { return loaded_; }

 private:
  std::unique_ptr<SampleReader> inner_;
  FileBitmap loaded_;
};

}  // namespace trainio::format
