#include "engine/load/loader.hpp"

#include <algorithm>
#include <vector>

#include "engine/load/batch_wait.hpp"
#include "engine/cache/cache_aware_order.hpp"
#include "engine/load/pipelined_loader.hpp"
#include "engine/load/tensorflow_loader.hpp"
#include "util/host_info.hpp"
#include "util/proc_stats.hpp"

namespace trainio::engine {

namespace {

using Assignment = BatchPipeline::Assignment;

std::size_t count(std::int64_t value) { return static_cast<std::size_t>(std::max<std::int64_t>(0, value)); }

// PyTorch's DataLoader: read_threads workers; batch b is read by worker b % workers, sample
// after sample; at most prefetch_factor batches per worker are in flight (DLIO:
// prefetch_factor = ceil(prefetch_size / read_threads), at least 1); batches reach the training
// loop in order. read_threads 0: the training thread reads each batch when it asks.
LoaderDesign pytorch(const config::Workload& w, std::size_t workers) {
  LoaderDesign d;
  d.workers = workers;
  const std::size_t prefetch = count(w.reader.prefetch_size);
  d.window = workers == 0 ? 1 : std::max<std::size_t>(1, (prefetch + workers - 1) / workers) * workers;
  return d;
}

// DLIO's TensorFlow loader for formats other than TFRecord (a Python generator under tf.data):
// read_threads generator threads (at least 1: tf.data has no "read in the training thread")
// each walk a contiguous slice of the rank's samples, keeping a file open for samples_per_file
// samples, and tf.data interleaves their batches round robin: batch b comes from thread
// b % threads, its (b / threads)-th batch. Read ahead as PyTorch's (the same prefetch rule).
LoaderDesign tensorflow_generator(const config::Workload& w) {
  LoaderDesign d = pytorch(w, std::max<std::size_t>(1, count(w.reader.read_threads)));
  d.thread_slices = true;
  d.use = format::ReaderUse::by_file_session;
  return d;
}

// DALI's pipeline as DLIO drives it: one pipeline per rank whose queue holds prefetch_size
// batches (2 when 0, as DLIO sets it), filled in order; the samples of each batch are shared
// out among read_threads workers (DALI's parallel external_source gives each worker a part of
// the batch). With data_loader dali each sample is read by the framework reader's read_index
// (open, read, close); native_dali reads with DALI's own readers, one read of the sample's bytes
// (access: sample). read_threads 0: the training thread reads each batch when it asks (DALI's
// serial external source).
LoaderDesign dali(const config::Workload& w) {
  LoaderDesign d;
  d.workers = count(w.reader.read_threads);
  d.window = w.reader.prefetch_size > 0 ? count(w.reader.prefetch_size) : 2;
  d.assignment = Assignment::shared_queue;
  d.split_batches = true;
  return d;
}

}  // namespace

plan::SampleRef PhaseWork::sample(std::uint64_t step, std::uint64_t slot, util::Permutation::Memo& files) const {
  return order != nullptr ? order->sample(step, slot) : plan->sample(step, slot, files);
}

plan::SampleRun PhaseWork::run(std::uint64_t step, std::uint64_t slot, std::uint64_t end,
                               util::Permutation::Memo& files) const {
  if (order != nullptr) return {order->sample(step, slot), 1, 1};
  return plan->run(step, slot, end, files);
}

std::size_t busy_reader_threads(const config::Workload& w) {
  switch (w.reader.data_loader) {
    case config::DataLoader::tensorflow:
      // TFRecord: a reader per interleave slot and the pipeline thread that batches.
      if (w.dataset.format == config::Format::tfrecord) return std::max<std::size_t>(1, count(w.reader.read_threads)) + 1;
      return tensorflow_generator(w).workers;
    case config::DataLoader::dali:
    case config::DataLoader::native_dali: return dali(w).workers;
    case config::DataLoader::pytorch:
    case config::DataLoader::synthetic: break;
  }
  return pytorch(w, count(w.reader.read_threads)).workers;
}

bool loop_has_a_core(const config::Workload& w, double cores) {
  return !w.reader.odirect && static_cast<double>(busy_reader_threads(w) + 1) <= cores;
}

std::unique_ptr<Loader> make_loader(const config::Workload& w, const plan::DatasetLayout& layout, CacheTier* tier,
                                    std::size_t cores) {
  auto pipelined = [&](LoaderDesign d) {
    if (d.workers > 0) d.polling_budget_ns = BatchWait::polling_budget_ns(d.workers, cores, w.reader.odirect);
    return std::make_unique<PipelinedLoader>(w, layout, d, tier);
  };
  switch (w.reader.data_loader) {
    case config::DataLoader::tensorflow:
      if (w.dataset.format == config::Format::tfrecord)
        return std::make_unique<TensorflowLoader>(
            w, layout, BatchWait::polling_budget_ns(busy_reader_threads(w), cores, w.reader.odirect));
      return pipelined(tensorflow_generator(w));
    case config::DataLoader::dali:
    case config::DataLoader::native_dali:
      return pipelined(dali(w));
    case config::DataLoader::pytorch:
    case config::DataLoader::synthetic:
      break;
  }
  return pipelined(pytorch(w, count(w.reader.read_threads)));
}

RankCores rank_cores(const mpi::Comm& comm) {
  const auto host = static_cast<double>(comm.host_index());
  const auto key = static_cast<double>(util::affinity_key());
  const std::vector<double> all = comm.all_gather({host, key});
  int sharing = 0;
  for (std::size_t r = 0; r + 1 < all.size(); r += 2) sharing += all[r] == host && all[r + 1] == key ? 1 : 0;
  const int mine = util::cores_available();
  return {.cpus = std::max(1, mine > 0 ? mine : util::host_info().cpu_count), .sharing = std::max(1, sharing)};
}

std::size_t cores_of_rank(const RankCores& c) { return static_cast<std::size_t>(std::max(1, c.cpus / c.sharing)); }

}  // namespace trainio::engine
