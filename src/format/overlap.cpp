#include "format/overlap.hpp"

namespace trainio::format {

OverlapChoice::Way OverlapChoice::next() const {
  if (forced_) return *forced_;
  if (done_ < 2 * kTrial) return done_ % 2 == 0 ? Way::beside : Way::after;
  const double after = estimate_[index(Way::after)], beside = estimate_[index(Way::beside)];
  return after > 0 && beside > 0 && after < beside ? Way::after : Way::beside;
}

void OverlapChoice::record(std::uint64_t bytes, std::int64_t ns) {
  if (forced_) return;
  if (done_ < 2 * kTrial) {
    if (done_ >= 2) {  // the first of each way warms up (caches, the overlap's thread)
      trial_ns_[index(next())] += ns;
      trial_bytes_[index(next())] += bytes;
    }
    if (done_ == 2 * kTrial - 1) {
      for (int i = 0; i < 2; ++i) {
        if (trial_bytes_[i] > 0) {
          const double measured = static_cast<double>(trial_ns_[i]) / static_cast<double>(trial_bytes_[i]);
          estimate_[i] = estimate_[i] == 0 ? measured : (estimate_[i] + measured) / 2;
        }
        trial_ns_[i] = 0;
        trial_bytes_[i] = 0;
      }
    }
  }
  done_ = (done_ + 1) % kCycle;
}

}  // namespace trainio::format
