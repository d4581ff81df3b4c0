#include "config/workload.hpp"

#include <algorithm>

namespace trainio::config {

bool Workload::is_set(const std::string& key) const {
  return std::find(set_keys.begin(), set_keys.end(), key) != set_keys.end();
}

}  // namespace trainio::config
