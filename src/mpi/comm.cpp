#include "mpi/comm.hpp"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpi/wait_policy.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

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

// Whether the MPI library's progress engine already yields the core when it finds nothing to do
// (OpenMPI's mpi_yield_when_idle: set by the user, or by OpenMPI itself when ranks outnumber the
// cores). Read through the MPI tool interface; any library without that variable, or any failure
// to read it, counts as "no", and trainio's wait then yields by itself.
bool probe_mpi_yields_when_idle() {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return false;
  bool yields = false;
  int index = -1;
  if (MPI_T_cvar_get_index("mpi_yield_when_idle", &index) == MPI_SUCCESS) {
    int name_len = 0, desc_len = 0, verbosity = 0, bind = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;
    int count = 0;
    if (MPI_T_cvar_get_info(index, nullptr, &name_len, &verbosity, &type, &enumtype, nullptr, &desc_len, &bind,
                            &scope) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      alignas(8) unsigned char value[16] = {};
      if (count == 1 && MPI_T_cvar_read(handle, value) == MPI_SUCCESS) {
        if (type == MPI_C_BOOL) yields = *reinterpret_cast<const bool*>(value);
        else if (type == MPI_INT) yields = *reinterpret_cast<const int*>(value) != 0;
      }
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return yields;
}

bool mpi_yields_when_idle = false;  // probed once, in Session

// Waits for a non-blocking collective: polls, yields, then sleeps, as mpi/wait_policy.hpp decides
// from how long the wait has lasted. Completion is only noticed at a poll (MPI_Test also drives the
// collective's progress), so the policy's phases bound both latency and CPU.
void wait_politely(MPI_Request& request) {
  int done = 0;
  check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  const std::int64_t start = done ? 0 : util::now_ns();
  while (!done) {
    const WaitStep step = wait_step(util::now_ns() - start, mpi_yields_when_idle);
    if (step.mode == WaitMode::yield) sched_yield();
    else if (step.mode == WaitMode::sleep) util::sleep_until_ns(util::now_ns() + step.sleep_ns);
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

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

std::string local_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0)
    throw internal_error(std::string("gethostname failed: ") + std::strerror(errno));
  return name;
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
}

Session::~Session() {
  if (aborted) return;
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
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

bool launched_by_mpi() { return launcher_world_size() > 0; }

int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    if (const int n = env_int(name); n > 0) return n;
  }
  // srun without an MPI plugin still sets SLURM_NTASKS, but then MPI sees singletons; only trust
  // it together with a PMI rank variable.
  if (std::getenv("SLURM_PROCID") && std::getenv("PMIX_RANK")) return env_int("SLURM_NTASKS");
  return 0;
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  check(MPI_Get_library_version(text, &len), "MPI_Get_library_version");
  std::string v(text, static_cast<size_t>(len));
  const auto eol = v.find_first_of(",\n");
  return eol == std::string::npos ? v : v.substr(0, eol);
}

Comm Comm::world() {
  Comm c;
  c.mpi_ = true;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &c.rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &c.size_), "MPI_Comm_size");
  c.discover_hosts();
  return c;
}

Comm Comm::solo() {
  Comm c;
  c.hosts_ = {local_hostname()};
  return c;
}

void Comm::discover_hosts() {
  constexpr int kLen = 256;
  char mine[kLen] = {};
  int len = 0;
  check(MPI_Get_processor_name(mine, &len), "MPI_Get_processor_name");
  std::vector<char> all(static_cast<size_t>(kLen) * size_);
  check(MPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, MPI_COMM_WORLD),
        "MPI_Allgather");
  hosts_.clear();
  node_rank_ = 0;
  node_size_ = 0;
  for (int r = 0; r < size_; ++r) {
    const std::string name(&all[static_cast<size_t>(r) * kLen], strnlen(&all[static_cast<size_t>(r) * kLen], kLen));
    int index = -1;
    for (size_t h = 0; h < hosts_.size(); ++h)
      if (hosts_[h] == name) index = static_cast<int>(h);
    if (index < 0) {
      hosts_.push_back(name);
      index = static_cast<int>(hosts_.size()) - 1;
    }
    if (name == mine) {
      if (r < rank_) ++node_rank_;
      ++node_size_;
    }
    if (r == rank_) host_index_ = index;
  }
}

