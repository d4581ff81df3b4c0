#include "report/phase_json.hpp"

#include "report/async_json.hpp"
#include "report/reshard_json.hpp"

#include <algorithm>

#include "metrics/bottleneck.hpp"
#include "storage/io_observer.hpp"
#include "storage/page_residency.hpp"
#include "util/units.hpp"

namespace trainio::report {

using json = nlohmann::ordered_json;

namespace {


json profile_json(const metrics::AccessProfile& a) {
  json reads = json::object(), writes = json::object();
  for (int b = 0; b < metrics::kSizeBuckets; ++b) {
    reads[metrics::size_bucket_name(b)] = a.read_sizes[static_cast<std::size_t>(b)];
    writes[metrics::size_bucket_name(b)] = a.write_sizes[static_cast<std::size_t>(b)];
  }
  json common = json::array();
  for (const auto& [size, calls] : a.top_sizes(4)) common.push_back({{"bytes", size}, {"calls", calls}});
  return {{"reads", a.reads},
          {"writes", a.writes},
          {"bytes_read", a.bytes_read},
          {"bytes_written", a.bytes_written},
          {"read_size_histogram", reads},
          {"write_size_histogram", writes},
          {"sequential_reads", a.sequential_reads},
          {"consecutive_reads", a.consecutive_reads},
          {"sequential_writes", a.sequential_writes},
          {"consecutive_writes", a.consecutive_writes},
          {"metadata_calls", a.metadata_ops},
          {"metadata_seconds", static_cast<double>(a.metadata_ns) * 1e-9},
          {"data_seconds", static_cast<double>(a.data_ns) * 1e-9},
          {"distinct_files_estimate", std::llround(a.files.estimate())},
          {"common_access_sizes", common}};
}

json stragglers_json(const metrics::PhaseSummary& p, const RunContext& context) {
  if (p.hosts.empty()) return nullptr;
  // Per host: its ranks' samples and bytes, and its slowest rank's time.
  json per_host = json::array();
  for (std::size_t h = 0; h < p.hosts.size(); ++h) {
    const metrics::HostFigures& host = p.hosts[h];
    per_host.push_back({{"host", h < context.hosts.size() ? context.hosts[h].hostname : std::to_string(h)},
                        {"ranks", host.ranks},
                        {"slowest_rank_seconds", host.slowest},
                        {"samples", host.samples},
                        {"bytes_read", host.bytes_read},
                        {"read_bytes_per_second", host.slowest > 0 ? static_cast<double>(host.bytes_read) / host.slowest : 0.0}});
  }
  json straggler = nullptr;
  if (p.straggler.known) {
    const auto h = static_cast<std::size_t>(p.straggler.host);
    straggler = {{"rank", p.straggler.rank},
                 {"host", h < context.hosts.size() ? context.hosts[h].hostname : std::to_string(h)},
                 {"held_others", p.straggler.held_others},
                 {"batch_wait_seconds", p.straggler.batch_wait},
                 {"others_batch_wait_seconds", p.straggler.others_batch_wait},
                 {"others_barrier_seconds", p.straggler.others_barrier}};
  }
  return {{"slowest_rank", p.slowest.rank},
          {"slowest_rank_seconds", p.slowest.own()},
          {"fastest_rank", p.fastest.rank},
          {"fastest_rank_seconds", p.fastest.own()},
          {"straggler", straggler},
          {"first_done_read_bytes_per_second", p.first_done_bandwidth},
          {"last_done_read_bytes_per_second", p.last_done_bandwidth},
          {"hosts", per_host}};
}

json client_cost_json(const metrics::PhaseSummary& p) {
  const double cpu = p.cpu_user + p.cpu_sys;
  const double gib = static_cast<double>(p.bytes_read) / util::kGiB;
  // Reading's cost leaves out the training loop's polling for batches: CPU a training framework's
  // loop, which blocks, would not spend, and which only bounds how late a batch is noticed.
  return {{"cpu_user_seconds", p.cpu_user},
          {"cpu_sys_seconds", p.cpu_sys},
          {"cpu_polling_seconds", p.cpu_polling},
          {"cpu_seconds_per_GiB_read", gib > 0 ? std::max(0.0, cpu - p.cpu_polling) / gib : 0.0},
          {"cpu_cores_busy", p.duration > 0 ? cpu / p.duration : 0.0}};
}

// Where a rank's step time went, summed over the phase and averaged over the ranks.
json step_breakdown_json(const metrics::PhaseSummary& p, int ranks) {
  const double per_rank = 1e-9 / std::max(1, ranks);
  return {{"batch_wait", p.wait_ns.sum() * per_rank},
          {"compute", p.compute_ns.sum() * per_rank},
          {"barrier", p.barrier_ns.sum() * per_rank}};
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// What limited the phase, and the measured evidence (docs/metrics.md, "The bottleneck verdict").
json bottleneck_json(const metrics::PhaseSummary& p) {
  const metrics::BottleneckEvidence e = metrics::bottleneck_evidence(p);
  const metrics::BottleneckVerdict v = metrics::decide_bottleneck(e);
  json bands = json::array();
  for (std::size_t b = 0; b < metrics::ReadDepth::kBands; ++b)
    if (e.depth.calls[b] > 0)
      bands.push_back({{"depth_from", metrics::ReadDepth::kLowest[b]},
                       {"calls", e.depth.calls[b]},
                       {"mean_seconds", static_cast<double>(e.depth.ns[b]) * 1e-9 / static_cast<double>(e.depth.calls[b])}});
  json evidence = {{"batch_wait_share", v.batch_wait_share},
                   {"compute_share", v.compute_share},
                   {"barrier_share", v.barrier_share},
                   {"page_cache", e.cache_verdict},
                   {"reader_threads", e.readers_known ? json(e.reader_threads) : json(nullptr)},
                   {"max_reads_in_flight", e.readers_known ? json(e.max_in_flight) : json(nullptr)},
                   {"reader_busy_seconds", e.readers_known ? json(e.reader_busy) : json(nullptr)},
                   {"reader_cpu_seconds", e.readers_known ? json(e.reader_cpu) : json(nullptr)},
                   {"reader_run_delay_seconds", opt(e.reader_run_delay)},
                   {"reader_busy_share", opt(v.reader_busy_share)},
                   {"reader_cpu_share", opt(v.reader_cpu_share)},
                   {"reader_cpu_and_run_delay_per_busy_second", opt(v.reader_cpu_and_run_delay_per_busy)},
                   {"storage_wait_share", opt(v.storage_wait_share)},
                   {"at_max_in_flight_share", opt(v.at_max_share)},
                   {"read_latency_by_depth", bands},
                   {"host_cpu_idle_share", opt(e.host_idle)},
                   {"cpu_seconds", e.cpu},
                   {"cpu_polling_seconds", e.cpu_polling}};
  if (!v.cpu_burner.empty()) evidence["cpu_burned_by"] = v.cpu_burner;
  return {{"verdict", v.verdict}, {"reason", v.reason}, {"evidence", evidence}};
}

}  // namespace

json latency_json(const metrics::Histogram& h) {
  auto s = [](std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; };
  return {{"count", h.count()},     {"mean", h.mean() * 1e-9},    {"p50", s(h.quantile(0.50))},
          {"p90", s(h.quantile(0.90))}, {"p99", s(h.quantile(0.99))}, {"p99_9", s(h.quantile(0.999))},
          {"max", s(h.max())}};
}

json io_json(const metrics::IoRecorder& io) {
  json o = json::object();
  for (int i = 0; i < storage::kOpCount; ++i) {
    const auto op = static_cast<storage::Op>(i);
    const auto& s = io.op(op);
    if (s.count == 0) continue;
    o[storage::op_name(op)] = {{"count", s.count}, {"bytes", s.bytes}, {"seconds", static_cast<double>(s.ns) * 1e-9},
                               {"latency_seconds", latency_json(s.latency)}};
  }
  return o;
}

json requests_json(const metrics::RequestStats& r) {
  json kinds = json::object(), statuses = json::object();
  for (int k = 0; k < storage::kRequestKinds; ++k)
    if (r.by_kind[static_cast<std::size_t>(k)] > 0) kinds[storage::request_name(static_cast<storage::Request>(k))] = r.by_kind[static_cast<std::size_t>(k)];
  for (std::size_t s = 0; s < r.by_status.size(); ++s)
    if (r.by_status[s] > 0) statuses[s == 0 ? "no_answer" : std::to_string(s)] = r.by_status[s];
  json retried = json::object();
  for (std::size_t s = 0; s < r.retries_by_status.size(); ++s)
    if (r.retries_by_status[s] > 0) retried[s == 0 ? "no_answer" : std::to_string(s)] = r.retries_by_status[s];
  // In storage_options.endpoint_url's order: entry i is the i-th endpoint listed.
  json endpoints = json::array();
  for (std::size_t i = 0; i < r.by_endpoint.size(); ++i) {
    const auto& e = r.by_endpoint[i];
    endpoints.push_back({{"endpoint", i},
                         {"count", e.count},
                         {"retries", e.retries},
                         {"bytes", e.bytes},
                         {"first_byte_seconds", latency_json(e.first_byte_ns)},
                         {"total_seconds", latency_json(e.total_ns)}});
  }
  return {{"count", r.requests()},
          {"by_kind", kinds},
          {"by_status", statuses},
          {"retries", r.retries},
          {"retries_by_status", retried},
          {"bytes", r.bytes},
          {"first_byte_seconds", latency_json(r.first_byte_ns)},
          {"total_seconds", latency_json(r.total_ns)},
          {"by_endpoint", endpoints}};
}

json maybe(const std::optional<double>& v, double scale) { return v ? json(*v * scale) : json(nullptr); }

json characterization_json(const metrics::IoRecorder& io) {
  return {{"data_files", profile_json(io.data_files())}, {"other_files", profile_json(io.other_files())}};
}

// What the reads hit (docs/storage.md): the verdict, and the evidence it rests on.
json page_cache_json(const metrics::PageCacheStats& c) {
  const metrics::PageCacheVerdict v = metrics::page_cache_verdict(c);
  const std::uint64_t page = storage::page_bytes();
  return {{"verdict", metrics::verdict_name(v.verdict)},
          {"resident_fraction", v.resident_fraction ? json(*v.resident_fraction) : json(nullptr)},
          {"method", v.method},
          {"reason", v.reason.empty() ? json(nullptr) : json(v.reason)},
          {"probes", c.probes},
          {"probed_bytes", c.probed_pages * page},
          {"resident_bytes", c.resident_pages * page},
          {"read_bytes", c.read_bytes},
          {"direct_bytes", c.direct_bytes}};
}

json tier_json(const metrics::TierStats& t) {
  auto ratio = [](std::uint64_t part, std::uint64_t whole) { return whole > 0 ? json(static_cast<double>(part) / static_cast<double>(whole)) : json(nullptr); };
  json order = nullptr;
  if (t.ordered_samples > 0)
    order = {{"samples", t.ordered_samples},
             {"kendall_tau_distance", ratio(t.order_inversions, t.order_pairs)},
             {"moved_fraction", ratio(t.order_moved, t.ordered_samples)},
             {"pairs_reordered", t.order_inversions}};
  return {{"hit_ratio_samples", ratio(t.hit_samples, t.hit_samples + t.miss_samples)},
          {"hit_ratio_bytes", ratio(t.hit_bytes, t.hit_bytes + t.miss_bytes)},
          {"hit_samples", t.hit_samples},
          {"miss_samples", t.miss_samples},
          {"hit_bytes", t.hit_bytes},
          {"miss_bytes", t.miss_bytes},
          {"backing_read_bytes", t.backing_read_bytes},
          {"tier_read_bytes", t.tier_read_bytes},
          {"tier_write_bytes", t.tier_write_bytes},
          {"fills", t.fills},
          {"fill_seconds", static_cast<double>(t.fill_ns) * 1e-9},
          {"evictions", t.evictions},
          {"misses_while_filled_elsewhere", t.busy},
          {"misses_not_admitted", t.not_admitted},
          {"backing_page_cache", page_cache_json(t.backing_cache)},
          {"tier_page_cache", page_cache_json(t.tier_cache)},
          {"order", order}};
}

json phase_json(const metrics::PhaseSummary& p, const RunContext& context) {
  json o = {{"steps_per_rank", p.steps},
          {"duration_seconds", p.duration},
          {"au_percentage", maybe(p.au, 100)},
          {"au_min_rank_percentage", p.au ? json(p.au_min * 100) : json(nullptr)},
          {"au_max_rank_percentage", p.au ? json(p.au_max * 100) : json(nullptr)},
          {"throughput_samples_per_second", p.throughput},
          {"dlio_throughput_samples_per_second", maybe(p.throughput_dlio)},
          {"too_few_steps_to_exclude", p.degenerate},
          {"samples", p.samples},
          {"sample_bytes", p.sample_bytes},
          {"bytes_read", p.bytes_read},
          {"read_bytes_per_second", p.read_bandwidth},
          {"storage_read_bytes", p.storage_read_known ? json(p.storage_read_bytes) : json(nullptr)},
          {"device_read_bytes", p.device_read_known ? json(p.device_read_bytes) : json(nullptr)},
          {"served_from_page_cache", metrics::served_from_cache(p)},
          {"page_cache", page_cache_json(p.io.page_cache())},
          {"batch_wait_seconds", latency_json(p.wait_ns)},
          {"compute_seconds", latency_json(p.compute_ns)},
          {"barrier_seconds", latency_json(p.barrier_ns)},
          {"step_seconds_per_rank", step_breakdown_json(p, context.ranks)},
          {"sample_read_seconds", latency_json(p.sample_ns)},
          {"io", io_json(p.io)},
          {"characterization", characterization_json(p.io)},
          {"stragglers", stragglers_json(p, context)},
          {"client_cost", client_cost_json(p)},
          {"bottleneck", bottleneck_json(p)}};
  if (p.io.requests().requests() > 0) o["requests"] = requests_json(p.io.requests());
  if (p.tiered) o["cache"] = tier_json(p.tier);
  return o;
}

json checkpoint_json(const metrics::CheckpointSummary& c) {
  json o = {{"kind", c.kind == metrics::CheckpointRecord::Kind::save ? "save" : "load"},
          {"index", c.index},
          {"epoch", c.epoch},
          {"step", c.step},
          {"folder", c.folder},
          {"start", c.start},
          {"end", c.end},
          {"duration_seconds", c.duration},
          {"fastest_rank_seconds", c.fastest},
          {"collective_seconds", c.collective},
          {"files", c.files},
          {"tensor_bytes", c.tensor_bytes},
          {"file_bytes", c.file_bytes},
          {"bytes_per_second", c.bandwidth},
          {"rank_bytes_per_second_min", c.rank_bandwidth_min},
          {"rank_bytes_per_second_max", c.rank_bandwidth_max},
          {"ranks_with_data", c.ranks_with_data},
          {"slowest_rank", c.slowest_rank},
          {"slowest_rank_seconds", c.slowest_rank_seconds},
          {"slowest_rank_file_bytes", c.slowest_rank_file_bytes},
          {"slowest_rank_bytes_per_second", c.slowest_rank_bandwidth},
          {"storage_read_bytes", c.kind == metrics::CheckpointRecord::Kind::load && c.storage_read_known
                                     ? json(c.storage_read_bytes)
                                     : json(nullptr)},
          {"page_cache", c.kind == metrics::CheckpointRecord::Kind::load ? page_cache_json(c.io.page_cache()) : json(nullptr)},
          {"io", io_json(c.io)},
          {"characterization", characterization_json(c.io)}};
  if (c.io.requests().requests() > 0) o["requests"] = requests_json(c.io.requests());
  if (c.async.on) o["async"] = async_save_json(c);
  if (c.reshard.on) o["reshard"] = reshard_json(c.reshard);
  return o;
}

}  // namespace trainio::report
