#pragma once
// DLIO's FormatReader.next(), the generator TensorFlow's loader runs for formats other than
// TFRecord: a reader thread walks its slice of the samples, opens a file when a sample of it is
// first needed (for npz, npy, csv and images open() loads the whole file), takes samples from
// what it loaded, and closes the file of the sample it has just read whenever the count of
// samples it has read reaches a multiple of samples_per_file. In file order that is one load per
// file; with shuffled samples a file may be loaded again after it was closed. The open files are
// remembered one bit per file of the dataset.

#include <memory>
#include <string>

#include "format/file_bitmap.hpp"
#include "format/format.hpp"

namespace trainio::format {

class SessionReader final : public SampleReader {
 public:
  explicit SessionReader(std::unique_ptr<SampleReader> inner) : inner_(std::move(inner)) {}
  std::uint64_t read(const SampleRequest& r) override {
    if (loaded_.insert(r.file)) inner_->read(r);
    if (++read_ % r.samples_in_file == 0) loaded_.erase(r.file);
    return r.shape.bytes();
  }

 private:
  std::unique_ptr<SampleReader> inner_;
  FileBitmap loaded_;
  std::uint64_t read_ = 0;
};

}  // namespace trainio::format
