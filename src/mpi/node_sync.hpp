#pragma once
// The ranks' small reductions (the per-step agreement above all) through memory the ranks of one
// host share, instead of a non-blocking MPI collective polled to completion. A waiting rank
// sleeps in the kernel (a futex) and the last rank to arrive wakes all of them at once: no
// rank burns a core while it waits, and the result reaches every rank after one wake-up, where
// a polled collective needs log2(ranks) rounds, each waiting for a rank to be scheduled (or to
// end a sleep between polls) when ranks outnumber cores. docs/scaling.md has the measurements.

#include <memory>

namespace trainio::mpi {

enum class ReduceOp;

class NodeSync {
 public:
  // Collective over MPI_COMM_WORLD, after MPI_Init. nullptr on every rank when the job spans
  // hosts, has one rank, or the MPI cannot give the ranks shared memory: MPI's collectives then.
  static std::unique_ptr<NodeSync> create();
  ~NodeSync();  // collective: frees the shared window (before MPI_Finalize)
  NodeSync(const NodeSync&) = delete;
  NodeSync& operator=(const NodeSync&) = delete;

  // Every rank's `v` reduced by `op`; returns the same value on every rank.
  int reduce(int v, ReduceOp op);

  struct Shared;

 private:
  struct Window;
  NodeSync(std::unique_ptr<Window> window, Shared* shared, int ranks, bool core_each);
  std::unique_ptr<Window> window_;
  Shared* shared_;
  int ranks_;
  bool core_each_;  // no more ranks than cores: poll without yielding
};

}  // namespace trainio::mpi
