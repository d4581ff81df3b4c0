#pragma once
// TensorFlow's Dataset.shuffle(buffer_size): the buffer is filled to `capacity` elements from the
// input before anything comes out; each element out is drawn uniformly from the buffer and its
// place is taken by the next input element. The fill is what makes a TensorFlow epoch start with
// a burst of `shuffle_size` records read before the first batch.

#include <cstdint>
#include <vector>

#include "util/rng.hpp"

namespace trainio::engine {

class ShuffleBuffer {
 public:
  ShuffleBuffer(std::size_t capacity, std::uint64_t seed) : capacity_(capacity == 0 ? 1 : capacity), rng_(seed) {
    items_.reserve(capacity_);
  }
  bool full() const { return items_.size() >= capacity_; }
  bool empty() const { return items_.empty(); }
  void push(std::uint64_t item) { items_.push_back(item); }
  // A uniformly drawn element, removed (the last one moves into its place).
  std::uint64_t take() {
    const std::size_t i = static_cast<std::size_t>(rng_.below(items_.size()));
    const std::uint64_t out = items_[i];
    items_[i] = items_.back();
    items_.pop_back();
    return out;
  }

 private:
  std::size_t capacity_;
  util::Rng rng_;
  std::vector<std::uint64_t> items_;
};

}  // namespace trainio::engine
