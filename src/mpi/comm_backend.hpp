#pragma once
// What Comm asks of a communicator, implemented twice: over MPI_COMM_WORLD (comm_mpi.cpp, the
// only place that calls MPI collectives) and for a single process without MPI (comm.cpp). Comm
// holds one of them and adds what does not depend on MPI (agreement, votes, host facts).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trainio::mpi {

enum class ReduceOp { sum, min, max };

class CommBackend {
 public:
  virtual ~CommBackend() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's host name, by rank.
  virtual std::vector<std::string> host_names() const = 0;

  virtual void barrier() const = 0;
  virtual int reduce(int v, ReduceOp op) const = 0;
  virtual double reduce(double v, ReduceOp op) const = 0;
  virtual std::uint64_t reduce(std::uint64_t v, ReduceOp op) const = 0;
  virtual std::int64_t reduce(std::int64_t v, ReduceOp op) const = 0;
  virtual std::vector<double> reduce(const std::vector<double>& v, ReduceOp op) const = 0;
  virtual std::vector<std::uint64_t> reduce(const std::vector<std::uint64_t>& v, ReduceOp op) const = 0;
  virtual std::vector<double> all_gather(const std::vector<double>& v) const = 0;
  virtual std::vector<double> gather(const std::vector<double>& v) const = 0;  // to rank 0
  virtual std::vector<std::string> gather_strings(const std::string& s) const = 0;
  virtual std::string broadcast(const std::string& s) const = 0;
  virtual std::int64_t broadcast(std::int64_t v) const = 0;
  [[noreturn]] virtual void abort(int code) const = 0;
};

}  // namespace trainio::mpi

namespace trainio::mpi {

// MPI_COMM_WORLD; requires a live Session. Learns every rank's host name (one all-gather).
std::shared_ptr<const CommBackend> mpi_world_backend();

}  // namespace trainio::mpi
