#include "engine/trainer.hpp"

#include <fmt/format.h>

#include "engine/checkpoint/async_checkpointer.hpp"
#include "engine/cache/cache_aware_order.hpp"
#include "engine/cache_control.hpp"
#include "engine/cache/cache_tier.hpp"
#include "engine/checkpoint/checkpointer.hpp"
#include "engine/load/loader.hpp"
#include "engine/progress.hpp"
#include "engine/together.hpp"
#include "metrics/trace.hpp"
#include "plan/epoch_plan.hpp"
#include "plan/time_draws.hpp"
#include "storage/page_residency.hpp"
#include "util/clock.hpp"
#include "util/precise_sleep.hpp"
#include "util/proc_stats.hpp"
#include "util/stop_request.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace trainio::engine {

namespace {

struct PhaseSpec {
  plan::Split split;
  std::uint64_t epoch;
  std::uint64_t run_seed;
  std::uint64_t batch_size;
  plan::TimeDraws compute;
  plan::TimeDraws preprocess;
  metrics::BlockAccumulator::DlioFormula formula;
  std::string label;  // "epoch 2/5" or "evaluation 2/5", for progress lines
  bool progress;
  // Called after each step unless the time limit ends the phase there; returns whether a
  // checkpoint is due now (the same answer on every rank).
  std::function<bool()> checkpoint_due;
  // Takes that checkpoint (collective). The time it spends is the checkpoint's, not the
  // training's, and a checkpoint ends DLIO's block of steps.
  std::function<void()> checkpoint;
  // checkpoint.async: its writer, whose failure fails the step's vote and whose flushes mark the
  // steps they overlapped (null: synchronous saves).
  const AsyncCheckpointer* async;
  // Sleeps out each step's compute (one for the run: it learns the wake-up latency).
  util::PreciseSleeper* compute_sleep;
};

// Runs the steps of one phase and fills `out`. Every step ends with an agreement among the ranks
// (the barrier), which is also where a failure on any rank stops all of them together, and where
// a time limit reached on any rank ends the phase on all of them after the same step. Returns
// whether the time limit ended it.
// Storage-side counters around a phase.
struct StorageCounters {
  std::optional<std::uint64_t> process, device;
  // `local`: the data is on a file system of this machine; the kernel's block counters say nothing
  // of an object store's reads, which then stay unknown (null).
  static StorageCounters now(const std::string& device, bool count_device, bool local) {
    if (!local) return {};
    return {util::process_storage_read_bytes(), count_device ? util::device_read_bytes(device) : std::nullopt};
  }
  void since(const StorageCounters& before, metrics::ReadPhase& out) const {
    out.process_read_before = before.process;
    out.process_read_after = process;
    out.device_read_before = before.device;
    out.device_read_after = device;
    if (process && before.process) {
      out.storage_read_bytes = *process - *before.process;
      out.storage_read_known = true;
    }
    if (device && before.device) {
      out.device_read_bytes = *device - *before.device;
      out.device_read_known = true;
    }
  }
};

// Finishes a loader when a scope ends, normally or by an exception (finish() is idempotent).
class FinishOnExit {
 public:
  explicit FinishOnExit(Loader& loader) : loader_(loader) {}
  ~FinishOnExit() {
    try {
      loader_.finish();
    } catch (...) {
      // Already unwinding from the error that matters; a second one would only hide it.
    }
  }
  FinishOnExit(const FinishOnExit&) = delete;
  FinishOnExit& operator=(const FinishOnExit&) = delete;

