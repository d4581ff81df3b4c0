#include <catch2/catch.hpp>

#include <thread>

#include "engine/overlap_thread.hpp"
#include "format/overlap.hpp"

using namespace trainio;
using Way = format::OverlapChoice::Way;

namespace {

constexpr std::uint64_t kFile = 4u << 20;

// Records one file written the way the choice says, at `ns_per_byte` for that way.
Way write_one(format::OverlapChoice& choice, double beside_ns_per_byte, double after_ns_per_byte) {
  const Way way = choice.next();
  const double rate = way == Way::beside ? beside_ns_per_byte : after_ns_per_byte;
  choice.record(kFile, static_cast<std::int64_t>(rate * kFile));
  return way;
}

}  // namespace

TEST_CASE("until files are recorded, a writer's pieces are generated beside its writes", "[format]") {
  const format::OverlapChoice choice;
  CHECK(choice.next() == Way::beside);
  CHECK(choice.ns_per_byte(Way::beside) == 0);
  CHECK(choice.ns_per_byte(Way::after) == 0);
}

TEST_CASE("the overlap choice tries both ways in turn, then keeps the one that wrote a byte faster", "[format]") {
  using C = format::OverlapChoice;
  for (const bool after_faster : {true, false}) {
    INFO((after_faster ? "after" : "beside") << " is faster");
    C choice;
    const double beside = after_faster ? 0.30 : 0.20, after = after_faster ? 0.25 : 0.40;
    for (std::uint64_t i = 0; i < 2 * C::kTrial; ++i)
      CHECK(write_one(choice, beside, after) == (i % 2 == 0 ? Way::beside : Way::after));
    CHECK(choice.ns_per_byte(Way::beside) == Approx(beside).epsilon(1e-6));
    CHECK(choice.ns_per_byte(Way::after) == Approx(after).epsilon(1e-6));
    const Way faster = after_faster ? Way::after : Way::beside;
    for (std::uint64_t i = 2 * C::kTrial; i < C::kCycle; ++i) REQUIRE(write_one(choice, beside, after) == faster);
    CHECK(choice.next() == Way::beside);  // the next cycle's trial starts
  }
}

TEST_CASE("the first file of each way is a warm-up and does not count", "[format]") {
  using C = format::OverlapChoice;
  C choice;
  choice.record(kFile, 100 * kFile);  // beside, slowed by starting the overlap's thread
  choice.record(kFile, 1 * kFile);    // after
  for (std::uint64_t i = 2; i < 2 * C::kTrial; ++i) write_one(choice, 0.2, 0.3);
  CHECK(choice.ns_per_byte(Way::beside) == Approx(0.2).epsilon(1e-6));
  CHECK(choice.next() == Way::beside);
}

TEST_CASE("a lasting change of the storage's speed changes the way within a few cycles", "[format]") {
  using C = format::OverlapChoice;
  C choice;
  // Writes as fast as memory: generating after each write wins.
  for (std::uint64_t i = 0; i < 3 * C::kCycle; ++i) write_one(choice, 0.30, 0.25);
  for (std::uint64_t i = 0; i < 2 * C::kTrial; ++i) write_one(choice, 0.30, 0.25);
  CHECK(choice.next() == Way::after);
  // The storage slows (dirty pages throttled, a busy server): writes wait, generating beside wins.
  // Each kCycle files from here end with a trial of both ways measured.
  int cycles = 0;
  while (choice.next() == Way::after && cycles < 5) {
    for (std::uint64_t i = 0; i < C::kCycle; ++i) write_one(choice, 1.0, 1.02);
    ++cycles;
  }
  CHECK(cycles == 2);  // the estimates halve the old speed's weight at each trial
}

TEST_CASE("a forced way holds whatever the files measure", "[format]") {
  using C = format::OverlapChoice;
  for (const Way way : {Way::beside, Way::after}) {
    C choice;
    choice.force(way);
    for (std::uint64_t i = 0; i < C::kCycle + 3; ++i) REQUIRE(write_one(choice, way == Way::beside ? 9 : 0.1, 1) == way);
  }
}

TEST_CASE("write_beside runs the task on the overlap's thread beside, on the caller's after", "[format]") {
  engine::OverlapThread overlap;
  for (const Way way : {Way::beside, Way::after}) {
    overlap.choice().force(way);
    std::thread::id task_on, write_on;
    bool written_first = false;
    format::write_beside(
        overlap, [&] { task_on = std::this_thread::get_id(); }, [&] {
          write_on = std::this_thread::get_id();
          written_first = task_on == std::thread::id();
        });
    CHECK(write_on == std::this_thread::get_id());
    if (way == Way::after) {
      CHECK(task_on == std::this_thread::get_id());
      CHECK(written_first);  // the write goes first: the piece it writes is ready, the next is not
    } else {
      CHECK(task_on != std::this_thread::get_id());
    }
  }
}
