#pragma once
// `trainio validate`: every file of the dataset is checked, in parallel across ranks, to be a
// complete, well-formed file of its format holding the samples the workload expects.

#include <string>
#include <vector>

#include "config/workload.hpp"
#include "mpi/comm.hpp"
#include "plan/layout.hpp"

namespace trainio::engine {

// Problems listed at most: a dataset of millions of missing files is a count and a sample, not
// millions of lines gathered on rank 0.
constexpr std::size_t kProblemsListed = 100;

struct ValidationReport {
  std::uint64_t files_checked = 0;     // all ranks
  std::uint64_t problem_count = 0;     // all ranks
  std::vector<std::string> problems;   // "path: what is wrong", on rank 0, sorted: the first kProblemsListed
};

// Collective.
ValidationReport validate_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm,
                                  bool progress);

}  // namespace trainio::engine
