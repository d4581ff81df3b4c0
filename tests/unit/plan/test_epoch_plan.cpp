#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "config/load.hpp"
#include "unit/plan/npz_workload.hpp"
#include "plan/epoch_plan.hpp"
#include "plan/run_plan.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::plan;

namespace {

// Every (file, sample) each rank reads in an epoch, with how often.
std::map<std::pair<std::uint64_t, std::uint64_t>, int> reads(const config::Workload& w, int ranks, std::uint64_t epoch,
                                                              std::uint64_t* steps_out = nullptr,
                                                              Partition partition = Partition::strided) {
  const DatasetLayout layout(w);
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> seen;
  std::uint64_t steps = ~0ull;
  for (int r = 0; r < ranks; ++r) {
    const EpochPlan p(layout, Split::train, w, static_cast<std::uint64_t>(w.reader.batch_size), epoch, r, ranks, 0, -1,
                      partition);
    if (steps == ~0ull) steps = p.steps();
    REQUIRE(p.steps() == steps);  // every rank runs the same number of steps
    for (std::uint64_t s = 0; s < p.steps(); ++s)
      for (std::uint64_t b = 0; b < p.batch_size(); ++b) {
        const auto ref = p.sample(s, b);
        ++seen[{ref.file, ref.sample}];
      }
  }
  if (steps_out) *steps_out = steps;
  return seen;
}

std::vector<SampleRef> order(const config::Workload& w, std::uint64_t epoch, int rank = 0, int ranks = 1,
                             Partition partition = Partition::strided) {
  const DatasetLayout layout(w);
  const EpochPlan p(layout, Split::train, w, static_cast<std::uint64_t>(w.reader.batch_size), epoch, rank, ranks, 0, -1,
                    partition);
  std::vector<SampleRef> out;
  for (std::uint64_t s = 0; s < p.steps(); ++s)
    for (std::uint64_t b = 0; b < p.batch_size(); ++b) out.push_back(p.sample(s, b));
  return out;
}

}  // namespace

TEST_CASE("every sample is read at most once per epoch, all but the remainder exactly once") {
  for (const auto partition : {Partition::strided, Partition::local_files, Partition::contiguous}) {
    for (const auto* shuffle : {"off", "seed", "random"}) {
      for (int ranks : {1, 2, 3, 4, 7}) {
        const auto w = test::npz_workload({"dataset.num_files_train=37", "dataset.num_samples_per_file=3",
                                           "reader.batch_size=2", std::string("reader.sample_shuffle=") + shuffle,
                                           std::string("reader.file_shuffle=") + shuffle});
        std::uint64_t steps = 0;
        const auto seen = reads(w, ranks, 2, &steps, partition);
        for (const auto& [ref, n] : seen) {
          REQUIRE(n == 1);
          REQUIRE(ref.first < 37);
          REQUIRE(ref.second < 3);
        }
        CHECK(seen.size() == steps * 2 * static_cast<std::uint64_t>(ranks));
        CHECK(steps == steps_per_epoch(partition, 37, 3, 2, ranks));
        if (partition == Partition::strided) CHECK(37 * 3 - seen.size() < 2 * static_cast<std::uint64_t>(ranks));
      }
    }
  }
}

TEST_CASE("local scope: a rank reads only its own files, every epoch, in a new order") {
  const auto w = test::npz_workload({"dataset.num_files_train=12", "dataset.num_samples_per_file=2",
                                     "reader.batch_size=2", "reader.sample_shuffle=seed", "reader.file_shuffle=seed"});
  for (int r = 0; r < 3; ++r) {
    const auto e1 = order(w, 1, r, 3, Partition::local_files);
    const auto e2 = order(w, 2, r, 3, Partition::local_files);
    CHECK(e1 != e2);
    std::set<std::uint64_t> f1, f2;
    for (const auto& s : e1) f1.insert(s.file);
    for (const auto& s : e2) f2.insert(s.file);
    CHECK(f1 == f2);
    for (const auto f : f1) CHECK(f % 3 == static_cast<std::uint64_t>(r));
  }
}

