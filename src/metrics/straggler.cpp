#include "metrics/straggler.hpp"

#include "metrics/summary.hpp"

namespace trainio::metrics {

Straggler find_straggler(const std::vector<RankFigures>& ranks) {
  Straggler s;
  if (ranks.size() < 2) return s;
  s.known = true;
  const RankFigures* worst = &ranks.front();
  double step_total = 0;
  for (const auto& r : ranks) {
    if (r.batch_wait > worst->batch_wait) worst = &r;  // the lowest rank on a tie
    step_total += r.batch_wait + r.compute + r.barrier;
  }
  const double others = static_cast<double>(ranks.size() - 1);
  for (const auto& r : ranks) {
    if (&r == worst) continue;
    s.others_batch_wait += r.batch_wait / others;
    s.others_barrier += r.barrier / others;
  }
  s.rank = worst->rank;
  s.host = worst->host;
  s.batch_wait = worst->batch_wait;
  const double excess = s.batch_wait - s.others_batch_wait;
  const double mean_step = step_total / static_cast<double>(ranks.size());
  s.held_others = excess > 0 && excess >= kStragglerExcessShare * mean_step && s.others_barrier >= kStragglerBarrierShare * excess;
  return s;
}

}  // namespace trainio::metrics
