#include "plan/state_dict.hpp"

#include <set>

namespace trainio::plan {

void StateDict::add(std::string key, TensorSpec tensor, Key kind) {
  items.push_back({std::move(key), kind, tensor, nullptr});
}

void StateDict::add(std::string key, std::shared_ptr<const StateDict> dict, Key kind) {
  items.push_back({std::move(key), kind, {}, std::move(dict)});
}

namespace {
std::uint64_t bytes_of(const StateDict& d, std::set<const StateDict*>& seen) {
  if (!seen.insert(&d).second) return 0;
  std::uint64_t total = 0;
  for (const auto& item : d.items) total += item.dict ? bytes_of(*item.dict, seen) : item.tensor.bytes();
  return total;
}
}  // namespace

std::uint64_t StateDict::tensor_bytes() const {
  std::set<const StateDict*> seen;
  return bytes_of(*this, seen);
}

}  // namespace trainio::plan
