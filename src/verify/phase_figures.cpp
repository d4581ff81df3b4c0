#include "verify/phase_figures.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.hpp"

namespace trainio::verify {

namespace {

double seconds_of(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// DLIO's epoch value: the blocks' values weighted by their steps, over those that have one.
std::optional<double> step_weighted(const std::vector<Window>& blocks, std::optional<double> Window::*field) {
  double weighted = 0, steps = 0;
  for (const Window& b : blocks) {
    if (!(b.*field)) continue;
    weighted += static_cast<double>(b.steps) * *(b.*field);
    steps += static_cast<double>(b.steps);
  }
  if (steps > 0) return weighted / steps;
  return std::nullopt;
}

}  // namespace

Window window_of(const StepBlock& b, double duration, std::uint64_t batch, std::uint64_t s, std::uint64_t e, bool train) {
  Window w;
  const std::uint64_t n = b.load.n;
  w.steps = n;
  double excluded_proc = 0, excluded_compute = 0;
  std::uint64_t excluded = 0;
  if (n > s + e) {
    // The first s steps' load + compute, then the last e steps'.
    for (std::size_t i = 0; i < b.load.head.size(); ++i) {
      excluded_proc += b.load.head[i] + b.compute.head[i];
      excluded_compute += b.compute.head[i];
    }
    for (std::size_t i = 0; i < b.load.tail.size(); ++i) {
      excluded_proc += b.load.tail[i] + b.compute.tail[i];
      excluded_compute += b.compute.tail[i];
    }
    excluded = s + e;
  } else {
    w.degenerate = s + e > 0;
  }
  const std::uint64_t window_steps = n - excluded;
  const double window_time = duration - excluded_proc;
  const double window_compute = b.compute.sum - excluded_compute;
  if (window_time > 0) w.throughput = static_cast<double>(window_steps * batch) / window_time;
  const double per_batch = static_cast<double>(batch);
  if (train) {
    const bool window = !w.degenerate && window_steps > 0 && window_time > 0;
    if (window) w.au = window_compute / window_time;
    if (window && n >= 3) w.throughput_dlio = (static_cast<double>(n) - 2.0) * per_batch / window_time;
  } else if (n > 0 && duration > 0) {
    if (!w.degenerate && window_time > 0) w.au = window_compute / window_time;
    w.throughput_dlio = static_cast<double>(n) * per_batch / duration;
  }
  return w;
}

void PhaseTotals::add(const RankLine& rank, const PhaseLine& line, const StepPhase& steps) {
  const bool train = line.kind == "train";
  const std::uint64_t batch = train ? rank.batch_size : rank.batch_size_eval;
  const std::uint64_t s = rank.exclude_start, e = rank.exclude_end;
  const std::string where = fmt::format("rank {}, epoch {} {}", rank.rank, line.epoch, line.kind);
  if (steps.blocks.size() != line.blocks.size())
    throw data_error(fmt::format("{}: the step lists hold {} block(s), the records {}", where, steps.blocks.size(), line.blocks.size()));
  if (steps.whole.load.n != line.steps || steps.whole.compute.n != line.steps || steps.whole.barrier.n != line.steps)
    throw data_error(fmt::format("{}: the step lists hold {} load, {} compute and {} barrier values for the records' {} steps",
                                 where, steps.whole.load.n, steps.whole.compute.n, steps.whole.barrier.n, line.steps));
  RankPhase r;
  r.rank = rank.rank;
  r.host = rank.host_index;
  r.steps = line.steps;
  r.samples = line.samples;
  r.bytes_read = line.io.bytes_read();
  for (std::size_t i = 0; i < line.blocks.size(); ++i) {
    const Block& b = line.blocks[i];
    if (steps.blocks[i].load.n != b.steps)
      throw data_error(fmt::format("{}: block {} has {} steps in the lists, {} in the records", where, i + 1, steps.blocks[i].load.n, b.steps));
    r.blocks.push_back(window_of(steps.blocks[i], seconds_of(b.end_ns - b.start_ns), batch, s, e, train));
  }
  r.duration = seconds_of(line.end_ns - line.start_ns - line.paused_ns);
  const Window whole = window_of(steps.whole, r.duration, batch, s, e, train);
  r.throughput = whole.throughput;
  r.au = step_weighted(r.blocks, &Window::au);
  r.throughput_dlio = step_weighted(r.blocks, &Window::throughput_dlio);
  r.degenerate = whole.degenerate || std::any_of(r.blocks.begin(), r.blocks.end(), [](const Window& w) { return w.degenerate; });
  r.cpu_user = line.cpu_after.user - line.cpu_before.user - line.cpu_in_checkpoints.user;
  r.cpu_sys = line.cpu_after.sys - line.cpu_before.sys - line.cpu_in_checkpoints.sys;
  r.cpu_polling = line.cpu_polling;
  r.batch_wait = static_cast<double>(steps.whole.load.ns.sum()) * 1e-9;
  r.compute = static_cast<double>(steps.whole.compute.ns.sum()) * 1e-9;
  r.barrier = static_cast<double>(steps.whole.barrier.ns.sum()) * 1e-9;
  ranks.push_back(std::move(r));

  samples += line.samples;
  sample_bytes += line.sample_bytes;
  if (line.process_read_before && line.process_read_after) {
    process_read_bytes += *line.process_read_after - *line.process_read_before;
    ++process_read_known;
  }
  if (line.device_read_before && line.device_read_after) {
    device_read_bytes += *line.device_read_after - *line.device_read_before;
    ++device_read_known;
  }
  io.merge(line.io);
  tier.merge(line.tier);
  if (line.readers) {
    ++readers_known;
    reader_threads += line.reader_threads;
    max_in_flight += line.max_in_flight;
    reader_busy_ns += line.busy_ns;
    reader_cpu_ns += line.cpu_ns;
    reader_at_max_ns += line.at_max_ns;
    if (line.run_delay_ns) {
      ++run_delay_known;
      reader_run_delay_ns += *line.run_delay_ns;
    }
  }
  if (line.host_before && line.host_after && line.host_after->second > line.host_before->second) {
    host_idle += line.host_after->first - std::min(line.host_after->first, line.host_before->first);
    host_total += line.host_after->second - line.host_before->second;
  }
  wait.merge(steps.whole.load.ns);
  compute.merge(steps.whole.compute.ns);
  barrier.merge(steps.whole.barrier.ns);
  sample_read.merge(line.sample_read);
}

std::uint64_t PhaseTotals::steps() const {
  std::uint64_t n = 0;
  for (const auto& r : ranks) n = std::max(n, r.steps);
  return n;
}

double PhaseTotals::duration() const {
  double d = 0;
  for (const auto& r : ranks) d = std::max(d, r.duration);
  return d;
}

std::optional<double> PhaseTotals::au() const {
  double sum = 0;
  for (const auto& r : ranks) {
    if (!r.au) return std::nullopt;
    sum += *r.au;
  }
  return ranks.empty() ? std::nullopt : std::optional<double>(sum / static_cast<double>(ranks.size()));
}

std::optional<double> PhaseTotals::throughput_dlio() const {
  double sum = 0;
  for (const auto& r : ranks) {
    if (!r.throughput_dlio) return std::nullopt;
    sum += *r.throughput_dlio;
  }
  return ranks.empty() ? std::nullopt : std::optional<double>(sum);
}

double PhaseTotals::sum(double RankPhase::*field) const {
  double v = 0;
  for (const auto& r : ranks) v += r.*field;
  return v;
}

double PhaseTotals::au_min() const {
  double v = 1e300;
  for (const auto& r : ranks) v = std::min(v, r.au.value_or(0));
  return ranks.empty() ? 0 : v;
}

double PhaseTotals::au_max() const {
  double v = 0;
  for (const auto& r : ranks) v = std::max(v, r.au.value_or(0));
  return v;
}

bool PhaseTotals::degenerate() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const RankPhase& r) { return r.degenerate; });
}