TEST_CASE("contiguous shards: a rank keeps its slice across epochs, shuffled within it") {
  const auto w = test::npz_workload({"dataset.num_files_train=10", "dataset.num_samples_per_file=4",
                                     "reader.batch_size=4", "reader.sample_shuffle=seed"});
  const auto e1 = order(w, 1, 1, 2, Partition::contiguous);
  const auto e2 = order(w, 2, 1, 2, Partition::contiguous);
  CHECK(e1 != e2);
  std::set<std::uint64_t> f1, f2;
  for (const auto& s : e1) f1.insert(s.file);
  for (const auto& s : e2) f2.insert(s.file);
  for (const auto f : f1) CHECK(f >= 5);  // rank 1 of 2 holds the second half of the samples
  CHECK(f1 == f2);
}

TEST_CASE("DLIO's deadlock cases give every rank the same steps") {
  struct Case {
    int files, batch, ranks;
    std::uint64_t steps;
  };
  for (const Case c : {Case{13, 4, 3, 1}, Case{24, 4, 3, 2}, Case{25, 4, 3, 2}, Case{145, 16, 3, 3}}) {
    INFO(c.files << " files, batch " << c.batch << ", " << c.ranks << " ranks");
    const auto w = test::npz_workload({"dataset.num_files_train=" + std::to_string(c.files),
                                       "reader.batch_size=" + std::to_string(c.batch), "reader.sample_shuffle=seed"});
    std::uint64_t steps = 0;
    const auto seen = reads(w, c.ranks, 1, &steps);
    CHECK(steps == c.steps);
    CHECK(seen.size() == c.steps * static_cast<std::uint64_t>(c.batch * c.ranks));
    const DatasetLayout layout(w);
    const EpochPlan p(layout, Split::train, w, static_cast<std::uint64_t>(c.batch), 1, 0, c.ranks, 0);
    CHECK(p.dropped_samples() == static_cast<std::uint64_t>(c.files) - seen.size());
  }
}

TEST_CASE("with seed shuffling each epoch has a new order, and the same seed the same order") {
  const auto w = test::npz_workload(
      {"dataset.num_files_train=64", "reader.batch_size=4", "reader.sample_shuffle=seed", "reader.file_shuffle=seed"});
  CHECK(order(w, 1) == order(w, 1));
  CHECK(order(w, 1) != order(w, 2));
  const auto other_seed =
      test::npz_workload({"dataset.num_files_train=64", "reader.batch_size=4", "reader.sample_shuffle=seed",
                          "reader.file_shuffle=seed", "train.seed=7"});
  CHECK(order(w, 1) != order(other_seed, 1));
  const auto fixed = test::npz_workload({"dataset.num_files_train=64", "reader.batch_size=4",
                                         "reader.sample_shuffle=seed", "train.seed_change_epoch=false"});
  CHECK(order(fixed, 1) == order(fixed, 2));
}

TEST_CASE("without shuffling ranks take turns through the files in order") {
  const auto w = test::npz_workload({"dataset.num_files_train=8", "reader.batch_size=2"});
  const auto r0 = order(w, 1, 0, 2);
  const auto r1 = order(w, 1, 1, 2);
  CHECK(r0 == std::vector<SampleRef>{{0, 0}, {2, 0}, {4, 0}, {6, 0}});
  CHECK(r1 == std::vector<SampleRef>{{1, 0}, {3, 0}, {5, 0}, {7, 0}});
  CHECK(order(w, 1, 0, 2) == order(w, 2, 0, 2));  // no shuffle: the same every epoch
}

TEST_CASE("file shuffle alone keeps each file's samples together and in order") {
  const auto w = test::npz_workload({"dataset.num_files_train=10", "dataset.num_samples_per_file=4",
                                     "reader.batch_size=4", "reader.file_shuffle=seed"});
  const auto o = order(w, 1);
  REQUIRE(o.size() == 40);
  std::set<std::uint64_t> files;
  for (std::size_t i = 0; i < o.size(); i += 4) {
    for (std::uint64_t s = 0; s < 4; ++s) CHECK(o[i + s] == SampleRef{o[i].file, s});
    files.insert(o[i].file);
  }
  CHECK(files.size() == 10);
  CHECK(o[0].file + o[4].file + o[8].file != 0 + 1 + 2);  // not the identity order
}

TEST_CASE("a dataset too small for one step on every rank is a config error") {
  const auto w = test::npz_workload({"dataset.num_files_train=5", "reader.batch_size=4"});
  const DatasetLayout layout(w);
  CHECK_NOTHROW(shape_run(w, layout, 1));
  CHECK_THROWS_AS(shape_run(w, layout, 2), Error);
  try {
    shape_run(w, layout, 2);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
    CHECK(std::string(e.what()).find("needs 8") != std::string::npos);
  }
}

