#include "report/records_file.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "storage/io_observer.hpp"
#include "storage/page_residency.hpp"
#include "util/build_info.hpp"
#include "util/clock.hpp"
#include "util/paths.hpp"

namespace trainio::report {

namespace {

using json = nlohmann::ordered_json;

// Records format version: raised when a field changes meaning or goes.
constexpr int kRecordsVersion = 1;

json optional_count(const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); }

// A latency histogram whole: its buckets that hold values as [lowest, highest, count] (bounds
// inclusive, nanoseconds), and the exact count, sum, min and max.
json histogram_record(const metrics::Histogram& h) {
  json buckets = json::array();
  h.for_each_bucket([&](std::uint64_t lo, std::uint64_t hi, std::uint64_t n) { buckets.push_back({lo, hi, n}); });
  return {{"count", h.count()},
          {"sum", static_cast<std::uint64_t>(h.sum())},
          {"min", h.min()},
          {"max", h.max()},
          {"buckets", buckets}};
}

json page_cache_record(const metrics::PageCacheStats& c) {
  return {{"read_bytes", c.read_bytes},         {"direct_bytes", c.direct_bytes},
          {"remote_bytes", c.remote_bytes},     {"probes", c.probes},
          {"probed_pages", c.probed_pages},     {"resident_pages", c.resident_pages},
          {"stayed_out_pages", c.stayed_out_pages}, {"failed_probes", c.failed_probes},
          {"probe_error", c.probe_error},       {"method", storage::residency_method_name(static_cast<storage::ResidencyMethod>(c.method))},
          {"page_bytes", storage::page_bytes()}};
}

json profile_record(const metrics::AccessProfile& a) {
  json common = json::array();
  for (const auto& [size, calls] : a.common) common.push_back({size, calls});
  return {{"reads", a.reads},
          {"writes", a.writes},
          {"bytes_read", a.bytes_read},
          {"bytes_written", a.bytes_written},
          {"read_sizes", a.read_sizes},
          {"write_sizes", a.write_sizes},
          {"sequential_reads", a.sequential_reads},
          {"consecutive_reads", a.consecutive_reads},
          {"sequential_writes", a.sequential_writes},
          {"consecutive_writes", a.consecutive_writes},
          {"metadata_calls", a.metadata_ops},
          {"metadata_ns", a.metadata_ns},
          {"data_ns", a.data_ns},
          {"distinct_files_estimate", a.files.estimate()},
          {"common_sizes", common},
          {"other_sizes", a.other_sizes}};
}

json requests_record(const metrics::RequestStats& r) {
  json kinds = json::object(), statuses = json::object(), retried = json::object();
  for (int k = 0; k < storage::kRequestKinds; ++k)
    if (const auto n = r.by_kind[static_cast<std::size_t>(k)]; n > 0) kinds[storage::request_name(static_cast<storage::Request>(k))] = n;
  for (std::size_t s = 0; s < r.by_status.size(); ++s)
    if (r.by_status[s] > 0) statuses[std::to_string(s)] = r.by_status[s];
  for (std::size_t s = 0; s < r.retries_by_status.size(); ++s)
    if (r.retries_by_status[s] > 0) retried[std::to_string(s)] = r.retries_by_status[s];
  json endpoints = json::array();
  for (const auto& e : r.by_endpoint)
    endpoints.push_back({{"count", e.count},
                         {"retries", e.retries},
                         {"bytes", e.bytes},
                         {"first_byte_ns", histogram_record(e.first_byte_ns)},
                         {"total_ns", histogram_record(e.total_ns)}});
  return {{"by_kind", kinds},
          {"by_status", statuses},
          {"retries", r.retries},
          {"retries_by_status", retried},
          {"bytes", r.bytes},
          {"first_byte_ns", histogram_record(r.first_byte_ns)},
          {"total_ns", histogram_record(r.total_ns)},
          {"by_endpoint", endpoints}};
}

json io_record(const metrics::IoRecorder& io) {
  json ops = json::object();
  for (int i = 0; i < storage::kOpCount; ++i) {
    const auto op = static_cast<storage::Op>(i);
    const metrics::OpStats& s = io.op(op);
    if (s.count == 0) continue;
    ops[storage::op_name(op)] = {{"count", s.count}, {"bytes", s.bytes}, {"ns", s.ns}, {"latency_ns", histogram_record(s.latency)}};
  }
  // A class of files no call touched is left out (it reads as all zero).
  json o = {{"ops", ops}};
  for (const auto& [name, profile] : {std::pair{"data_files", &io.data_files()}, std::pair{"other_files", &io.other_files()}})
    if (profile->reads + profile->writes + profile->metadata_ops > 0) o[name] = profile_record(*profile);
  o["page_cache"] = page_cache_record(io.page_cache());
  if (io.requests().requests() > 0) o["requests"] = requests_record(io.requests());
  // Reads of data files by the depth they started at: [lowest depth of the band, calls, ns].
  const metrics::ReadDepth& d = io.read_depth();
  if (d.total_calls() > 0) {
    json bands = json::array();
    for (std::size_t b = 0; b < metrics::ReadDepth::kBands; ++b)
      if (d.calls[b] > 0) bands.push_back({metrics::ReadDepth::kLowest[b], d.calls[b], d.ns[b]});
    o["read_depth"] = bands;
  }
  return o;
}

json tier_record(const metrics::TierStats& t) {
  json o = {{"hit_samples", t.hit_samples},   {"miss_samples", t.miss_samples},   {"hit_bytes", t.hit_bytes},
            {"miss_bytes", t.miss_bytes},     {"fills", t.fills},                 {"fill_ns", t.fill_ns},
            {"evictions", t.evictions},       {"busy", t.busy},                   {"not_admitted", t.not_admitted},
            {"backing_read_bytes", t.backing_read_bytes}, {"tier_read_bytes", t.tier_read_bytes},
            {"tier_write_bytes", t.tier_write_bytes},     {"order_inversions", t.order_inversions},
            {"order_pairs", t.order_pairs},   {"order_moved", t.order_moved},     {"ordered_samples", t.ordered_samples}};
  o["backing_page_cache"] = page_cache_record(t.backing_cache);
  o["tier_page_cache"] = page_cache_record(t.tier_cache);
  return o;
}

json cpu_record(const util::CpuTimes& t) { return {{"user", t.user}, {"sys", t.sys}}; }

bool tier_used(const metrics::TierStats& t) {
  for (const std::uint64_t* c : const_cast<metrics::TierStats&>(t).counters())
    if (*c != 0) return true;
  return t.backing_cache.read_bytes + t.tier_cache.read_bytes > 0;
}

json phase_record(std::uint64_t epoch, const char* kind, const metrics::ReadPhase& p) {
  json blocks = json::array();
  for (const auto& b : p.blocks)
    blocks.push_back({{"start", b.start}, {"end", b.end}, {"start_ns", b.start_ns}, {"end_ns", b.end_ns}, {"steps", b.steps}});
  return {{"record", "phase"},
          {"kind", kind},
          {"epoch", epoch},
          {"start", p.start},
          {"end", p.end},
          {"start_ns", p.window_start_ns},
          {"end_ns", p.window_end_ns},
          {"paused_ns", p.paused_ns},
          {"first_step", p.first_step},
          {"steps", p.steps_logged},
          {"blocks", blocks},
          {"samples", p.samples},
          {"sample_bytes", p.sample_bytes},
          {"sample_read_ns", histogram_record(p.sample_ns)},
          {"io", io_record(p.io)},
          {"tier", tier_used(p.tier) ? tier_record(p.tier) : json(nullptr)},  // null: no cache tier
          {"kernel", {{"process_read_bytes", {optional_count(p.process_read_before), optional_count(p.process_read_after)}},
                      {"device_read_bytes", {optional_count(p.device_read_before), optional_count(p.device_read_after)}}}},
          {"cpu", {{"before", cpu_record(p.cpu_before)},
                   {"after", cpu_record(p.cpu_after)},
                   {"in_checkpoints", cpu_record(p.cpu_in_checkpoints)},
                   {"polling", p.cpu_polling}}},
          {"readers", p.readers ? json{{"threads", p.readers->threads},
                                       {"max_in_flight", p.readers->max_in_flight},
                                       {"busy_ns", p.readers->busy_ns},
                                       {"cpu_ns", p.readers->cpu_ns},
                                       {"at_max_ns", p.readers->at_max_ns},
                                       {"run_delay_ns", p.readers->run_delay_ns >= 0 ? json(p.readers->run_delay_ns) : json(nullptr)}}
                                : json(nullptr)},
          {"host_cpu", p.host_cpu_before && p.host_cpu_after
                           ? json{{"before", {p.host_cpu_before->idle, p.host_cpu_before->total}},
                                  {"after", {p.host_cpu_after->idle, p.host_cpu_after->total}}}
                           : json(nullptr)}};
}

}  // namespace

