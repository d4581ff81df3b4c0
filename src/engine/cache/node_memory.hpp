#pragma once
// Memory that the ranks of one node share: a POSIX shared-memory object that the node's first
// rank creates, the others open, and that is unlinked as soon as all have opened it, before its
// pages are allocated (a crash leaves nothing in /dev/shm). Its pages are allocated when it is
// made, so a size the node cannot hold is one clear error, never a SIGBUS in a run.

#include <cstdint>
#include <string>

#include "mpi/comm.hpp"

namespace trainio::engine {

class NodeMemory {
 public:
  // Collective over `comm`. `purpose` names the memory in errors ("the memory cache tier").
  // The node's rank 0 may initialise the memory after this returns and before the next barrier.
  NodeMemory(const mpi::Comm& comm, std::uint64_t bytes, const std::string& purpose);
  ~NodeMemory();
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;

  void* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace trainio::engine
