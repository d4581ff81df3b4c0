#include <catch2/catch.hpp>

#include "plan/time_draws.hpp"

using namespace trainio;
using config::TimeSpec;

namespace {
double mean_of(const TimeSpec& spec, int n = 20000) {
  const plan::TimeDraws d(spec, 77);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double v = d.at(static_cast<std::uint64_t>(i));
    REQUIRE(v >= 0);
    sum += v;
  }
  return sum / n;
}
}  // namespace

TEST_CASE("emulated times follow their distribution's mean, and never go negative") {
  TimeSpec t;
  t.mean = 0.3;
  CHECK(mean_of(t, 10) == Approx(0.3));
  t.kind = TimeSpec::Kind::normal;
  t.stdev = 0.05;
  CHECK(mean_of(t) == Approx(0.3).epsilon(0.01));
  TimeSpec u{TimeSpec::Kind::uniform};
  u.min = 0.1;
  u.max = 0.3;
  CHECK(mean_of(u) == Approx(0.2).epsilon(0.01));
  TimeSpec g{TimeSpec::Kind::gamma};
  g.shape = 2;
  g.scale = 0.1;
  CHECK(mean_of(g) == Approx(0.2).epsilon(0.02));
  g.shape = 0.5;
  CHECK(mean_of(g) == Approx(0.05).epsilon(0.05));
  TimeSpec e{TimeSpec::Kind::exponential};
  e.scale = 0.2;
  CHECK(mean_of(e) == Approx(0.2).epsilon(0.02));
  TimeSpec p{TimeSpec::Kind::poisson};
  p.lam = 3;
  CHECK(mean_of(p) == Approx(3).epsilon(0.02));
  p.lam = 100;
  CHECK(mean_of(p) == Approx(100).epsilon(0.01));
}

TEST_CASE("a draw depends only on its seed and index") {
  TimeSpec t{TimeSpec::Kind::normal};
  t.mean = 1;
  t.stdev = 0.5;
  const plan::TimeDraws a(t, 5), b(t, 5), c(t, 6);
  CHECK(a.at(10) == b.at(10));
  CHECK(a.at(10) != c.at(10));
  CHECK(a.at(10) != a.at(11));
}
