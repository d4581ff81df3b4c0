#include "report/async_json.hpp"

#include <fmt/format.h>

#include "report/phase_json.hpp"
#include "util/units.hpp"

namespace trainio::report {

using json = nlohmann::ordered_json;

json async_save_json(const metrics::CheckpointSummary& c) {
  if (!c.async.on) return nullptr;
  return {{"stall_seconds", c.async.stall},
          {"slot_wait_seconds", c.async.slot_wait},
          {"snapshot_seconds", c.async.snapshot},
          {"flush_seconds", c.duration},
          {"flush_bytes_per_second", c.bandwidth},
          {"buffer_bytes", c.async.buffer_bytes}};
}

namespace {
json side_json(const metrics::StepSide& s) {
  return {{"steps", s.steps},
          {"ranks", s.ranks},
          {"sample_bytes", s.sample_bytes},
          {"au_percentage", maybe(s.au_percent)},
          {"read_bytes_per_second", maybe(s.read_bytes_per_second)}};
}
}  // namespace

json flush_overlap_json(const metrics::FlushOverlapSummary& f) {
  return {{"during_flush", side_json(f.during)}, {"without_flush", side_json(f.without)}, {"read_ratio", maybe(f.read_ratio)}};
}

json async_totals_json(const config::Workload& w, const metrics::RunSummary& run) {
  const auto& c = w.checkpoint;
  if (!c.async) return nullptr;
  std::uint64_t saves = 0, buffer = 0;
  double stall = 0, most = 0;
  for (const auto& s : run.checkpoints) {
    if (!s.async.on) continue;
    ++saves;
    stall += s.async.stall;
    most = std::max(most, s.async.stall);
    buffer = std::max(buffer, s.async.buffer_bytes);
  }
  return {{"snapshot_bandwidth", c.snapshot_bandwidth},
          {"inflight", c.async_inflight},
          {"buffer_bytes_limit", c.async_buffer_bytes},
          {"buffer_bytes", buffer},
          {"saves", saves},
          {"stall_seconds", stall},
          {"stall_seconds_max", most}};
}

std::string async_save_line(const metrics::CheckpointSummary& c) {
  return fmt::format("  stalled training {} (snapshot {}, waiting for a slot {}); flushed in the background in {} ({})",
                     util::format_duration(c.async.stall), util::format_duration(c.async.snapshot),
                     util::format_duration(c.async.slot_wait), util::format_duration(c.duration),
                     util::format_rate(c.bandwidth));
}

std::string flush_overlap_line(std::uint64_t epoch, const metrics::FlushOverlapSummary& f) {
  if (f.during.steps == 0) return {};
  auto au = [](const std::optional<double>& v) { return v ? fmt::format("{:.2f}%", *v) : std::string("n/a"); };
  auto rate = [](const std::optional<double>& v) { return v ? util::format_rate(*v) : std::string("n/a"); };
  return fmt::format("  epoch {} while flushing: {} steps, AU {}, reads {}; without: {} steps, AU {}, reads {}", epoch,
                     f.during.steps, au(f.during.au_percent), rate(f.during.read_bytes_per_second), f.without.steps,
                     au(f.without.au_percent), rate(f.without.read_bytes_per_second));
}

}  // namespace trainio::report
