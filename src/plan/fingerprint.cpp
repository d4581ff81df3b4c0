#include "plan/fingerprint.hpp"

#include <fmt/format.h>

#include <optional>

#include "config/sizes.hpp"

namespace trainio::plan {

namespace {
std::string number(double v) {
  return v == static_cast<double>(static_cast<long long>(v)) ? std::to_string(static_cast<long long>(v))
                                                              : fmt::format("{}", v);
}
std::string list(const std::vector<std::uint64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
}  // namespace

Fingerprint dataset_fingerprint(const config::Workload& w) {
  const auto& d = w.dataset;
  return {
      {"dataset.format", std::string(config::to_string(d.format))},
      {"dataset.num_files_train", std::to_string(d.num_files_train)},
      {"dataset.num_files_eval", std::to_string(d.num_files_eval)},
      {"dataset.num_samples_per_file", std::to_string(d.num_samples_per_file)},
      // The size the samples have: with record_dims, record_length_bytes is ignored (and DLIO
      // derives it from them), so a change of it must not mark the dataset as different.
      {"dataset.record_length_bytes", number(config::nominal_record_bytes(d))},
      {"dataset.record_length_bytes_stdev", number(d.record_length_bytes_stdev)},
      {"dataset.record_dims", list(d.record_dims)},
      {"dataset.record_element_type", std::string(config::to_string(d.record_element_type))},
      {"dataset.file_prefix", d.file_prefix},
      {"dataset.num_subfolders_train", std::to_string(d.num_subfolders_train)},
      {"dataset.num_subfolders_eval", std::to_string(d.num_subfolders_eval)},
      {"dataset.compression", std::string(config::to_string(d.compression))},
      {"dataset.compression_level", std::to_string(d.compression_level)},
      {"dataset.hdf5.chunk_dims", list(d.hdf5.chunk_dims)},
      {"dataset.hdf5.num_dset_per_record", std::to_string(d.hdf5.num_dset_per_record)},
      {"dataset.hdf5.max_shape", list(d.hdf5.max_shape)},
      {"dataset.data_content", d.data_content == config::DataContent::random ? "random" : "compressible"},
      {"dataset.compression_ratio", d.data_content == config::DataContent::random ? "-" : number(d.compression_ratio)},
  };
}

std::optional<FingerprintDiff> first_difference(const Fingerprint& on_disk, const Fingerprint& wanted) {
  for (const auto& [key, want] : wanted) {
    std::string have = "(not recorded)";
    for (const auto& [k, v] : on_disk)
      if (k == key) have = v;
    if (have != want) return FingerprintDiff{key, have, want};
  }
  return std::nullopt;
}

}  // namespace trainio::plan