std::string RecordsFile::name_for(int rank) { return fmt::format("{}_records.jsonl", rank); }

RecordsFile::RecordsFile(const std::string& folder, const RecordsHeader& h)
    : file_(util::join(folder, name_for(h.rank)), true) {
  line(json{{"record", "rank"},
            {"version", kRecordsVersion},
            {"trainio_version", util::version()},
            {"rank", h.rank},
            {"ranks", h.ranks},
            {"host_index", h.host_index},
            {"hostname", h.hostname},
            {"batch_size", h.batch_size},
            {"batch_size_eval", h.batch_size_eval},
            {"exclude_start_steps", h.exclude_start_steps},
            {"exclude_end_steps", h.exclude_end_steps},
            {"cores", h.cores},
            {"clock", "CLOCK_MONOTONIC nanoseconds (*_ns); wall times ISO 8601, local, microseconds"},
            {"histograms", "buckets [lowest, highest, count], bounds inclusive: values below 64 exactly, then 64 "
                           "buckets per power of two"}}
           .dump());
}

void RecordsFile::epoch_measured(const metrics::EpochRecord& e) {
  line(phase_record(e.epoch, "train", e.train).dump());
  async_overlap(e.epoch, "train", e.train);
  if (e.evaluated) {
    line(phase_record(e.epoch, "eval", e.eval).dump());
    async_overlap(e.epoch, "eval", e.eval);
  }
}

