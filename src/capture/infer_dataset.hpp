#pragma once
// The dataset part of the inference: format, files, sizes and samples per file (infer.cpp
// assembles the rest).

#include "capture/infer.hpp"

namespace trainio::capture {

// Sets dataset.* (and the counts `samples_per_epoch` and `passes` the loader part needs).
struct DatasetFacts {
  std::string format;            // "" when unknown
  std::uint64_t files = 0, samples_per_file = 1;
  double record_bytes = 0, record_stdev = 0;
  std::uint32_t passes = 0;      // median reads-through of a file: the epochs
};
DatasetFacts infer_dataset(const Profile& p, std::uint32_t dir, const InferOptions& options, Inference& out);

}  // namespace trainio::capture
