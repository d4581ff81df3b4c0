#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

#include "metrics/access_profile.hpp"
#include "storage/fs.hpp"
#include "storage/io_observer.hpp"
#include "util/distinct_count.hpp"

using trainio::metrics::AccessProfile;
using trainio::metrics::size_bucket;
using trainio::metrics::size_bucket_name;
using trainio::storage::Op;
using trainio::storage::OpEvent;
using trainio::util::DistinctCount;
using trainio::storage::path_hash;

namespace {
OpEvent event(Op op, std::uint64_t bytes, std::uint64_t file, bool sequential = false, bool consecutive = false) {
  OpEvent e;
  e.op = op;
  e.bytes = bytes;
  e.ns = 10;
  e.file = file;
  e.sequential = sequential;
  e.consecutive = consecutive;
  return e;
}
}  // namespace

TEST_CASE("Darshan's size buckets have inclusive upper bounds") {
  CHECK(std::string(size_bucket_name(size_bucket(0))) == "0_100");
  CHECK(std::string(size_bucket_name(size_bucket(100))) == "0_100");
  CHECK(std::string(size_bucket_name(size_bucket(101))) == "100_1K");
  CHECK(std::string(size_bucket_name(size_bucket(1 << 20))) == "100K_1M");
  CHECK(std::string(size_bucket_name(size_bucket((1 << 20) + 1))) == "1M_4M");
  CHECK(std::string(size_bucket_name(size_bucket(1ull << 30))) == "100M_1G");
  CHECK(std::string(size_bucket_name(size_bucket((1ull << 30) + 1))) == "1G_PLUS");
}

TEST_CASE("a profile splits metadata from data and counts the access pattern") {
  AccessProfile p;
  p.add(event(Op::open, 0, 7));
  p.add(event(Op::read, 4096, 7));
  p.add(event(Op::read, 4096, 7, true, true));
  p.add(event(Op::write, 200, 9, true, false));
  p.add(event(Op::close, 0, 7));
  CHECK(p.reads == 2);
  CHECK(p.bytes_read == 8192);
  CHECK(p.writes == 1);
  CHECK(p.metadata_ops == 2);
  CHECK(p.metadata_ns == 20);
  CHECK(p.data_ns == 30);
  CHECK(p.sequential_reads == 1);
  CHECK(p.consecutive_reads == 1);
  CHECK(p.sequential_writes == 1);
  CHECK(p.consecutive_writes == 0);
  CHECK(p.read_sizes[size_bucket(4096)] == 2);
  CHECK(std::lround(p.files.estimate()) == 2);
  const auto top = p.top_sizes(1);
  REQUIRE(top.size() == 1);
  CHECK(top[0] == std::pair<std::uint64_t, std::uint64_t>{4096, 2});
}

TEST_CASE("merging profiles adds counts and unites the files, not adds them") {
  AccessProfile a, b;
  for (std::uint64_t f = 1; f <= 100; ++f) a.add(event(Op::read, 10, f));
  for (std::uint64_t f = 51; f <= 150; ++f) b.add(event(Op::read, 10, f));
  a.merge(b);
  CHECK(a.reads == 200);
  CHECK(std::abs(a.files.estimate() - 150.0) < 150 * 0.05);
}

TEST_CASE("sizes beyond the counted slots are counted as other sizes") {
  AccessProfile p;
  for (std::uint64_t s = 1; s <= AccessProfile::kCommonSlots + 3; ++s) p.add(event(Op::read, s, 1));
  CHECK(p.common.size() == AccessProfile::kCommonSlots);
  CHECK(p.other_sizes == 3);
}

TEST_CASE("a file written under its temporary name is the file it becomes") {
  const std::string path = "data/train/img_1_of_8.npz";
  CHECK(path_hash(trainio::storage::temp_path_for(path)) == path_hash(path));
  CHECK(path_hash(trainio::storage::temp_path_for("x.npz")) == path_hash("x.npz"));
  CHECK(path_hash("data/train/img_2_of_8.npz") != path_hash(path));
  // Only the hidden form is a temporary name.
  CHECK(path_hash("data/a.trainio-tmp") != path_hash("data/a"));
  CHECK(path_hash(".trainio-tmp") != 0);
}

TEST_CASE("a new access size never reallocates the common sizes on the read path") {
  // The table is made once, at its full size, by the first size counted: counting a new size
  // after that (a file of another size, read mid-epoch) allocates nothing.
  AccessProfile p;
  p.count_size(4096, 1);
  const auto* table = p.common.data();
  CHECK(p.common.capacity() == AccessProfile::kCommonSlots);
  for (std::uint64_t size = 1; size < 2 * AccessProfile::kCommonSlots; ++size) p.count_size(size, 1);
  CHECK(p.common.data() == table);
  CHECK(p.common.size() == AccessProfile::kCommonSlots);
  CHECK(p.other_sizes == AccessProfile::kCommonSlots);  // sizes 32..63 (4096 took the first slot)
}

TEST_CASE("a count of distinct files keeps its estimate once its phase is summarised, and nothing else") {
  DistinctCount none;
  CHECK(none.estimate() == 0);
  CHECK(none.registers()[0] == 0);  // nothing allocated, all zero
  DistinctCount counted;
  for (std::uint64_t f = 1; f <= 300; ++f) counted.add(f * 0x9e3779b97f4a7c15ULL);
  counted.merge(none);
  const double estimate = counted.estimate();
  CHECK(std::abs(estimate - 300.0) < 300 * 0.05);
  DistinctCount kept = counted;
  kept.keep_estimate_only();
  CHECK(kept.estimate() == estimate);
  const DistinctCount copy = kept;  // copies keep it
  CHECK(copy.estimate() == estimate);
  CHECK_THROWS_AS(kept.add(1), std::logic_error);
  CHECK_THROWS_AS(counted.merge(kept), std::logic_error);
  CHECK_THROWS_AS(kept.merge(counted), std::logic_error);
}