 private:
  Loader& loader_;
};

bool run_phase(Loader& loader, const plan::EpochPlan& plan, const PhaseSpec& spec, const config::Workload& w,
               const mpi::Comm& comm, std::int64_t deadline_ns, const std::string& device, metrics::StepLog& steps,
               CacheTier* tier, const plan::DatasetLayout& layout, metrics::ReadPhase& out) {
  const bool local = w.storage.storage_type != config::StorageType::s3;
  const auto before = StorageCounters::now(device, comm.node_rank() == 0, local);
  storage::begin_probe_phase();
  const util::CpuTimes cpu_before = util::process_cpu_times();
  out.host_cpu_before = util::host_cpu();
  const std::int64_t phase_start = util::now_ns();
  out.first_step = steps.size();
  metrics::BlockAccumulator block(static_cast<std::uint64_t>(w.output.exclude_start_steps),
                                  static_cast<std::uint64_t>(w.output.exclude_end_steps));
  // sample_shuffle cache_aware: the rank's samples in an order that prefers what the tier holds.
  std::unique_ptr<CacheAwareOrder> order;
  if (tier != nullptr && (w.reader.sample_shuffle == config::Shuffle::cache_aware ||
                          w.reader.file_shuffle == config::Shuffle::cache_aware))
    order = std::make_unique<CacheAwareOrder>(
        plan, layout, spec.split, tier->directory(),
        CacheAwareOrder::window_for(spec.batch_size, static_cast<std::uint64_t>(std::max<std::int64_t>(0, w.reader.prefetch_size) +
                                                                                 std::max<std::int64_t>(1, w.reader.read_threads))));
  together(comm, [&] { loader.start({&plan, spec.split, spec.preprocess, spec.epoch, spec.run_seed, order.get()}); });
  // Whatever ends the phase — an error in a step, a checkpoint that fails, a stop — the reader
  // threads stop before `plan` (the caller's) goes away: none may read it, or the storage, after.
  const FinishOnExit finish_on_exit(loader);
  StepProgress progress(spec.split == plan::Split::train ? "train" : "eval", spec.label, plan.steps(),
                        static_cast<double>(spec.batch_size * static_cast<std::uint64_t>(comm.size())), comm.size(),
                        spec.progress);
  bool stopped = false;
  // The phase's window, which its figures use and its records give: from here, where its first
  // step starts waiting for a batch, to the end of its last step (every step starts where the one
  // before ended, so the window is its steps' times plus the checkpoints between them).
  std::int64_t t_load = util::now_ns();
  block.start(t_load);
  out.start = util::wall_time_iso_of(t_load);
  out.window_start_ns = t_load;
  std::int64_t phase_end = t_load;
  std::int64_t pending_pause = 0;  // a checkpoint after a step: inside the window only if a step follows
  // DLIO's blocks: checkpoints split the phase; each block is measured as DLIO measures it.
  std::int64_t block_start = t_load;
  std::uint64_t block_first = 0;
  bool block_too_short = false;  // a block with too few steps for the exclusions
  util::CpuTimes checkpoint_cpu;
  // The current block, measured from the steps' logged times as they come (DLIO computes its
  // block figures from the same per-step lists it writes).
  auto fresh_block = [&] {
    return metrics::BlockAccumulator(static_cast<std::uint64_t>(w.output.exclude_start_steps),
                                     static_cast<std::uint64_t>(w.output.exclude_end_steps));
  };
  metrics::BlockAccumulator current = fresh_block();
  auto close_block = [&](std::int64_t end_ns, std::uint64_t end_step) {
    current.start(block_start);
    current.end(end_ns);
    const metrics::BlockResult r = current.result(spec.batch_size, spec.formula);
    block_too_short = block_too_short || r.degenerate;
    out.blocks.push_back({util::wall_time_iso_of(block_start), util::wall_time_iso_of(end_ns), block_start, end_ns,
                          end_step - block_first, r.au, r.throughput_dlio});
    block_first = end_step;
    current = fresh_block();
  };
  for (std::uint64_t step = 0; step < plan.steps(); ++step) {
    block.pause(pending_pause);
    out.paused_ns += pending_pause;
    pending_pause = 0;
    std::exception_ptr failure;
    std::int64_t t_batch = t_load, t_computed = t_load;
    std::uint64_t step_bytes = 0;
    try {
      const Batch batch = loader.next();
      step_bytes = batch.bytes;
      // What training consumed: batches the readers fetched ahead of a stop are not delivered.
      out.samples += batch.samples;
      out.sample_bytes += batch.bytes;
      t_batch = util::now_ns();
      if (!spec.compute.is_zero())
        spec.compute_sleep->until(t_batch + static_cast<std::int64_t>(spec.compute.at(step) * 1e9));
      t_computed = util::now_ns();
    } catch (...) {
      failure = std::current_exception();
    }
    if (!failure && spec.async) failure = spec.async->failure();  // a background flush failed: stop together
    // A time limit reached, or a signal's stop, on any rank ends the phase on all after this step.
    const auto vote = comm.vote(failure == nullptr, (deadline_ns > 0 && util::now_ns() >= deadline_ns) || util::stop_signal() != 0);
    if (vote.failing_rank >= 0) {
      loader.finish();
      settle(comm, vote.failing_rank, failure);
    }
    const std::int64_t t_done = util::now_ns();
    phase_end = t_done;
    if (metrics::trace::enabled()) {
      const std::string args = fmt::format(R"("epoch":{},"step":{})", spec.epoch, step + 1);
      metrics::trace::span("step", spec.split == plan::Split::train ? "train" : "eval", t_load, t_done, args);
      metrics::trace::span("batch_wait", "loader", t_load, t_batch, args);
      metrics::trace::span("compute", "accelerator", t_batch, t_computed, args);
    }
    // Every figure of the step derives from what is logged (metrics::logged_step).
    const metrics::StepTimes logged = metrics::logged_step(t_load, t_batch, t_computed, t_done);
    steps.append(logged);
    ++out.steps_logged;
    if (spec.async) {
      // Did a background flush run at some moment of this step? Its figures go to that side.
      const bool during = spec.async->flushed_since(t_load);
      if (during) {
        const std::uint64_t at = steps.size() - 1;
        if (!out.flush_steps.empty() && out.flush_steps.back().second == at) ++out.flush_steps.back().second;
        else out.flush_steps.emplace_back(at, at + 1);
      }
      metrics::ReadPhase::StepSums& side = during ? out.flush_on : out.flush_off;
      ++side.steps;
      side.sample_bytes += step_bytes;
      side.compute += static_cast<double>(logged.compute);
      side.time += static_cast<double>(logged.load) + static_cast<double>(logged.compute) + static_cast<double>(logged.barrier);
    }
    block.add(metrics::timing_of(logged));
    current.add(metrics::timing_of(logged));
    progress.step(logged.compute);
    out.wait_ns.record(metrics::logged_ns(logged.load));
    out.compute_ns.record(metrics::logged_ns(logged.compute));
    out.barrier_ns.record(metrics::logged_ns(logged.barrier));
    t_load = t_done;
    if (spec.checkpoint_due && !vote.stop && spec.checkpoint_due()) {
      // The checkpoint's time and CPU are its own, not the phase's.
      const util::CpuTimes cpu_at_step = util::process_cpu_times();
      spec.checkpoint();
      t_load = util::now_ns();
      pending_pause = t_load - t_done;
      const util::CpuTimes cpu_now = util::process_cpu_times();
      checkpoint_cpu.user += cpu_now.user - cpu_at_step.user;
      checkpoint_cpu.sys += cpu_now.sys - cpu_at_step.sys;
      close_block(t_done, step + 1);
      block_start = t_load;
    }
    if (vote.stop) {
      stopped = true;
      break;
    }
  }
  block.end(phase_end);
  out.end = util::wall_time_iso_of(phase_end);
  out.window_end_ns = phase_end;
  if (block_first < out.steps_logged || out.blocks.empty()) close_block(phase_end, out.steps_logged);
  progress.finish();
  loader.finish();
  loader.collect(out);
  out.cpu_polling += util::ns_to_s(spec.compute_sleep->take_spin_cpu_ns());  // the compute's spin, as the waits' polling
  if (order) order->account(out.tier);
  metrics::trace::span(spec.split == plan::Split::train ? "train" : "eval", "epoch", phase_start, util::now_ns(),
                       fmt::format(R"("epoch":{})", spec.epoch));
  const util::CpuTimes cpu_after = util::process_cpu_times();
  out.host_cpu_after = util::host_cpu();
  out.cpu_before = cpu_before;
  out.cpu_after = cpu_after;
  out.cpu_in_checkpoints = checkpoint_cpu;
  out.cpu_user = cpu_after.user - cpu_before.user - checkpoint_cpu.user;
  out.cpu_sys = cpu_after.sys - cpu_before.sys - checkpoint_cpu.sys;
  StorageCounters::now(device, comm.node_rank() == 0, local).since(before, out);
  out.block = block.result(spec.batch_size, spec.formula);
  std::vector<std::pair<std::uint64_t, std::optional<double>>> au, throughput;
  for (const auto& b : out.blocks) {
    au.emplace_back(b.steps, b.au);
    throughput.emplace_back(b.steps, b.throughput);
  }
  out.block.au = metrics::step_weighted_mean(au);
  out.block.throughput_dlio = metrics::step_weighted_mean(throughput);
  out.block.degenerate = out.block.degenerate || block_too_short;
  return stopped;
}

}  // namespace

