// MPI_COMM_WORLD behind CommBackend, and the MPI session: the one file that calls MPI's
// collectives (mpi/shared_file.cpp does MPI-IO).
#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpi/comm.hpp"
#include "mpi/comm_backend.hpp"
#include "mpi/node_sync.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/wait_policy.hpp"

namespace trainio::mpi {

namespace {

// MPI's text for an error code, or the bare code when MPI cannot describe it.
std::string describe(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS || len <= 0) return "MPI error code " + std::to_string(rc);
  return std::string(text, static_cast<size_t>(len));
}

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  throw internal_error(std::string(call) + " failed: " + describe(rc));
}

// Whether the MPI library's progress engine already yields the core when it finds nothing to do:
// Open MPI's own flag, set by MPI_Init from mpi_yield_when_idle (the user's, from the environment
// or a parameter file) or from oversubscription. Read as the exported variable it is: reading it
// through MPI's tool interface (MPI_T_init_thread) made Open MPI open every component it has,
// libfabric included, 0.2-0.7 s of every start (docs/scaling.md). Another MPI has no such
// variable: "no", and trainio's wait then yields by itself.
bool probe_mpi_yields_when_idle() {
  const auto* flag = static_cast<const bool*>(::dlsym(RTLD_DEFAULT, "ompi_mpi_yield_when_idle"));
  return flag != nullptr && *flag;
}

bool mpi_yields_when_idle = false;  // probed once, in Session
// The ranks' int reductions and barriers through shared memory when they all run on one host
// (mpi/node_sync.hpp); null: MPI's non-blocking collectives, waited on below.
std::unique_ptr<NodeSync> node_sync;

// Waits for a non-blocking collective: polls, yields, then sleeps, as util/wait_policy.hpp decides
// from how long the wait has lasted. Completion is only noticed at a poll (MPI_Test also drives the
// collective's progress), so the policy's phases bound both latency and CPU.
void wait_politely(MPI_Request& request) {
  int done = 0;
  check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  const std::int64_t start = done ? 0 : util::now_ns();
  while (!done) {
    const util::WaitStep step = util::wait_step(util::now_ns() - start, mpi_yields_when_idle);
    if (step.mode == util::WaitMode::yield) sched_yield();
    else if (step.mode == util::WaitMode::sleep) util::sleep_until_ns(util::now_ns() + step.sleep_ns);
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  }
}

template <typename T>
T allreduce(T v, MPI_Datatype type, MPI_Op op) {
  T out{};
  MPI_Request request;
  check(MPI_Iallreduce(&v, &out, 1, type, op, MPI_COMM_WORLD, &request), "MPI_Iallreduce");
  wait_politely(request);
  return out;
}

template <typename T>
std::vector<T> allreduce_vector(const std::vector<T>& v, MPI_Datatype type, MPI_Op op = MPI_SUM) {
  std::vector<T> out(v.size());
  if (v.empty()) return out;
  MPI_Request request;
  check(MPI_Iallreduce(v.data(), out.data(), static_cast<int>(v.size()), type, op,
                       MPI_COMM_WORLD, &request),
        "MPI_Iallreduce");
  wait_politely(request);
  return out;
}

bool aborted = false;

}  // namespace

Session::Session(int* argc, char*** argv) {
  // The per-step agreement is a non-blocking all-reduce of one integer. OpenMPI's libnbc picks a
  // 6-round algorithm for it by default; recursive doubling (algorithm 4) takes log2(ranks) rounds,
  // as MPI_Barrier does, and measured 20-35 us less per step at 8 ranks on 2 cores
  // (tests/bench/barrier_latency.cpp). An MCA setting the user made is kept; other MPIs ignore it.
  ::setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "4", 0);
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes and become trainio errors instead of MPI's default abort.
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  mpi_yields_when_idle = probe_mpi_yields_when_idle();
  node_sync = NodeSync::create();
}

