#pragma once
// A value worked out from a file's sample shape and sample count (a header's size, an HDF5
// layout), kept for the last shape asked: every file of a dataset has the same one, so readers
// work it out once instead of once per sample.

#include <cstdint>
#include <optional>

#include "plan/layout.hpp"

namespace trainio::format {

template <typename T>
class PerFileShape {
 public:
  template <typename Make>
  const T& get(const plan::SampleShape& shape, std::uint64_t samples, Make make) {
    if (!value_ || !(shape_ == shape) || samples_ != samples) {
      value_ = make();
      shape_ = shape;
      samples_ = samples;
    }
    return *value_;
  }

 private:
  std::optional<T> value_;
  plan::SampleShape shape_;
  std::uint64_t samples_ = 0;
};

}  // namespace trainio::format