TEST_CASE("total_training_steps caps the whole run, not each epoch") {
  const auto w = test::npz_workload(
      {"dataset.num_files_train=40", "reader.batch_size=4", "train.epochs=5", "train.total_training_steps=25"});
  const DatasetLayout layout(w);
  const auto shape = shape_run(w, layout, 1);
  CHECK(shape.train_steps_per_epoch == 10);
  CHECK(shape.epochs == 3);
  CHECK(shape.total_train_steps == 25);
  CHECK(train_steps_in_epoch(shape, w, 3) == 5);
  CHECK(train_steps_in_epoch(shape, w, 4) == 0);
}

TEST_CASE("evaluation follows DLIO's schedule") {
  const auto w =
      test::npz_workload({"workflow.evaluation=true", "dataset.num_files_eval=4", "evaluation.eval_after_epoch=2",
                          "evaluation.epochs_between_evals=3", "train.epochs=10"});
  std::vector<std::uint64_t> evals;
  for (std::uint64_t e = 1; e <= 10; ++e)
    if (evaluates_after(w, e)) evals.push_back(e);
  CHECK(evals == std::vector<std::uint64_t>{2, 5, 8});
}

namespace {

// The files a rank streams, in order.
std::vector<std::uint64_t> streamed(const DatasetLayout& layout, const config::Workload& w, std::uint64_t epoch, int rank,
                                    int ranks) {
  const FileStreams streams(layout, Split::train, w, epoch, rank, ranks, 0);
  std::vector<std::uint64_t> files;
  for (std::uint64_t i = 0; i < streams.size(); ++i) files.push_back(streams[i]);
  return files;
}

}  // namespace

TEST_CASE("tensorflow file streams: ranks take every ranks-th file of the epoch's order") {
  const auto w = test::npz_workload({"dataset.num_files_train=11", "dataset.num_samples_per_file=5",
                                     "reader.batch_size=2", "reader.file_shuffle=seed"});
  const DatasetLayout layout(w);
  std::multiset<std::uint64_t> all;
  for (int r = 0; r < 3; ++r) {
    CHECK_FALSE(FileStreams(layout, Split::train, w, 1, r, 3, 0).record_sharded());
    const auto mine = streamed(layout, w, 1, r, 3);
    CHECK(mine.size() == (r < 2 ? 4u : 3u));
    all.insert(mine.begin(), mine.end());
    CHECK(streamed(layout, w, 1, r, 3) == mine);  // reproducible
    CHECK(streamed(layout, w, 2, r, 3) != mine);  // a new order each epoch
  }
  CHECK(all == std::multiset<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  // Steps: the rank with fewest files (3 files x 5 records / batch 2).
  CHECK(steps_per_epoch(Partition::file_streams, 11, 5, 2, 3) == 7);

  const auto unshuffled = test::npz_workload({"dataset.num_files_train=4"});
  CHECK(streamed(DatasetLayout(unshuffled), unshuffled, 1, 1, 2) == std::vector<std::uint64_t>{1, 3});
}

TEST_CASE("tensorflow file streams with fewer files than ranks: every rank streams every file") {
  const auto w =
      test::npz_workload({"dataset.num_files_train=2", "dataset.num_samples_per_file=9", "reader.batch_size=2"});
  const DatasetLayout layout(w);
  for (int r = 0; r < 4; ++r) {
    CHECK(FileStreams(layout, Split::train, w, 1, r, 4, 0).record_sharded());
    CHECK(streamed(layout, w, 1, r, 4) == std::vector<std::uint64_t>{0, 1});
  }
  CHECK(steps_per_epoch(Partition::file_streams, 2, 9, 2, 4) == 2);  // 18 records / 4 ranks / batch 2
}

TEST_CASE("tensorflow file streams hold no list: a rank's stream of millions of files is computed file by file") {
  const auto w = test::npz_workload(
      {"dataset.num_files_train=50000000", "dataset.num_samples_per_file=1", "reader.file_shuffle=seed"});
  const FileStreams streams(DatasetLayout(w), Split::train, w, 1, 0, 1, 0);
  CHECK(streams.size() == 50000000u);
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 1000; ++i) seen.insert(streams[i]);
  CHECK(seen.size() == 1000);  // a permutation: no file twice
  CHECK(*seen.rbegin() < 50000000u);
}