const RankPhase& PhaseTotals::slowest() const {
  const RankPhase* s = &ranks.front();
  for (const auto& r : ranks)
    if (r.own() > s->own()) s = &r;
  return *s;
}

const RankPhase& PhaseTotals::fastest() const {
  const RankPhase* f = &ranks.front();
  for (const auto& r : ranks)
    if (r.own() < f->own()) f = &r;
  return *f;
}

double PhaseTotals::first_done_bandwidth() const {
  double first = 1e300;
  for (const auto& r : ranks) first = std::min(first, r.duration);
  if (!(first > 0 && first < 1e300)) return 0;
  double done = 0;
  for (const auto& r : ranks) done += static_cast<double>(r.bytes_read) * std::min(1.0, first / r.duration);
  return done / first;
}

double PhaseTotals::last_done_bandwidth() const {
  const double last = duration();
  double total = 0;
  for (const auto& r : ranks) total += static_cast<double>(r.bytes_read);
  return last > 0 ? total / last : 0;
}

StragglerFigures straggler_of(const std::vector<RankPhase>& ranks) {
  StragglerFigures s;
  if (ranks.size() < 2) return s;
  s.known = true;
  std::size_t worst = 0;
  double total = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].batch_wait > ranks[worst].batch_wait) worst = i;
    total += ranks[i].batch_wait + ranks[i].compute + ranks[i].barrier;
  }
  const double n = static_cast<double>(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i == worst) continue;
    s.others_batch_wait += ranks[i].batch_wait / (n - 1);
    s.others_barrier += ranks[i].barrier / (n - 1);
  }
  s.rank = ranks[worst].rank;
  s.host = ranks[worst].host;
  s.batch_wait = ranks[worst].batch_wait;
  // docs/metrics.md: an excess of at least 5% of the mean step time, half of it or more spent by
  // the others at the barrier.
  const double excess = s.batch_wait - s.others_batch_wait;
  s.held_others = excess > 0 && excess >= 0.05 * (total / n) && s.others_barrier >= 0.5 * excess;
  return s;
}

CacheVerdict cache_verdict(const PageCache& c) {
  CacheVerdict v;
  const std::uint64_t buffered = c.read_bytes - std::min(c.read_bytes, c.direct_bytes);
  if (c.read_bytes == 0) {
    v.method = "none";
    return v;
  }
  if (buffered == 0) {
    v.verdict = "bypassed";
    v.resident_fraction = 0.0;
    v.method = c.remote_bytes == c.read_bytes ? "object_store" : c.remote_bytes > 0 ? "object_store+o_direct" : "o_direct";
    return v;
  }
  v.method = c.direct_bytes > 0 ? c.method + "+o_direct" : c.method;
  if (c.probes == 0 || c.failed_probes > c.probes) return v;
  const std::uint64_t missing = c.probed_pages - c.resident_pages;
  if (missing > 0 && 2 * c.stayed_out_pages > missing && 10 * missing > c.probed_pages) return v;
  const double buffered_share = static_cast<double>(buffered) / static_cast<double>(c.read_bytes);
  const double fraction = static_cast<double>(c.resident_pages) / static_cast<double>(c.probed_pages) * buffered_share;
  v.resident_fraction = fraction;
  v.verdict = fraction >= 0.9 ? "page_cache" : fraction <= 0.1 ? "storage" : "mixed";
  return v;
}

}  // namespace trainio::verify
