#include "storage/page_residency.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "storage/mincore_trust.hpp"

namespace trainio::storage {

namespace {

// cachestat(2) is newer than Debian 12's glibc and kernel headers: its number and structures.
#ifndef SYS_cachestat
#if defined(__x86_64__) || defined(__aarch64__)
#define SYS_cachestat 451
#endif
#endif
struct CachestatRange {
  std::uint64_t off, len;
};
struct Cachestat {
  std::uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

std::atomic<ResidencyMethod> method{ResidencyMethod::none};
bool mincore_forced();
std::atomic<bool> cachestat_missing{mincore_forced()};

bool probing_from_environment() {
  const char* v = std::getenv("TRAINIO_PAGE_CACHE_PROBES");
  return !(v && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0));
}
std::atomic<bool> probing_on{probing_from_environment()};

// TRAINIO_PAGE_CACHE_PROBES=mincore: probe as kernels before 6.5 do, where cachestat exists too
// (for tests of the fallback, and to compare the two).
bool mincore_forced() {
  const char* v = std::getenv("TRAINIO_PAGE_CACHE_PROBES");
  return v && std::strcmp(v, "mincore") == 0;
}

const std::uint64_t kPage = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));

Residency by_cachestat(int fd, std::uint64_t first, std::uint64_t bytes) {
#ifdef SYS_cachestat
  CachestatRange range{first, bytes};
  Cachestat cs{};
  if (::syscall(SYS_cachestat, fd, &range, &cs, 0) == 0) return {cs.nr_cache, 0};
  return {0, errno};
#else
  (void)fd, (void)first, (void)bytes;
  return {0, ENOSYS};
#endif
}

// mincore(2) reports every page of a file this process neither owns, nor holds CAP_FOWNER over,
// nor may write as resident (a side-channel guard): only trust it where the kernel tells the
// truth (mincore_trust.hpp). Root in the initial namespace needs no look at the file.
bool mincore_tells_truth(int fd) {
  const MincoreCaller& caller = mincore_caller();
  return mincore_truthful_for_all(caller) || mincore_truthful(caller, mincore_file(fd));
}

Residency by_mincore(int fd, std::uint64_t first, std::uint64_t bytes) {
  if (!mincore_tells_truth(fd)) return {0, EPERM};
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(first));
  if (map == MAP_FAILED) return {0, errno};
  // One byte per page; a read is at most a few MiB, so a small stack vector covers most.
  std::array<unsigned char, 1024> small;
  const std::uint64_t pages = bytes / kPage;
  Residency out;
  for (std::uint64_t done = 0; done < pages && out.error == 0; done += small.size()) {
    const std::uint64_t n = std::min<std::uint64_t>(small.size(), pages - done);
    if (::mincore(static_cast<char*>(map) + done * kPage, n * kPage, small.data()) != 0) {
      out.error = errno;
      break;
    }
    for (std::uint64_t i = 0; i < n; ++i) out.resident_pages += small[i] & 1;
  }
  ::munmap(map, bytes);
  return out;
}

struct RecentRead {
  std::uint64_t file = 0, start = 0, end = 0;
};
// A few recent reads per thread: enough for interleaved streams (TensorFlow's cycle of files).
std::atomic<std::uint64_t> phase{0};

struct Sampler {
  std::uint64_t phase = 0;
  std::uint64_t reads = kProbeEveryReads - 1;  // the thread's first read is probed
  std::uint64_t bytes = 0;
  std::array<RecentRead, 8> recent{};
  std::uint32_t next = 0;
};
thread_local Sampler sampler;

}  // namespace

const char* residency_method_name(ResidencyMethod m) {
  switch (m) {
    case ResidencyMethod::cachestat: return "cachestat";
    case ResidencyMethod::mincore: return "mincore";
    case ResidencyMethod::none: break;
  }
  return "none";
}

ResidencyMethod residency_method() { return method.load(std::memory_order_relaxed); }

std::uint64_t page_bytes() { return kPage; }

std::uint64_t pages_spanned(std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return 0;
  return (offset + length + kPage - 1) / kPage - offset / kPage;
}

Residency probe_residency(int fd, std::uint64_t offset, std::uint64_t length) {
  const std::uint64_t first = offset - offset % kPage;
  const std::uint64_t bytes = pages_spanned(offset, length) * kPage;
  if (bytes == 0) return {};
  if (!cachestat_missing.load(std::memory_order_relaxed)) {
    const Residency r = by_cachestat(fd, first, bytes);
    if (r.error != ENOSYS) {
      if (r.error == 0) method.store(ResidencyMethod::cachestat, std::memory_order_relaxed);
      return r;
    }
    cachestat_missing.store(true, std::memory_order_relaxed);  // an older kernel: mincore from now on
  }
  const Residency r = by_mincore(fd, first, bytes);
  if (r.error == 0) method.store(ResidencyMethod::mincore, std::memory_order_relaxed);
  return r;
}

Residency probe_residency_by_mincore(int fd, std::uint64_t offset, std::uint64_t length) {
  const std::uint64_t bytes = pages_spanned(offset, length) * kPage;
  return bytes == 0 ? Residency{} : by_mincore(fd, offset - offset % kPage, bytes);
}

bool sample_probe(std::uint64_t file, std::uint64_t offset, std::uint64_t length) {
  Sampler& s = sampler;
  if (const std::uint64_t now = phase.load(std::memory_order_relaxed); now != s.phase) {
    s = Sampler();  // the phase's first read is probed; the last phase's reads are not recent
    s.phase = now;
  }
  ++s.reads;
  s.bytes += length;
  bool near = false;
  for (RecentRead& r : s.recent) {
    if (r.file != file || offset + kNearBytes < r.start || offset > r.end + kNearBytes) continue;
    near = true;
    r = {file, offset, offset + length};  // the stream moves on: its readahead follows the latest read
    break;
  }
  if (!near) {
    s.recent[s.next] = {file, offset, offset + length};
    s.next = (s.next + 1) % s.recent.size();
  }
  if (near || (s.reads < kProbeEveryReads && s.bytes < kProbeEveryBytes) || !probing()) return false;
  s.reads = 0;
  s.bytes = 0;
  return true;
}

void reset_probe_sampling() { sampler = Sampler(); }

void begin_probe_phase() { phase.fetch_add(1, std::memory_order_relaxed); }

void set_probing(bool on) { probing_on.store(on, std::memory_order_relaxed); }
bool probing() { return probing_on.load(std::memory_order_relaxed); }

}  // namespace trainio::storage
