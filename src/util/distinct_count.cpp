#include "util/distinct_count.hpp"

#include <cmath>

namespace trainio::util {

double DistinctCount::estimate() const {
  const double m = kRegisters;
  double sum = 0;
  int zeros = 0;
  for (const auto r : registers_) {
    sum += std::ldexp(1.0, -static_cast<int>(r));
    if (r == 0) ++zeros;
  }
  const double alpha = 0.7213 / (1.0 + 1.079 / m);
  const double raw = alpha * m * m / sum;
  // Small counts: linear counting over the empty registers is exact enough and unbiased.
  if (raw <= 2.5 * m && zeros > 0) return m * std::log(m / zeros);
  return raw;
}

}  // namespace trainio::util
