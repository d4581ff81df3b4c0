#pragma once
// Whether the bytes a read is about to fetch are already in the page cache. Probed before the read
// (the read itself makes them resident), on a deterministic sample of each thread's reads so that
// hot small reads stay cheap. This is what tells an epoch served by memory from one served by
// storage, on any file system that caches in the kernel (ext4, xfs, FUSE, network clients).

#include <cstdint>

namespace trainio::storage {

// How residency is observed: cachestat(2) (Linux 6.5+, no mapping needed), else mincore(2) over a
// temporary read-only mapping of the range. TRAINIO_PAGE_CACHE_PROBES=mincore uses mincore even
// where cachestat exists (as kernels before 6.5 do; for tests), =off turns probing off.
enum class ResidencyMethod : std::uint8_t { none, cachestat, mincore };
const char* residency_method_name(ResidencyMethod m);
// The method this process uses (none before the first probe).
ResidencyMethod residency_method();

// Pages of [offset, offset + length) resident in the page cache. `error` is the errno when it
// could not be observed (EPERM: the kernel hides the residency of files this process neither
// owns nor may write, root in a user namespace included; cachestat refuses, and mincore would
// report them all resident, so its answer is refused here: mincore_trust.hpp).
struct Residency {
  std::uint64_t resident_pages = 0;
  int error = 0;
};
Residency probe_residency(int fd, std::uint64_t offset, std::uint64_t length);
// The fallback on its own (kernels before 6.5), for tests on kernels that have cachestat.
Residency probe_residency_by_mincore(int fd, std::uint64_t offset, std::uint64_t length);

// Page size and the pages a byte range spans.
std::uint64_t page_bytes();
std::uint64_t pages_spanned(std::uint64_t offset, std::uint64_t length);

// The probe of one read: taken before it, completed after it with the bytes it returned.
struct ProbeTicket {
  bool active = false;
  std::uint64_t resident_pages = 0;
  int error = 0;
};

// Each thread's sampling: decides whether the read of `length` bytes at `offset` of file `file`
// (its path hash) is probed. One read in kProbeEveryReads, or sooner once kProbeEveryBytes have
// been read since the last probe; never a read within kNearBytes of a recent read of the same
// file by this thread, whose pages the kernel's readahead for that read may have fetched (they
// came from storage a moment ago, not from an earlier epoch). Deterministic: a function of the
// thread's sequence of reads.
inline constexpr std::uint64_t kProbeEveryReads = 64;
inline constexpr std::uint64_t kProbeEveryBytes = 16u << 20;
inline constexpr std::uint64_t kNearBytes = 2u << 20;
bool sample_probe(std::uint64_t file, std::uint64_t offset, std::uint64_t length);
// A new phase of reading begins (an epoch, an evaluation, a checkpoint load): each thread's next
// read is probed, so that every phase has evidence of its own however few reads it makes.
void begin_probe_phase();
// Resets the calling thread's sampling (tests).
void reset_probe_sampling();
// Turns probing off (or on) for the whole process; on by default.
void set_probing(bool on);
bool probing();

}  // namespace trainio::storage