void Comm::barrier() const {
  if (!mpi_) return;
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
  wait_politely(request);
}

int Comm::agree(bool ok) const {
  if (!mpi_) return ok ? -1 : rank_;
  const int lowest = allreduce<int>(ok ? INT_MAX : rank_, MPI_INT, MPI_MIN);
  return lowest == INT_MAX ? -1 : lowest;
}

Comm::Vote Comm::vote(bool ok, bool want_stop) const {
  constexpr int kStop = INT_MAX - 1;
  const int mine = !ok ? rank_ : (want_stop ? kStop : INT_MAX);
  const int lowest = mpi_ ? allreduce<int>(mine, MPI_INT, MPI_MIN) : mine;
  if (lowest < kStop) return {lowest, false};
  return {-1, lowest == kStop};
}

double Comm::sum(double v) const { return mpi_ ? allreduce(v, MPI_DOUBLE, MPI_SUM) : v; }
double Comm::max(double v) const { return mpi_ ? allreduce(v, MPI_DOUBLE, MPI_MAX) : v; }
double Comm::min(double v) const { return mpi_ ? allreduce(v, MPI_DOUBLE, MPI_MIN) : v; }
std::uint64_t Comm::sum(std::uint64_t v) const {
  return mpi_ ? allreduce(v, MPI_UINT64_T, MPI_SUM) : v;
}
std::uint64_t Comm::max(std::uint64_t v) const {
  return mpi_ ? allreduce(v, MPI_UINT64_T, MPI_MAX) : v;
}
std::uint64_t Comm::min(std::uint64_t v) const {
  return mpi_ ? allreduce(v, MPI_UINT64_T, MPI_MIN) : v;
}
std::int64_t Comm::min(std::int64_t v) const { return mpi_ ? allreduce(v, MPI_INT64_T, MPI_MIN) : v; }
std::int64_t Comm::max(std::int64_t v) const { return mpi_ ? allreduce(v, MPI_INT64_T, MPI_MAX) : v; }

std::vector<double> Comm::sum(const std::vector<double>& v) const {
  return mpi_ ? allreduce_vector(v, MPI_DOUBLE) : v;
}
std::vector<std::uint64_t> Comm::sum(const std::vector<std::uint64_t>& v) const {
  return mpi_ ? allreduce_vector(v, MPI_UINT64_T) : v;
}

std::vector<std::uint64_t> Comm::max(const std::vector<std::uint64_t>& v) const {
  return mpi_ ? allreduce_vector(v, MPI_UINT64_T, MPI_MAX) : v;
}

std::vector<double> Comm::all_gather(const std::vector<double>& v) const {
  if (!mpi_) return v;
  std::vector<double> out(v.size() * static_cast<size_t>(size_));
  MPI_Request request;
  check(MPI_Iallgather(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, out.data(),
                       static_cast<int>(v.size()), MPI_DOUBLE, MPI_COMM_WORLD, &request),
        "MPI_Iallgather");
  wait_politely(request);
  return out;
}

std::vector<std::string> Comm::gather_strings(const std::string& s) const {
  if (!mpi_) return {s};
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
  check(MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                    0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> out;
  for (size_t i = 0; i < lengths.size(); ++i) out.emplace_back(all.data() + offsets[i], lengths[i]);
  return out;
}

std::string Comm::broadcast(const std::string& s) const {
  if (!mpi_) return s;
  std::int64_t len = broadcast(static_cast<std::int64_t>(s.size()));
  std::string out = rank_ == 0 ? s : std::string(static_cast<size_t>(len), '\0');
  check(MPI_Bcast(out.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

std::int64_t Comm::broadcast(std::int64_t v) const {
  if (!mpi_) return v;
  check(MPI_Bcast(&v, 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return v;
}

void Comm::abort(int code) const {
  aborted = true;
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace trainio::mpi
