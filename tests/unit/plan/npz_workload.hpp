#pragma once
// The workload the plan tests start from: PyTorch reading NPZ files, DLIO's defaults otherwise,
// with the test's overrides applied as on the command line.

#include <string>
#include <vector>

#include "config/load.hpp"

namespace trainio::test {

inline config::Workload npz_workload(const std::vector<std::string>& overrides) {
  return config::load_text("framework: pytorch\nreader:\n  data_loader: pytorch\ndataset:\n  format: npz\n", "t.yaml",
                           "t", overrides);
}

}  // namespace trainio::test
