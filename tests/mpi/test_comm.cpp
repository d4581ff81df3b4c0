#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <stdexcept>

#include "config/load.hpp"
#include "engine/load/loader.hpp"
#include "engine/together.hpp"
#include "metrics/summary.hpp"
#include "mpi/comm.hpp"
#include "plan/epoch_plan.hpp"
#include "util/error.hpp"
#include "util/host_info.hpp"

using namespace trainio;

namespace {
const mpi::Comm& world() {
  static const mpi::Comm comm = mpi::Comm::world();
  return comm;
}
}  // namespace

TEST_CASE("ranks agree on failure: everyone learns the lowest failing rank") {
  const auto& c = world();
  CHECK(c.agree(true) == -1);
  CHECK(c.agree(c.rank() != 1) == 1);
  CHECK(c.agree(c.rank() == 0) == (c.size() > 1 ? 1 : -1));
}

TEST_CASE("reductions, gathers and broadcasts") {
  const auto& c = world();
  const int n = c.size();
  CHECK(c.sum(static_cast<double>(c.rank() + 1)) == Approx(n * (n + 1) / 2.0));
  CHECK(c.max(static_cast<std::uint64_t>(c.rank())) == static_cast<std::uint64_t>(n - 1));
  CHECK(c.min(static_cast<std::uint64_t>(c.rank() + 5)) == 5u);
  const auto v = c.sum(std::vector<std::uint64_t>{1, static_cast<std::uint64_t>(c.rank())});
  CHECK(v[0] == static_cast<std::uint64_t>(n));
  const auto all = c.all_gather({static_cast<double>(c.rank()), 1.0});
  REQUIRE(all.size() == static_cast<size_t>(2 * n));
  CHECK(all[2 * (n - 1)] == n - 1);
  const auto names = c.gather_strings("rank" + std::to_string(c.rank()));
  if (c.is_root()) {
    REQUIRE(names.size() == static_cast<size_t>(n));
    CHECK(names.back() == "rank" + std::to_string(n - 1));
  }
  CHECK(c.broadcast(c.is_root() ? std::string("from zero") : std::string()) == "from zero");
  CHECK(c.broadcast(static_cast<std::int64_t>(c.rank() == 0 ? 42 : 7)) == 42);
  CHECK(c.num_hosts() == 1);
  CHECK(c.node_size() == n);
}

TEST_CASE("a gather to rank 0 gives it every rank's vector in rank order, and the others nothing") {
  const auto& c = world();
  const int n = c.size();
  const auto all = c.gather({static_cast<double>(c.rank()), 10.0 * c.rank() + 0.5, -1.0});
  if (c.is_root()) {
    REQUIRE(all.size() == static_cast<std::size_t>(3 * n));
    for (int r = 0; r < n; ++r) {
      CHECK(all[static_cast<std::size_t>(3 * r)] == r);
      CHECK(all[static_cast<std::size_t>(3 * r + 1)] == 10.0 * r + 0.5);
      CHECK(all[static_cast<std::size_t>(3 * r + 2)] == -1.0);
    }
  } else {
    CHECK(all.empty());
  }
  // Nothing to send: nothing on any rank, and the ranks stay in step.
  CHECK(c.gather({}).empty());
  CHECK(c.agree(true) == -1);
}

TEST_CASE("after a rank fails, a gather still meets every rank in step") {
  // As with the other collectives, a failure is settled first (together); the next gather then
  // matches on every rank and carries this round's values, not a stale round's.
  const auto& c = world();
  for (int round = 0; round < 2; ++round) {
    CHECK_THROWS_AS(engine::together(c, [&] {
                      if (c.rank() == c.size() - 1) throw io_error("disk full", "free space");
                    }),
                    Error);
    const auto all = c.gather({static_cast<double>(round * 100 + c.rank())});
    if (c.is_root()) {
      REQUIRE(all.size() == static_cast<std::size_t>(c.size()));
      for (int r = 0; r < c.size(); ++r) CHECK(all[static_cast<std::size_t>(r)] == round * 100 + r);
    } else {
      CHECK(all.empty());
    }
  }
}

