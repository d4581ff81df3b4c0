#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "engine/load/batch_reader.hpp"
#include "plan/epoch_plan.hpp"
#include "plan/layout.hpp"
#include "unit/plan/npz_workload.hpp"

using namespace trainio;

namespace {

// Serves a sample from memory when it shares its group of four with the sample read before it,
// as a Parquet reader serves the rows of a row group it has read.
class GroupedReader final : public format::SampleReader {
 public:
  std::vector<std::uint64_t> read_samples;  // samples read() was asked for (a storage call each)
  std::uint64_t served = 0;                 // samples served from memory

  std::uint64_t read(const format::SampleRequest& r) override {
    read_samples.push_back(r.sample);
    held_ = {r.file, r.sample / 4};
    return 10;
  }
  bool read_from_memory(const format::SampleRequest& r, std::uint64_t& bytes) override {
    if (held_ != std::pair{r.file, r.sample / 4}) return false;
    ++served;
    bytes = 10;
    return true;
  }

 private:
  std::pair<std::uint64_t, std::uint64_t> held_{~0ULL, 0};
};

}  // namespace

TEST_CASE("samples served from memory count once each, their time shared, with no storage call") {
  const auto w = test::npz_workload({"dataset.num_files_train=2", "dataset.num_samples_per_file=16", "reader.batch_size=16"});
  const plan::DatasetLayout layout(w);
  const plan::EpochPlan plan(layout, plan::Split::train, w, 16, 1, 0, 1, 0);
  auto owned = std::make_unique<GroupedReader>();
  GroupedReader& reader = *owned;
  engine::BatchReader batches(layout, std::move(owned));
  engine::PhaseWork work;
  work.plan = &plan;
  const engine::Batch b = batches.read(work, 0);
  // In file order, one storage call per group of four: samples 0, 4, 8, 12.
  CHECK(b.samples == 16);
  CHECK(b.bytes == 160);
  CHECK(reader.read_samples == std::vector<std::uint64_t>{0, 4, 8, 12});
  CHECK(reader.served == 12);
  metrics::ReadPhase phase;
  batches.collect(phase);
  CHECK(phase.sample_ns.count() == 16);  // every sample has a time
}

namespace {

// GroupedReader serving whole runs: it counts how often the loader asks.
class RunReader final : public format::SampleReader {
 public:
  std::vector<std::uint64_t> read_samples;
  std::uint64_t asked = 0, served = 0;

  std::uint64_t read(const format::SampleRequest& r) override {
    read_samples.push_back(r.sample);
    held_ = {r.file, r.sample / 4};
    return 10;
  }
  std::uint64_t read_run_from_memory(const format::SampleRequest& r, std::uint64_t stride, std::uint64_t count,
                                     std::uint64_t& bytes) override {
    ++asked;
    std::uint64_t n = 0;
    while (n < count && held_ == std::pair{r.file, (r.sample + n * stride) / 4}) ++n;
    served += n;
    bytes = 10 * n;
    return n;
  }

 private:
  std::pair<std::uint64_t, std::uint64_t> held_{~0ULL, 0};
};

}  // namespace

TEST_CASE("samples a reader holds are served a run at a time, each with its share of the time") {
  const auto w = test::npz_workload({"dataset.num_files_train=2", "dataset.num_samples_per_file=16", "reader.batch_size=16"});
  const plan::DatasetLayout layout(w);
  const plan::EpochPlan plan(layout, plan::Split::train, w, 16, 1, 0, 1, 0);
  auto owned = std::make_unique<RunReader>();
  RunReader& reader = *owned;
  engine::BatchReader batches(layout, std::move(owned));
  engine::PhaseWork work;
  work.plan = &plan;
  const engine::Batch b = batches.read(work, 0);
  CHECK(b.samples == 16);
  CHECK(b.bytes == 160);
  CHECK(reader.read_samples == std::vector<std::uint64_t>{0, 4, 8, 12});
  CHECK(reader.served == 12);
  // Asked before each storage read (nothing held) and once after it for the rest of its group.
  CHECK(reader.asked == 8);
  metrics::ReadPhase phase;
  batches.collect(phase);
  CHECK(phase.sample_ns.count() == 16);

  // Two ranks: each rank's run takes every other sample of a file.
  const plan::EpochPlan second(layout, plan::Split::train, w, 16, 1, 1, 2, 0);
  auto owned2 = std::make_unique<RunReader>();
  RunReader& reader2 = *owned2;
  engine::BatchReader batches2(layout, std::move(owned2));
  work.plan = &second;
  const engine::Batch b2 = batches2.read(work, 0);
  CHECK(b2.samples == 16);
  CHECK(reader2.read_samples == std::vector<std::uint64_t>{1, 5, 9, 13, 1, 5, 9, 13});
  CHECK(reader2.served == 8);
  CHECK(reader2.asked == 16);
}
