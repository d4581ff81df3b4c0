#pragma once
// The data.pkl of a PyTorch checkpoint: Python's pickle protocol 2 as torch.save drives it for a
// state dict of tensors (each a _rebuild_tensor_v2 reduce whose storage is a persistent id).

#include <string>
#include <vector>

#include "plan/state_dict.hpp"

namespace trainio::format::torch {

struct PickledState {
  std::string bytes;
  std::vector<const plan::TensorSpec*> storages;  // in the order the pickle names them (keys 0, 1, ...)
};

PickledState pickle_state(const plan::StateDict& state);

}  // namespace trainio::format::torch