TEST_CASE("tensorflow generator threads: each walks a contiguous run of steps, interleaved batch by batch") {
  // 7 steps, 3 threads: thread 0 has steps 0-2, thread 1 steps 3-4, thread 2 steps 5-6.
  std::vector<std::uint64_t> order;
  for (std::uint64_t b = 0; b < 7; ++b) order.push_back(thread_slice_step(b, 7, 3));
  CHECK(order == std::vector<std::uint64_t>{0, 3, 5, 1, 4, 6, 2});
  for (std::uint64_t steps : {1u, 2u, 5u, 12u, 13u}) {
    std::set<std::uint64_t> seen;
    for (std::uint64_t b = 0; b < steps; ++b) seen.insert(thread_slice_step(b, steps, 4));
    CHECK(seen.size() == steps);
    CHECK(*seen.rbegin() == steps - 1);
  }
}

TEST_CASE("a reader's memo of the file order gives the plan's own samples, across epochs and plans") {
  for (const auto partition : {Partition::strided, Partition::local_files, Partition::contiguous}) {
    for (const auto* shuffle : {"off", "seed"}) {
      const auto w =
          test::npz_workload({"dataset.num_files_train=13", "dataset.num_samples_per_file=5", "reader.batch_size=3",
                              std::string("reader.sample_shuffle=") + shuffle, "reader.file_shuffle=seed"});
      const DatasetLayout layout(w);
      // One memo carried from epoch to epoch and between two ranks' plans, as a reader thread
      // carries it: it must never answer for a plan it was not filled by.
      util::Permutation::Memo memo;
      for (std::uint64_t epoch = 1; epoch <= 3; ++epoch)
        for (int rank = 0; rank < 2; ++rank) {
          const EpochPlan p(layout, Split::train, w, 3, epoch, rank, 2, 0, -1, partition);
          for (std::uint64_t s = 0; s < p.steps(); ++s)
            for (std::uint64_t b = 0; b < p.batch_size(); ++b) REQUIRE(p.sample(s, b, memo) == p.sample(s, b));
        }
    }
  }
}

TEST_CASE("a permutation's memo answers only for the index and permutation it holds") {
  const util::Permutation a(1000, 1), b(1000, 2), c(999, 1);
  util::Permutation::Memo memo;
  for (std::uint64_t i : {5u, 5u, 6u, 5u}) {
    CHECK(a(i, memo) == a(i));
    CHECK(b(i, memo) == b(i));
    CHECK(c(i, memo) == c(i));
  }
}

TEST_CASE("a run of samples lists the plan's own samples of its slots, as long as it can") {
  for (const auto partition : {Partition::strided, Partition::local_files, Partition::contiguous}) {
    for (const auto* shuffle : {"off", "seed"}) {
      for (int ranks : {1, 2, 3}) {
        const auto w =
            test::npz_workload({"dataset.num_files_train=7", "dataset.num_samples_per_file=10", "reader.batch_size=4",
                                std::string("reader.sample_shuffle=") + shuffle, "reader.file_shuffle=seed"});
        const DatasetLayout layout(w);
        util::Permutation::Memo memo;
        const EpochPlan p(layout, Split::train, w, 4, 1, ranks - 1, ranks, 0, -1, partition);
        std::uint64_t longest = 0;
        for (std::uint64_t s = 0; s < p.steps(); ++s)
          for (std::uint64_t end = 1; end <= p.batch_size(); ++end)
            for (std::uint64_t slot = 0; slot < end; ++slot) {
              const SampleRun run = p.run(s, slot, end, memo);
              REQUIRE(run.count >= 1);
              REQUIRE(slot + run.count <= end);
              for (std::uint64_t i = 0; i < run.count; ++i)
                REQUIRE(p.sample(s, slot + i) == SampleRef{run.first.file, run.first.sample + i * run.stride});
              // It stops only at `end`, at a file's end, or where samples are shuffled.
              const std::uint64_t after = slot + run.count;
              if (after < end && std::string(shuffle) == "off") {
                const SampleRef next = p.sample(s, after);
                CHECK((next.file != run.first.file || next.sample != run.first.sample + run.count * run.stride));
              }
              if (std::string(shuffle) != "off") CHECK(run.count == 1);
              longest = std::max(longest, run.count);
            }
        if (std::string(shuffle) == "off") CHECK(longest > 1);
      }
    }
  }
}
