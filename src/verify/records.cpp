#include "verify/records.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <fstream>

#include "util/error.hpp"
#include "util/open_files.hpp"
#include "verify/json_view.hpp"

namespace trainio::verify {

namespace {

std::uint64_t count_of(const JsonValue& o, const char* key) { return o.at(key).u64(); }

std::array<std::uint64_t, 10> ten_counts(const JsonValue& a) {
  std::array<std::uint64_t, 10> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = a.at(i).u64();
  return out;
}

std::optional<std::uint64_t> maybe_count(const JsonValue& v) {
  return v.is_null() ? std::nullopt : std::optional<std::uint64_t>(v.u64());
}

Latency latency_of(const JsonValue& h) {
  Latency l;
  for (const auto& b : h.at("buckets")) l.add_bucket(b.at(0).u64(), b.at(1).u64(), b.at(2).u64());
  l.add_totals(count_of(h, "count"), count_of(h, "sum"), count_of(h, "min"), count_of(h, "max"));
  return l;
}

Profile profile_of(const JsonValue& p) {
  Profile out;
  out.reads = count_of(p, "reads");
  out.writes = count_of(p, "writes");
  out.bytes_read = count_of(p, "bytes_read");
  out.bytes_written = count_of(p, "bytes_written");
  out.read_sizes = ten_counts(p.at("read_sizes"));
  out.write_sizes = ten_counts(p.at("write_sizes"));
  out.sequential_reads = count_of(p, "sequential_reads");
  out.consecutive_reads = count_of(p, "consecutive_reads");
  out.sequential_writes = count_of(p, "sequential_writes");
  out.consecutive_writes = count_of(p, "consecutive_writes");
  out.metadata_calls = count_of(p, "metadata_calls");
  out.metadata_ns = count_of(p, "metadata_ns");
  out.data_ns = count_of(p, "data_ns");
  out.files_low = out.files_high = p.at("distinct_files_estimate").f64();
  for (const auto& c : p.at("common_sizes")) out.sizes[c.at(0).u64()] += c.at(1).u64();
  out.other_sizes = count_of(p, "other_sizes");
  return out;
}

PageCache page_cache_of(const JsonValue& c) {
  PageCache out;
  out.read_bytes = count_of(c, "read_bytes");
  out.direct_bytes = count_of(c, "direct_bytes");
  out.remote_bytes = count_of(c, "remote_bytes");
  out.probes = count_of(c, "probes");
  out.probed_pages = count_of(c, "probed_pages");
  out.resident_pages = count_of(c, "resident_pages");
  out.stayed_out_pages = count_of(c, "stayed_out_pages");
  out.failed_probes = count_of(c, "failed_probes");
  out.probe_error = count_of(c, "probe_error");
  out.method = c.at("method").str();
  out.page_bytes = count_of(c, "page_bytes");
  return out;
}

Io io_of(const JsonValue& o) {
  Io io;
  o.at("ops").members([&](std::string_view name, const JsonValue& op) {
    io.ops[std::string(name)] = {count_of(op, "count"), count_of(op, "bytes"), count_of(op, "ns"), latency_of(op.at("latency_ns"))};
  });
  if (o.contains("data_files")) io.data = profile_of(o.at("data_files"));  // absent: no call on such files
  if (o.contains("other_files")) io.other = profile_of(o.at("other_files"));
  io.page_cache = page_cache_of(o.at("page_cache"));
  if (o.contains("requests")) {
    const JsonValue& r = o.at("requests");
    r.at("by_kind").members([&](std::string_view k, const JsonValue& v) { io.requests.by_kind[std::string(k)] = v.u64(); });
    r.at("by_status").members([&](std::string_view k, const JsonValue& v) { io.requests.by_status[std::string(k)] = v.u64(); });
    io.requests.retries = count_of(r, "retries");
    io.requests.bytes = count_of(r, "bytes");
    io.requests.first_byte = latency_of(r.at("first_byte_ns"));
    io.requests.total = latency_of(r.at("total_ns"));
    if (r.contains("retries_by_status"))
      r.at("retries_by_status").members([&](std::string_view k, const JsonValue& v) { io.requests.retries_by_status[std::string(k)] = v.u64(); });
    if (r.contains("by_endpoint"))
      for (const auto& e : r.at("by_endpoint"))
        io.requests.by_endpoint.push_back({count_of(e, "count"), count_of(e, "retries"), count_of(e, "bytes"),
                                           latency_of(e.at("first_byte_ns")), latency_of(e.at("total_ns"))});
  }
  if (o.contains("read_depth"))
    for (const auto& band : o.at("read_depth")) {
      auto& d = io.read_depth[band.at(0).u64()];
      d.first += band.at(1).u64();
      d.second += band.at(2).u64();
    }
  return io;
}

Tier tier_of(const JsonValue& t) {
  Tier out;
  t.members([&](std::string_view k, const JsonValue& v) {
    if (v.is_unsigned()) out.counters[std::string(k)] = v.u64();
  });
  out.backing = page_cache_of(t.at("backing_page_cache"));
  out.tier = page_cache_of(t.at("tier_page_cache"));
  return out;
}

Cpu cpu_of(const JsonValue& c) { return {c.at("user").f64(), c.at("sys").f64()}; }

PhaseLine phase_of(const JsonValue& o) {
  PhaseLine p;
  p.kind = o.at("kind").str();
  p.epoch = count_of(o, "epoch");
  p.start = o.at("start").str();
  p.end = o.at("end").str();
  p.start_ns = o.at("start_ns").i64();
  p.end_ns = o.at("end_ns").i64();
  p.paused_ns = o.at("paused_ns").i64();
  p.first_step = count_of(o, "first_step");
  p.steps = count_of(o, "steps");
  for (const auto& b : o.at("blocks"))
    p.blocks.push_back({b.at("start").str(), b.at("end").str(), b.at("start_ns").i64(),
                        b.at("end_ns").i64(), count_of(b, "steps")});
  p.samples = count_of(o, "samples");
  p.sample_bytes = count_of(o, "sample_bytes");
  p.sample_read = latency_of(o.at("sample_read_ns"));
  p.io = io_of(o.at("io"));
  if (!o.at("tier").is_null()) p.tier = tier_of(o.at("tier"));  // null: no cache tier
  const JsonValue& k = o.at("kernel");
  p.process_read_before = maybe_count(k.at("process_read_bytes").at(0));
  p.process_read_after = maybe_count(k.at("process_read_bytes").at(1));
  p.device_read_before = maybe_count(k.at("device_read_bytes").at(0));
  p.device_read_after = maybe_count(k.at("device_read_bytes").at(1));
  const JsonValue& c = o.at("cpu");
  p.cpu_before = cpu_of(c.at("before"));
  p.cpu_after = cpu_of(c.at("after"));
  p.cpu_in_checkpoints = cpu_of(c.at("in_checkpoints"));
  p.cpu_polling = c.at("polling").f64();
  if (o.contains("readers") && !o.at("readers").is_null()) {
    const JsonValue& r = o.at("readers");
    p.readers = true;
    p.reader_threads = count_of(r, "threads");
    p.max_in_flight = count_of(r, "max_in_flight");
    p.busy_ns = count_of(r, "busy_ns");
    p.cpu_ns = count_of(r, "cpu_ns");
    p.at_max_ns = count_of(r, "at_max_ns");
    if (r.contains("run_delay_ns") && !r.at("run_delay_ns").is_null()) p.run_delay_ns = count_of(r, "run_delay_ns");
  }
  if (o.contains("host_cpu") && !o.at("host_cpu").is_null()) {
    const JsonValue& h = o.at("host_cpu");
    p.host_before = std::pair{h.at("before").at(0).u64(), h.at("before").at(1).u64()};
    p.host_after = std::pair{h.at("after").at(0).u64(), h.at("after").at(1).u64()};
  }
  return p;
}

CheckpointLine checkpoint_of(const JsonValue& o) {
  CheckpointLine c;
  c.kind = o.at("kind").str();
  c.index = count_of(o, "index");
  c.block = count_of(o, "block");
  c.epoch = count_of(o, "epoch");
  c.step = count_of(o, "step");
  c.folder = o.at("folder").str();
  c.start = o.at("start").str();
  c.end = o.at("end").str();
  c.seconds = o.at("seconds").f64();
  c.io_seconds = o.at("io_seconds").f64();
  c.collective_seconds = o.at("collective_seconds").f64();
  c.files = count_of(o, "files");
  c.tensor_bytes = count_of(o, "tensor_bytes");
  c.file_bytes = count_of(o, "file_bytes");
  const JsonValue& k = o.at("kernel").at("process_read_bytes");
  c.process_read_before = maybe_count(k.at(0));
  c.process_read_after = maybe_count(k.at(1));
  c.first_read_end_ns = o.contains("first_read_end_ns") ? o.at("first_read_end_ns").i64() : 0;
  c.io = io_of(o.at("io"));
  return c;
}

int method_rank(const std::string& m) { return m == "mincore" ? 2 : m == "cachestat" ? 1 : 0; }

}  // namespace

void OpTotals::merge(const OpTotals& o) {
  count += o.count;
  bytes += o.bytes;
  ns += o.ns;
  latency.merge(o.latency);
}

void Profile::merge(const Profile& o) {
  reads += o.reads;
  writes += o.writes;
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  for (std::size_t i = 0; i < read_sizes.size(); ++i) {
    read_sizes[i] += o.read_sizes[i];
    write_sizes[i] += o.write_sizes[i];
  }
  sequential_reads += o.sequential_reads;
  consecutive_reads += o.consecutive_reads;
  sequential_writes += o.sequential_writes;
  consecutive_writes += o.consecutive_writes;
  metadata_calls += o.metadata_calls;
  metadata_ns += o.metadata_ns;
  data_ns += o.data_ns;
  files_low = std::max(files_low, o.files_low);
  files_high += o.files_high;
  for (const auto& [size, calls] : o.sizes) sizes[size] += calls;
  other_sizes += o.other_sizes;
}

void PageCache::merge(const PageCache& o) {
  read_bytes += o.read_bytes;
  direct_bytes += o.direct_bytes;
  remote_bytes += o.remote_bytes;
  probes += o.probes;
  probed_pages += o.probed_pages;
  resident_pages += o.resident_pages;
  stayed_out_pages += o.stayed_out_pages;
  failed_probes += o.failed_probes;
  probe_error = std::max(probe_error, o.probe_error);
  if (method_rank(o.method) > method_rank(method)) method = o.method;
  page_bytes = o.page_bytes;
}

void Requests::merge(const Requests& o) {
  for (const auto& [k, v] : o.by_kind) by_kind[k] += v;
  for (const auto& [k, v] : o.by_status) by_status[k] += v;
  for (const auto& [k, v] : o.retries_by_status) retries_by_status[k] += v;
  retries += o.retries;
  bytes += o.bytes;
  first_byte.merge(o.first_byte);
  total.merge(o.total);
  if (by_endpoint.size() < o.by_endpoint.size()) by_endpoint.resize(o.by_endpoint.size());
  for (std::size_t i = 0; i < o.by_endpoint.size(); ++i) by_endpoint[i].merge(o.by_endpoint[i]);
}

void EndpointRequests::merge(const EndpointRequests& o) {
  count += o.count;
  retries += o.retries;
  bytes += o.bytes;
  first_byte.merge(o.first_byte);
  total.merge(o.total);
}

std::uint64_t Io::bytes_read() const {
  std::uint64_t n = 0;
  for (const char* op : {"read", "touch"})
    if (const auto it = ops.find(op); it != ops.end()) n += it->second.bytes;
  return n;
}

std::uint64_t Io::bytes_written() const {
  const auto it = ops.find("write");
  return it == ops.end() ? 0 : it->second.bytes;
}

void Io::merge(const Io& o) {
  for (const auto& [name, op] : o.ops) ops[name].merge(op);
  data.merge(o.data);
  other.merge(o.other);
  page_cache.merge(o.page_cache);
  requests.merge(o.requests);
  for (const auto& [depth, d] : o.read_depth) {
    read_depth[depth].first += d.first;
    read_depth[depth].second += d.second;
  }
}

void Tier::merge(const Tier& o) {
  for (const auto& [k, v] : o.counters) counters[k] += v;
  backing.merge(o.backing);
  tier.merge(o.tier);
}

std::uint64_t Tier::operator[](const std::string& name) const {
  const auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

struct RecordsReader::State {
  std::string path;
  std::ifstream in;
  std::string text;
  JsonDoc doc;  // reused line after line
  std::uint64_t number = 0;
  bool ended = false;
  std::function<void(const RecordVisitor&)> hand_over;
  Error damaged(const std::string& what) const {
    return data_error(fmt::format("the run's records '{}' are damaged at line {}: {}", path, number, what),
                      "the records are the evidence of the figures: a damaged file cannot be verified");
  }
};

RecordsReader::RecordsReader(const std::string& path) : state_(new State) {
  state_->path = path;
  state_->in.open(path);
  if (!state_->in) {
    const int error_number = errno;
    delete state_;
    if (!util::absent(error_number))
      throw io_error(fmt::format("cannot open the run's records '{}': {}", path, std::strerror(error_number)));
    throw data_error(fmt::format("the run's records '{}' are missing", path),
                     "every run since records exist writes one per rank: this folder's run was cut short, made by an "
                     "older trainio, or the file was removed");
  }
}

RecordsReader::~RecordsReader() { delete state_; }

bool RecordsReader::peek() {
  if (waiting_) return true;
  State& st = *state_;
  if (!std::getline(st.in, st.text)) {
    if (!st.ended)
      throw data_error(fmt::format("the run's records '{}' end at line {} without their closing line (cut short)", st.path, st.number),
                       "the records are the evidence of the figures: a file cut short cannot be verified");
    return false;
  }
  ++st.number;
  if (st.ended) throw st.damaged("a line after the closing one");
  epoch_ = 0;
  // Parsed first, handed over after: what the visitor throws is its own error, not the file's.
  try {
    st.doc.parse(st.text);
    const JsonValue o = st.doc.root();
    const std::string kind = o.at("record").str();
    if (st.number == 1 && kind != "rank") throw st.damaged("the first line is not the rank's");
    if (kind == "rank") {
      const RankLine r{o.at("rank").i32(), o.at("ranks").i32(), o.at("host_index").i32(),
                       o.at("hostname").str(), count_of(o, "batch_size"), count_of(o, "batch_size_eval"),
                       count_of(o, "exclude_start_steps"), count_of(o, "exclude_end_steps")};
      st.hand_over = [r](const RecordVisitor& v) { if (v.rank) v.rank(r); };
    } else if (kind == "phase") {
      PhaseLine p = phase_of(o);
      epoch_ = p.epoch;
      st.hand_over = [p = std::move(p)](const RecordVisitor& v) { if (v.phase) v.phase(p); };
    } else if (kind == "checkpoint") {
      st.hand_over = [c = checkpoint_of(o)](const RecordVisitor& v) { if (v.checkpoint) v.checkpoint(c); };
    } else if (kind == "generate") {
      // Records written before generation synced its own files have no durable time: the writes'.
      const double seconds = o.at("seconds").f64();
      const GenerateLine g{seconds, o.contains("durable_seconds") ? o.at("durable_seconds").f64() : seconds, count_of(o, "files_written"),
                           count_of(o, "files_kept"), io_of(o.at("io"))};
      st.hand_over = [g](const RecordVisitor& v) { if (v.generate) v.generate(g); };
    } else if (kind == "staging") {
      const StagingLine s{o.at("seconds").f64(), tier_of(o.at("tier")), io_of(o.at("io"))};
      st.hand_over = [s](const RecordVisitor& v) { if (v.staging) v.staging(s); };
    } else if (kind == "end") {
      st.ended = true;
      EndLine e{o.at("stopped_by_time_limit").boolean(), !o.contains("complete") || o.at("complete").boolean(),
                o.contains("stop_signal") ? o.at("stop_signal").i32() : 0, {}, ""};
      if (const JsonValue it = o.find("process_start_ns"); it.valid() && !it.is_null()) {
        e.process_start_ns = it.i64();
        e.process_start = o.at("process_start").str();
      }
      st.hand_over = [e](const RecordVisitor& v) { if (v.end) v.end(e); };
    } else if (kind == "failover") {
      const FailoverLine f{o.at("previous_results").str(), o.at("previous_end").str()};
      st.hand_over = [f](const RecordVisitor& v) { if (v.failover) v.failover(f); };
    } else if (kind == "async_save" || kind == "async_overlap") {
      // The line itself, valid until the next is parsed: after it has been handed over.
      st.hand_over = [kind, o](const RecordVisitor& v) { if (v.async) v.async(kind, o); };
    } else if (kind == "reshard_load") {
      st.hand_over = [o](const RecordVisitor& v) { if (v.reshard) v.reshard(o); };
    } else {
      throw st.damaged(fmt::format("an unknown record '{}'", kind));
    }
    kind_ = kind;
  } catch (const JsonError& e) {
    throw st.damaged(e.what());
  }
  waiting_ = true;
  return true;
}

void RecordsReader::hand_over(const RecordVisitor& visit) {
  if (!waiting_) return;
  waiting_ = false;
  state_->hand_over(visit);
}

void read_records(const std::string& path, const RecordVisitor& visit) {
  RecordsReader reader(path);
  while (reader.peek()) reader.hand_over(visit);
}

}  // namespace trainio::verify
