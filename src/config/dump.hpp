#pragma once
// The resolved workload as YAML that trainio (and DLIO, for DLIO's keys) can load again.

#include <string>
#include <utility>
#include <vector>

#include "config/workload.hpp"

namespace trainio::config {

// Every key with a value, in DLIO's section order. With `annotate`, keys that trainio does not
// act on yet carry a trailing "# accepted, not yet used" comment.
std::string to_yaml(const Workload& w, bool annotate);

// Every key with a value as (path, YAML flow text), in catalogue order.
std::vector<std::pair<std::string, std::string>> resolved_values(const Workload& w);

}  // namespace trainio::config