TEST_CASE("a failure on one rank stops every rank at the same point, reported once") {
  const auto& c = world();
  const int failing = c.size() - 1;
  try {
    engine::together(c, [&] {
      if (c.rank() == failing) throw data_error("file 'x' is short", "regenerate");
    });
    FAIL("together() should have thrown on every rank");
  } catch (const Error& e) {
    CHECK(e.settled());
    if (c.rank() == failing) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK(e.rank() == failing);
    } else {
      CHECK(e.kind() == ErrorKind::peer);
    }
  }
  // And the ranks are still in step: a collective after the failure completes.
  CHECK(c.agree(true) == -1);
}

namespace {
// What a summarizer hands to per_rank.csv.
struct Rows : metrics::RankRows {
  std::vector<std::string> phases;
  std::vector<metrics::RankFigures> ranks;
  void add(std::uint64_t epoch, const char* phase, const metrics::PhaseSummary& p) override {
    phases.push_back(std::to_string(epoch) + " " + phase);
    ranks.insert(ranks.end(), p.ranks.begin(), p.ranks.end());
  }
};
}  // namespace

TEST_CASE("a DLIO figure that some rank lacks has no value across ranks") {
  const auto& c = world();
  metrics::EpochRecord e;
  e.epoch = 1;
  e.train.block.steps = 2;
  e.train.block.duration = 1.0;
  e.train.block.au = 0.5;
  if (c.rank() != 0) e.train.block.throughput_dlio = 100;  // rank 0's has no value
  Rows rows;
  metrics::RunSummarizer summarizer(c, &rows);
  const auto& t = summarizer.add(e).train;
  CHECK_FALSE(t.throughput_dlio);  // not a sum over some of the ranks
  REQUIRE(t.au);
  CHECK(*t.au == Approx(0.5));
  if (c.is_root()) {
    REQUIRE(rows.ranks.size() == static_cast<std::size_t>(c.size()));
    CHECK_FALSE(rows.ranks[0].throughput_dlio);
    if (c.size() > 1) CHECK(rows.ranks[1].throughput_dlio == Approx(100));
  } else {
    CHECK(rows.ranks.empty());  // only rank 0 writes per_rank.csv
  }
}

