#pragma once
// The inferred workload as a DLIO-style workload file: sections in DLIO's order, each value
// followed by a comment giving its evidence and confidence, and a header listing the traces and
// what they cannot tell.

#include <string>
#include <vector>

#include "capture/infer.hpp"

namespace trainio::capture {

std::string workload_yaml(const Inference& inference, const std::vector<std::string>& traces);

}  // namespace trainio::capture
