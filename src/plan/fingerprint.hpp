#pragma once
// The workload keys that decide a dataset's bytes. Two workloads with the same fingerprint can
// share a generated dataset; any difference means the files on disk are not the ones the
// workload would read.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/workload.hpp"

namespace trainio::plan {

// (key, value as text), in a fixed order.
using Fingerprint = std::vector<std::pair<std::string, std::string>>;

Fingerprint dataset_fingerprint(const config::Workload& w);

// The first key whose value differs ("" when equal), with both values.
struct FingerprintDiff {
  std::string key, have, want;
};
std::optional<FingerprintDiff> first_difference(const Fingerprint& on_disk, const Fingerprint& wanted);

}  // namespace trainio::plan