TEST_CASE("a summarised phase keeps its stragglers and hosts on rank 0 and hands every rank figure on") {
  const auto& c = world();
  metrics::EpochRecord e;
  e.epoch = 3;
  e.train.block.steps = 2;
  e.train.block.duration = 1.0 + c.rank();
  // The last rank waited longest for its batches (its own time is the longest), and the others
  // waited for it at the barrier: the straggler.
  e.train.wait_ns.record(static_cast<std::uint64_t>(100'000'000 * (1 + 9 * (c.rank() == c.size() - 1))));
  e.train.compute_ns.record(50'000'000);
  e.train.barrier_ns.record(c.rank() == c.size() - 1 ? 0 : 900'000'000);
  e.train.samples = 10;
  e.train.cpu_user = 0.25;
  e.evaluated = true;
  e.eval.block.duration = 0.5;
  Rows rows;
  metrics::RunSummarizer summarizer(c, &rows);
  const auto& s = summarizer.add(e);
  // What rank 0 keeps for the reports grows with the hosts, not the ranks.
  CHECK(s.train.ranks.empty());
  CHECK(s.eval.ranks.empty());
  // Figures every rank needs are still on every rank.
  CHECK(s.train.samples == 10u * static_cast<std::uint64_t>(c.size()));
  CHECK(s.train.duration == Approx(c.size()));
  if (!c.is_root()) {
    // The per-rank figures travel to rank 0 only.
    CHECK(s.train.rank_count == 0);
    CHECK(s.train.hosts.empty());
    CHECK_FALSE(s.train.straggler.known);
    CHECK(s.train.cpu_user == 0);
    CHECK(rows.ranks.empty());
    return;
  }
  CHECK(s.train.rank_count == c.size());
  CHECK(s.train.cpu_user == Approx(0.25 * c.size()));
  CHECK(s.train.slowest.rank == c.size() - 1);
  CHECK(s.train.slowest.duration == Approx(c.size()));
  CHECK(s.train.slowest.own() == Approx(c.size() > 1 ? 1.05 : 1.05));
  CHECK(s.train.fastest.rank == (c.size() > 1 ? 0 : c.size() - 1));
  CHECK(s.train.straggler.known == (c.size() > 1));
  if (c.size() > 1) {
    CHECK(s.train.straggler.rank == c.size() - 1);
    CHECK(s.train.straggler.held_others);
    CHECK(s.train.straggler.batch_wait == Approx(1.0));
    CHECK(s.train.straggler.others_batch_wait == Approx(0.1));
    CHECK(s.train.straggler.others_barrier == Approx(0.9));
  }
  REQUIRE(s.train.hosts.size() == static_cast<std::size_t>(c.num_hosts()));
  int ranks = 0;
  std::uint64_t samples = 0;
  for (const auto& h : s.train.hosts) {
    ranks += h.ranks;
    samples += h.samples;
  }
  CHECK(ranks == c.size());
  CHECK(samples == 10u * static_cast<std::uint64_t>(c.size()));
  CHECK(rows.phases == std::vector<std::string>{"3 train", "3 eval"});
  REQUIRE(rows.ranks.size() == 2 * static_cast<std::size_t>(c.size()));
  CHECK(rows.ranks[static_cast<std::size_t>(c.size()) - 1].duration == Approx(c.size()));
}

TEST_CASE("the most common access sizes of every rank are merged on rank 0") {
  const auto& c = world();
  metrics::EpochRecord e;
  e.epoch = 1;
  e.train.block.steps = 1;
  e.train.block.duration = 1.0;
  // Every rank reads 4 KiB twice; rank r also reads (r + 1) MiB once.
  for (const std::uint64_t bytes : std::vector<std::uint64_t>{4096, 4096, (static_cast<std::uint64_t>(c.rank()) + 1) << 20}) {
    storage::OpEvent read;
    read.op = storage::Op::read;
    read.bytes = bytes;
    read.ns = 1000;
    e.train.io.on_op(read);
  }
  metrics::RunSummarizer summarizer(c);
  const auto& common = summarizer.add(e).train.io.data_files().common;
  if (!c.is_root()) {
    CHECK(common.empty());
    return;
  }
  std::map<std::uint64_t, std::uint64_t> calls(common.begin(), common.end());
  CHECK(calls.size() == static_cast<std::size_t>(c.size()) + 1);
  CHECK(calls[4096] == 2u * static_cast<std::uint64_t>(c.size()));
  for (int r = 0; r < c.size(); ++r) CHECK(calls[(static_cast<std::uint64_t>(r) + 1) << 20] == 1u);
}