Session::~Session() {
  if (aborted) return;
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  node_sync.reset();
  // A destructor cannot throw: a failed finalize is reported here and fails the process, after
  // everything it printed so far is out.
  if (const int rc = MPI_Finalize(); rc != MPI_SUCCESS) {
    std::fflush(stdout);
    std::fprintf(stderr, "trainio: error: MPI_Finalize failed: %s\n  fix: check the MPI installation and the launcher's messages\n",
                 describe(rc).c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
}

bool library_yields_when_idle() { return mpi_yields_when_idle; }

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  check(MPI_Get_library_version(text, &len), "MPI_Get_library_version");
  std::string v(text, static_cast<size_t>(len));
  const auto eol = v.find_first_of(",\n");
  return eol == std::string::npos ? v : v.substr(0, eol);
}

namespace {

// Reductions as MPI ops.
MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_SUM;
}

class MpiBackend final : public CommBackend {
 public:
  MpiBackend() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> host_names() const override {
    constexpr int kLen = 256;
    char mine[kLen] = {};
    int len = 0;
    check(MPI_Get_processor_name(mine, &len), "MPI_Get_processor_name");
    std::vector<char> all(static_cast<size_t>(kLen) * static_cast<size_t>(size_));
    check(MPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<std::string> names;
    for (int r = 0; r < size_; ++r) {
      const char* name = &all[static_cast<size_t>(r) * kLen];
      names.emplace_back(name, strnlen(name, kLen));
    }
    return names;
  }

  void barrier() const override {
    if (node_sync) {
      node_sync->reduce(0, ReduceOp::min);
      return;
    }
    MPI_Request request;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    wait_politely(request);
  }
  int reduce(int v, ReduceOp op) const override {
    return node_sync ? node_sync->reduce(v, op) : allreduce(v, MPI_INT, mpi_op(op));
  }
  double reduce(double v, ReduceOp op) const override { return allreduce(v, MPI_DOUBLE, mpi_op(op)); }
  std::uint64_t reduce(std::uint64_t v, ReduceOp op) const override { return allreduce(v, MPI_UINT64_T, mpi_op(op)); }
  std::int64_t reduce(std::int64_t v, ReduceOp op) const override { return allreduce(v, MPI_INT64_T, mpi_op(op)); }
  std::vector<double> reduce(const std::vector<double>& v, ReduceOp op) const override {
    return allreduce_vector(v, MPI_DOUBLE, mpi_op(op));
  }
  std::vector<std::uint64_t> reduce(const std::vector<std::uint64_t>& v, ReduceOp op) const override {
    return allreduce_vector(v, MPI_UINT64_T, mpi_op(op));
  }

  std::vector<double> all_gather(const std::vector<double>& v) const override {
    std::vector<double> out(v.size() * static_cast<size_t>(size_));
    MPI_Request request;
    check(MPI_Iallgather(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, out.data(), static_cast<int>(v.size()),
                         MPI_DOUBLE, MPI_COMM_WORLD, &request),
          "MPI_Iallgather");
    wait_politely(request);
    return out;
  }

  std::vector<double> gather(const std::vector<double>& v) const override {
    // Only rank 0's receive buffer is read by MPI; the others keep none.
    std::vector<double> out(rank_ == 0 ? v.size() * static_cast<size_t>(size_) : 0);
    MPI_Request request;
    check(MPI_Igather(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, out.data(), static_cast<int>(v.size()),
                      MPI_DOUBLE, 0, MPI_COMM_WORLD, &request),
          "MPI_Igather");
    wait_politely(request);
    return out;
  }

  std::vector<std::string> gather_strings(const std::string& s) const override {
    const int len = static_cast<int>(s.size());
    std::vector<int> lengths(rank_ == 0 ? size_ : 0);
    check(MPI_Gather(&len, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    std::vector<int> offsets(lengths.size());
    int total = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = total;
      total += lengths[i];
    }
    std::vector<char> all(static_cast<size_t>(total));
    check(MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
          "MPI_Gatherv");
    std::vector<std::string> out;
    for (size_t i = 0; i < lengths.size(); ++i) out.emplace_back(all.data() + offsets[i], lengths[i]);
    return out;
  }

  std::string broadcast(const std::string& s) const override {
    const std::int64_t len = broadcast(static_cast<std::int64_t>(s.size()));
    std::string out = rank_ == 0 ? s : std::string(static_cast<size_t>(len), '\0');
    check(MPI_Bcast(out.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return out;
  }
  std::int64_t broadcast(std::int64_t v) const override {
    check(MPI_Bcast(&v, 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return v;
  }

  [[noreturn]] void abort(int code) const override {
    aborted = true;
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::shared_ptr<const CommBackend> mpi_world_backend() { return std::make_shared<MpiBackend>(); }

}  // namespace trainio::mpi
