#pragma once
// The Marchenko–Pastur law in paper 001's normalization (Theorem 1, eq. (3)).
//
// For X ∈ R^{p×n} with i.i.d. centred entries of variance σ², S = (1/n) X Xᵀ / σ² and c = p/n,
// the empirical spectral distribution of S converges to
//
//   f(x) = 1/(2π c x) · √((b − x)(x − a)) · 1[a ≤ x ≤ b]  +  1[c ≥ 1] (1 − 1/c) δ(x),
//   a = (1 − √c)²,  b = (1 + √c)².
//
// Its mean is 1 and its variance c (ERRATA: S = (1/n) X Xᵀ, printed 1/d). For a weight matrix
// K ∈ R^{n×d} (paper 001 §4.5), K Kᵀ/(d σ²) follows this law with c = n/d: the atom at 0 holds the
// n − d zero eigenvalues when n > d.
//
// CDF by Gauss–Kronrod quadrature after x = (a+b)/2 − (b−a)/2 · cos θ, which turns the square-root
// endpoints into a smooth integrand; quantiles by TOMS 748 root finding (Boost.Math).
#include <vector>

namespace sparseact::spectral {

class MarchenkoPastur {
 public:
  /// c = p/n > 0 (rows over columns of X); σ² scales the law: eigenvalues of (1/n) X Xᵀ.
  explicit MarchenkoPastur(double c, double sigma2 = 1.0);

  double c() const { return c_; }
  double sigma2() const { return sigma2_; }
  /// Lower and upper edges of the continuous part, σ²(1 ∓ √c)².
  double a() const { return a_; }
  double b() const { return b_; }
  /// Mass of the atom at 0: 1 − 1/c when c > 1, else 0.
  double atom() const;
  /// Mass of the continuous part, min(1, 1/c).
  double continuous_mass() const { return 1.0 - atom(); }

  /// Density of the continuous part (the atom is not included).
  double density(double x) const;
  /// P(λ ≤ x), atom included.
  double cdf(double x) const;
  /// Smallest x with cdf(x) ≥ p, for p ∈ [0, 1].
  double quantile(double p) const;

  /// k-th moment E[λ^k] in closed form (Narayana polynomials): Σ_{r=0}^{k−1} c^r/(r+1) C(k,r) C(k−1,r) σ^{2k}.
  double moment(int k) const;
  double mean() const { return moment(1); }
  double variance() const;

  /// The continuous density on `points` equally spaced abscissae over [a, b], for overlays.
  std::vector<double> density_grid(int points, std::vector<double>* xs) const;

 private:
  double c_, sigma2_, a_, b_;
};

/// Ratio of the largest to the smallest nonzero point of the support, ((1 + √c)/(1 − √c))²;
/// the limit of λ_max/λ_min⁺ in paper 001 Theorem 5. Invariant under c ↔ 1/c; infinite at c = 1.
double ratio_limit(double c);

}  // namespace sparseact::spectral
