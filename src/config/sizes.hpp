#pragma once
// The sample sizes the dataset keys define (REFERENCE §3), and the check that every size and
// count they lead to can be represented: samples per split, bytes per sample, bytes of the
// dataset. Validation refuses what cannot (before any I/O); the plan lays samples out with the
// same rules.

#include <cstdint>

#include "config/workload.hpp"

namespace trainio::config {

// DLIO's generators without record_dims: a d x d sample, d = floor(sqrt(record_length_bytes /
// element size)). With a stdev, each file draws each side from normal(d, stdev), clamped to
// [1, max_side]. max_side = d + kMaxSideSigmas * stdev: Box-Muller over 53-bit uniforms never
// gives more than 8.6 sigma, so the clamp changes no draw; it bounds the largest sample.
inline constexpr double kMaxSideSigmas = 9;
struct SampleSides {
  double side = 0;      // d
  double stdev = 0;     // of each side (0: every file has d x d)
  double max_side = 0;  // the largest side a file can draw
};
SampleSides sample_sides(const DatasetSection& d);

// The sample size DLIO's MB/s figures use: record_dims x element size when record_dims is set
// (DLIO derives record_length from them), else record_length_bytes as given.
double nominal_record_bytes(const DatasetSection& d);

// Throws a config error, naming the keys and a fix, when a size or count of the dataset would
// not fit trainio's arithmetic (2^63 - 1).
void check_sizes(const DatasetSection& d);

}  // namespace trainio::config
