#pragma once
// Where a phase's data reads were served from, judged by what those reads hit: the page-cache
// residency of their pages, probed before a sample of reads (storage/page_residency.hpp), and the
// bytes read with O_DIRECT. Sums over threads, ranks and phases; a verdict only where the
// evidence supports one, `unknown` with the reason otherwise.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "storage/io_observer.hpp"
#include "storage/page_residency.hpp"

namespace trainio::metrics {

struct PageCacheStats {
  std::uint64_t read_bytes = 0;        // data bytes read (reads and touches)
  std::uint64_t direct_bytes = 0;      // of them, read with O_DIRECT or from an object store
  std::uint64_t remote_bytes = 0;      // of those, from an object store
  std::uint64_t probes = 0;            // reads probed
  std::uint64_t probed_pages = 0;
  std::uint64_t resident_pages = 0;    // resident before the read
  std::uint64_t stayed_out_pages = 0;  // not resident before, and still not after the read
  std::uint64_t failed_probes = 0;
  std::uint64_t probe_error = 0;       // errno of a failed probe (the largest, to be deterministic)
  std::uint64_t method = 0;            // storage::ResidencyMethod (the largest seen)

  void add(const storage::OpEvent& e) {
    read_bytes += e.bytes;
    if (e.direct || e.remote) direct_bytes += e.bytes;
    if (e.remote) remote_bytes += e.bytes;
    if (e.probe_error != 0) {
      ++failed_probes;
      probe_error = std::max<std::uint64_t>(probe_error, static_cast<std::uint64_t>(e.probe_error));
    } else if (e.probed_pages > 0) {
      ++probes;
      method = std::max<std::uint64_t>(method, static_cast<std::uint64_t>(storage::residency_method()));
      probed_pages += e.probed_pages;
      resident_pages += e.resident_pages;
      stayed_out_pages += e.stayed_out_pages;
    }
  }
  void merge(const PageCacheStats& o);
};

enum class CacheVerdict { page_cache, storage, mixed, bypassed, unknown };
const char* verdict_name(CacheVerdict v);

// Thresholds on the resident fraction (documented in docs/storage.md).
inline constexpr double kPageCacheAtLeast = 0.9;
inline constexpr double kStorageAtMost = 0.1;

struct PageCacheVerdict {
  CacheVerdict verdict = CacheVerdict::unknown;
  std::optional<double> resident_fraction;  // of the bytes read; O_DIRECT bytes count as not resident
  std::string method;                       // "cachestat", "mincore", "o_direct", "cachestat+o_direct", "none"
  std::string reason;                       // why the verdict is unknown; empty otherwise
};

PageCacheVerdict page_cache_verdict(const PageCacheStats& s);

}  // namespace trainio::metrics
