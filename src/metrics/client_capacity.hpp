#pragma once
// How many accelerators this client could emulate before it, not the storage, becomes the limit
// (docs/metrics.md, "Client capacity"): what one accelerator asks of the client at the AU
// target — bytes per second, and the CPU the client spends on them — against the cores the
// ranks may run on (and, beside it, those cores less what other processes used of them). From
// the run's training phases' own figures; `trainio verify` recomputes it from the records with
// code of its own.

#include <cstdint>
#include <optional>
#include <string>

namespace trainio::metrics {

struct RunSummary;

// The training phases' figures the estimate rests on, summed over phases and ranks.
struct CapacityInputs {
  int ranks = 0;                 // accelerators emulated
  std::uint64_t steps = 0;       // steps per rank, summed over phases
  double compute_seconds = 0;    // emulated compute, all ranks
  double bytes_read = 0;         // what the read calls returned, all ranks
  double cpu_seconds = 0;        // the processes' user + system CPU, all ranks
  double cpu_polling_seconds = 0;  // of which the training loops polled for batches
  double duration_seconds = 0;   // the phases' wall time (each the slowest rank's)
  double cores = 0;              // the cores the ranks may run on (each rank's share, summed)
  std::uint64_t host_ticks_idle = 0, host_ticks_total = 0;  // the ranks' CPUs (/proc/stat), all processes
  double au_target = 0;          // metric.au, a fraction
};

struct ClientCapacity {
  std::optional<long> accelerators;  // with the cores the ranks may run on; none: `reason` says why
  std::optional<long> accelerators_beside_others;  // with what other processes used of them subtracted
  std::string reason;
  // Derived figures (absent where their inputs are).
  std::optional<double> demand_bytes_per_second;       // one accelerator at the AU target
  std::optional<double> cpu_seconds_per_byte;          // the client's CPU per byte read, polling left out
  std::optional<double> cpu_seconds_per_step;          // per accelerator, polling left out
  std::optional<double> cores_per_accelerator;         // cpu_seconds_per_byte x demand
  std::optional<double> other_cores_busy;              // what other processes used of the ranks' cores
  std::optional<double> available_cores;               // cores - other_cores_busy
};

CapacityInputs capacity_inputs(const RunSummary& run, double cores, double au_target);
ClientCapacity client_capacity(const CapacityInputs& in);

// The formula, as summary.json states it beside the figures.
inline constexpr const char* kCapacityFormula =
    "accelerators = floor(cores / cores_per_accelerator); cores_per_accelerator = cpu_seconds_per_byte x "
    "demand_bytes_per_second; demand_bytes_per_second = bytes_read / (compute_seconds / au_target); "
    "cpu_seconds_per_byte = (cpu_seconds - cpu_polling_seconds) / bytes_read; accelerators_beside_others = "
    "floor(available_cores / cores_per_accelerator); available_cores = cores - other_cores_busy; "
    "other_cores_busy = max(0, cores x (1 - host_idle_share) - cpu_seconds / duration_seconds)";

}  // namespace trainio::metrics
