#include "metrics/page_cache.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "storage/mincore_trust.hpp"
#include "storage/page_residency.hpp"

namespace trainio::metrics {

void PageCacheStats::merge(const PageCacheStats& o) {
  read_bytes += o.read_bytes;
  direct_bytes += o.direct_bytes;
  remote_bytes += o.remote_bytes;
  probes += o.probes;
  probed_pages += o.probed_pages;
  resident_pages += o.resident_pages;
  stayed_out_pages += o.stayed_out_pages;
  failed_probes += o.failed_probes;
  probe_error = std::max(probe_error, o.probe_error);
  method = std::max(method, o.method);
}

const char* verdict_name(CacheVerdict v) {
  switch (v) {
    case CacheVerdict::page_cache: return "page_cache";
    case CacheVerdict::storage: return "storage";
    case CacheVerdict::mixed: return "mixed";
    case CacheVerdict::bypassed: return "bypassed";
    case CacheVerdict::unknown: break;
  }
  return "unknown";
}

namespace {

std::string probe_failure(std::uint64_t err) {
  const int e = static_cast<int>(err);
  std::string why = fmt::format("the page cache could not be observed ({})", std::strerror(e));
  if (e == EPERM || e == EACCES) {
    why += ": the kernel shows the residency only of files this process owns or may write (cachestat refuses "
           "the others, mincore reports every page of them resident)";
    // Root in a user namespace owns only the files of the ids its map names; mincore(2) would
    // even report every page of the others resident.
    if (const std::string note = storage::user_namespace_note(); !note.empty())
      why += fmt::format(" (this process is {}: the files' owner is not one of its ids)", note);
  }
  return why;
}

}  // namespace

PageCacheVerdict page_cache_verdict(const PageCacheStats& s) {
  PageCacheVerdict v;
  const std::string probe_method = storage::residency_method_name(static_cast<storage::ResidencyMethod>(s.method));
  const std::uint64_t buffered = s.read_bytes - std::min(s.read_bytes, s.direct_bytes);
  if (s.read_bytes == 0) {
    v.method = "none";
    v.reason = "no data was read";
    return v;
  }
  if (buffered == 0) {
    v.verdict = CacheVerdict::bypassed;
    v.resident_fraction = 0.0;
    v.method = s.remote_bytes == s.read_bytes ? "object_store" : s.remote_bytes > 0 ? "object_store+o_direct" : "o_direct";
    return v;
  }
  v.method = s.direct_bytes > 0 ? probe_method + "+o_direct" : probe_method;
  if (s.probes == 0 || s.failed_probes > s.probes) {
    v.reason = s.failed_probes > 0 ? probe_failure(s.probe_error)
               : storage::probing() ? "no read was probed"
                                    : "page-cache probes are turned off (TRAINIO_PAGE_CACHE_PROBES=off)";
    return v;
  }
  const std::uint64_t missing = s.probed_pages - s.resident_pages;
  if (missing > 0 && 2 * s.stayed_out_pages > missing && 10 * missing > s.probed_pages) {
    v.reason = fmt::format(
        "{} of {} probed pages that were read did not enter the page cache: this file system serves reads past it "
        "(a FUSE mount in direct_io mode, or a client with its own cache), so residency cannot say where they came from",
        s.stayed_out_pages, missing);
    return v;
  }
  const double buffered_share = static_cast<double>(buffered) / static_cast<double>(s.read_bytes);
  const double fraction = static_cast<double>(s.resident_pages) / static_cast<double>(s.probed_pages) * buffered_share;
  v.resident_fraction = fraction;
  v.verdict = fraction >= kPageCacheAtLeast ? CacheVerdict::page_cache
              : fraction <= kStorageAtMost  ? CacheVerdict::storage
                                            : CacheVerdict::mixed;
  return v;
}

}  // namespace trainio::metrics
