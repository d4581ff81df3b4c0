// The per-step synchronisation against MPI's own: how much latency trainio's step agreement
// (Comm::vote, as the training loop calls it) adds to each step over a plain MPI_Barrier and over
// MPI_Ibarrier completed by MPI_Wait (MPI's blocking progress), how much CPU a waiting rank burns,
// and how much CPU is left meanwhile for other threads (the readers). "before" is the step
// agreement trainio used up to issue 32: a non-blocking all-reduce polled with
// util/wait_policy.hpp's poll-yield-sleep policy, kept here for comparison in the same run.
//
// Not a test: it measures. Run under mpirun with 2..32 ranks; rank 0 prints one line per case and a
// final JSON line ("json: {...}") that tests/bench/bench.py reads.
//
//   mpirun -np 4 --oversubscribe build/tests/bench/trainio_barrier_bench [--rounds 20]
//       [--iterations 200] [--compute-us 3500] [--long-wait-ms 1000] [--load-threads 0]
//
// --load-threads N: N threads per rank spin on a unit of arithmetic meanwhile (emulated readers);
// the units they complete per second, summed over ranks, is the CPU the synchronisation leaves.
// The cases alternate block by block, so that a noisy neighbour on a shared machine hits each alike.

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mpi/comm.hpp"
#include "util/clock.hpp"

