#pragma once
// The workloads compiled into the binary from workloads/*.yaml (see cmake/embed_workloads.cmake).

#include <string>
#include <vector>

namespace trainio::config {

struct ShippedWorkload {
  const char* name;
  const char* yaml;
};

const std::vector<ShippedWorkload>& shipped_workloads();

// The workload's description: the comment lines that open its file, joined into one text.
std::string description_of(const ShippedWorkload& w);

const ShippedWorkload* find_shipped(const std::string& name);

}  // namespace trainio::config
