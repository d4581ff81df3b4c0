#include "engine/cache/cache_aware_order.hpp"

#include <algorithm>

namespace trainio::engine {

CacheAwareOrder::CacheAwareOrder(const plan::EpochPlan& plan, const plan::DatasetLayout& layout, plan::Split split,
                                 const TierDirectory& tier, std::uint64_t window)
    : plan_(plan),
      layout_(layout),
      split_(split),
      tier_(tier),
      window_(std::max<std::uint64_t>(1, window)),
      positions_(plan.steps() * plan.batch_size()) {}

std::uint64_t CacheAwareOrder::window_for(std::uint64_t batch, std::uint64_t batches_ahead) {
  return std::max<std::uint64_t>(65536, batch * (batches_ahead + 2) * 2);
}

plan::SampleRef CacheAwareOrder::sample(std::uint64_t step, std::uint64_t slot) {
  const std::uint64_t batch = plan_.batch_size();
  const std::uint64_t position = step * batch + slot;
  const Window& w = window(position / window_);
  const std::uint64_t uniform = position / window_ * window_ + w.order[position % window_];
  return plan_.sample(uniform / batch, uniform % batch);
}

const CacheAwareOrder::Window& CacheAwareOrder::window(std::uint64_t index) {
  Window& w = windows_[index % windows_.size()];
  if (w.made.load(std::memory_order_acquire) == index) return w;
  const std::lock_guard lock(making_);
  if (w.made.load(std::memory_order_relaxed) != index) make(index, w);
  return w;
}

void CacheAwareOrder::make(std::uint64_t index, Window& w) {
  const std::uint64_t batch = plan_.batch_size();
  const std::uint64_t first = index * window_;
  const std::uint64_t size = std::min(window_, positions_ - first);
  // Residency read once per position (it changes as other readers fill the tier).
  resident_.assign(size, 0);
  std::uint64_t residents = 0;
  for (std::uint64_t k = 0; k < size; ++k) {
    const plan::SampleRef ref = plan_.sample((first + k) / batch, (first + k) % batch);
    resident_[k] = tier_.resident(layout_.file_key(split_, ref.file)) ? 1 : 0;
    residents += resident_[k];
  }
  // Resident first, then the rest, both in the uniform order. Each resident sample passes the
  // non-resident ones before it: that many pairs change order.
  w.order.resize(size);
  std::uint64_t front = 0, back = residents, passed = 0;
  for (std::uint64_t k = 0; k < size; ++k) {
    const std::uint64_t to = resident_[k] ? front++ : back++;
    w.order[to] = static_cast<std::uint32_t>(k);
    if (resident_[k]) inversions_ += passed;
    else ++passed;
    if (to != k) ++moved_;
  }
  made_ += size;
  w.made.store(index, std::memory_order_release);
}

void CacheAwareOrder::account(metrics::TierStats& stats) const {
  // Over the windows made: a phase the time limit ended early ordered only those.
  stats.order_inversions += inversions_;
  stats.order_moved += moved_;
  stats.ordered_samples += made_;
  stats.order_pairs += made_ > 0 ? made_ * (made_ - 1) / 2 : 0;
}

}  // namespace trainio::engine
