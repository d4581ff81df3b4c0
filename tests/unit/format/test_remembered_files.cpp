#include <catch2/catch.hpp>

#include <string>

#include "format/memory_reader.hpp"
#include "format/session_reader.hpp"

using namespace trainio;

namespace {

// Counts the loads that reach the framework reader.
class CountingReader final : public format::SampleReader {
 public:
  explicit CountingReader(std::uint64_t& loads) : loads_(loads) {}
  std::uint64_t read(const format::SampleRequest& r) override {
    ++loads_;
    return r.shape.bytes();
  }

 private:
  std::uint64_t& loads_;
};

plan::SampleShape shape_of(std::uint64_t bytes) {
  plan::SampleShape s;
  s.dims[0] = bytes;
  s.ndims = 1;
  return s;
}

format::SampleRequest request(const std::string& path, std::uint64_t file, std::uint64_t sample, std::uint64_t per_file = 4) {
  return {&path, shape_of(100), per_file, sample, file};
}

}  // namespace

TEST_CASE("read_type memory loads each file once per reader, keyed by the file's number") {
  std::uint64_t loads = 0;
  format::MemoryReader reader(std::make_unique<CountingReader>(loads));
  const std::string a = "a.npz", b = "b.npz";
  CHECK(reader.read(request(a, 0, 0)) == 100);
  CHECK(reader.read(request(a, 0, 3)) == 100);
  CHECK(reader.read(request(b, 7, 1)) == 100);
  CHECK(reader.read(request(a, 0, 2)) == 100);
  CHECK(loads == 2);
}

TEST_CASE("read_type memory remembers a million files in a bit each") {
  std::uint64_t loads = 0;
  format::MemoryReader reader(std::make_unique<CountingReader>(loads));
  const std::string path = "f.npz";
  constexpr std::uint64_t kFiles = 1'000'000;
  for (std::uint64_t f = 0; f < kFiles; ++f) reader.read(request(path, f, 0));
  for (std::uint64_t f = 0; f < kFiles; f += 997) reader.read(request(path, f, 1));
  CHECK(loads == kFiles);
  // One bit per file (125,000 bytes), with the vector's growth slack: never per-path strings.
  CHECK(reader.loaded().memory_bytes() <= 2 * kFiles / 8);
}

TEST_CASE("the file-session reader closes a file when its count of samples reaches samples_per_file") {
  std::uint64_t loads = 0;
  format::SessionReader reader(std::make_unique<CountingReader>(loads));
  const std::string p = "x.npz";
  // File 0's 4 samples in order: one load; then file 1 (a new load), interleaved with file 0
  // again after it was closed (a second load of file 0).
  for (std::uint64_t s = 0; s < 4; ++s) reader.read(request(p, 0, s));
  CHECK(loads == 1);
  reader.read(request(p, 1, 0));
  reader.read(request(p, 0, 1));
  CHECK(loads == 3);
}
