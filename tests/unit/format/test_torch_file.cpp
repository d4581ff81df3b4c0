#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "engine/overlap_thread.hpp"
#include "format/torch/torch_file.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;
using format::torch::Archive;

namespace {

plan::StateDict three_tensors() {
  plan::StateDict s;
  s.add("0", plan::TensorSpec{1000000, config::ModelDataType::fp16});
  s.add("1", plan::TensorSpec{300, config::ModelDataType::fp16});
  s.add("2", plan::TensorSpec{5, config::ModelDataType::fp32});
  return s;
}

// Runs each task at once, in the caller's thread, and counts them.
struct InlineOverlap : format::Overlap {
  int tasks = 0;
  void start(format::TaskRef task) override {
    ++tasks;
    task();
  }
  void wait() override {}
};

std::string saved(const Archive& a, const std::string& path, format::Overlap& beside) {
  format::PyBufferedWriter out;
  out.open(path);
  format::torch::TensorContent ones(nullptr);
  util::Bytes scratch(2 * 64 * 1024);  // pieces of 60 KiB: the 2 MB tensor takes 33
  format::torch::save(a, out, ones, scratch, beside);
  out.close();
  std::ostringstream bytes;
  bytes << std::ifstream(path, std::ios::binary).rdbuf();
  return bytes.str();
}

}  // namespace

TEST_CASE("torch.save generates each next piece beside the write, and the bytes do not depend on it") {
  test::TempDir dir("torch-save");
  const Archive a(three_tensors());
  InlineOverlap counted;
  engine::OverlapThread thread;
  const std::string serial = saved(a, dir / "serial.pt", counted), overlapped = saved(a, dir / "overlapped.pt", thread);
  CHECK(serial.size() == a.file_size());
  CHECK(serial == overlapped);
  CHECK(counted.tasks == 32);  // every piece of the 2 MB tensor after its first
}

TEST_CASE("the pickle is the one torch.save writes for the same dict") {
  // PyTorch 1.13's data.pkl for {'0': half[1000000], '1': half[300], '2': float[5]}.
  const std::string expected(
      "\x80\x02}q\x00(X\x01\x00\x00\x00" "0q\x01" "ctorch._utils\n_rebuild_tensor_v2\nq\x02((X\x07\x00\x00\x00storageq\x03"
      "ctorch\nHalfStorage\nq\x04X\x01\x00\x00\x00" "0q\x05X\x03\x00\x00\x00" "cpuq\x06J@B\x0f\x00tq\x07QK\x00J@B\x0f\x00"
      "\x85q\x08K\x01\x85q\t\x89" "ccollections\nOrderedDict\nq\n)Rq\x0btq\x0cRq\rX\x01\x00\x00\x00" "1q\x0eh\x02((h\x03h\x04"
      "X\x01\x00\x00\x00" "1q\x0fh\x06M,\x01tq\x10QK\x00M,\x01\x85q\x11K\x01\x85q\x12\x89h\n)Rq\x13tq\x14Rq\x15X\x01\x00\x00\x00"
      "2q\x16h\x02((h\x03" "ctorch\nFloatStorage\nq\x17X\x01\x00\x00\x00" "2q\x18h\x06K\x05tq\x19QK\x00K\x05\x85q\x1aK\x01"
      "\x85q\x1b\x89h\n)Rq\x1ctq\x1dRq\x1eu.",
      304);
  const Archive a(three_tensors());
  CHECK(a.pickle() == expected);
}

TEST_CASE("records sit where torch.save puts them, data aligned to 64 bytes") {
  const Archive a(three_tensors());
  const auto& r = a.records();
  REQUIRE(r.size() == 5);
  CHECK(r[0].name == "archive/data.pkl");
  CHECK(r[0].data_offset == 64);
  CHECK(r[1].header_offset == 384);
  CHECK(r[1].data_offset == 448);
  CHECK(r[2].header_offset == 2000464);
  CHECK(r[3].header_offset == 2001128);
  CHECK(r[4].name == "archive/version");
  CHECK(r[4].header_offset == 2001252);
  for (const auto& rec : r) CHECK(rec.data_offset % 64 == 0);
  CHECK(a.central_directory_offset() == 2001362);
  CHECK(a.central_directory_size() == 303);
  CHECK(a.file_size() == 2001763);
  CHECK(a.tensor_bytes() == 2000000 + 600 + 20);
}

TEST_CASE("storages are written in key order as text and read in key order as numbers") {
  plan::StateDict s;
  for (int i = 0; i < 12; ++i) s.add(std::to_string(i), plan::TensorSpec{static_cast<std::uint64_t>(i + 1), config::ModelDataType::int8});
  const Archive a(s);
  const auto& r = a.records();
  CHECK(r[1].name == "archive/data/0");
  CHECK(r[2].name == "archive/data/1");
  CHECK(r[3].name == "archive/data/10");
  CHECK(r[5].name == "archive/data/2");
  CHECK(r[3].size == 11);
  REQUIRE(a.load_order().size() == 12);
  CHECK(a.load_order()[10] == 3);  // storage 10 is the third record
  CHECK(a.load_order()[2] == 5);
}

TEST_CASE("past 4 GiB the archive switches to zip64 fields as PyTorch's writer does") {
  // Measured on torch.save({'0': int8[2^32 + 100], '1': int8[3]}).
  plan::StateDict s;
  s.add("0", plan::TensorSpec{(1ull << 32) + 100, config::ModelDataType::int8});
  s.add("1", plan::TensorSpec{3, config::ModelDataType::int8});
  const Archive a(s);
  CHECK(a.pickle().size() == 229);
  const auto& r = a.records();
  CHECK(r[1].header_offset == 309);
  CHECK(r[1].data_offset == 384);
  CHECK(r[1].zip64);
  CHECK(r[1].local_header.size() == 30 + 14 + 31);  // zip64 extra (20) + FB padding (11)
  CHECK(r[2].header_offset == 0x1000001fcull);
  CHECK(r[2].zip64);  // a small record beyond 4 GiB
  CHECK(r[3].header_offset == 0x10000025bull);
  CHECK(a.central_directory_offset() == 0x1000002daull);
  CHECK(a.central_directory_size() == 0x11f);
  CHECK(a.file_size() == 4294968411ull);
  CHECK(a.descriptor(1, 0).size() == 24);
  CHECK(a.descriptor(0, 0).size() == 16);
  // The end record points at 0xffffffff; the zip64 end record holds the real offset.
  const std::string t = a.trailer(std::vector<std::uint32_t>(r.size(), 0));
  CHECK(t.substr(t.size() - 6, 4) == std::string("\xff\xff\xff\xff", 4));
}

TEST_CASE("constant tensors are torch.ones of their type") {
  format::torch::TensorContent ones(nullptr);
  char b[8];
  ones.fill(plan::TensorSpec{4, config::ModelDataType::fp16}, 0, b, 8);
  CHECK(std::string(b, 8) == std::string("\x00\x3c\x00\x3c\x00\x3c\x00\x3c", 8));
  ones.fill(plan::TensorSpec{2, config::ModelDataType::fp32}, 2, b, 4);  // from the middle of an element
  CHECK(std::string(b, 4) == std::string("\x80\x3f\x00\x00", 4));
}
