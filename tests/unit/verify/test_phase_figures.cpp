// The figures `trainio verify` rebuilds from the step lists (verify/phase_figures.hpp): DLIO's
// block window with its excluded steps, the sums and extremes over ranks, first- and last-done
// bandwidth, and a straggler that agrees with the one the run itself reports.
#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "metrics/straggler.hpp"
#include "metrics/summary.hpp"
#include "verify/phase_figures.hpp"

using namespace trainio;
using namespace trainio::verify;

namespace {

// A block of steps with these load and compute times (seconds), reduced for s and e exclusions.
StepBlock block(const std::vector<double>& load, const std::vector<double>& compute, std::uint64_t s, std::uint64_t e) {
  StepBlock b;
  for (const double v : load) b.load.add(v, s, e);
  for (const double v : compute) b.compute.add(v, s, e);
  return b;
}

RankPhase rank(int r, double duration, std::uint64_t bytes, std::optional<double> au = std::nullopt,
               std::optional<double> throughput_dlio = std::nullopt) {
  RankPhase p;
  p.rank = r;
  p.duration = duration;
  p.bytes_read = bytes;
  p.au = au;
  p.throughput_dlio = throughput_dlio;
  return p;
}

}  // namespace

TEST_CASE("a series keeps its count, sum, first s and last e values") {
  Series s;
  for (int v = 1; v <= 6; ++v) s.add(v, 2, 2);
  CHECK(s.n == 6u);
  CHECK(s.sum == 21.0);
  CHECK(s.head == std::vector<double>{1, 2});
  CHECK(std::vector<double>(s.tail.begin(), s.tail.end()) == std::vector<double>{5, 6});
  Series none;
  none.add(0.5, 0, 0);
  CHECK(none.head.empty());
  CHECK(none.tail.empty());
}

TEST_CASE("a training block's window leaves out its first steps: DLIO's AU and throughput") {
  // 5 steps of 0.1 s load and 0.2 s compute, batch 4, the first step excluded, 1.6 s in all.
  const StepBlock b = block({0.1, 0.1, 0.1, 0.1, 0.1}, {0.2, 0.2, 0.2, 0.2, 0.2}, 1, 0);
  const Window w = window_of(b, 1.6, 4, 1, 0, true);
  CHECK(w.steps == 5u);
  CHECK_FALSE(w.degenerate);
  // T = 1.6 - (0.1 + 0.2) = 1.3 s; compute in it 1.0 - 0.2 = 0.8 s.
  REQUIRE(w.au);
  CHECK(*w.au == Approx(0.8 / 1.3));
  REQUIRE(w.throughput_dlio);
  CHECK(*w.throughput_dlio == Approx(3 * 4 / 1.3));  // DLIO's (steps - 2) x batch / T
  CHECK(w.throughput == Approx(4 * 4 / 1.3));        // trainio's: the window's own steps
}

TEST_CASE("a block with no step past its exclusions is degenerate: no AU, no DLIO throughput") {
  const StepBlock b = block({0.1}, {0.2}, 1, 0);
  const Window w = window_of(b, 0.5, 4, 1, 0, true);
  CHECK(w.degenerate);
  CHECK_FALSE(w.au);
  CHECK_FALSE(w.throughput_dlio);
  CHECK(w.throughput == Approx(4 / 0.5));  // nothing was excluded from the exact window
}

TEST_CASE("a training block of two steps has an AU but no DLIO throughput") {
  const StepBlock b = block({0.1, 0.1}, {0.3, 0.3}, 0, 0);
  const Window w = window_of(b, 1.0, 2, 0, 0, true);
  REQUIRE(w.au);
  CHECK(*w.au == Approx(0.6));
  CHECK_FALSE(w.throughput_dlio);
}

TEST_CASE("an evaluation's throughput counts every step over its whole time") {
  const StepBlock b = block({0.1, 0.1, 0.1}, {0.2, 0.2, 0.2}, 0, 0);
  const Window w = window_of(b, 1.5, 2, 0, 0, false);
  REQUIRE(w.throughput_dlio);
  CHECK(*w.throughput_dlio == Approx(3 * 2 / 1.5));
  REQUIRE(w.au);
  CHECK(*w.au == Approx(0.6 / 1.5));
  // No steps, or no time: no figures.
  CHECK_FALSE(window_of(StepBlock{}, 1.0, 2, 0, 0, false).throughput_dlio);
  CHECK_FALSE(window_of(b, 0.0, 2, 0, 0, false).throughput_dlio);
}

