#pragma once
// synthetic: no files at all. Reading a sample costs no storage call, so a run measures the
// benchmark's own overhead: loader threads, queues, barriers, metrics.

#include "format/format.hpp"

namespace trainio::format {

class SyntheticReader final : public SampleReader {
 public:
  std::uint64_t read(const SampleRequest& r) override { return r.shape.bytes(); }
};

}  // namespace trainio::format
