#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/overlap_thread.hpp"
#include "format/stream_writer.hpp"
#include "storage/io_observer.hpp"
#include "storage/new_file.hpp"
#include "unit/format/random_content.hpp"
#include "unit/storage/observed_calls.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;

namespace {

struct Written {
  std::string bytes;
  std::uint32_t crc = 0;
  std::vector<std::uint64_t> writes;  // sizes, in order
};

// A header, `content` bytes of seeded content, a trailer; the header patched last.
Written write_file(const std::string& path, std::uint64_t content, format::Overlap* beside) {
  storage::NewFile out(path);
  util::Bytes buffer;
  test::Calls calls;
  format::Checksum sum;
  {
    const storage::ScopedObserver observe(&calls);
    format::StreamWriter w(out, buffer, beside, 64 * 1024);
    w.append("HEADER--");
    test::RandomContent source(5);
    w.append_content(content, source, &sum);
    w.append("TRAILER");
    const bool patched = w.overwrite_buffered(0, "header--");
    w.flush();
    if (!patched) out.write_at("header--", 8, 0);
    out.commit();
  }
  Written result;
  result.crc = sum.value;
  for (const auto& e : calls.events)
    if (e.op == storage::Op::write) result.writes.push_back(e.bytes);
  std::ostringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  result.bytes = text.str();
  return result;
}

}  // namespace

TEST_CASE("content generated beside the writes or after each makes the same bytes and checksum, in half-buffer writes") {
  using Way = format::OverlapChoice::Way;
  test::TempDir dir("stream-writer");
  engine::OverlapThread beside;
  for (const std::uint64_t content : {100u, 70000u, 200000u, 1000000u}) {
    const std::string name = std::to_string(content);
    const Written plain = write_file(dir / (name + ".plain"), content, nullptr);
    for (const Way way : {Way::beside, Way::after}) {
      INFO(content << " bytes of content, generated " << (way == Way::beside ? "beside" : "after"));
      beside.choice().force(way);
      const Written overlapped = write_file(dir / (name + ".overlapped"), content, &beside);
      CHECK(overlapped.bytes == plain.bytes);
      CHECK(overlapped.crc == plain.crc);
      CHECK(overlapped.bytes.size() == 8 + content + 7);
      CHECK(overlapped.bytes.substr(0, 8) == "header--");
      if (content + 15 <= 64 * 1024) {
        CHECK(overlapped.writes == std::vector<std::uint64_t>{content + 15});  // one write, patched in the buffer
      } else {
        // Every write but the last two (the tail, then the header's patch) is half the buffer.
        REQUIRE(overlapped.writes.size() >= 3);
        for (std::size_t i = 0; i + 2 < overlapped.writes.size(); ++i) CHECK(overlapped.writes[i] == 32 * 1024);
        CHECK(overlapped.writes.back() == 8);
      }
    }
  }
}

TEST_CASE("the write buffer grows with what is appended, up to its chunk: a small file never costs a whole chunk") {
  test::TempDir dir("stream-writer-growth");
  util::Bytes buffer;
  auto write = [&](const std::string& name, std::uint64_t content) {
    storage::NewFile out(dir / name);
    format::StreamWriter w(out, buffer, nullptr, 4u << 20);
    w.append("HEADER--");
    test::RandomContent source(3);
    w.append_content(content, source);
    w.append_zeros(100);
    w.flush();
    out.commit();
  };
  write("small", 1000);
  CHECK(buffer.size() == 64 * 1024);  // one 64 KiB step for 1,108 bytes, not 4 MiB
  write("middle", 300000);
  CHECK(buffer.size() == 320 * 1024);  // doubled to 128 KiB would not hold it: 64 KiB steps
  write("large", 10u << 20);
  CHECK(buffer.size() == 4u << 20);  // never past the chunk
  write("small again", 10);
  CHECK(buffer.size() == 4u << 20);  // reused, not shrunk
  CHECK(std::filesystem::file_size(dir / "large") == 8 + (10u << 20) + 100);
}

TEST_CASE("bytes made in place in the write buffer reach the file in the writes append() makes") {
  test::TempDir dir("stream-writer-in-place");
  // Pieces of 5,000 bytes through a 64 KiB buffer: some straddle a write, and are appended then.
  auto write = [&](const std::string& name, bool in_place) {
    storage::NewFile out(dir / name);
    util::Bytes buffer;
    test::Calls calls;
    std::size_t made_in_place = 0;
    {
      const storage::ScopedObserver observe(&calls);
      format::StreamWriter w(out, buffer, nullptr, 64 * 1024);
      test::RandomContent source(9);
      std::string piece(5000, '\0');
      for (int i = 0; i < 40; ++i) {
        w.append("head");
        char* at = in_place ? w.append_in_place(piece.size()) : nullptr;
        if (at) {
          source.fill(at, piece.size());
          ++made_in_place;
        } else {
          source.fill(piece.data(), piece.size());
          w.append(piece);
        }
      }
      w.flush();
      out.commit();
    }
    std::vector<std::uint64_t> writes;
    for (const auto& e : calls.events)
      if (e.op == storage::Op::write) writes.push_back(e.bytes);
    std::ostringstream text;
    text << std::ifstream(dir / name, std::ios::binary).rdbuf();
    return std::tuple{text.str(), writes, made_in_place};
  };
  const auto [appended, appended_writes, none] = write("appended", false);
  const auto [made, made_writes, in_place] = write("in-place", true);
  CHECK(none == 0);
  CHECK(in_place > 30);
  CHECK(in_place < 40);  // some straddled a write
  CHECK(made == appended);
  CHECK(made_writes == appended_writes);
  CHECK(appended_writes.size() == 4);  // three full 64 KiB buffers, then the rest
}