TEST_CASE("across ranks: AU is a mean and DLIO's throughput a sum, each only when every rank has one") {
  PhaseTotals t;
  CHECK_FALSE(t.au());
  CHECK_FALSE(t.throughput_dlio());
  CHECK(t.au_min() == 0);
  t.ranks = {rank(0, 1.0, 100, 0.6, 10.0), rank(1, 2.0, 200, 0.8, 30.0)};
  CHECK(*t.au() == Approx(0.7));
  CHECK(*t.throughput_dlio() == Approx(40));
  CHECK(t.au_min() == Approx(0.6));
  CHECK(t.au_max() == Approx(0.8));
  CHECK(t.duration() == 2.0);
  t.ranks.push_back(rank(2, 1.5, 0));  // a rank without figures
  CHECK_FALSE(t.au());
  CHECK_FALSE(t.throughput_dlio());
  CHECK(t.au_min() == 0);  // it counts as 0
  CHECK(t.au_max() == Approx(0.8));
}

TEST_CASE("first-done bandwidth assumes even progress; last-done is all bytes over the slowest") {
  PhaseTotals t;
  CHECK(t.first_done_bandwidth() == 0);
  CHECK(t.last_done_bandwidth() == 0);
  t.ranks = {rank(0, 1.0, 100), rank(1, 2.0, 200)};
  // When rank 0 was done (1 s), rank 1 had read half of its 200 bytes: 200 bytes in 1 s.
  CHECK(t.first_done_bandwidth() == Approx(200));
  CHECK(t.last_done_bandwidth() == Approx(150));
  t.ranks.push_back(rank(2, 0.0, 50));  // a rank without time: no first-done figure
  CHECK(t.first_done_bandwidth() == 0);
}

TEST_CASE("the slowest and fastest ranks by their own time, the first on a tie") {
  PhaseTotals t;
  t.ranks = {rank(0, 9, 0), rank(1, 9, 0), rank(2, 9, 0)};
  t.ranks[0].batch_wait = 1;
  t.ranks[0].compute = 1;
  t.ranks[1].batch_wait = 3;  // own 3, barrier time is not its own
  t.ranks[1].barrier = 5;
  t.ranks[2].compute = 2;
  CHECK(t.slowest().rank == 1);
  CHECK(t.fastest().rank == 0);
}

TEST_CASE("verify's straggler agrees with the one the run reports") {
  const std::vector<std::vector<std::array<double, 3>>> cases = {
      {{0.2, 1, 0.8}, {1.0, 1, 0}, {0.2, 1, 0.8}},
      {{0.5, 1, 0.1}, {0.5, 1, 0.1}},
      {{0.09, 1.91, 0}, {0, 1, 1}},
      {{0.11, 1.89, 0}, {0, 1, 1}},
      {{1, 0, 0}, {0, 1.6, 0.4}},
      {{1, 0, 0}, {0, 1.5, 0.5}},
      {{3, 1, 0}},
  };
  for (const auto& c : cases) {
    std::vector<RankPhase> mine;
    std::vector<metrics::RankFigures> theirs;
    for (std::size_t r = 0; r < c.size(); ++r) {
      RankPhase p;
      p.rank = static_cast<int>(r);
      p.host = static_cast<int>(r % 2);
      p.batch_wait = c[r][0];
      p.compute = c[r][1];
      p.barrier = c[r][2];
      mine.push_back(p);
      metrics::RankFigures f;
      f.rank = p.rank;
      f.host = p.host;
      f.batch_wait = p.batch_wait;
      f.compute = p.compute;
      f.barrier = p.barrier;
      theirs.push_back(f);
    }
    const StragglerFigures v = straggler_of(mine);
    const metrics::Straggler m = metrics::find_straggler(theirs);
    CHECK(v.known == m.known);
    CHECK(v.held_others == m.held_others);
    CHECK(v.rank == m.rank);
    CHECK(v.host == m.host);
    CHECK(v.batch_wait == Approx(m.batch_wait));
    CHECK(v.others_batch_wait == Approx(m.others_batch_wait));
    CHECK(v.others_barrier == Approx(m.others_barrier));
  }
}
