#include "plan/accelerator_demand.hpp"

#include <cmath>

namespace trainio::plan {

double accelerator_demand(const config::Workload& w, const DatasetLayout& layout) {
  const double compute = w.train.computation_time.expected();
  if (compute <= 0) return 0;
  const auto samples = layout.num_samples(Split::train);
  const double mean_sample =
      samples ? static_cast<double>(layout.total_data_bytes(Split::train)) / static_cast<double>(samples) : 0;
  return mean_sample * static_cast<double>(w.reader.batch_size) / compute;
}

long predicted_accelerators(double bandwidth, double demand, double au_target) {
  if (demand <= 0 || au_target <= 0 || bandwidth <= 0) return 0;
  return static_cast<long>(std::floor(bandwidth / (demand * au_target) + 1e-9));
}

}  // namespace trainio::plan
