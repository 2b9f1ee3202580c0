#pragma once
// Shattering by fixed-feature classes (paper 003, §3's VC dimension; the closed forms Theorem 4.2's proof
// rests on). A class labels x with 1 iff wᵀφ(x) + b > 0 (eq. (3)); a labeling y ∈ {0, 1}^m of points
// x_1 … x_m is realised iff the LP
//
//   find (w, b) with s_i (wᵀφ(x_i) + b) ≥ 1,  s_i = 2y_i − 1   (and the class's sign constraints)
//
// is feasible (a strict inequality rescales to margin 1). GLPK decides (core/lp); a "yes" carries (w, b) and
// is verified in exact rationals (Boost.Multiprecision); with `exact`, every "no" is confirmed by glp_exact.
//
//   halfspace     φ = x, b free                 VC n + 1
//   homhalfspace  φ = x, b = 0                  VC n
//   interval      φ = (x, x²), w₂ ≤ 0, on R     VC 2    (a concave quadratic is positive on an interval)
//   poly          φ = (x, …, x^k), on R         VC k + 1 (sign of a degree-k polynomial)
//   ball          φ = (x, ‖x‖²), w_{n+1} ≤ 0    VC n + 1 (insides of balls; w_{n+1} = 0 gives their limits)
//   pwaffine      fixed prototypes p_1 … p_L, an affine expert per Voronoi cell (eq. (5)): realised iff every
//                 cell's sub-labeling is; VC L(n + 1) (Lemma B.3's setting with d = n + 1)
//
// Growth Π̂(m) on nested point sets x_1 … x_m: a labeling whose restriction to x_1 … x_{m−1} is not realised
// is not realised (every class here is hereditary), and a parent's certificate settles the child that
// agrees with its sign at x_m without an LP.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact::moe {

enum class FixedClass { halfspace, homhalfspace, interval, poly, ball, pwaffine };
/// Throws std::invalid_argument naming the choices.
FixedClass parse_fixed_class(const std::string& name);
const char* to_string(FixedClass c) noexcept;

struct FeatureClass {
  FixedClass kind = FixedClass::halfspace;
  int n = 1;                   ///< input dimension (1 for interval and poly)
  int k = 2;                   ///< poly: degree
  Eigen::MatrixXd prototypes;  ///< pwaffine: n × L
};
/// The textbook VC dimension of the class (see the table above).
int known_vc(const FeatureClass& c);

/// A realising (w, b) per cell (one cell unless pwaffine); an empty cell has none.
struct Certificate {
  std::vector<Eigen::VectorXd> w;
  std::vector<double> b;
};

struct Decision {
  bool realized = false;
  Certificate certificate;
};
/// Decides one labeling (labels 0/1 of the columns of X). `exact`: confirm a "no" with glp_exact.
Decision decide(const FeatureClass& c, const Eigen::MatrixXd& X, const std::vector<int>& labels, bool exact = false);
/// The certificate's labels, exactly: true iff 1[wᵀφ(x_i) + b > 0] = y_i for every i, in rational arithmetic.
bool verify(const FeatureClass& c, const Eigen::MatrixXd& X, const std::vector<int>& labels, const Certificate& cert);

struct Growth {
  std::vector<long> realized;  ///< Π̂(m), m = 1 … m_max
  int vc_found = 0;            ///< the largest m with Π̂(m) = 2^m
  long lps = 0, inherited = 0; ///< LPs solved; labelings settled by a parent's certificate
  long unverified = 0;         ///< LP "yes" answers whose (w, b) failed the exact check (counted as no)
  std::vector<std::pair<std::vector<int>, Certificate>> shattered;  ///< every labeling of x_1 … x_{vc_found}
};
Growth growth(const FeatureClass& c, const Eigen::MatrixXd& X, int m_max, bool exact = false);

/// Cover's count of labelings of m points in general position by affine halfspaces of R^n:
/// 2 Σ_{k=0}^{n} C(m − 1, k) (homogeneous: the sum to n − 1); 1 for m = 0.
long cover_count(int m, int n, bool homogeneous = false);

/// A point set for the class: Gaussian points (general position a.s.), distinct points on R, or for
/// pwaffine points drawn around the prototypes with point i in cell i mod L (by eq. (5)).
Eigen::MatrixXd class_points(const FeatureClass& c, int m, std::uint64_t seed);
/// L prototypes for pwaffine: Gaussian, well separated (scaled by 10).
Eigen::MatrixXd pwaffine_prototypes(int n, int L, std::uint64_t seed);

}  // namespace sparseact::moe
