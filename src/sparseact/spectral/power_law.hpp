#pragma once
// The power-law tail of an empirical spectral density (issue 16; the "α" of heavy-tailed
// self-regularisation), fitted by Clauset, Shalizi & Newman (2009, "Power-law distributions in
// empirical data", §3) as the `powerlaw` package (Alstott et al. 2014) and WeightWatcher do.
//
// Model: the tail x ≥ x_min has density p(x) = (α − 1)/x_min · (x/x_min)^{−α}, CDF
//   P(x) = 1 − (x/x_min)^{1−α}.
// For a known x_min the maximum-likelihood exponent over the n values x_i ≥ x_min is
//   α̂ = 1 + n / Σ_i ln(x_i/x_min),   standard error σ̂ = (α̂ − 1)/√n   (CSN eq. 3.2 and 3.3);
// exactly, n(α − 1)/(α̂ − 1) ~ Gamma(n, 1), so E α̂ = 1 + (α − 1) n/(n − 1).
// x_min is chosen to minimise the Kolmogorov–Smirnov distance D between the tail's empirical CDF
// and P (CSN §3.3). Candidates (the `powerlaw` package's default): every distinct value except the
// largest, further restricted here to those that leave at least `min_tail` values in the tail.
//
// The empirical CDF: `powerlaw` compares P at each distinct tail value u with the fraction of the
// tail strictly below u, F_n(u−) (its cumulative_distribution_function: searchsorted 'left' / n), and
// takes D = max |P(u) − F_n(u−)|. That is one side of the step; the two-sided supremum also compares
// P(u) with F_n(u), which adds at most 1/n. KsSide picks which one; the default is `powerlaw`'s, so
// that x_min and α agree with it (and with WeightWatcher) to rounding.
//
// Cost: one sort, then for every candidate one pass over its tail (a sum of ln(x_i/x_min) and one
// exp per value for D): O(m²) for m values, 0.6 ms at m = 384.
#include <cstddef>
#include <vector>

namespace sparseact::spectral {

enum class KsSide {
  left,       ///< D = max_u |P(u) − F_n(u−)|, the `powerlaw` package's (and WeightWatcher's) distance
  two_sided,  ///< D = max_u max(|P(u) − F_n(u−)|, |P(u) − F_n(u)|), the KS supremum
};

struct PowerLawOptions {
  /// Smallest tail a candidate x_min may leave (≥ 2; 2 is `powerlaw`'s every-distinct-value-but-the-largest).
  std::size_t min_tail = 2;
  KsSide ks = KsSide::left;
};

struct PowerLawTail {
  bool valid = false;        ///< false when no candidate x_min exists (fewer than min_tail values, all equal, ≤ 0)
  double alpha = 0;          ///< α̂ (NaN when not valid)
  double alpha_se = 0;       ///< (α̂ − 1)/√n_tail
  double x_min = 0;
  std::size_t n_tail = 0;    ///< values ≥ x_min
  double D = 0;              ///< KS distance of the tail at x_min
  std::size_t candidates = 0;  ///< x_min values tried
};

/// The tail x ≥ x_min of `values` with x_min known (CSN eq. 3.1–3.3) and its KS distance. Values ≤ 0
/// are dropped (as `powerlaw` drops them); not valid when no value exceeds x_min (α̂ = 1 + n/0).
PowerLawTail power_law_tail_at(std::vector<double> values, double x_min, KsSide ks = KsSide::left);

/// The CSN fit: x_min over the candidates above, minimising D (the first, i.e. smallest, x_min on a
/// tie, as numpy's argmin in `powerlaw`). Values ≤ 0 are dropped.
PowerLawTail fit_power_law_tail(std::vector<double> values, const PowerLawOptions& options = {});

}  // namespace sparseact::spectral
