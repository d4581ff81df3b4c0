#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "engine/cache/cache_aware_order.hpp"
#include "unit/plan/npz_workload.hpp"

using namespace trainio;

namespace {

struct Resident {
  Resident(std::uint64_t files, const std::vector<std::uint64_t>& keys)
      : geometry{files, files * engine::kTierPageBytes, false},
        memory(engine::tier_segment_bytes(geometry) / 8 + 1),
        dir(memory.data(), geometry, engine::TierPolicy::lru, true) {
    std::uint64_t evictions = 0;
    engine::TierDirectory::Held held;
    for (const auto k : keys) {
      REQUIRE(dir.reserve(k, 1, false, [](std::uint64_t, std::uint32_t) {}, evictions, held));
      dir.commit(k);
      dir.release(k);
    }
  }
  engine::TierGeometry geometry;
  std::vector<std::uint64_t> memory;
  engine::TierDirectory dir;
};

}  // namespace

TEST_CASE("cache-aware order: every sample exactly once, resident ones first in each window, the cost counted",
          "[tier][plan]") {
  const auto w = test::npz_workload({"dataset.num_files_train=50", "dataset.num_samples_per_file=2", "reader.batch_size=4",
                                     "reader.sample_shuffle=seed", "reader.file_shuffle=seed"});
  const plan::DatasetLayout layout(w);
  for (const std::uint64_t window : {7u, 16u, 1000u}) {
    const plan::EpochPlan plan(layout, plan::Split::train, w, 4, 2, 0, 2, 42);
    const Resident tier(50, {1, 4, 9, 16, 25, 36, 49, 3});
    engine::CacheAwareOrder order(plan, layout, plan::Split::train, tier.dir, window);
    std::vector<plan::SampleRef> uniform, aware;
    for (std::uint64_t s = 0; s < plan.steps(); ++s)
      for (std::uint64_t k = 0; k < 4; ++k) {
        uniform.push_back(plan.sample(s, k));
        aware.push_back(order.sample(s, k));
      }
    // The same samples, each once.
    auto key = [](const plan::SampleRef& r) { return r.file * 2 + r.sample; };
    std::vector<std::uint64_t> a, b;
    for (const auto& r : uniform) a.push_back(key(r));
    for (const auto& r : aware) b.push_back(key(r));
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    CHECK(a == b);
    CHECK(std::adjacent_find(b.begin(), b.end()) == b.end());
    // Within each window, resident first, and each group in the uniform order.
    std::map<std::uint64_t, std::size_t> place;
    for (std::size_t i = 0; i < uniform.size(); ++i) place[key(uniform[i])] = i;
    std::uint64_t inversions = 0, moved = 0;
    for (std::size_t start = 0; start < aware.size(); start += window) {
      const std::size_t end = std::min<std::size_t>(aware.size(), start + window);
      bool seen_other = false;
      for (std::size_t i = start; i < end; ++i) {
        const bool resident = tier.dir.resident(aware[i].file);
        CHECK_FALSE((resident && seen_other));
        seen_other = seen_other || !resident;
        CHECK(place[key(aware[i])] >= start);
        CHECK(place[key(aware[i])] < end);
        if (place[key(aware[i])] != i) ++moved;
        for (std::size_t j = i + 1; j < end; ++j)
          if (place[key(aware[j])] < place[key(aware[i])]) ++inversions;
      }
    }
    metrics::TierStats stats;
    order.account(stats);
    const std::uint64_t n = aware.size();
    CHECK(stats.ordered_samples == n);
    CHECK(stats.order_pairs == n * (n - 1) / 2);
    CHECK(stats.order_inversions == inversions);
    CHECK(stats.order_moved == moved);
    CHECK(inversions > 0);
  }
}

TEST_CASE("cache-aware order: with nothing resident it is the uniform shuffle", "[tier][plan]") {
  const auto w = test::npz_workload({"dataset.num_files_train=20", "reader.batch_size=2", "reader.sample_shuffle=seed"});
  const plan::DatasetLayout layout(w);
  const plan::EpochPlan plan(layout, plan::Split::train, w, 2, 1, 0, 1, 7);
  const Resident tier(20, {});
  engine::CacheAwareOrder order(plan, layout, plan::Split::train, tier.dir, 8);
  for (std::uint64_t s = 0; s < plan.steps(); ++s)
    for (std::uint64_t k = 0; k < 2; ++k) CHECK(order.sample(s, k) == plan.sample(s, k));
  metrics::TierStats stats;
  order.account(stats);
  CHECK(stats.order_inversions == 0);
  CHECK(stats.order_moved == 0);
}
