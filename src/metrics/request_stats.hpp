#pragma once
// What a thread's requests to an object store added up to: requests by kind, answers by HTTP
// status, retries and what the retried tries got, body bytes, latency histograms of the time to
// first byte and of the whole request, and each endpoint's share. Merges across threads and
// phases like the other recorders.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "metrics/histogram.hpp"
#include "storage/io_observer.hpp"

namespace trainio::metrics {

// One endpoint's share of the requests (storage_options.endpoint_url may list several).
struct EndpointStats {
  std::uint64_t count = 0, retries = 0, bytes = 0;
  Histogram first_byte_ns, total_ns;  // first_byte_ns: answered requests only

  void add(const storage::RequestEvent& e) {
    ++count;
    retries += static_cast<std::uint64_t>(e.attempts > 1 ? e.attempts - 1 : 0);
    bytes += e.bytes;
    if (e.status > 0) first_byte_ns.record(static_cast<std::uint64_t>(e.first_byte_ns > 0 ? e.first_byte_ns : 0));
    total_ns.record(static_cast<std::uint64_t>(e.total_ns > 0 ? e.total_ns : 0));
  }
  void merge(const EndpointStats& o) {
    count += o.count;
    retries += o.retries;
    bytes += o.bytes;
    first_byte_ns.merge(o.first_byte_ns);
    total_ns.merge(o.total_ns);
  }
};

struct RequestStats {
  static constexpr int kStatuses = 600;  // index 0: no answer; else the HTTP status
  std::array<std::uint64_t, storage::kRequestKinds> by_kind{};
  // Answers by status, sized at the first request: the many recorders of a run without an
  // object store (every thread's, phase's and checkpoint's) hold none.
  std::vector<std::uint64_t> by_status;
  std::uint64_t retries = 0;  // tries beyond the first
  std::vector<std::uint64_t> retries_by_status;  // what each retried try got (index 0: no answer), sized at the first
  std::uint64_t bytes = 0;
  Histogram first_byte_ns, total_ns;  // first_byte_ns: answered requests only
  // By endpoint, in storage_options.endpoint_url's order (as far as the last one used).
  std::vector<EndpointStats> by_endpoint;

  void add(const storage::RequestEvent& e) {
    if (e.endpoint >= by_endpoint.size()) by_endpoint.resize(e.endpoint + 1u);
    by_endpoint[e.endpoint].add(e);
    ++by_kind[static_cast<int>(e.kind)];
    if (by_status.empty()) by_status.resize(kStatuses);
    ++by_status[static_cast<std::size_t>(e.status > 0 && e.status < kStatuses ? e.status : 0)];
    retries += static_cast<std::uint64_t>(e.attempts > 1 ? e.attempts - 1 : 0);
    if (e.attempts > 1 && retries_by_status.empty()) retries_by_status.resize(kStatuses);
    for (int i = 0; i + 1 < e.attempts; ++i)
      ++retries_by_status[e.retried_status[std::min(i, storage::RequestEvent::kRetriesKept - 1)]];
    bytes += e.bytes;
    // A request that got no answer has no first byte: it counts in total_ns only.
    if (e.status > 0) first_byte_ns.record(static_cast<std::uint64_t>(e.first_byte_ns > 0 ? e.first_byte_ns : 0));
    total_ns.record(static_cast<std::uint64_t>(e.total_ns > 0 ? e.total_ns : 0));
  }
  void merge(const RequestStats& o) {
    for (int i = 0; i < storage::kRequestKinds; ++i) by_kind[i] += o.by_kind[i];
    if (retries_by_status.empty()) retries_by_status.resize(o.retries_by_status.size());
    for (std::size_t i = 0; i < o.retries_by_status.size(); ++i) retries_by_status[i] += o.retries_by_status[i];
    if (by_status.empty()) by_status.resize(o.by_status.size());
    for (std::size_t i = 0; i < o.by_status.size(); ++i) by_status[i] += o.by_status[i];
    retries += o.retries;
    bytes += o.bytes;
    first_byte_ns.merge(o.first_byte_ns);
    total_ns.merge(o.total_ns);
    if (by_endpoint.size() < o.by_endpoint.size()) by_endpoint.resize(o.by_endpoint.size());
    for (std::size_t i = 0; i < o.by_endpoint.size(); ++i) by_endpoint[i].merge(o.by_endpoint[i]);
  }
  std::uint64_t requests() const { return total_ns.count(); }
  // After the run's phase ends: its latencies keep only their reported quantiles.
  void keep_reported_quantiles() {
    first_byte_ns.keep_reported_quantiles();
    total_ns.keep_reported_quantiles();
    for (auto& e : by_endpoint) {
      e.first_byte_ns.keep_reported_quantiles();
      e.total_ns.keep_reported_quantiles();
    }
  }
};

}  // namespace trainio::metrics
