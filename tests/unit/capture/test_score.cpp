// Score parts and the pieces the inference uses: histograms, ratios, passes over a file.
#include <catch2/catch.hpp>

#include <vector>

#include "capture/histogram.hpp"
#include "capture/profile.hpp"
#include "capture/score.hpp"
#include "saves.hpp"

using namespace trainio::capture;

TEST_CASE("capture histogram: quarter octaves and the distance in octaves", "[capture]") {
  CHECK(LogHistogram::bucket(4096) == LogHistogram::bucket(4096 + 1000));
  CHECK(LogHistogram::bucket(4096) + 4 == LogHistogram::bucket(8192));
  CHECK(LogHistogram::lower(LogHistogram::bucket(65536)) == 65536);
  LogHistogram a, b, c;
  a.add(4096, 10);
  b.add(8192, 10);
  c.add(4096, 10);
  CHECK(octaves_apart(a, b) == Approx(1.0));
  CHECK(octaves_apart(a, c) == Approx(0.0));
  CHECK(*closeness(a, b, 3) == Approx(2.0 / 3));
  CHECK_FALSE(closeness(a, LogHistogram{}, 3).has_value());
}

TEST_CASE("capture score: ratio and octave closeness", "[capture]") {
  CHECK(ratio(0, 0) == 1);
  CHECK(ratio(2, 0) == 0);
  CHECK(ratio(2, 8) == Approx(0.25));
  CHECK(octave_closeness(1, 4, 4) == Approx(0.5));
}

namespace {
Event read_at(std::uint64_t offset, std::uint64_t bytes, long pid = 1) {
  Event e;
  e.call = Call::read;
  e.pid = pid;
  e.path = "/data/train/a.npz";
  e.offset = offset;
  e.bytes = bytes;
  e.has_offset = true;
  e.dur_ns = 1000;
  return e;
}
}  // namespace

TEST_CASE("capture profile: passes weigh offsets by bytes; system files are not data", "[capture]") {
  Profile p;
  for (int load = 0; load < 2; ++load) {
    for (int i = 0; i < 3; ++i) p.add(read_at(0, 4096));  // a header re-read three times a load
    p.add(read_at(4096, 60000));                          // the data, once a load
  }
  REQUIRE(p.files().size() == 1);
  CHECK(p.files()[0].passes() == 2);
  CHECK_FALSE(Profile::is_data_path("/usr/lib/python3/dist-packages/torch/__init__.py"));
  CHECK_FALSE(Profile::is_data_path("/proc/self/maps"));
  CHECK(Profile::is_data_path("/mnt/fs/data/train/img_1_of_8.npz"));
}

TEST_CASE("capture score: identical profiles score 1, a shuffled one against a sequential one less", "[capture]") {
  auto job = [](bool shuffled) {
    Profile p;
    const int order[8] = {3, 0, 6, 1, 7, 2, 5, 4};
    std::int64_t t = 0;
    for (int epoch = 0; epoch < 2; ++epoch)
      for (int i = 0; i < 8; ++i) {
        const std::string path = "/d/f" + std::to_string(shuffled ? order[i] : i);
        Event e;
        e.call = Call::open;
        e.pid = 1;
        e.path = path;
        e.start_ns = t += 1000;
        p.add(e);
        Event r = read_at(0, 1000);
        r.path = path;
        r.start_ns = t += 1000;
        p.add(r);
      }
    return p;
  };
  const Profile a = job(true), b = job(true), c = job(false);
  const Score same = score(a, b);
  CHECK(same.total == Approx(1.0));
  const Score other = score(a, c);
  CHECK(other.total < 0.95);
  bool order_seen = false;
  for (const auto& part : other.parts)
    if (part.name == "order") {
      order_seen = true;
      CHECK(part.score.value_or(1) < 0.5);
    }
  CHECK(order_seen);
}

TEST_CASE("capture score: checkpoints saved at another cadence score lower, slower saves do not", "[capture]") {
  // Three saves of `writes` 1 MiB writes (1 ms apart), `pause_ms` from one save's end to the next.
  auto saves = [](std::int64_t pause_ms, std::size_t writes) {
    Profile p;
    std::int64_t t = 0;
    for (int i = 0; i < 3; ++i)
      t = trainio::test::add_save(p, "/ckpt/s" + std::to_string(i) + ".pt", t + pause_ms * 1'000'000,
                                  std::vector<std::uint64_t>(writes, 1 << 20));
    return p;
  };
  auto cadence = [](const Score& s) {
    for (const auto& part : s.parts)
      if (part.name == "checkpoint_cadence") return *part.score;
    return -1.0;
  };
  CHECK(cadence(score(saves(100, 2), saves(100, 2))) == Approx(1));
  CHECK(cadence(score(saves(100, 2), saves(400, 2))) == Approx(0.25));
  // A save that takes 40 ms instead of 2 is the storage's answer, not another workload.
  CHECK(cadence(score(saves(100, 2), saves(100, 40))) == Approx(1));
}
