// Comm: what does not depend on MPI (agreement, votes, the hosts of the job), over a backend;
// the single-process backend.
#include "mpi/comm.hpp"

#include <climits>

#include "mpi/comm_backend.hpp"
#include "util/host_info.hpp"

namespace trainio::mpi {

namespace {

// One process, no MPI: every collective is the identity.
class SoloBackend final : public CommBackend {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> host_names() const override { return {util::hostname()}; }
  void barrier() const override {}
  int reduce(int v, ReduceOp) const override { return v; }
  double reduce(double v, ReduceOp) const override { return v; }
  std::uint64_t reduce(std::uint64_t v, ReduceOp) const override { return v; }
  std::int64_t reduce(std::int64_t v, ReduceOp) const override { return v; }
  std::vector<double> reduce(const std::vector<double>& v, ReduceOp) const override { return v; }
  std::vector<std::uint64_t> reduce(const std::vector<std::uint64_t>& v, ReduceOp) const override { return v; }
  std::vector<double> all_gather(const std::vector<double>& v) const override { return v; }
  std::vector<double> gather(const std::vector<double>& v) const override { return v; }
  std::vector<std::string> gather_strings(const std::string& s) const override { return {s}; }
  std::string broadcast(const std::string& s) const override { return s; }
  std::int64_t broadcast(std::int64_t v) const override { return v; }
  [[noreturn]] void abort(int code) const override { std::_Exit(code); }
};

}  // namespace

Comm::Comm(std::shared_ptr<const CommBackend> backend) : backend_(std::move(backend)) {
  rank_ = backend_->rank();
  size_ = backend_->size();
  // Hosts in order of their first rank; this rank's index among the ranks of its host.
  const std::vector<std::string> names = backend_->host_names();
  node_rank_ = 0;
  node_size_ = 0;
  for (int r = 0; r < size_; ++r) {
    const std::string& name = names[static_cast<std::size_t>(r)];
    int index = -1;
    for (std::size_t h = 0; h < hosts_.size(); ++h)
      if (hosts_[h] == name) index = static_cast<int>(h);
    if (index < 0) {
      hosts_.push_back(name);
      index = static_cast<int>(hosts_.size()) - 1;
    }
    if (name == names[static_cast<std::size_t>(rank_)]) {
      if (r < rank_) ++node_rank_;
      ++node_size_;
    }
    if (r == rank_) host_index_ = index;
  }
}

Comm Comm::world() { return Comm(mpi_world_backend()); }

Comm Comm::solo() { return Comm(std::make_shared<SoloBackend>()); }

void Comm::barrier() const { backend_->barrier(); }

int Comm::agree(bool ok) const {
  const int lowest = backend_->reduce(ok ? INT_MAX : rank_, ReduceOp::min);
  return lowest == INT_MAX ? -1 : lowest;
}

Comm::Vote Comm::vote(bool ok, bool want_stop) const {
  constexpr int kStop = INT_MAX - 1;
  const int lowest = backend_->reduce(!ok ? rank_ : (want_stop ? kStop : INT_MAX), ReduceOp::min);
  if (lowest < kStop) return {lowest, false};
  return {-1, lowest == kStop};
}

double Comm::sum(double v) const { return backend_->reduce(v, ReduceOp::sum); }
double Comm::max(double v) const { return backend_->reduce(v, ReduceOp::max); }
double Comm::min(double v) const { return backend_->reduce(v, ReduceOp::min); }
std::uint64_t Comm::sum(std::uint64_t v) const { return backend_->reduce(v, ReduceOp::sum); }
std::uint64_t Comm::max(std::uint64_t v) const { return backend_->reduce(v, ReduceOp::max); }
std::uint64_t Comm::min(std::uint64_t v) const { return backend_->reduce(v, ReduceOp::min); }
std::int64_t Comm::min(std::int64_t v) const { return backend_->reduce(v, ReduceOp::min); }
std::int64_t Comm::max(std::int64_t v) const { return backend_->reduce(v, ReduceOp::max); }
std::vector<double> Comm::sum(const std::vector<double>& v) const { return backend_->reduce(v, ReduceOp::sum); }
std::vector<std::uint64_t> Comm::sum(const std::vector<std::uint64_t>& v) const {
  return backend_->reduce(v, ReduceOp::sum);
}
std::vector<std::uint64_t> Comm::max(const std::vector<std::uint64_t>& v) const {
  return backend_->reduce(v, ReduceOp::max);
}
std::vector<double> Comm::all_gather(const std::vector<double>& v) const { return backend_->all_gather(v); }
std::vector<double> Comm::gather(const std::vector<double>& v) const { return backend_->gather(v); }
std::vector<std::string> Comm::gather_strings(const std::string& s) const { return backend_->gather_strings(s); }
std::string Comm::broadcast(const std::string& s) const { return backend_->broadcast(s); }
std::int64_t Comm::broadcast(std::int64_t v) const { return backend_->broadcast(v); }
void Comm::abort(int code) const {
  backend_->abort(code);
  std::_Exit(code);  // not reached: [[noreturn]] does not travel through a virtual call
}

}  // namespace trainio::mpi
