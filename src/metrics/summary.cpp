#include "metrics/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "mpi/comm.hpp"
#include "util/clock.hpp"

namespace trainio::metrics {

namespace {

Histogram reduce(const Histogram& h, const mpi::Comm& comm) {
  std::vector<std::uint64_t> words = h.to_words();
  const std::uint64_t local_min = h.count() ? h.min() : ~0ULL;  // an empty histogram has no minimum
  words = comm.sum(words);
  // min and max do not add up: reduce them on their own.
  words[Histogram::kBuckets + 2] = comm.min(local_min);
  words[Histogram::kBuckets + 3] = comm.max(h.max());
  return Histogram::from_words(words);
}

AccessProfile reduce(const AccessProfile& p, const mpi::Comm& comm) {
  AccessProfile out;
  std::vector<std::uint64_t> counts = {p.reads, p.writes, p.bytes_read, p.bytes_written, p.sequential_reads,
                                       p.consecutive_reads, p.sequential_writes, p.consecutive_writes,
                                       p.metadata_ops, p.metadata_ns, p.data_ns, p.other_sizes};
  counts.insert(counts.end(), p.read_sizes.begin(), p.read_sizes.end());
  counts.insert(counts.end(), p.write_sizes.begin(), p.write_sizes.end());
  counts = comm.sum(counts);
  std::size_t i = 0;
  for (std::uint64_t* field : {&out.reads, &out.writes, &out.bytes_read, &out.bytes_written, &out.sequential_reads,
                               &out.consecutive_reads, &out.sequential_writes, &out.consecutive_writes,
                               &out.metadata_ops, &out.metadata_ns, &out.data_ns, &out.other_sizes})
    *field = counts[i++];
  for (auto& b : out.read_sizes) b = counts[i++];
  for (auto& b : out.write_sizes) b = counts[i++];
  // Distinct files: the register-wise maximum of every rank's estimator.
  const auto& regs = p.files.registers();
  const auto merged = comm.max(std::vector<std::uint64_t>(regs.begin(), regs.end()));
  for (std::size_t r = 0; r < merged.size(); ++r) out.files.registers()[r] = static_cast<std::uint8_t>(merged[r]);
  // Common sizes: every rank's table, merged on rank 0 (only its reports print them).
  std::vector<double> table(2 * AccessProfile::kCommonSlots, 0.0);
  for (std::size_t k = 0; k < p.common.size(); ++k) {
    table[2 * k] = static_cast<double>(p.common[k].first);
    table[2 * k + 1] = static_cast<double>(p.common[k].second);
  }
  const auto all = comm.gather(table);
  AccessProfile sizes;
  for (std::size_t k = 0; k + 1 < all.size(); k += 2)
    if (all[k + 1] > 0) sizes.count_size(static_cast<std::uint64_t>(all[k]), static_cast<std::uint64_t>(all[k + 1]));
  out.common = sizes.common;
  out.other_sizes += sizes.other_sizes;
  return out;
}

PageCacheStats reduce(const PageCacheStats& c, const mpi::Comm& comm) {
  const auto sums = comm.sum(std::vector<std::uint64_t>{c.read_bytes, c.direct_bytes, c.remote_bytes, c.probes,
                                                       c.probed_pages, c.resident_pages, c.stayed_out_pages,
                                                       c.failed_probes});
  PageCacheStats out;
  std::size_t i = 0;
  for (std::uint64_t* field : {&out.read_bytes, &out.direct_bytes, &out.remote_bytes, &out.probes, &out.probed_pages,
                               &out.resident_pages, &out.stayed_out_pages, &out.failed_probes})
    *field = sums[i++];
  out.probe_error = comm.max(c.probe_error);
  out.method = comm.max(c.method);
  return out;
}

RequestStats reduce(const RequestStats& r, const mpi::Comm& comm) {
  RequestStats out;
  if (comm.max(r.requests()) == 0) return out;  // no object store in this run: one reduction, not four
  std::vector<std::uint64_t> counts(r.by_kind.begin(), r.by_kind.end());
  std::vector<std::uint64_t> statuses = r.by_status;
  statuses.resize(RequestStats::kStatuses);  // a rank without requests has none
  counts.insert(counts.end(), statuses.begin(), statuses.end());
  std::vector<std::uint64_t> retried = r.retries_by_status;
  retried.resize(RequestStats::kStatuses);
  counts.insert(counts.end(), retried.begin(), retried.end());
  counts.push_back(r.retries);
  counts.push_back(r.bytes);
  counts = comm.sum(counts);
  std::size_t i = 0;
  for (auto& c : out.by_kind) c = counts[i++];
  out.by_status.resize(RequestStats::kStatuses);
  for (auto& c : out.by_status) c = counts[i++];
  out.retries_by_status.resize(RequestStats::kStatuses);
  for (auto& c : out.retries_by_status) c = counts[i++];
  out.retries = counts[i++];
  out.bytes = counts[i++];
  out.first_byte_ns = reduce(r.first_byte_ns, comm);
  out.total_ns = reduce(r.total_ns, comm);
  // Every rank has the same endpoints; a rank that used fewer has shorter lists.
  const auto endpoints = static_cast<std::size_t>(comm.max(static_cast<std::uint64_t>(r.by_endpoint.size())));
  std::vector<metrics::EndpointStats> mine = r.by_endpoint;
  mine.resize(endpoints);
  std::vector<std::uint64_t> sums;
  for (const auto& e : mine) sums.insert(sums.end(), {e.count, e.retries, e.bytes});
  sums = comm.sum(sums);
  out.by_endpoint.resize(endpoints);
  for (std::size_t e = 0; e < endpoints; ++e) {
    out.by_endpoint[e].count = sums[3 * e];
    out.by_endpoint[e].retries = sums[3 * e + 1];
    out.by_endpoint[e].bytes = sums[3 * e + 2];
    out.by_endpoint[e].first_byte_ns = reduce(mine[e].first_byte_ns, comm);
    out.by_endpoint[e].total_ns = reduce(mine[e].total_ns, comm);
  }
  return out;
}

IoRecorder reduce(const IoRecorder& io, const mpi::Comm& comm) {
  IoRecorder out;
  out.requests() = reduce(io.requests(), comm);
  out.page_cache() = reduce(io.page_cache(), comm);
  out.data_files() = reduce(io.data_files(), comm);
  {
    const ReadDepth& d = io.read_depth();
    std::vector<std::uint64_t> v(d.calls.begin(), d.calls.end());
    v.insert(v.end(), d.ns.begin(), d.ns.end());
    v = comm.sum(v);
    for (std::size_t b = 0; b < ReadDepth::kBands; ++b) {
      out.read_depth().calls[b] = v[b];
      out.read_depth().ns[b] = v[ReadDepth::kBands + b];
    }
  }
  out.other_files() = reduce(io.other_files(), comm);
  for (int i = 0; i < storage::kOpCount; ++i) {
    const auto op = static_cast<storage::Op>(i);
    const OpStats& s = io.op(op);
    OpStats r;
    const auto sums = comm.sum(std::vector<std::uint64_t>{s.count, s.bytes, s.ns});
    r.count = sums[0];
    r.bytes = sums[1];
    r.ns = sums[2];
    if (r.count > 0) r.latency = reduce(s.latency, comm);
    out.set(op, r);
  }
  return out;
}

TierStats reduce(const TierStats& t, const mpi::Comm& comm) {
  TierStats out;
  std::vector<std::uint64_t> mine;
  for (std::uint64_t* c : const_cast<TierStats&>(t).counters()) mine.push_back(*c);
  const auto sums = comm.sum(mine);
  auto counters = out.counters();
  for (std::size_t i = 0; i < counters.size(); ++i) *counters[i] = sums[i];
  out.backing_cache = reduce(t.backing_cache, comm);
  out.tier_cache = reduce(t.tier_cache, comm);
  return out;
}

// Every rank's figures travel to rank 0 only: the other ranks keep no straggler view.
void straggler_view(const ReadPhase& p, const mpi::Comm& comm, PhaseSummary& s) {
  constexpr std::size_t kFields = 13;
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();  // a figure without a value
  const auto all = comm.gather({p.block.duration, static_cast<double>(p.samples), static_cast<double>(p.io.bytes_read()),
                                    p.block.throughput_dlio.value_or(kNone), p.block.au.value_or(kNone), p.cpu_user, p.cpu_sys,
                                    static_cast<double>(comm.host_index()), p.cpu_polling, p.block.throughput,
                                    static_cast<double>(p.wait_ns.sum()) * 1e-9, static_cast<double>(p.compute_ns.sum()) * 1e-9,
                                    static_cast<double>(p.barrier_ns.sum()) * 1e-9});
  for (std::size_t r = 0; r * kFields < all.size(); ++r) {
    const double* f = &all[r * kFields];
    RankFigures rf;
    rf.rank = static_cast<int>(r);
    rf.duration = f[0];
    rf.samples = static_cast<std::uint64_t>(f[1]);
    rf.bytes_read = static_cast<std::uint64_t>(f[2]);
    if (!std::isnan(f[3])) rf.throughput_dlio = f[3];
    rf.throughput = f[9];
    if (!std::isnan(f[4])) rf.au = f[4];
    rf.cpu_user = f[5];
    rf.cpu_sys = f[6];
    rf.host = static_cast<int>(f[7]);
    s.cpu_user += rf.cpu_user;
    s.cpu_sys += rf.cpu_sys;
    rf.cpu_polling = f[8];
    rf.batch_wait = f[10];
    rf.compute = f[11];
    rf.barrier = f[12];
    s.cpu_polling += rf.cpu_polling;
    s.ranks.push_back(rf);
  }
  s.rank_count = static_cast<int>(s.ranks.size());
  double first = 1e300, last = 0;
  for (const auto& r : s.ranks) {
    if (r.rank == 0 || r.own() > s.slowest.own()) s.slowest = r;
    if (r.rank == 0 || r.own() < s.fastest.own()) s.fastest = r;
    first = std::min(first, r.duration);
    last = std::max(last, r.duration);
    const auto h = static_cast<std::size_t>(r.host);
    if (h >= s.hosts.size()) s.hosts.resize(h + 1);
    HostFigures& host = s.hosts[h];
    ++host.ranks;
    host.slowest = std::max(host.slowest, r.duration);
    host.samples += r.samples;
    host.bytes_read += r.bytes_read;
  }
  if (first > 0 && first < 1e300) {
    double done = 0;
    for (const auto& r : s.ranks) done += static_cast<double>(r.bytes_read) * std::min(1.0, first / r.duration);
    s.first_done_bandwidth = done / first;
  }
  double total = 0;
  for (const auto& r : s.ranks) total += static_cast<double>(r.bytes_read);
  s.last_done_bandwidth = last > 0 ? total / last : 0;
  s.straggler = find_straggler(s.ranks);
}

PhaseSummary reduce(const ReadPhase& p, const mpi::Comm& comm) {
  PhaseSummary s;
  const BlockResult& b = p.block;
  s.steps = comm.max(b.steps);
  s.duration = comm.max(b.duration);
  const auto sums = comm.sum(std::vector<double>{b.au.value_or(0), b.throughput_dlio.value_or(0), b.throughput,
                                                 b.degenerate ? 1.0 : 0.0, b.au ? 1.0 : 0.0, b.throughput_dlio ? 1.0 : 0.0});
  // A mean or sum over some of the ranks would pass for one over all: a value only when every rank has one.
  const double ranks = comm.size();
  if (sums[4] == ranks) s.au = sums[0] / ranks;
  if (sums[5] == ranks) s.throughput_dlio = sums[1];
  s.throughput = sums[2];
  s.degenerate = sums[3] > 0;
  s.au_min = comm.min(b.au.value_or(0));
  s.au_max = comm.max(b.au.value_or(0));
  const auto counts = comm.sum(std::vector<std::uint64_t>{p.samples, p.sample_bytes, p.io.bytes_read(), p.storage_read_bytes,
                                                         p.device_read_bytes, p.storage_read_known ? 1u : 0u,
                                                         p.device_read_known ? 1u : 0u});
  s.samples = counts[0];
  s.sample_bytes = counts[1];
  s.bytes_read = counts[2];
  s.storage_read_bytes = counts[3];
  s.device_read_bytes = counts[4];
  s.storage_read_known = counts[5] == static_cast<std::uint64_t>(comm.size());
  s.device_read_known = counts[6] > 0;
  s.read_bandwidth = s.duration > 0 ? static_cast<double>(s.bytes_read) / s.duration : 0;
  s.wait_ns = reduce(p.wait_ns, comm);
  s.sample_ns = reduce(p.sample_ns, comm);
  s.compute_ns = reduce(p.compute_ns, comm);
  s.barrier_ns = reduce(p.barrier_ns, comm);
  s.io = reduce(p.io, comm);
  {
    const auto& rd = p.readers;
    const bool host = p.host_cpu_before && p.host_cpu_after && p.host_cpu_after->total > p.host_cpu_before->total;
    const auto r = comm.sum(std::vector<std::uint64_t>{
        rd ? 1u : 0u, rd ? rd->threads : 0, rd ? rd->max_in_flight : 0, rd ? static_cast<std::uint64_t>(rd->busy_ns) : 0,
        rd ? static_cast<std::uint64_t>(rd->cpu_ns) : 0, rd ? static_cast<std::uint64_t>(rd->at_max_ns) : 0,
        host ? p.host_cpu_after->idle - std::min(p.host_cpu_after->idle, p.host_cpu_before->idle) : 0,
        host ? p.host_cpu_after->total - p.host_cpu_before->total : 0,
        rd && rd->run_delay_ns >= 0 ? 1u : 0u, rd && rd->run_delay_ns >= 0 ? static_cast<std::uint64_t>(rd->run_delay_ns) : 0});
    s.readers_known = r[0] == static_cast<std::uint64_t>(comm.size());
    s.reader_threads = r[1];
    s.reader_max_in_flight = r[2];
    s.reader_busy_ns = r[3];
    s.reader_cpu_ns = r[4];
    s.reader_at_max_ns = r[5];
    s.host_ticks_idle = r[6];
    s.host_ticks_total = r[7];
    s.run_delay_known = r[8] == static_cast<std::uint64_t>(comm.size());
    s.reader_run_delay_ns = r[9];
  }
  s.tier = reduce(p.tier, comm);
  s.tiered = s.tier.hit_samples + s.tier.miss_samples > 0;
  straggler_view(p, comm, s);
  return s;
}

// What stays of a phase once the run's totals have taken what they need of it.
void keep_figures_only(PhaseSummary& p) {
  for (Histogram* h : {&p.wait_ns, &p.sample_ns, &p.compute_ns, &p.barrier_ns}) h->keep_reported_quantiles();
  p.io.keep_figures_only();
  std::vector<RankFigures>().swap(p.ranks);
}

}  // namespace

const EpochSummary& RunSummarizer::add(const EpochRecord& mine) {
  EpochSummary s = summarize_epoch(mine, comm_);
  if (flush_overlap_) s.flush_overlap = summarize_flush_overlap(mine.train, comm_);
  run_.io.merge(s.train.io);
  run_.train_wait_ns.merge(s.train.wait_ns);
  run_.train_sample_ns.merge(s.train.sample_ns);
  run_.train_compute_ns.merge(s.train.compute_ns);
  run_.train_barrier_ns.merge(s.train.barrier_ns);
  if (rows_ && comm_.is_root()) {
    rows_->add(s.epoch, "train", s.train);
    if (s.evaluated) rows_->add(s.epoch, "eval", s.eval);
  }
  keep_figures_only(s.train);
  if (s.evaluated) {
    run_.io.merge(s.eval.io);
    keep_figures_only(s.eval);
  }
  if (!comm_.is_root()) run_.epochs.clear();  // only the latest, to hand back
  run_.epochs.push_back(std::move(s));
  return run_.epochs.back();
}

const CheckpointSummary& RunSummarizer::add(const CheckpointRecord& mine) {
  CheckpointSummary s = summarize_checkpoint(mine, comm_);
  run_.io.merge(s.io);
  s.io.keep_figures_only();
  if (!comm_.is_root()) run_.checkpoints.clear();
  run_.checkpoints.push_back(std::move(s));
  return run_.checkpoints.back();
}

RunSummary RunSummarizer::finish(const RankRecord& mine) {
  RunSummary out = std::move(run_);
  run_ = RunSummary();
  if (!comm_.is_root()) {
    out.epochs.clear();
    out.checkpoints.clear();
  }
  out.ranks = comm_.size();
  out.hosts = comm_.num_hosts();
  out.stopped_by_time_limit = mine.stopped_by_time_limit;  // the same on every rank (agreed)
  out.stop_signal = mine.stop_signal;
  out.stop_epoch = mine.stop_epoch;
  out.stop_phase = mine.stop_phase;
  out.start = mine.start;
  out.end = mine.end;
  out.startup = summarize_startup(mine, comm_);
  const GenerateRecord& g = mine.generate;
  out.generate.ran = comm_.max(static_cast<std::uint64_t>(g.ran)) > 0;
  if (out.generate.ran) {
    out.generate.seconds = comm_.max(g.seconds);
    const auto sums = comm_.sum(std::vector<std::uint64_t>{g.files_written, g.files_kept, g.io.bytes_written()});
    out.generate.files_written = sums[0];
    out.generate.files_kept = sums[1];
    out.generate.bytes_written = sums[2];
    out.generate.write_bandwidth =
        out.generate.seconds > 0 ? static_cast<double>(out.generate.bytes_written) / out.generate.seconds : 0;
    out.generate.durable_seconds = comm_.max(g.durable_seconds);
    out.generate.durable_bandwidth = out.generate.durable_seconds > 0
                                         ? static_cast<double>(out.generate.bytes_written) / out.generate.durable_seconds
                                         : 0;
    out.generate.io = reduce(g.io, comm_);
    out.io.merge(out.generate.io);
  }
  out.staging = reduce(mine.staging, comm_);
  out.staging_seconds = comm_.max(mine.staging_seconds);
  out.io.merge(reduce(mine.staging_io, comm_));
  return out;
}

StartupSummary summarize_startup(const RankRecord& mine, const mpi::Comm& comm) {
  StartupSummary s;
  const auto& start = mine.process_start_ns;
  s.known = comm.min(static_cast<std::int64_t>(start.has_value())) == 1;
  if (!s.known) return s;
  s.first_process_start_us = comm.min(util::wall_us_of(*start));
  const auto load = std::find_if(mine.checkpoints.begin(), mine.checkpoints.end(), [](const CheckpointTimeline& c) {
    return c.kind == CheckpointTimeline::Kind::load && c.first_read_end_ns != 0;
  });
  const bool read = load != mine.checkpoints.end();
  s.ranks_loaded = static_cast<int>(comm.sum(std::vector<std::uint64_t>{read ? 1u : 0u})[0]);
  if (s.ranks_loaded == 0) return s;
  const double seconds = read ? util::ns_to_s(load->first_read_end_ns - *start) : 0;
  s.first_read_max = comm.max(read ? seconds : -1e300);
  s.first_read_min = comm.min(read ? seconds : 1e300);
  s.first_read_slowest_rank = static_cast<int>(
      comm.min(static_cast<std::int64_t>(read && seconds == s.first_read_max ? comm.rank() : comm.size())));
  return s;
}

CheckpointSummary summarize_checkpoint(const CheckpointRecord& c, const mpi::Comm& comm) {
  CheckpointSummary s;
  s.kind = c.kind;
  s.index = c.index;
  s.epoch = c.epoch;
  s.step = c.step;
  s.folder = c.folder;
  s.start = c.start;
  s.end = c.end;
  s.duration = comm.max(c.seconds);
  s.collective = comm.max(c.collective_seconds);
  const bool moved = c.file_bytes > 0;
  s.fastest = comm.min(moved ? c.io_seconds : 1e300);
  const auto sums = comm.sum(std::vector<std::uint64_t>{c.files, c.tensor_bytes, c.file_bytes, moved ? 1u : 0u,
                                                       c.storage_read_bytes, c.storage_read_known ? 1u : 0u});
  s.files = sums[0];
  s.tensor_bytes = sums[1];
  s.file_bytes = sums[2];
  s.ranks_with_data = static_cast<int>(sums[3]);
  s.storage_read_bytes = sums[4];
  s.storage_read_known = sums[5] == static_cast<std::uint64_t>(comm.size());
  s.bandwidth = s.duration > 0 ? static_cast<double>(s.file_bytes) / s.duration : 0;
  const double mine = moved && c.io_seconds > 0 ? static_cast<double>(c.file_bytes) / c.io_seconds : 0;
  s.rank_bandwidth_min = comm.min(moved ? mine : 1e300);
  s.rank_bandwidth_max = comm.max(mine);
  if (s.ranks_with_data == 0) s.fastest = s.rank_bandwidth_min = 0;
  s.slowest_rank_seconds = comm.max(c.io_seconds);
  s.slowest_rank = static_cast<int>(
      comm.min(static_cast<std::int64_t>(c.io_seconds == s.slowest_rank_seconds ? comm.rank() : comm.size())));
  s.slowest_rank_file_bytes = comm.sum(std::vector<std::uint64_t>{comm.rank() == s.slowest_rank ? c.file_bytes : 0})[0];
  s.slowest_rank_bandwidth = s.duration > 0 ? static_cast<double>(s.slowest_rank_file_bytes) / s.duration : 0;
  s.async = summarize_async_save(c, comm);
  if (c.kind == CheckpointTimeline::Kind::load) s.reshard = summarize_reshard(c, comm);
  s.io = reduce(c.io, comm);
  return s;
}

EpochSummary summarize_epoch(const EpochRecord& e, const mpi::Comm& comm) {
  EpochSummary es;
  es.epoch = e.epoch;
  es.start = e.start;
  es.end = e.end;
  es.train = reduce(e.train, comm);
  es.evaluated = e.evaluated;
  if (e.evaluated) es.eval = reduce(e.eval, comm);
  return es;
}

bool served_from_cache(const PhaseSummary& p) {
  return page_cache_verdict(p.io.page_cache()).verdict == CacheVerdict::page_cache;
}

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double stdev_of(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const double m = mean_of(v);
  double acc = 0;
  for (const double x : v) acc += (x - m) * (x - m);
  return std::sqrt(acc / static_cast<double>(v.size()));
}

}  // namespace trainio::metrics
