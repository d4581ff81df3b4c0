#pragma once
// The only door to MPI. Everything else in trainio sees ranks, barriers and reductions through
// Comm, so that mpi.h stays out of other headers and a single-process run needs no MPI at all.
// A Comm is a small value over one of two backends (comm_backend.hpp): MPI_COMM_WORLD
// (comm_mpi.cpp) or a single process that never calls MPI (comm.cpp).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trainio::mpi {

class CommBackend;

// Initialises MPI for the lifetime of the object (MPI_THREAD_FUNNELED: only the main thread
// calls MPI) and finalises it on destruction unless the job was aborted.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

// The MPI library's own description ("Open MPI v4.1.4, ..."), first line only.
std::string library_version();

// Whether the MPI library's progress engine yields the core when idle (Open MPI's
// mpi_yield_when_idle, set by the user or by oversubscription); false for other MPIs. Valid once a
// Session has started.
bool library_yields_when_idle();

class Comm {
 public:
  // MPI_COMM_WORLD; requires a live Session.
  static Comm world();
  // A one-rank communicator that never calls MPI (commands without MPI, unit tests).
  static Comm solo();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  // Ranks sharing this host: index among them, and how many. Hosts in the job and their names
  // (indexed by host number); host_index() is this rank's host number.
  int node_rank() const { return node_rank_; }
  int node_size() const { return node_size_; }
  int num_hosts() const { return static_cast<int>(hosts_.size()); }
  int host_index() const { return host_index_; }
  const std::vector<std::string>& hosts() const { return hosts_; }

  void barrier() const;

  // Collective error agreement: every rank says whether it is healthy; returns -1 when all are,
  // else the lowest failing rank. Polls only briefly, then yields and, through a long wait, sleeps
  // (util/wait_policy.hpp): trainio's reader threads need the cores that a busy-polling MPI barrier
  // would take, and a sleep in a short wait would cost the step 100 us or more.
  int agree(bool ok) const;

  // The same agreement, also carrying a wish to stop (a time limit reached on some rank):
  // `failing_rank` as agree(); `stop` when no rank failed and at least one rank wants to stop.
  struct Vote {
    int failing_rank = -1;
    bool stop = false;
  };
  Vote vote(bool ok, bool want_stop) const;

  double sum(double v) const;
  double max(double v) const;
  double min(double v) const;
  std::uint64_t sum(std::uint64_t v) const;
  std::uint64_t max(std::uint64_t v) const;
  std::uint64_t min(std::uint64_t v) const;
  std::int64_t min(std::int64_t v) const;
  std::int64_t max(std::int64_t v) const;

  // Element-wise sum of a vector across ranks, result on every rank.
  std::vector<double> sum(const std::vector<double>& v) const;
  std::vector<std::uint64_t> sum(const std::vector<std::uint64_t>& v) const;
  std::vector<std::uint64_t> max(const std::vector<std::uint64_t>& v) const;  // element-wise

  // Every rank contributes one fixed-size vector; every rank gets all of them, rank-major. For
  // answers every rank needs; figures only rank 0 reports travel with gather().
  std::vector<double> all_gather(const std::vector<double>& v) const;
  // Every rank contributes one vector of the same size; rank 0 gets all of them, rank-major, and
  // the others an empty vector: per-rank figures cost the other ranks nothing to receive.
  std::vector<double> gather(const std::vector<double>& v) const;
  // Every rank contributes a string; rank 0 gets all of them (others get an empty vector).
  std::vector<std::string> gather_strings(const std::string& s) const;

  // Rank 0's value, on every rank.
  std::string broadcast(const std::string& s) const;
  std::int64_t broadcast(std::int64_t v) const;

  // Ends every rank of the job now with `code`. Used only when a rank fails outside a point where
  // the ranks can agree on the failure together.
  [[noreturn]] void abort(int code) const;

 private:
  explicit Comm(std::shared_ptr<const CommBackend> backend);

  std::shared_ptr<const CommBackend> backend_;
  int rank_ = 0;
  int size_ = 1;
  int node_rank_ = 0;
  int node_size_ = 1;
  int host_index_ = 0;
  std::vector<std::string> hosts_;
};

}  // namespace trainio::mpi