TEST_CASE("run figures combine across ranks as DLIO combines them") {
  const auto& c = world();
  metrics::RankRecord rec;
  metrics::EpochRecord e;
  e.epoch = 1;
  e.train.block.steps = 10;
  e.train.block.duration = 1.0 + c.rank();
  e.train.block.au = 0.5 + 0.1 * c.rank();
  e.train.block.throughput_dlio = 100;
  e.train.block.throughput = 120;
  e.train.samples = 40;
  e.train.sample_bytes = 4000;
  storage::OpEvent read;
  read.op = storage::Op::read;
  read.bytes = 5000;
  read.ns = 1000 * (c.rank() + 1);
  e.train.io.on_op(read);
  e.train.sample_ns.record(static_cast<std::uint64_t>(1000 * (c.rank() + 1)));
  metrics::RunSummarizer summarizer(c);
  const int n = c.size();
  const auto& t = summarizer.add(e).train;
  CHECK(t.au == Approx(0.5 + 0.1 * (n - 1) / 2.0));  // mean over ranks
  CHECK(t.au_min == Approx(0.5));
  CHECK(t.au_max == Approx(0.5 + 0.1 * (n - 1)));
  CHECK(t.throughput_dlio == Approx(100.0 * n));     // sum over ranks
  CHECK(t.duration == Approx(n));                    // the slowest rank
  CHECK(t.samples == static_cast<std::uint64_t>(40 * n));
  CHECK(t.bytes_read == static_cast<std::uint64_t>(5000 * n));
  CHECK(t.read_bandwidth == Approx(5000.0 * n / n));
  CHECK(t.io.op(storage::Op::read).count == static_cast<std::uint64_t>(n));
  CHECK(t.sample_ns.count() == static_cast<std::uint64_t>(n));
  CHECK(t.sample_ns.min() == 1000);
  CHECK(t.sample_ns.max() == static_cast<std::uint64_t>(1000 * n));
}

TEST_CASE("the run keeps each epoch's figures on rank 0 only, and its totals on every rank") {
  const auto& c = world();
  const int n = c.size();
  metrics::RunSummarizer summarizer(c);
  for (std::uint64_t epoch = 1; epoch <= 3; ++epoch) {
    metrics::EpochRecord e;
    e.epoch = epoch;
    e.train.block.steps = 1;
    e.train.block.duration = 1.0;
    storage::OpEvent read;
    read.op = storage::Op::read;
    read.bytes = 10;
    read.ns = 1000 * static_cast<std::int64_t>(epoch);
    e.train.io.on_op(read);
    for (std::uint64_t v = 1; v <= 20; ++v) e.train.wait_ns.record(v * epoch);  // below 64: exact buckets
    const auto& s = summarizer.add(e);
    CHECK(s.epoch == epoch);
    // An epoch's latencies keep what the reports print, not their buckets.
    CHECK(s.train.wait_ns.count() == static_cast<std::uint64_t>(20 * n));
    CHECK(s.train.wait_ns.quantile(0.5) == 10 * epoch);
    CHECK(s.train.wait_ns.quantile(0.99) == 20 * epoch);
    CHECK(s.train.wait_ns.max() == 20 * epoch);
    CHECK_FALSE(s.train.wait_ns.buckets_kept());
    CHECK_FALSE(s.train.io.op(storage::Op::read).latency.buckets_kept());
    CHECK_THROWS_AS(s.train.wait_ns.quantile(0.3), std::logic_error);
  }
  metrics::CheckpointRecord ck;
  ck.seconds = 1;
  storage::OpEvent write;
  write.op = storage::Op::write;
  write.bytes = 100;
  write.ns = 500;
  ck.io.on_op(write);
  CHECK(summarizer.add(ck).io.op(storage::Op::write).count == static_cast<std::uint64_t>(n));
  const metrics::RunSummary run = summarizer.finish(metrics::RankRecord{});
  CHECK(run.ranks == n);
  CHECK(run.epochs.size() == (c.is_root() ? 3u : 0u));
  CHECK(run.checkpoints.size() == (c.is_root() ? 1u : 0u));
  // The run's totals keep their buckets: every epoch's calls and waits together.
  CHECK(run.io.op(storage::Op::read).count == static_cast<std::uint64_t>(3 * n));
  CHECK(run.io.op(storage::Op::write).count == static_cast<std::uint64_t>(n));
  CHECK(run.train_wait_ns.count() == static_cast<std::uint64_t>(60 * n));
  CHECK(run.train_wait_ns.max() == 60);
  CHECK(run.train_wait_ns.quantile(0.3) > 0);
}

