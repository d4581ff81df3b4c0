#pragma once
// What a thread's requests to an object store added up to: requests by kind, answers by HTTP
// status, retries, body bytes, and latency histograms of the time to first byte and of the whole
// request. Merges across threads and phases like the other recorders.

#include <array>
#include <cstdint>
#include <vector>

#include "metrics/histogram.hpp"
#include "storage/io_observer.hpp"

namespace trainio::metrics {

struct RequestStats {
  static constexpr int kStatuses = 600;  // index 0: no answer; else the HTTP status
  std::array<std::uint64_t, storage::kRequestKinds> by_kind{};
  // Answers by status, sized at the first request: the many recorders of a run without an
  // object store (every thread's, phase's and checkpoint's) hold none.
  std::vector<std::uint64_t> by_status;
  std::uint64_t retries = 0;  // tries beyond the first
  std::uint64_t bytes = 0;
  Histogram first_byte_ns, total_ns;  // first_byte_ns: answered requests only

  void add(const storage::RequestEvent& e) {
    ++by_kind[static_cast<int>(e.kind)];
    if (by_status.empty()) by_status.resize(kStatuses);
    ++by_status[static_cast<std::size_t>(e.status > 0 && e.status < kStatuses ? e.status : 0)];
    retries += static_cast<std::uint64_t>(e.attempts > 1 ? e.attempts - 1 : 0);
    bytes += e.bytes;
    // A request that got no answer has no first byte: it counts in total_ns only.
    if (e.status > 0) first_byte_ns.record(static_cast<std::uint64_t>(e.first_byte_ns > 0 ? e.first_byte_ns : 0));
    total_ns.record(static_cast<std::uint64_t>(e.total_ns > 0 ? e.total_ns : 0));
  }
  void merge(const RequestStats& o) {
    for (int i = 0; i < storage::kRequestKinds; ++i) by_kind[i] += o.by_kind[i];
    if (by_status.empty()) by_status.resize(o.by_status.size());
    for (std::size_t i = 0; i < o.by_status.size(); ++i) by_status[i] += o.by_status[i];
    retries += o.retries;
    bytes += o.bytes;
    first_byte_ns.merge(o.first_byte_ns);
    total_ns.merge(o.total_ns);
  }
  std::uint64_t requests() const { return total_ns.count(); }
  // After the run's phase ends: its latencies keep only their reported quantiles.
  void keep_reported_quantiles() {
    first_byte_ns.keep_reported_quantiles();
    total_ns.keep_reported_quantiles();
  }
};

}  // namespace trainio::metrics
