#include "metrics/client_capacity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "metrics/summary.hpp"

namespace trainio::metrics {

CapacityInputs capacity_inputs(const RunSummary& run, double cores, double au_target) {
  CapacityInputs in;
  in.ranks = run.ranks;
  in.cores = cores;
  in.au_target = au_target;
  for (const auto& e : run.epochs) {
    const PhaseSummary& p = e.train;
    in.steps += p.steps;
    in.compute_seconds += p.compute_ns.sum() * 1e-9;
    in.bytes_read += static_cast<double>(p.bytes_read);
    in.cpu_seconds += p.cpu_user + p.cpu_sys;
    in.cpu_polling_seconds += p.cpu_polling;
    in.duration_seconds += p.duration;
    in.host_ticks_idle += p.host_ticks_idle;
    in.host_ticks_total += p.host_ticks_total;
  }
  return in;
}

ClientCapacity client_capacity(const CapacityInputs& in) {
  ClientCapacity c;
  auto none = [&](std::string why) {
    c.reason = std::move(why);
    return c;
  };
  if (in.steps == 0) return none("no training steps were measured");
  if (in.bytes_read <= 0) return none("no reads were measured: the client's cost per byte is unknown");
  if (in.compute_seconds <= 0) return none("the steps have no compute time: an accelerator's demand has no rate");
  if (in.au_target <= 0) return none("metric.au is 0: there is no AU target to feed");
  if (in.cores <= 0) return none("the cores the ranks may run on are unknown");
  const double own = std::max(0.0, in.cpu_seconds - in.cpu_polling_seconds);
  c.demand_bytes_per_second = in.bytes_read / (in.compute_seconds / in.au_target);
  c.cpu_seconds_per_byte = own / in.bytes_read;
  c.cpu_seconds_per_step = own / (static_cast<double>(in.steps) * std::max(1, in.ranks));
  c.cores_per_accelerator = *c.cpu_seconds_per_byte * *c.demand_bytes_per_second;
  if (in.host_ticks_total > 0 && in.duration_seconds > 0) {
    const double idle = static_cast<double>(in.host_ticks_idle) / static_cast<double>(in.host_ticks_total);
    c.other_cores_busy = std::max(0.0, in.cores * (1 - idle) - in.cpu_seconds / in.duration_seconds);
  }
  c.available_cores = in.cores - c.other_cores_busy.value_or(0);
  if (*c.cores_per_accelerator <= 0) return none("the client spent no measurable CPU on its reads");
  c.accelerators = static_cast<long>(std::floor(in.cores / *c.cores_per_accelerator));
  c.accelerators_beside_others = static_cast<long>(std::floor(std::max(0.0, *c.available_cores) / *c.cores_per_accelerator));
  c.reason = fmt::format("one accelerator at AU {:.0f}% reads {:.1f} MiB/s, which costs this client {:.3f} of its {:.2f} cores",
                         in.au_target * 100, *c.demand_bytes_per_second / (1024.0 * 1024.0), *c.cores_per_accelerator, in.cores);
  c.reason += c.other_cores_busy ? fmt::format("; other processes used {:.2f} of them (then: {})", *c.other_cores_busy,
                                               *c.accelerators_beside_others)
                                 : std::string("; other processes' use unknown");
  return c;
}

}  // namespace trainio::metrics
