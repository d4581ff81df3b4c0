#include "config/sizes.hpp"

#include <fmt/format.h>

#include <cmath>

#include "util/checked.hpp"
#include "util/error.hpp"

namespace trainio::config {

namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? " x " : "") + std::to_string(dims[i]);
  return s;
}

// Bytes of one sample of record_dims, or nullopt when they overflow.
std::optional<std::uint64_t> dims_bytes(const DatasetSection& d) {
  std::optional<std::uint64_t> n = element_size(d.record_element_type);
  for (const auto dim : d.record_dims)
    if (n) n = util::checked_mul(*n, dim);
  return n;
}

}  // namespace

SampleSides sample_sides(const DatasetSection& d) {
  SampleSides s;
  const double elements = d.record_length_bytes / element_size(d.record_element_type);
  s.side = std::floor(std::sqrt(std::max(1.0, elements)));
  if (d.record_length_bytes_stdev > 0) s.stdev = d.record_length_bytes_stdev / 2.0 / std::sqrt(d.record_length_bytes);
  s.max_side = s.side + kMaxSideSigmas * s.stdev;
  return s;
}

double nominal_record_bytes(const DatasetSection& d) {
  if (d.record_dims.empty()) return d.record_length_bytes;
  const auto bytes = dims_bytes(d);
  return bytes ? static_cast<double>(*bytes) : kTwoTo63;  // refused by check_sizes
}

void check_sizes(const DatasetSection& d) {
  const std::string limit = "2^63 - 1";
  if (!(d.record_length_bytes < kTwoTo63))
    throw config_error(fmt::format("dataset.record_length_bytes = {} bytes is more than trainio can represent ({} bytes)",
                                   d.record_length_bytes, limit),
                       "give the size of one sample in bytes (e.g. 146600628)");
  if (!(d.record_length_bytes_stdev < kTwoTo63))
    throw config_error(fmt::format("dataset.record_length_bytes_stdev = {} bytes is more than trainio can represent ({} bytes)",
                                   d.record_length_bytes_stdev, limit),
                       "give the spread of sample sizes in bytes (unet3d: 68341808 for 146600628)");
  // Samples per split.
  std::uint64_t samples = 0;
  for (const auto& [key, files] : {std::pair{"dataset.num_files_train", d.num_files_train},
                                   std::pair{"dataset.num_files_eval", d.num_files_eval}}) {
    const auto n = util::checked_mul(static_cast<std::uint64_t>(files), static_cast<std::uint64_t>(d.num_samples_per_file));
    const auto total = n ? util::checked_add(samples, *n) : std::nullopt;
    if (!total)
      throw config_error(fmt::format("{} = {} x dataset.num_samples_per_file = {} is more samples than trainio can count ({})",
                                     key, files, d.num_samples_per_file, limit),
                         "use fewer files or fewer samples per file");
    samples = *total;
  }
  // The largest sample a file can hold, and so the largest the dataset can be.
  std::uint64_t sample_bytes = 0;
  std::string size_keys;
  if (!d.record_dims.empty()) {
    const auto bytes = dims_bytes(d);
    if (!bytes)
      throw config_error(fmt::format("dataset.record_dims = [{}] elements of {} ({} bytes each) is a sample of more than "
                                     "{} bytes",
                                     dims_text(d.record_dims), to_string(d.record_element_type),
                                     element_size(d.record_element_type), limit),
                         "give the shape of one sample (e.g. [256, 256]); its bytes are the product times the element size");
    sample_bytes = *bytes;
    size_keys = "dataset.record_dims";
  } else {
    const SampleSides s = sample_sides(d);
    const double largest = s.max_side * s.max_side * element_size(d.record_element_type);
    if (!(largest < kTwoTo63))
      throw config_error(fmt::format("dataset.record_length_bytes_stdev = {} lets a file draw samples of up to {:.3g} "
                                     "bytes (each side of the d x d sample up to {} stdev above d), more than {} bytes",
                                     d.record_length_bytes_stdev, largest, kMaxSideSigmas, limit),
                         "give a stdev of the order of record_length_bytes or less (unet3d: 68341808 for 146600628)");
    sample_bytes = static_cast<std::uint64_t>(largest);
    size_keys = s.stdev > 0 ? "dataset.record_length_bytes (with its stdev)" : "dataset.record_length_bytes";
  }
  if (!util::checked_mul(samples, sample_bytes))
    throw config_error(fmt::format("the dataset would hold more than {} bytes: {} samples (dataset.num_files_train + "
                                   "num_files_eval = {} files x dataset.num_samples_per_file = {}) of up to {} bytes ({})",
                                   limit, samples, d.num_files_train + d.num_files_eval, d.num_samples_per_file,
                                   sample_bytes, size_keys),
                       "use fewer files, fewer samples per file, or smaller samples");
}

}  // namespace trainio::config
