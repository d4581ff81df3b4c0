// A duration that may vary from step to step (config/time_spec.hpp): its long-run mean and names.
#include <catch2/catch.hpp>

#include <string>

#include "config/time_spec.hpp"

using namespace trainio::config;

TEST_CASE("a time's long-run mean follows its distribution") {
  TimeSpec t;
  CHECK(t.is_zero());
  CHECK(t.expected() == 0.0);
  t.mean = 0.25;
  CHECK_FALSE(t.is_zero());
  CHECK(t.expected() == 0.25);
  t.kind = TimeSpec::Kind::normal;
  t.stdev = 0.1;
  CHECK(t.expected() == 0.25);  // the mean, whatever the spread
  CHECK_FALSE(t.is_zero());

  TimeSpec u;
  u.kind = TimeSpec::Kind::uniform;
  u.min = 1;
  u.max = 4;
  CHECK(u.expected() == 2.5);
  CHECK_FALSE(u.is_zero());  // only a constant zero is no time at all

  TimeSpec g;
  g.kind = TimeSpec::Kind::gamma;
  g.shape = 3;
  g.scale = 0.5;
  CHECK(g.expected() == 1.5);  // shape x scale

  TimeSpec e;
  e.kind = TimeSpec::Kind::exponential;
  e.scale = 0.2;
  CHECK(e.expected() == 0.2);

  TimeSpec p;
  p.kind = TimeSpec::Kind::poisson;
  p.lam = 7;
  CHECK(p.expected() == 7.0);
}

TEST_CASE("every kind of time has its name") {
  CHECK(std::string(kind_name(TimeSpec::Kind::constant)) == "constant");
  CHECK(std::string(kind_name(TimeSpec::Kind::normal)) == "normal");
  CHECK(std::string(kind_name(TimeSpec::Kind::uniform)) == "uniform");
  CHECK(std::string(kind_name(TimeSpec::Kind::gamma)) == "gamma");
  CHECK(std::string(kind_name(TimeSpec::Kind::exponential)) == "exponential");
  CHECK(std::string(kind_name(TimeSpec::Kind::poisson)) == "poisson");
}
