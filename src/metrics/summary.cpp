#include "metrics/summary.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "mpi/comm.hpp"

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

IoRecorder reduce(const IoRecorder& io, const mpi::Comm& comm) {
  IoRecorder out;
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

PhaseSummary reduce(const ReadPhase& p, const mpi::Comm& comm) {
  PhaseSummary s;
  const BlockResult& b = p.block;
  s.steps = comm.max(b.steps);
  s.duration = comm.max(b.duration);
  const auto sums = comm.sum(std::vector<double>{b.au, b.throughput_dlio, b.throughput, b.degenerate ? 1.0 : 0.0});
  s.au = sums[0] / comm.size();
  s.throughput_dlio = sums[1];
  s.throughput = sums[2];
  s.degenerate = sums[3] > 0;
  s.au_min = comm.min(b.au);
  s.au_max = comm.max(b.au);
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
  s.io = reduce(p.io, comm);
  return s;
}

}  // namespace

RunSummary summarize(const RankRecord& mine, const mpi::Comm& comm) {
  RunSummary out;
  out.ranks = comm.size();
  out.hosts = comm.num_hosts();
  out.stopped_by_time_limit = mine.stopped_by_time_limit;  // the same on every rank (agreed)
  out.start = mine.start;
  out.end = mine.end;
  const GenerateRecord& g = mine.generate;
  out.generate.ran = comm.max(static_cast<std::uint64_t>(g.ran)) > 0;
  if (out.generate.ran) {
    out.generate.seconds = comm.max(g.seconds);
    const auto sums = comm.sum(std::vector<std::uint64_t>{g.files_written, g.files_kept, g.io.bytes_written()});
    out.generate.files_written = sums[0];
    out.generate.files_kept = sums[1];
    out.generate.bytes_written = sums[2];
    out.generate.write_bandwidth =
        out.generate.seconds > 0 ? static_cast<double>(out.generate.bytes_written) / out.generate.seconds : 0;
  }
  for (const EpochRecord& e : mine.epochs) out.epochs.push_back(summarize_epoch(e, comm));
  for (const CheckpointRecord& c : mine.checkpoints) out.checkpoints.push_back(summarize_checkpoint(c, comm));
  return out;
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
  const bool moved = c.file_bytes > 0;
  s.fastest = comm.min(moved ? c.seconds : 1e300);
  const auto sums = comm.sum(std::vector<std::uint64_t>{c.files, c.tensor_bytes, c.file_bytes, moved ? 1u : 0u,
                                                       c.storage_read_bytes, c.storage_read_known ? 1u : 0u});
  s.files = sums[0];
  s.tensor_bytes = sums[1];
  s.file_bytes = sums[2];
  s.ranks_with_data = static_cast<int>(sums[3]);
  s.storage_read_bytes = sums[4];
  s.storage_read_known = sums[5] == static_cast<std::uint64_t>(comm.size());
  s.bandwidth = s.duration > 0 ? static_cast<double>(s.file_bytes) / s.duration : 0;
  const double mine = moved && c.seconds > 0 ? static_cast<double>(c.file_bytes) / c.seconds : 0;
  s.rank_bandwidth_min = comm.min(moved ? mine : 1e300);
  s.rank_bandwidth_max = comm.max(mine);
  if (s.ranks_with_data == 0) s.fastest = s.rank_bandwidth_min = 0;
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
  if (p.bytes_read < (16u << 20)) return false;
  const bool known = p.storage_read_known || p.device_read_known;
  const std::uint64_t from_storage = std::max(p.storage_read_bytes, p.device_read_bytes);
  return known && static_cast<double>(from_storage) < 0.1 * static_cast<double>(p.bytes_read);
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
