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