void train(const config::Workload& w, const plan::DatasetLayout& layout, const plan::RunShape& shape,
           const mpi::Comm& comm, const TrainOptions& options, metrics::RankRecord& record) {
  // The cache tier first (collective): the loader's reader threads read through it.
  const std::unique_ptr<CacheTier> tier = CacheTier::make(w, layout, comm);
  std::unique_ptr<Loader> loader;
  const RankCores rank_share = rank_cores(comm);
  together(comm, [&] { loader = make_loader(w, layout, tier.get(), cores_of_rank(rank_share)); });
  util::PreciseSleeper compute_sleep(loop_has_a_core(w, rank_share.share()));
  if (tier && w.cache.staging == config::CacheStaging::before_first_epoch) {
    CacheTier::Staged staged = tier->stage(comm);
    record.staging = staged.stats;
    record.staging_io = std::move(staged.io);
    record.staging_seconds = staged.seconds;
  }
  const auto batch = static_cast<std::uint64_t>(w.reader.batch_size);
  const auto eval_batch = static_cast<std::uint64_t>(w.reader.batch_size_eval);
  const std::int64_t deadline =
      w.train.max_seconds > 0 ? util::now_ns() + static_cast<std::int64_t>(w.train.max_seconds * 1e9) : 0;
  const std::string device =
      w.storage.storage_type == config::StorageType::s3 ? std::string() : util::block_device_of(layout.root());

  // Checkpoints, when the workflow asks for them: every steps_between_checkpoints steps of each
  // epoch (DLIO counts the steps from 1 again every epoch), or else after checkpoint_after_epoch
  // and every epochs_between_checkpoints epochs after. A checkpoint is named by its epoch and the
  // step of that epoch it follows.
  std::unique_ptr<Checkpointer> checkpointer;
  if (w.workflow.checkpoint) together(comm, [&] { checkpointer = std::make_unique<Checkpointer>(w, comm, options.run_seed, options.progress); });
  const auto& cw = w.checkpoint;
  // Declared after the checkpointer it writes through, so that it stops first.
  std::unique_ptr<AsyncCheckpointer> async;
  if (checkpointer && cw.async) together(comm, [&] { async = std::make_unique<AsyncCheckpointer>(*checkpointer, cw, comm); });
  const bool by_steps = checkpointer && cw.steps_between_checkpoints > 0;
  std::uint64_t saves = 0;
  std::uint64_t next_epoch = static_cast<std::uint64_t>(cw.checkpoint_after_epoch);
  // Why a phase's steps ended early (collective: every rank's phase stopped after the same step).
  auto stopped_in = [&](bool stopped, std::uint64_t epoch, const char* phase) {
    if (!stopped) return false;
    if (const auto signal = comm.max(static_cast<std::int64_t>(util::stop_signal())); signal != 0)
      record.stop_signal = static_cast<int>(signal), record.stop_epoch = epoch, record.stop_phase = phase;
    else
      record.stopped_by_time_limit = true;
    return true;
  };
  auto ended = [&] { return record.stopped_by_time_limit || record.stop_signal != 0; };
  auto deliver = [&](metrics::CheckpointRecord& c) {
    if (options.on_checkpoint) options.on_checkpoint(c);
    record.checkpoints.push_back(c);
  };
  auto save = [&](std::uint64_t epoch, std::uint64_t step, std::uint64_t block) {
    if (async) return async->save(epoch, step, ++saves, block, deliver);
    metrics::CheckpointRecord c = checkpointer->save(epoch, step, ++saves);
    c.block = block;
    if (options.on_checkpoint) options.on_checkpoint(c);
    record.checkpoints.push_back(c);  // its timeline: its storage calls are summarised
  };

  for (std::uint64_t epoch = 1; epoch <= shape.epochs && !ended(); ++epoch) {
    if (stop_asked(comm, record, epoch, "train")) break;
    metrics::EpochRecord er;
    er.epoch = epoch;
    er.start = util::wall_time_iso();
    er.host_meminfo = util::proc_key_values("/proc/meminfo");
    const auto cap = static_cast<std::int64_t>(plan::train_steps_in_epoch(shape, w, epoch));
    std::uint64_t blocks_ended = 0;  // by checkpoints in this epoch
    std::uint64_t epoch_step = 0;
    std::uint64_t next_step = by_steps ? static_cast<std::uint64_t>(cw.steps_between_checkpoints) : 0;
    const plan::EpochPlan train_plan(layout, plan::Split::train, w, batch, epoch, comm.rank(), comm.size(),
                                     options.run_seed, cap, plan::partition_of(w));
    const PhaseSpec train_spec{
        plan::Split::train, epoch, options.run_seed, batch,
        plan::TimeDraws(w.train.computation_time, plan::time_seed(options.run_seed, plan::TimePhase::compute, epoch, comm.rank())),
        plan::TimeDraws(w.reader.preprocess_time, plan::time_seed(options.run_seed, plan::TimePhase::preprocess, epoch, comm.rank())),
        metrics::BlockAccumulator::DlioFormula::train,
        fmt::format("epoch {}/{}", epoch, shape.epochs), options.progress,
        [&] {
          ++epoch_step;  // counted for checkpoints by epoch too, which name the step they follow
          return by_steps && epoch_step == next_step;
        },
        [&] {
          save(epoch, epoch_step, ++blocks_ended);
          next_step += static_cast<std::uint64_t>(cw.steps_between_checkpoints);
        },
        async.get(), &compute_sleep};
    evict_dataset(w, layout, comm, plan::Split::train);
    if (tier) tier->evict_copies(w.reader.evict, comm);
    stopped_in(run_phase(*loader, train_plan, train_spec, w, comm, deadline, device, *record.steps, tier.get(), layout, er.train),
               epoch, "train");
    if (checkpointer && !by_steps && !ended() && epoch == next_epoch && !stop_asked(comm, record, epoch, "checkpoint")) {
      save(epoch, epoch_step, er.train.blocks.size());
      next_epoch += static_cast<std::uint64_t>(cw.epochs_between_checkpoints);
    }
    if (!ended() && plan::evaluates_after(w, epoch) && !stop_asked(comm, record, epoch, "eval")) {
      const plan::EpochPlan eval_plan(layout, plan::Split::eval, w, eval_batch, epoch, comm.rank(), comm.size(),
                                      options.run_seed, -1, plan::partition_of(w));
      const PhaseSpec eval_spec{
          plan::Split::eval, epoch, options.run_seed, eval_batch,
          plan::TimeDraws(w.evaluation.eval_time, plan::time_seed(options.run_seed, plan::TimePhase::eval, epoch, comm.rank())),
          plan::TimeDraws(w.reader.preprocess_time, plan::time_seed(options.run_seed, plan::TimePhase::preprocess, epoch + (1ULL << 32), comm.rank())),
          metrics::BlockAccumulator::DlioFormula::eval, fmt::format("evaluation {}/{}", epoch, shape.epochs),
          options.progress, nullptr, nullptr, async.get(), &compute_sleep};
      evict_dataset(w, layout, comm, plan::Split::eval);
      if (tier) tier->evict_copies(w.reader.evict, comm);
      stopped_in(run_phase(*loader, eval_plan, eval_spec, w, comm, deadline, device, *record.steps, tier.get(), layout, er.eval),
                 epoch, "eval");
      er.evaluated = true;
    }
    er.end = util::wall_time_iso();
    if (options.on_epoch) options.on_epoch(er);
    record.epochs.push_back(metrics::timeline_of(er));  // its measurements are summarised
  }
  // The run ends only when every background flush has ended and the ranks agreed on it.
  if (async) async->drain(deliver);
  loader.reset();  // its reader threads hold the tier's files
  if (tier) tier->close(comm);
}

}  // namespace trainio::engine
