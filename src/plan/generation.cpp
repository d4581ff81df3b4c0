#include "plan/generation.hpp"

#include <algorithm>
#include <queue>

namespace trainio::plan {

FileShare::FileShare(const DatasetLayout& layout, int rank, int ranks) {
  const std::uint64_t total = layout.total_files();
  const auto r = static_cast<std::uint64_t>(ranks);
  const auto me = static_cast<std::uint64_t>(rank);
  if (!layout.sizes_vary() || ranks == 1 || total > kMaxFilesDealtByBytes) {
    first_ = me;
    stride_ = r;
    count_ = strided_count(total, me, r);
    return;
  }
  dealt_by_bytes_ = true;
  std::vector<std::uint64_t>& mine = dealt_;
  struct Item {
    std::uint64_t bytes, index;
  };
  std::vector<Item> items(total);
  for (std::uint64_t k = 0; k < total; ++k) items[k] = {layout.file_by_global_index(k).data_bytes(), k};
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.index < b.index;
  });
  // (bytes so far, rank): the least loaded rank, ties to the lower rank.
  using Load = std::pair<std::uint64_t, std::uint64_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (std::uint64_t i = 0; i < r; ++i) loads.push({0, i});
  for (const Item& item : items) {
    auto [bytes, owner] = loads.top();
    loads.pop();
    if (owner == me) mine.push_back(item.index);
    loads.push({bytes + item.bytes, owner});
  }
  std::sort(mine.begin(), mine.end());
}

}  // namespace trainio::plan