namespace {

using trainio::mpi::Comm;

enum Mode { kMpiBarrier, kMpiIbarrier, kBefore, kTrainio, kModes };
const char* const kModeName[kModes] = {"MPI_Barrier", "MPI_Ibarrier+Wait", "trainio before", "trainio"};
const char* const kModeKey[kModes] = {"mpi_barrier", "mpi_ibarrier", "trainio_before", "trainio"};

struct Options {
  int rounds = 20;
  int iterations = 200;  // per block
  int compute_us = 3500;  // cosmoflow's computation_time on H100
  int long_wait_ms = 1000;
  int load_threads = 0;
};

int int_arg(int& i, int argc, char** argv) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "barrier bench: %s needs a value\n", argv[i]);
    std::exit(2);
  }
  return std::atoi(argv[++i]);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds")) o.rounds = int_arg(i, argc, argv);
    else if (!std::strcmp(argv[i], "--iterations")) o.iterations = int_arg(i, argc, argv);
    else if (!std::strcmp(argv[i], "--compute-us")) o.compute_us = int_arg(i, argc, argv);
    else if (!std::strcmp(argv[i], "--long-wait-ms")) o.long_wait_ms = int_arg(i, argc, argv);
    else if (!std::strcmp(argv[i], "--load-threads")) o.load_threads = int_arg(i, argc, argv);
    else {
      std::fprintf(stderr, "barrier bench: unknown option %s\n  fix: see the usage at the top of barrier_latency.cpp\n",
                   argv[i]);
      std::exit(2);
    }
  }
  return o;
}

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "barrier bench: %s failed (%d)\n", call, rc);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// trainio's wait before issue 32 (util/wait_policy.hpp then): MPI_Test back to back for 50 us,
// then with sched_yield in between (only MPI's own yield when it yields when idle) up to 2 ms,
// then sleeping an eighth of the time waited, 0.1 to 1 ms.
void before_wait(MPI_Request& request, bool mpi_yields) {
  int done = 0;
  mpi_check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  const std::int64_t start = trainio::util::now_ns();
  while (!done) {
    const std::int64_t waited = trainio::util::now_ns() - start;
    if (waited >= 2'000'000)
      trainio::util::sleep_until_ns(trainio::util::now_ns() + std::clamp<std::int64_t>(waited / 8, 100'000, 1'000'000));
    else if (waited >= 50'000 && !mpi_yields)
      sched_yield();
    mpi_check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  }
}

void one_barrier(Mode mode, const Comm& comm) {
  switch (mode) {
    case kMpiBarrier:
      mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      break;
    case kMpiIbarrier: {
      MPI_Request request;
      mpi_check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
      mpi_check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
      break;
    }
    case kBefore: {
      int in = INT32_MAX, out = 0;
      MPI_Request request;
      mpi_check(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request), "MPI_Iallreduce");
      before_wait(request, trainio::mpi::library_yields_when_idle());
      break;
    }
    case kTrainio:
      if (comm.vote(true, false).failing_rank != -1) std::abort();
      break;
    case kModes:
      break;
  }
}

double thread_cpu_us() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Emulated readers: threads that spin on arithmetic and count the units they finish.
class Load {
 public:
  explicit Load(int threads) {
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { spin(); });
  }
  ~Load() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
  }
  std::uint64_t units() const { return units_.load(std::memory_order_relaxed); }

 private:
  void spin() {
    volatile std::uint64_t x = 1;
    while (!stop_.load(std::memory_order_relaxed)) {
      for (int i = 0; i < 20'000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      units_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> units_{0};
};

struct Totals {
  std::vector<double> step_us;  // per step beyond compute, this rank
  double cpu_us = 0;            // the stepping thread's CPU over the blocks
  double seconds = 0;           // the blocks' wall time
  std::uint64_t units = 0;      // load units done meanwhile
};

// One block of steps as trainio's step loop runs them: emulated compute up to an absolute deadline
// (util::sleep_until_ns, as the trainer does), then the synchronisation. Records on this rank the
// time per step beyond the compute: what the barrier and the ranks' spread of wake-ups add.
void run_block(Mode mode, const Comm& comm, const Options& o, std::int64_t compute_ns, const Load& load, Totals& t) {
  one_barrier(kMpiBarrier, comm);  // start together
  const double cpu0 = thread_cpu_us();
  const std::uint64_t units0 = load.units();
  const std::int64_t t0 = trainio::util::now_ns();
  std::int64_t last = t0;
  for (int i = 0; i < o.iterations; ++i) {
    if (compute_ns > 0) trainio::util::sleep_until_ns(last + compute_ns);
    one_barrier(mode, comm);
    const std::int64_t now = trainio::util::now_ns();
    t.step_us.push_back(static_cast<double>(now - last - compute_ns) / 1e3);
    last = now;
  }
  t.cpu_us += thread_cpu_us() - cpu0;
  t.units += load.units() - units0;
  t.seconds += static_cast<double>(last - t0) * 1e-9;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

double sum_over_ranks(double v) {
  double out = 0;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

// Rank 0 computes for `long_wait_ms`, the others wait: CPU the waiting main thread burns, the
// most over the waiting ranks.
double long_wait_cpu_ms(Mode mode, const Comm& comm, const Options& o) {
  one_barrier(kMpiBarrier, comm);
  double cpu = 0;
  if (comm.rank() == 0) {
    trainio::util::sleep_until_ns(trainio::util::now_ns() + static_cast<std::int64_t>(o.long_wait_ms) * 1'000'000);
    one_barrier(mode, comm);
  } else {
    const double before = thread_cpu_us();
    one_barrier(mode, comm);
    cpu = (thread_cpu_us() - before) / 1e3;
  }
  double most = 0;
  mpi_check(MPI_Allreduce(&cpu, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return most;
}

}  // namespace

int main(int argc, char** argv) {
  trainio::mpi::Session session(&argc, &argv);
  const Options o = parse(argc, argv);
  const Comm comm = Comm::world();
  const Load load(o.load_threads);
  std::string json = "{\"ranks\": " + std::to_string(comm.size()) + ", \"load_threads\": " + std::to_string(o.load_threads);
  const struct {
    const char* key;
    std::int64_t compute_ns;
  } cases[] = {{"back_to_back", 0}, {"compute", static_cast<std::int64_t>(o.compute_us) * 1000}};
  for (const auto& c : cases) {
    Totals t[kModes];
    for (int r = 0; r < o.rounds; ++r)
      for (int m = 0; m < kModes; ++m) run_block(static_cast<Mode>(m), comm, o, c.compute_ns, load, t[m]);
    if (comm.is_root())
      std::printf("%d ranks, %s (compute %lld us)%s: us per step beyond compute; stepping thread's CPU per step%s\n",
                  comm.size(), c.key, static_cast<long long>(c.compute_ns / 1000),
                  o.load_threads > 0 ? (", " + std::to_string(o.load_threads) + " load threads per rank").c_str() : "",
                  o.load_threads > 0 ? "; load units/s, all ranks" : "");
    json += std::string(", \"") + c.key + "\": {\"compute_us\": " + std::to_string(c.compute_ns / 1000);
    double base_median = 0;
    for (int m = 0; m < kModes; ++m) {
      // The step period is the same on every rank (they are in lockstep); rank 0's view suffices.
      const double median = quantile(t[m].step_us, 0.5), p99 = quantile(t[m].step_us, 0.99);
      const double steps = static_cast<double>(o.rounds) * o.iterations;
      const double cpu_per_step = sum_over_ranks(t[m].cpu_us) / comm.size() / steps;
      const double units_per_s = sum_over_ranks(t[m].seconds > 0 ? static_cast<double>(t[m].units) / t[m].seconds : 0);
      if (m == kMpiBarrier) base_median = median;
      if (comm.is_root()) {
        std::printf("  %-18s median %8.1f  p99 %8.1f  ratio to MPI_Barrier %5.2f  cpu %7.1f us/step", kModeName[m], median,
                    p99, base_median > 0 ? median / base_median : 0.0, cpu_per_step);
        if (o.load_threads > 0) std::printf("  load %.0f/s", units_per_s);
        std::printf("\n");
      }
      char part[320];
      std::snprintf(part, sizeof part,
                    ", \"%s\": {\"median_us\": %.2f, \"p99_us\": %.2f, \"cpu_us_per_step\": %.2f, \"load_units_per_s\": %.1f}",
                    kModeKey[m], median, p99, cpu_per_step, units_per_s);
      json += part;
    }
    json += "}";
  }
  json += ", \"long_wait\": {\"wait_ms\": " + std::to_string(o.long_wait_ms);
  double cpu[kModes];
  for (int m = 0; m < kModes; ++m) cpu[m] = long_wait_cpu_ms(static_cast<Mode>(m), comm, o);
  if (comm.is_root()) {
    std::printf("%d ranks, waiting %d ms for rank 0: CPU burnt by a waiting rank (the most):", comm.size(), o.long_wait_ms);
    for (int m = 0; m < kModes; ++m) std::printf(" %s %.1f ms%s", kModeName[m], cpu[m], m + 1 < kModes ? "," : "\n");
  }
  for (int m = 0; m < kModes; ++m) {
    char part[96];
    std::snprintf(part, sizeof part, ", \"%s_cpu_ms\": %.2f", kModeKey[m], cpu[m]);
    json += part;
  }
  json += "}}";
  if (comm.is_root()) std::printf("json: %s\n", json.c_str());
  std::fflush(stdout);
  return 0;
}
