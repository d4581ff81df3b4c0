#pragma once
// What a checkpoint file holds, as the dict DLIO hands to torch.save: string keys, each naming
// a tensor or a nested dict. Only shapes and element types, never data: the bytes are generated
// while the file is written. A dict shared by several keys (DLIO's legacy layer_parameters give
// every layer the same dict) is one object, as in Python, and is stored once.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/enums.hpp"

namespace trainio::plan {

struct TensorSpec {
  std::uint64_t elements = 0;
  config::ModelDataType dtype = config::ModelDataType::int8;
  std::uint64_t bytes() const { return elements * config::element_size(dtype); }
};

struct StateDict {
  struct Item;
  std::vector<Item> items;

  // Keys made with str(i) are new string objects each time; a key written as a literal in DLIO's
  // code ("a", "b", "combined") is one shared object, which the pickle stores once.
  enum class Key { computed, literal };
  void add(std::string key, TensorSpec tensor, Key kind = Key::computed);
  void add(std::string key, std::shared_ptr<const StateDict> dict, Key kind = Key::computed);
  // Bytes of tensor data; a dict reached twice counts once, as torch.save stores it once.
  std::uint64_t tensor_bytes() const;
};

struct StateDict::Item {
  std::string key;
  Key key_kind = Key::computed;
  TensorSpec tensor;                      // when dict is null
  std::shared_ptr<const StateDict> dict;  // a nested dict
};

}  // namespace trainio::plan
