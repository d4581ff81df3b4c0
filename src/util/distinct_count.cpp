#include "util/distinct_count.hpp"

#include <cmath>
#include <stdexcept>

namespace trainio::util {

namespace {
const DistinctCount::Registers kNone{};
}

DistinctCount& DistinctCount::operator=(const DistinctCount& other) {
  if (this == &other) return *this;
  registers_ = other.registers_ ? std::make_unique<Registers>(*other.registers_) : nullptr;
  kept_ = other.kept_;
  return *this;
}

void DistinctCount::allocate() {
  // A count that kept its estimate only cannot count on: a caller that tries is a bug.
  if (kept_) throw std::logic_error("a distinct count that kept only its estimate cannot count on");
  registers_ = std::make_unique<Registers>();
}

const DistinctCount::Registers& DistinctCount::registers() const {
  if (kept_) throw std::logic_error("a distinct count that kept only its estimate has no registers");
  return registers_ ? *registers_ : kNone;
}

void DistinctCount::merge(const DistinctCount& other) {
  if (kept_ || other.kept_) throw std::logic_error("cannot merge a distinct count that kept only its estimate");
  if (!other.registers_) return;
  const Registers& theirs = *other.registers_;
  Registers& mine = registers();
  for (int i = 0; i < kRegisters; ++i)
    if (theirs[i] > mine[i]) mine[i] = theirs[i];
}

void DistinctCount::keep_estimate_only() {
  if (kept_) return;
  kept_ = estimate();
  registers_.reset();
}

double DistinctCount::estimate() const {
  if (kept_) return *kept_;
  if (!registers_) return 0;
  const double m = kRegisters;
  double sum = 0;
  int zeros = 0;
  for (const auto r : *registers_) {
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
