#pragma once
// A data loader as the training loop sees it: start a phase, take batches in order, finish.
// Implementations replay a framework's loader: PyTorch's DataLoader, DALI's pipeline and DLIO's
// TensorFlow generator threads are designs of one ordered batch pipeline (pipelined_loader.hpp,
// designs in loader.cpp); tf.data over TFRecord files has stages of its own (tensorflow_loader.hpp).

#include <cstdint>
#include <memory>

#include "config/workload.hpp"
#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"
#include "plan/epoch_plan.hpp"
#include "plan/layout.hpp"
#include "plan/time_draws.hpp"

namespace trainio::engine {

class CacheAwareOrder;
class CacheTier;

// The batches of one phase (a training epoch or an evaluation).
struct PhaseWork {
  const plan::EpochPlan* plan = nullptr;
  plan::Split split = plan::Split::train;
  plan::TimeDraws preprocess;  // per-sample CPU time in the reader thread
  std::uint64_t epoch = 1;     // for loaders that order files themselves (tensorflow)
  std::uint64_t run_seed = 0;
  CacheAwareOrder* order = nullptr;  // sample_shuffle cache_aware: the order in place of the plan's

  // The sample read at `step`, position `slot` of its batch; `files` is the reading thread's
  // memory of the file order (plan::EpochPlan::sample).
  plan::SampleRef sample(std::uint64_t step, std::uint64_t slot, util::Permutation::Memo& files) const;
  // The run of samples from `slot` up to slot `end` at most (plan::EpochPlan::run); a single
  // sample in a cache-aware order.
  plan::SampleRun run(std::uint64_t step, std::uint64_t slot, std::uint64_t end, util::Permutation::Memo& files) const;
};

struct Batch {
  std::uint64_t samples = 0;
  std::uint64_t bytes = 0;  // sample bytes delivered
};

class Loader {
 public:
  virtual ~Loader() = default;
  // Begins a phase: reader threads start reading ahead.
  virtual void start(const PhaseWork& work) = 0;
  // The next batch in order; blocks until it is read. Rethrows a reader thread's error.
  virtual Batch next() = 0;
  // Ends the phase (also mid-phase, after an error elsewhere): waits for reads in flight.
  virtual void finish() = 0;
  // Adds what the reader threads measured in the phase to `phase` and resets it.
  virtual void collect(metrics::ReadPhase& phase) = 0;
};

// The loader for the workload's reader.data_loader; its reader threads read through `tier` when
// the workload has one. `cores`: the cores this rank's threads can count on (cores_of_rank); the
// training loop polls for its batches only when one is left for it (engine/load/batch_wait.hpp).
std::unique_ptr<Loader> make_loader(const config::Workload& w, const plan::DatasetLayout& layout,
                                    CacheTier* tier = nullptr, std::size_t cores = 1);

// The threads a rank's loader keeps busy reading (0 when the training thread reads itself).
std::size_t busy_reader_threads(const config::Workload& w);
// Whether the training loop has a core of its own beside them on `cores` (RankCores::share()),
// so that spinning costs the readers nothing; never with O_DIRECT reads (batch_wait.hpp says why).
bool loop_has_a_core(const config::Workload& w, double cores);

// The CPUs a rank may run on (its affinity; the machine's when the kernel does not say) and the
// ranks of its host that have the same set, itself included (all of them when no launcher bound
// them: the machine's cores shared; several per set when bound by socket). Ranks whose sets
// overlap without being equal count as not sharing. Collective.
struct RankCores {
  int cpus = 1;
  int sharing = 1;
  double share() const { return static_cast<double>(cpus) / sharing; }  // 2 ranks on 1 CPU: 0.5
};
RankCores rank_cores(const mpi::Comm& comm);

// The cores this rank's threads can count on: its share of its CPUs, at least 1.
std::size_t cores_of_rank(const RankCores& c);

}  // namespace trainio::engine
