#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "metrics/io_recorder.hpp"
#include "storage/file.hpp"
#include "storage/io_observer.hpp"
#include "storage/page_residency.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;
using storage::File;

namespace {

constexpr std::uint64_t kFileBytes = 1 << 20;

std::string write_file(const test::TempDir& dir, const std::string& name, std::uint64_t bytes) {
  const std::string path = dir / name;
  File f = File::open(path, {.access = storage::Access::write_new});
  std::vector<unsigned char> data(bytes, 0x5a);
  f.write_all(data.data(), data.size());
  f.fdatasync();
  f.close();
  return path;
}

void evict(const std::string& path) {
  File f = File::open(path);
  f.drop_from_cache();
}

}  // namespace

TEST_CASE("a file evicted with fadvise is not resident; once read, it is") {
  test::TempDir dir("residency");
  const std::string path = write_file(dir, "data.bin", kFileBytes);
  if (test::on_tmpfs(path)) {
    WARN("the test folder is on tmpfs, where nothing can be evicted: set TRAINIO_TEST_TMP to a disk folder");
    return;
  }
  const std::uint64_t pages = storage::pages_spanned(0, kFileBytes);
  REQUIRE(pages == kFileBytes / storage::page_bytes());
  evict(path);
  File f = File::open(path);
  const storage::Residency cold = storage::probe_residency(f.fd(), 0, kFileBytes);
  CHECK(cold.error == 0);
  CHECK(cold.resident_pages == 0);
  std::vector<unsigned char> buffer(kFileBytes);
  f.pread_exact(buffer.data(), kFileBytes, 0);
  const storage::Residency hot = storage::probe_residency(f.fd(), 0, kFileBytes);
  CHECK(hot.error == 0);
  CHECK(hot.resident_pages == pages);
  // Part of a range: the first quarter read after another eviction (readahead off, so that the
  // kernel fetches only what is read).
  f.drop_from_cache();
  REQUIRE(::posix_fadvise(f.fd(), 0, 0, POSIX_FADV_RANDOM) == 0);
  f.pread_exact(buffer.data(), kFileBytes / 4, 0);
  CHECK(storage::probe_residency(f.fd(), 0, kFileBytes).resident_pages == pages / 4);
  CHECK(storage::probe_residency(f.fd(), 3 * kFileBytes / 4, kFileBytes / 4).resident_pages == 0);
  CHECK(storage::residency_method() == storage::ResidencyMethod::cachestat);  // Linux 6.5+ on these machines
  // The fallback for older kernels tells the same.
  CHECK(storage::probe_residency_by_mincore(f.fd(), 0, kFileBytes).resident_pages == pages / 4);
  CHECK(storage::probe_residency_by_mincore(f.fd(), 3 * kFileBytes / 4, kFileBytes / 4).resident_pages == 0);
  f.pread_exact(buffer.data(), kFileBytes, 0);
  CHECK(storage::probe_residency_by_mincore(f.fd(), 0, kFileBytes).resident_pages == pages);
  CHECK(storage::probe_residency_by_mincore(f.fd(), 100, 10).resident_pages == 1);
}

TEST_CASE("the pages a byte range spans") {
  const std::uint64_t p = storage::page_bytes();
  CHECK(storage::pages_spanned(0, 0) == 0);
  CHECK(storage::pages_spanned(0, 1) == 1);
  CHECK(storage::pages_spanned(p - 1, 2) == 2);
  CHECK(storage::pages_spanned(p, p) == 1);
  CHECK(storage::pages_spanned(10, 3 * p) == 4);
}

TEST_CASE("sampling: a phase's first read, then one in kProbeEveryReads, never a read in a recent read's readahead") {
  storage::begin_probe_phase();
  const std::uint64_t far = 64ull << 20;  // beyond any readahead window
  CHECK(storage::sample_probe(1, 0, 4096));
  // A sequential stream continues: its pages may be the kernel's readahead of the first read.
  for (std::uint64_t i = 1; i < 200; ++i) CHECK_FALSE(storage::sample_probe(1, i * 4096, 4096));
  // Reads far apart (other files, or far in one file): one in kProbeEveryReads is probed.
  int probed = 0;
  for (std::uint64_t i = 0; i < 10 * storage::kProbeEveryReads; ++i)
    probed += storage::sample_probe(100 + i, far * (i % 7), 4096) ? 1 : 0;
  CHECK(probed == 10);
  // Large reads: every kProbeEveryBytes at least.
  probed = 0;
  for (std::uint64_t i = 0; i < 16; ++i) probed += storage::sample_probe(1000 + i, 0, storage::kProbeEveryBytes) ? 1 : 0;
  CHECK(probed == 16);
  // A new phase probes its first read, even one near the last phase's reads.
  storage::begin_probe_phase();
  CHECK(storage::sample_probe(1, 4096, 4096));
  CHECK_FALSE(storage::sample_probe(1, 8192, 4096));
}

TEST_CASE("reads through File carry the probe to the recorder; O_DIRECT reads are marked, not probed") {
  test::TempDir dir("residency-file");
  const std::string path = write_file(dir, "data.bin", kFileBytes);
  if (test::on_tmpfs(path)) {
    WARN("the test folder is on tmpfs: no eviction, no O_DIRECT");
    return;
  }
  evict(path);
  metrics::IoRecorder rec;
  {
    storage::ScopedObserver observe(&rec);
    storage::begin_probe_phase();
    std::vector<unsigned char> buffer(kFileBytes);
    File f = File::open(path);
    f.pread_exact(buffer.data(), kFileBytes, 0);  // probed: nothing resident; the read brings it in
    storage::begin_probe_phase();
    f.pread_exact(buffer.data(), kFileBytes, 0);  // probed: all resident
  }
  const metrics::PageCacheStats& c = rec.page_cache();
  const std::uint64_t pages = kFileBytes / storage::page_bytes();
  CHECK(c.probes == 2);
  CHECK(c.probed_pages == 2 * pages);
  CHECK(c.resident_pages == pages);
  CHECK(c.stayed_out_pages == 0);  // ext4 keeps what it read
  CHECK(c.read_bytes == 2 * kFileBytes);
  CHECK(c.direct_bytes == 0);

  metrics::IoRecorder direct;
  {
    storage::ScopedObserver observe(&direct);
    storage::begin_probe_phase();
    void* buffer = nullptr;
    REQUIRE(::posix_memalign(&buffer, 4096, kFileBytes) == 0);
    File f = File::open(path, {.direct = true});
    f.pread_exact(buffer, kFileBytes, 0);
    File copy = f.duplicate();  // one open file description: O_DIRECT too
    copy.pread_exact(buffer, 4096, 0);
    ::free(buffer);
  }
  CHECK(direct.page_cache().probes == 0);
  CHECK(direct.page_cache().direct_bytes == kFileBytes + 4096);
  CHECK(direct.page_cache().read_bytes == kFileBytes + 4096);
}
