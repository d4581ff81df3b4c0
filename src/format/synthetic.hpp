#pragma once
// synthetic: no files at all. Reading a sample costs no storage call, so a run measures the
// benchmark's own overhead: loader threads, queues, barriers, metrics.

#include "format/format.hpp"

namespace trainio::format {

class SyntheticReader final : public SampleReader {
 public:
  std::uint64_t read(const std::string&, const plan::SampleShape& shape, std::uint64_t, std::uint64_t) override {
    return shape.bytes();
  }
};

}  // namespace trainio::format
