#pragma once
// What one thread's storage calls added up to: per operation the count, bytes, time and a
// latency histogram, and the access profile of data files and of other files. A recorder belongs
// to one thread (no locks); recorders merge afterwards.

#include <array>
#include <cstdint>
#include <vector>

#include "metrics/access_profile.hpp"
#include "metrics/histogram.hpp"
#include "metrics/live_bytes.hpp"
#include "metrics/page_cache.hpp"
#include "metrics/read_depth.hpp"
#include "metrics/request_stats.hpp"
#include "metrics/trace.hpp"
#include "storage/in_flight.hpp"
#include "storage/io_observer.hpp"

namespace trainio::metrics {

struct OpStats {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ns = 0;
  Histogram latency;  // nanoseconds per call

  void merge(const OpStats& o) {
    count += o.count;
    bytes += o.bytes;
    ns += o.ns;
    latency.merge(o.latency);
  }
};

class IoRecorder final : public storage::IoObserver {
 public:
  void on_op(const storage::OpEvent& e) override {
    OpStats& s = ops_[static_cast<int>(e.op)];
    ++s.count;
    s.bytes += e.bytes;
    const auto ns = static_cast<std::uint64_t>(e.ns < 0 ? 0 : e.ns);
    s.ns += ns;
    s.latency.record(ns);
    (e.data ? data_ : other_).add(e);
    if (e.data && (e.op == storage::Op::read || e.op == storage::Op::touch)) {
      cache_.add(e);
      depth_.add(storage::reported_read_depth(), ns);
      add_live_read(e.bytes);
      note_first_read_end(e.start_ns + e.ns);
    } else if (e.data && e.op == storage::Op::write) {
      add_live_written(e.bytes);
    }
    if (trace::enabled()) trace::storage_call(e);
  }

  void on_request(const storage::RequestEvent& e) override {
    requests_.add(e);
    if (e.kind == storage::Request::get && e.bytes > 0) note_first_read_end(e.start_ns + e.total_ns);
  }

  const OpStats& op(storage::Op op) const { return ops_[static_cast<int>(op)]; }
  // Requests to an object store (none on a file system).
  const RequestStats& requests() const { return requests_; }
  RequestStats& requests() { return requests_; }
  void set(storage::Op op, const OpStats& stats) { ops_[static_cast<int>(op)] = stats; }
  void merge(const IoRecorder& other) {
    for (int i = 0; i < storage::kOpCount; ++i) ops_[i].merge(other.ops_[i]);
    data_.merge(other.data_);
    other_.merge(other.other_);
    cache_.merge(other.cache_);
    requests_.merge(other.requests_);
    depth_.merge(other.depth_);
    if (other.first_read_end_ns_ != 0) note_first_read_end(other.first_read_end_ns_);
  }
  // Reads of data files by the depth they started at.
  const ReadDepth& read_depth() const { return depth_; }
  ReadDepth& read_depth() { return depth_; }
  // When the first read of data (a read call, a touch of mapped pages or an object GET) returned,
  // on the monotonic clock; 0 before any.
  std::int64_t first_read_end_ns() const { return first_read_end_ns_; }
  // What the reads of data files hit: page-cache residency probes and O_DIRECT bytes.
  const PageCacheStats& page_cache() const { return cache_; }
  PageCacheStats& page_cache() { return cache_; }
  // Darshan-style characterization of the calls on data files and on the other files.
  const AccessProfile& data_files() const { return data_; }
  const AccessProfile& other_files() const { return other_; }
  AccessProfile& data_files() { return data_; }
  AccessProfile& other_files() { return other_; }
  // Bytes read by read calls and by touching mapped pages.
  std::uint64_t bytes_read() const { return op(storage::Op::read).bytes + op(storage::Op::touch).bytes; }
  std::uint64_t bytes_written() const { return op(storage::Op::write).bytes; }
  void clear() { *this = IoRecorder(); }
  // Once the phase is summarised: latencies keep only their reported quantiles, the counts of
  // distinct files only their estimates.
  void keep_figures_only() {
    for (OpStats& s : ops_) s.latency.keep_reported_quantiles();
    requests_.keep_reported_quantiles();
    data_.files.keep_estimate_only();
    other_.files.keep_estimate_only();
  }

 private:
  void note_first_read_end(std::int64_t ns) {
    if (first_read_end_ns_ == 0 || ns < first_read_end_ns_) first_read_end_ns_ = ns;
  }
  std::array<OpStats, storage::kOpCount> ops_{};
  AccessProfile data_, other_;
  PageCacheStats cache_;
  RequestStats requests_;
  ReadDepth depth_;
  std::int64_t first_read_end_ns_ = 0;
};

}  // namespace trainio::metrics
