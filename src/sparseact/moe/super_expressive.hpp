#pragma once
// Proposition 4.4 of paper 003 (Definition 4.3, eq. (9)): MLPs with the super-expressive activation
//
//   σ*(x) = |x mod 2| for x ≥ 0,   x/(|x| + 1) for x < 0,      σ_γ(x) = γx + (1 − γ)σ*(x)
//
// have infinite VC dimension. A single unit already shatters every k: put x_i = 2^{−i} (i = 1 … k) and, for
// labels b_1 … b_k, a = Σ_i b_i 2^i + ½. Then a x_i = (even integer) + b_i + r_i with
// r_i = Σ_{j<i} b_j 2^{j−i} + 2^{−i−1} ∈ (0, 1), so σ*(a x_i) = b_i + r_i and f(x) = σ*(a x) − 1 (γ = 0) is
// positive exactly where b_i = 1 (eq. (3)). Everything here is exact: x_i, a and the mod are dyadic
// rationals (Boost.Multiprecision's cpp_rational), so k = 64 needs no floating point at all.
#include <cstdint>
#include <string>
#include <vector>

#include <boost/multiprecision/cpp_int.hpp>

namespace sparseact::moe {

using Rational = boost::multiprecision::cpp_rational;

/// σ*(x) of eq. (9), exactly.
Rational sigma_star(const Rational& x);
/// a = Σ_i b_i 2^i + ½ for labels b_1 … b_k (labels[i − 1] = b_i).
Rational super_expressive_weight(const std::vector<int>& labels);
/// The labels f(x) = σ*(a x) − 1 gives x_i = 2^{−i}, i = 1 … k: 1[f(x_i) > 0].
std::vector<int> super_expressive_labels(const Rational& a, int k);
/// "p/q" (or "p" for an integer).
std::string to_fraction(const Rational& r);

/// The contrast: one PReLU unit with an affine output, f(x) = c σ_γ(a x + b) + d on R, is a continuous
/// function with one kink; with a = ±1 it is every such function (slopes c and cγ on the two sides).
/// With the kink at t, f = β + s₊ (x − t) right of t and β + s₋ (x − t) left of it: for a fixed t the labels
/// 1[f(x_i) > 0] are an LP in (β, s₊, s₋). A function with one kink has at most two zeros, so sorted points
/// with three sign changes (1010 on four points) are never realised: VC = 3.
struct PreluUnitFit {
  bool realized = false;
  double t = 0, beta = 0, slope_right = 0, slope_left = 0;  ///< the certificate (verified exactly)
};
/// Tries the kink at every gap midpoint of the sorted points and beyond both ends.
PreluUnitFit prelu_unit_fit(const std::vector<double>& x, const std::vector<int>& labels);

}  // namespace sparseact::moe
