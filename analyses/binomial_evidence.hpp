#pragma once
// "P ≥ p₀" claims over independent trials (lsh_buckets, parrots_memorize): θ = P − p₀ > 0 read from the
// Wilson score interval. The two-sided (1 − 2α) interval, taken about its centre, gives app::direction()'s
// one-sided (1 − α) bounds exactly, so "holds" means the Wilson lower end clears p₀.
#include <cstdint>
#include <string>

#include <sparseact/app/checks.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::app {

inline Evidence wilson_evidence(std::int64_t hits, std::int64_t trials, double p0, double alpha, std::string unit) {
  const stats::Interval w = stats::wilson_interval(hits, trials, 2 * alpha);
  const double centre = 0.5 * (w.lo + w.hi);
  return evidence_from_interval(centre - p0, {w.lo - p0, w.hi - p0}, 2 * alpha, std::size_t(trials), std::move(unit),
                                "Wilson score interval (normal)");
}

}  // namespace sparseact::app