// checkpoint.async: which steps of the phase a flush overlapped, and the sums of each side.
void RecordsFile::async_overlap(std::uint64_t epoch, const char* kind, const metrics::ReadPhase& p) {
  if (p.flush_on.steps + p.flush_off.steps == 0) return;  // synchronous saves
  auto sums = [](const metrics::ReadPhase::StepSums& s) {
    return json{{"steps", s.steps}, {"sample_bytes", s.sample_bytes}, {"compute", s.compute}, {"time", s.time}};
  };
  json ranges = json::array();
  for (const auto& [first, end] : p.flush_steps) ranges.push_back({first, end});
  line(json{{"record", "async_overlap"},
            {"kind", kind},
            {"epoch", epoch},
            {"steps", ranges},
            {"during_flush", sums(p.flush_on)},
            {"without_flush", sums(p.flush_off)}}
           .dump());
}

void RecordsFile::checkpoint_measured(const metrics::CheckpointRecord& c) {
  const bool save = c.kind == metrics::CheckpointRecord::Kind::save;
  line(json{{"record", "checkpoint"},
            {"kind", save ? "save" : "load"},
            {"index", c.index},
            {"block", c.block},
            {"epoch", c.epoch},
            {"step", c.step},
            {"folder", c.folder},
            {"start", c.start},
            {"end", c.end},
            {"start_ns", c.start_ns},
            {"seconds", c.seconds},
            {"io_seconds", c.io_seconds},
            {"collective_seconds", c.collective_seconds},
            {"files", c.files},
            {"tensor_bytes", c.tensor_bytes},
            {"file_bytes", c.file_bytes},
            {"first_read_end_ns", c.first_read_end_ns},
            {"kernel", {{"process_read_bytes", {optional_count(c.process_read_before), optional_count(c.process_read_after)}}}},
            {"io", io_record(c.io)}}
           .dump());
  if (c.async.on)
    line(json{{"record", "async_save"},
              {"index", c.index},
              {"stall_start_ns", c.async.stall_start_ns},
              {"slot_wait_ns", c.async.slot_wait_ns},
              {"snapshot_ns", c.async.snapshot_ns},
              {"flush_start_ns", c.async.flush_start_ns},
              {"flush_end_ns", c.async.flush_end_ns},
              {"buffer_bytes", c.async.buffer_bytes}}
             .dump());
}

void RecordsFile::add_failover(const std::string& previous_results, const std::string& previous_end) {
  line(json{{"record", "failover"}, {"previous_results", previous_results}, {"previous_end", previous_end}}.dump());
}

void RecordsFile::write_results(const ResultsOf& run) {
  const metrics::RankRecord& r = run.record;
  const auto& g = r.generate;
  if (g.ran)
    line(json{{"record", "generate"},
              {"seconds", g.seconds},
              {"durable_seconds", g.durable_seconds},
              {"files_written", g.files_written},
              {"files_kept", g.files_kept},
              {"io", io_record(g.io)}}
             .dump());
  if (r.staging.fills > 0 || r.staging_seconds > 0)
    line(json{{"record", "staging"}, {"seconds", r.staging_seconds}, {"tier", tier_record(r.staging)}, {"io", io_record(r.staging_io)}}
             .dump());
  line(json{{"record", "end"},
            {"start", r.start},
            {"end", r.end},
            {"stopped_by_time_limit", r.stopped_by_time_limit},
            {"complete", r.stop_signal == 0},
            {"stop_signal", r.stop_signal},
            {"process_start_ns", r.process_start_ns ? json(*r.process_start_ns) : json(nullptr)},
            {"process_start", r.process_start_ns ? json(util::wall_time_iso_of(*r.process_start_ns)) : json(nullptr)}}
           .dump());
  file_.commit();
}

void RecordsFile::line(const std::string& text) {
  file_.write(text);
  file_.write("\n");
}

}  // namespace trainio::report