TEST_CASE("across real ranks, an epoch reads every sample exactly once") {
  const auto& c = world();
  const auto w = config::load_text("framework: pytorch\nreader:\n  data_loader: pytorch\n  batch_size: 3\n"
                                   "  sample_shuffle: seed\ndataset:\n  format: npz\n  num_files_train: 50\n"
                                   "  num_samples_per_file: 2\n",
                                   "t.yaml", "t");
  const plan::DatasetLayout layout(w);
  const plan::EpochPlan p(layout, plan::Split::train, w, 3, 2, c.rank(), c.size(), 0);
  std::vector<std::uint64_t> mine(100, 0);
  for (std::uint64_t s = 0; s < p.steps(); ++s)
    for (std::uint64_t b = 0; b < 3; ++b) {
      const auto ref = p.sample(s, b);
      ++mine[ref.file * 2 + ref.sample];
    }
  const auto counts = c.sum(mine);
  std::uint64_t read = 0;
  for (const auto n : counts) {
    CHECK(n <= 1);
    read += n;
  }
  CHECK(read == p.steps() * 3 * static_cast<std::uint64_t>(c.size()));
  CHECK(c.max(p.steps()) == c.min(p.steps()));
}

namespace {
// Binds this process to `cpus` (of the machine's first ones) for the test's scope.
class Bound {
 public:
  explicit Bound(const std::vector<int>& cpus) {
    ::sched_getaffinity(0, sizeof before_, &before_);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int c : cpus) CPU_SET(c, &set);
    REQUIRE(::sched_setaffinity(0, sizeof set, &set) == 0);
  }
  ~Bound() { ::sched_setaffinity(0, sizeof before_, &before_); }
  Bound(const Bound&) = delete;
  Bound& operator=(const Bound&) = delete;

 private:
  cpu_set_t before_;
};
}  // namespace

TEST_CASE("ranks bound to the same CPUs share them; ranks bound apart count their own") {
  const auto& c = world();
  const int cpus = util::host_info().cpu_count;
  std::vector<int> all(static_cast<std::size_t>(cpus));
  std::iota(all.begin(), all.end(), 0);
  {
    // Every rank on every CPU, as unbound ranks are: the machine's cores shared among the host's ranks.
    const Bound bound(all);
    CHECK(engine::cores_of_rank(engine::rank_cores(c)) == static_cast<std::size_t>(std::max(1, cpus / c.node_size())));
  }
  {
    // Rank r on CPU r mod cpus (by core, or by socket on a one-core "socket"): one CPU, shared
    // by the ranks bound to it, and never less than one core.
    const Bound bound({c.node_rank() % cpus});
    CHECK(engine::cores_of_rank(engine::rank_cores(c)) == 1);
  }
  if (cpus >= 2) {
    // Two "sockets", each half the CPUs, the host's ranks bound to them in turn (OpenMPI's
    // --bind-to socket): each rank gets its socket's CPUs shared among the ranks bound to it.
    const int socket = c.node_rank() % 2;
    const int first = socket == 0 ? 0 : cpus / 2, last = socket == 0 ? cpus / 2 : cpus;
    const Bound bound(std::vector<int>(all.begin() + first, all.begin() + last));
    const int on_socket = socket == 0 ? (c.node_size() + 1) / 2 : c.node_size() / 2;
    CHECK(engine::cores_of_rank(engine::rank_cores(c)) == static_cast<std::size_t>(std::max(1, (last - first) / on_socket)));
  }
}

TEST_CASE("the library's yield-when-idle setting is read as Open MPI set it") {
  // The tests run with OMPI_MCA_mpi_yield_when_idle=1 (tests/CMakeLists.txt); Open MPI's own flag,
  // read without MPI's tool interface, must say so.
  const char* setting = std::getenv("OMPI_MCA_mpi_yield_when_idle");
  if (setting == nullptr || trainio::mpi::library_version().find("Open MPI") == std::string::npos) return;
  CHECK(trainio::mpi::library_yields_when_idle() == (std::string(setting) == "1"));
}
