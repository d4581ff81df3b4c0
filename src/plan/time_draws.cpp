#include "plan/time_draws.hpp"

#include <cmath>

namespace trainio::plan {

namespace {

// Marsaglia and Tsang's method; shape < 1 uses the boost u^(1/shape).
double gamma_draw(double shape, double scale, util::Rng& rng) {
  if (shape <= 0 || scale <= 0) return 0;
  if (shape < 1) {
    double u = rng.uniform();
    while (u <= 0) u = rng.uniform();
    return gamma_draw(shape + 1, scale, rng) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x, v;
    do {
      x = rng.normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.uniform();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
    if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v * scale;
  }
}

// Knuth's multiplication method for small means; above 30 the normal approximation is within
// the noise of any storage measurement.
double poisson_draw(double lam, util::Rng& rng) {
  if (lam <= 0) return 0;
  if (lam > 30) return std::max(0.0, std::round(lam + std::sqrt(lam) * rng.normal()));
  const double limit = std::exp(-lam);
  double product = rng.uniform();
  int k = 0;
  while (product > limit) {
    product *= rng.uniform();
    ++k;
  }
  return k;
}

}  // namespace

double draw_seconds(const config::TimeSpec& spec, util::Rng& rng) {
  using Kind = config::TimeSpec::Kind;
  double v = 0;
  switch (spec.kind) {
    case Kind::constant: v = spec.mean; break;
    case Kind::normal: v = spec.mean + spec.stdev * rng.normal(); break;
    case Kind::uniform: v = spec.min + (spec.max - spec.min) * rng.uniform(); break;
    case Kind::gamma: v = gamma_draw(spec.shape, spec.scale, rng); break;
    case Kind::exponential: {
      double u = rng.uniform();
      while (u <= 0) u = rng.uniform();
      v = -spec.scale * std::log(u);
      break;
    }
    case Kind::poisson: v = poisson_draw(spec.lam, rng); break;
  }
  return std::fabs(v);
}

std::uint64_t time_seed(std::uint64_t run_seed, TimePhase phase, std::uint64_t epoch, int rank) {
  return util::derive_seed(util::derive_seed(run_seed, static_cast<std::uint64_t>(phase)), epoch,
                           static_cast<std::uint64_t>(rank));
}

}  // namespace trainio::plan
