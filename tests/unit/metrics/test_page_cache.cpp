#include <catch2/catch.hpp>

#include "metrics/page_cache.hpp"

using trainio::metrics::CacheVerdict;
using trainio::metrics::page_cache_verdict;
using trainio::metrics::PageCacheStats;

namespace {
PageCacheStats probed(std::uint64_t pages, std::uint64_t resident, std::uint64_t read_bytes = 1 << 20) {
  PageCacheStats s;
  s.read_bytes = read_bytes;
  s.probes = 4;
  s.probed_pages = pages;
  s.resident_pages = resident;
  s.method = 1;  // cachestat
  return s;
}
}  // namespace

TEST_CASE("the verdict follows the resident fraction: >= 0.9 page cache, <= 0.1 storage, mixed between") {
  CHECK(page_cache_verdict(probed(100, 100)).verdict == CacheVerdict::page_cache);
  CHECK(page_cache_verdict(probed(100, 90)).verdict == CacheVerdict::page_cache);
  CHECK(page_cache_verdict(probed(100, 89)).verdict == CacheVerdict::mixed);
  CHECK(page_cache_verdict(probed(100, 11)).verdict == CacheVerdict::mixed);
  CHECK(page_cache_verdict(probed(100, 10)).verdict == CacheVerdict::storage);
  CHECK(page_cache_verdict(probed(100, 0)).verdict == CacheVerdict::storage);
  const auto v = page_cache_verdict(probed(200, 50));
  REQUIRE(v.resident_fraction);
  CHECK(*v.resident_fraction == Approx(0.25));
  CHECK(v.method == "cachestat");
  CHECK(v.reason.empty());
}

TEST_CASE("O_DIRECT reads bypass the cache; mixed with buffered reads they count as not resident") {
  PageCacheStats all_direct;
  all_direct.read_bytes = all_direct.direct_bytes = 1 << 20;
  const auto v = page_cache_verdict(all_direct);
  CHECK(v.verdict == CacheVerdict::bypassed);
  CHECK(v.method == "o_direct");
  CHECK(*v.resident_fraction == 0.0);

  PageCacheStats half = probed(100, 100, 2 << 20);
  half.direct_bytes = 1 << 20;
  const auto h = page_cache_verdict(half);
  CHECK(h.verdict == CacheVerdict::mixed);
  CHECK(*h.resident_fraction == Approx(0.5));
  CHECK(h.method == "cachestat+o_direct");
}

TEST_CASE("without evidence the verdict is unknown, with the reason") {
  const auto none = page_cache_verdict(PageCacheStats{});
  CHECK(none.verdict == CacheVerdict::unknown);
  CHECK_FALSE(none.resident_fraction);
  CHECK(none.reason == "no data was read");

  PageCacheStats denied;
  denied.read_bytes = 1 << 20;
  denied.failed_probes = 3;
  denied.probe_error = 1;  // EPERM
  const auto d = page_cache_verdict(denied);
  CHECK(d.verdict == CacheVerdict::unknown);
  CHECK(d.reason.find("owns or may write") != std::string::npos);

  // Reads that do not enter the page cache (FUSE direct_io): residency says nothing.
  PageCacheStats fuse_direct = probed(100, 0);
  fuse_direct.stayed_out_pages = 100;
  const auto f = page_cache_verdict(fuse_direct);
  CHECK(f.verdict == CacheVerdict::unknown);
  CHECK(f.reason.find("did not enter the page cache") != std::string::npos);
  // A cold read that fills the cache is storage.
  PageCacheStats cold = probed(100, 0);
  CHECK(page_cache_verdict(cold).verdict == CacheVerdict::storage);
}

TEST_CASE("stats merge by sums across threads and ranks") {
  PageCacheStats a = probed(100, 100), b = probed(100, 0);
  a.merge(b);
  CHECK(a.probed_pages == 200);
  CHECK(a.resident_pages == 100);
  CHECK(a.probes == 8);
  CHECK(page_cache_verdict(a).verdict == CacheVerdict::mixed);
}
