#include "config/time_spec.hpp"

namespace trainio::config {

double TimeSpec::expected() const {
  switch (kind) {
    case Kind::constant:
    case Kind::normal: return mean;
    case Kind::uniform: return (min + max) / 2;
    case Kind::gamma: return shape * scale;
    case Kind::exponential: return scale;
    case Kind::poisson: return lam;
  }
  return 0;
}

const char* kind_name(TimeSpec::Kind kind) {
  switch (kind) {
    case TimeSpec::Kind::constant: return "constant";
    case TimeSpec::Kind::normal: return "normal";
    case TimeSpec::Kind::uniform: return "uniform";
    case TimeSpec::Kind::gamma: return "gamma";
    case TimeSpec::Kind::exponential: return "exponential";
    case TimeSpec::Kind::poisson: return "poisson";
  }
  return "?";
}

}  // namespace trainio::config
