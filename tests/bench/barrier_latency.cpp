// The per-step barrier against MPI's own: how much latency trainio's wait (Comm::agree, a
// non-blocking all-reduce waited on by polling) adds to each step over a plain MPI_Barrier, and how
// much CPU a rank burns while it waits through a long compute on another rank.
//
// Not a test: it measures. Run under mpirun with 2..8 ranks; rank 0 prints one line per case and a
// final JSON line ("json: {...}") that tests/bench/bench.py reads.
//
//   mpirun -np 4 --oversubscribe build/tests/bench/trainio_barrier_bench [--rounds 20]
//       [--iterations 200] [--compute-us 3500] [--long-wait-ms 1000]
//
// The cases alternate block by block (MPI_Barrier, MPI_Allreduce, Comm::agree, then again), so
// that a noisy neighbour on a shared machine hits every case alike.

#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/comm.hpp"
#include "util/clock.hpp"

namespace {

using trainio::mpi::Comm;

enum Mode { kMpiBarrier, kMpiAllreduce, kAgree, kModes };
const char* const kModeName[kModes] = {"MPI_Barrier", "MPI_Allreduce", "Comm::agree"};

struct Options {
  int rounds = 20;
  int iterations = 200;  // per block
  int compute_us = 3500;  // cosmoflow's computation_time on H100
  int long_wait_ms = 1000;
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

void one_barrier(Mode mode, const Comm& comm) {
  switch (mode) {
    case kMpiBarrier:
      mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      break;
    case kMpiAllreduce: {
      int in = 1, out = 0;
      mpi_check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
      break;
    }
    case kAgree:
      if (comm.agree(true) != -1) std::abort();
      break;
    case kModes:
      break;
  }
}

// One block of steps as trainio's step loop runs them: emulated compute up to an absolute deadline
// (util::sleep_until_ns, as the trainer does), then the barrier. Records on this rank the time per
// step beyond the compute: what the barrier and the ranks' spread of wake-ups add.
void run_block(Mode mode, const Comm& comm, const Options& o, std::int64_t compute_ns, std::vector<double>& out_us) {
  one_barrier(mode, comm);  // start together
  std::int64_t last = trainio::util::now_ns();
  for (int i = 0; i < o.iterations; ++i) {
    if (compute_ns > 0) trainio::util::sleep_until_ns(last + compute_ns);
    one_barrier(mode, comm);
    const std::int64_t now = trainio::util::now_ns();
    out_us.push_back(static_cast<double>(now - last - compute_ns) / 1e3);
    last = now;
  }
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

double thread_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
          static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3);
}

// Rank 0 computes for `long_wait_ms`, the others wait in the barrier: CPU the waiting main thread
// burns, the most over the waiting ranks.
double long_wait_cpu_ms(Mode mode, const Comm& comm, const Options& o) {
  one_barrier(kMpiBarrier, comm);
  double cpu = 0;
  if (comm.rank() == 0) {
    trainio::util::sleep_until_ns(trainio::util::now_ns() + static_cast<std::int64_t>(o.long_wait_ms) * 1'000'000);
    one_barrier(mode, comm);
  } else {
    const double before = thread_cpu_ms();
    one_barrier(mode, comm);
    cpu = thread_cpu_ms() - before;
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
  std::string json = "{\"ranks\": " + std::to_string(comm.size());
  const struct {
    const char* key;
    std::int64_t compute_ns;
  } cases[] = {{"back_to_back", 0}, {"compute", static_cast<std::int64_t>(o.compute_us) * 1000}};
  for (const auto& c : cases) {
    std::vector<double> us[kModes];
    for (int r = 0; r < o.rounds; ++r)
      for (int m = 0; m < kModes; ++m) run_block(static_cast<Mode>(m), comm, o, c.compute_ns, us[m]);
    // The step period is the same on every rank (they are in lockstep); rank 0's view suffices.
    double median[kModes], p99[kModes];
    for (int m = 0; m < kModes; ++m) {
      median[m] = quantile(us[m], 0.5);
      p99[m] = quantile(us[m], 0.99);
    }
    if (comm.is_root()) {
      std::printf("%d ranks, %s (compute %lld us), us per step beyond compute:\n", comm.size(), c.key,
                  static_cast<long long>(c.compute_ns / 1000));
      for (int m = 0; m < kModes; ++m)
        std::printf("  %-14s median %8.1f  p99 %8.1f\n", kModeName[m], median[m], p99[m]);
      std::printf("  added by Comm::agree over MPI_Barrier: median %+.1f us, p99 %+.1f us, ratio %.2f\n",
                  median[kAgree] - median[kMpiBarrier], p99[kAgree] - p99[kMpiBarrier],
                  median[kMpiBarrier] > 0 ? median[kAgree] / median[kMpiBarrier] : 0.0);
    }
    char part[512];
    std::snprintf(part, sizeof part,
                  ", \"%s\": {\"compute_us\": %lld, \"mpi_barrier\": {\"median_us\": %.2f, \"p99_us\": %.2f}, "
                  "\"mpi_allreduce\": {\"median_us\": %.2f, \"p99_us\": %.2f}, "
                  "\"agree\": {\"median_us\": %.2f, \"p99_us\": %.2f}}",
                  c.key, static_cast<long long>(c.compute_ns / 1000), median[kMpiBarrier], p99[kMpiBarrier],
                  median[kMpiAllreduce], p99[kMpiAllreduce], median[kAgree], p99[kAgree]);
    json += part;
  }
  const double cpu_barrier = long_wait_cpu_ms(kMpiBarrier, comm, o);
  const double cpu_agree = long_wait_cpu_ms(kAgree, comm, o);
  if (comm.is_root())
    std::printf("%d ranks, waiting %d ms for rank 0: CPU burnt by a waiting rank: MPI_Barrier %.1f ms, "
                "Comm::agree %.1f ms\n",
                comm.size(), o.long_wait_ms, cpu_barrier, cpu_agree);
  char part[256];
  std::snprintf(part, sizeof part, ", \"long_wait\": {\"wait_ms\": %d, \"mpi_barrier_cpu_ms\": %.2f, \"agree_cpu_ms\": %.2f}}",
                o.long_wait_ms, cpu_barrier, cpu_agree);
  json += part;
  if (comm.is_root()) std::printf("json: %s\n", json.c_str());
  std::fflush(stdout);
  return 0;
}
