#pragma once
// The hard family of Theorem 4.3 (paper 000, App. A.2, with the ERRATA 000 sign fix): many
// L-Lipschitz functions on a k-dimensional slice of the cube, pairwise 2ε apart in sup norm, so a
// dense model with B bits per parameter needs width t ≥ |V|/B to ε-approximate all of them.
//
//   Subspace. G = span(u_1, …, u_k) with u_j ∈ {±1}^d diagonals of [−1, 1]^d: u_1 = (1, …, 1) and,
//     for j ≥ 2, the Rademacher (Walsh block) patterns u_j(i) = (−1)^{⌊i 2^{j−1}/d⌋}. For d a
//     multiple of 2^{k−1} they are pairwise orthogonal, e_j = u_j/√d is an orthonormal basis, and
//     the rows of (u_1, …, u_k) take every sign pattern (1, s_2, …, s_k), so in the coordinates
//     y (x = E y, E = [e_1 … e_k]) the slice G ∩ [−1, 1]^d is the cross-polytope
//       P = { y ∈ R^k : |y_1| + … + |y_k| ≤ √d },   vol P = (2√d)^k / k!.
//   Grid. Cubes of side s = 2ε/L aligned with e_1..e_k, centred in P's bounding box [−√d, √d]^k
//     (n = ⌊2√d/s⌋ = ⌊√d L/ε⌋ cells per axis). V = centres of the cubes that lie entirely inside P
//     (all 2^k vertices in P, to a relative 1e-12): every bump's support then lies in G ∩ cube.
//     The count of cubes whose centre alone lies in P is reported too (centre_count).
//   Members. For σ ∈ {±1}^V,  f_σ(x) = Σ_{v∈V} σ_v max(0, ε − L‖x − v‖₂)   (x ∈ R^d),
//     the ERRATA form of Σ_v max(0, f(v) − L sgn(f(v))‖x − v‖) with f(v) = σ_v ε, whose printed
//     form is wrong for f(v) = −ε. The family has 2^{|V|} members: log2|F| = |V|.
//   Properties (App. A.2). Supports are the balls B(v, ε/L) of radius s/2: the ball inscribed in
//     v's cube, so supports of distinct centres (≥ s apart) have disjoint interiors, touching at
//     most at one point. Hence f_σ(v) = σ_v ε, ‖f_σ − f_σ'‖_∞ = 2ε when σ ≠ σ', and f_σ is
//     L-Lipschitz on R^d (each bump is; on a segment from supp b_v to supp b_w the segment leaves
//     the first ball before entering the second, so |f(x) − f(x')| ≤ L‖x − p‖ + L‖q − x'‖ ≤ L‖x − x'‖).
//   Count. Every grid cube meeting the inner parallel body P_{−δ}, δ = s√k (the cube's diameter),
//     lies in P, and those cubes cover P_{−δ} = {Σ|y_j| ≤ √d − δ√k}; so
//       |V| ≥ vol(P_{−δ}) / s^k = (√d L/ε − 2k)^k / k!   (when √d L/ε > 2k),
//     the proof's (√d L/(C ε))^k with C = (k!)^{1/k} (1 − 2kε/(√d L))^{−1} → (k!)^{1/k}.
//     ERRATA 000: the text mixes 2√d and √d; we implement (√d L/(C ε))^k and report the C that
//     makes it equal to the measured |V|, C = √d L / (ε |V|^{1/k}).
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact::lsh {

struct BumpFamily {
  Eigen::Index d = 0, k = 0;
  double eps = 0, L = 0;
  double side = 0;                 ///< s = 2ε/L
  Eigen::MatrixXd diagonals;       ///< d × k, the u_j ∈ {±1}^d
  Eigen::MatrixXd E;               ///< d × k, e_j = u_j/√d (orthonormal)
  Eigen::MatrixXd centres_y;       ///< k × |V|, centres in the coordinates y
  Eigen::MatrixXd centres;         ///< d × |V|, E · centres_y
  Eigen::Index cells_per_axis = 0; ///< n
  double grid_lo = 0;              ///< y-coordinate of the lower face of the first cell, every axis
  std::vector<std::int64_t> cell_index;  ///< n^k cells (axis 0 fastest) → centre index in V, or −1
  Eigen::Index centre_count = 0;   ///< cubes whose centre (not necessarily the whole cube) lies in P

  Eigen::Index size() const { return centres.cols(); }  ///< |V|
  double log2_family_size() const { return static_cast<double>(size()); }  ///< log2 2^{|V|}
  double radius() const { return eps / L; }  ///< support radius ε/L = s/2
};

/// The family for (d, k, ε, L). Throws std::invalid_argument naming the parameter when k ∉ [1, 3],
/// d < k, d not a multiple of 2^{k−1}, ε ≤ 0, L ≤ 0, or the grid would exceed 2^26 cells.
BumpFamily make_bump_family(Eigen::Index d, Eigen::Index k, double eps, double L);

/// y ∈ P, i.e. E y ∈ [−1, 1]^d, tested as ‖E y‖_∞ ≤ 1 + tol.
bool in_slice(const BumpFamily& F, const Eigen::VectorXd& y, double tol = 1e-12);

/// A uniformly random σ ∈ {±1}^V from Rng(seed, stream).
Eigen::VectorXd random_signs(const BumpFamily& F, std::uint64_t seed, std::uint64_t stream = 0);

/// f_σ at each column of X (d × N). Only the centre of the cell containing Eᵀx can be within ε/L of
/// x (‖x − v‖² = ‖x − E Eᵀx‖² + ‖Eᵀx − y_v‖²), so a point costs O(dk), not O(|V| d).
Eigen::VectorXd evaluate(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X);
/// The same by the direct sum over all centres, O(|V| d) per point: the reference for tests.
Eigen::VectorXd evaluate_direct(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X);

/// ∇f_σ, d × N: −σ_v L (x − v)/‖x − v‖ where 0 < ‖x − v‖ < ε/L, else 0 (f_σ is not differentiable
/// at a centre or on a support's sphere; 0 is returned there).
Eigen::MatrixXd gradient(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X);

/// max_{v∈V} |f_σ1(v) − f_σ2(v)|, evaluated through evaluate() at the centres (2ε when σ1 ≠ σ2).
double sup_distance_on_grid(const BumpFamily& F, const Eigen::VectorXd& sigma1, const Eigen::VectorXd& sigma2);

/// Smallest distance between a centre and the centres of its 3^k − 1 neighbouring cells (the
/// nearest other centres on the lattice); +∞ when |V| ≤ 1. Supports are disjoint iff ≥ 2ε/L.
double min_centre_spacing(const BumpFamily& F);

/// Largest number of supports B(v, ε/L) (open balls) containing any one column of X: 1 when
/// supports are disjoint. Scans the 3^k cells around each point's projection.
int max_overlap(const BumpFamily& F, const Eigen::MatrixXd& X);

/// N points uniform on G ∩ [−1, 1]^d (y uniform on P by rejection from [−√d, √d]^k), d × N.
Eigen::MatrixXd sample_slice(const BumpFamily& F, Eigen::Index N, std::uint64_t seed, std::uint64_t stream = 0);

struct RatioStats {
  double max_ratio = 0;   ///< max |f(x) − f(x')| / ‖x − x'‖₂ over the pairs
  double min_distance = 0;  ///< smallest ‖x − x'‖ among the pairs
  Eigen::Index pairs = 0;
};
/// Lipschitz ratios of f_σ over the column pairs (X1[:, j], X2[:, j]).
RatioStats lipschitz_ratios(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X1,
                            const Eigen::MatrixXd& X2);

// --- counting ---------------------------------------------------------------------------------------

/// The rigorous lower bound on |V| above: max(0, √d L/ε − 2k)^k / k!.
double centre_count_lower_bound(Eigen::Index d, Eigen::Index k, double eps, double L);
/// The C of the proof's (√d L/(C ε))^k that equals the measured |V|: √d L / (ε |V|^{1/k}).
double proof_constant(Eigen::Index d, Eigen::Index k, double eps, double L, double count);
/// The proof's count (√d L/(C ε))^k.
double proof_count(Eigen::Index d, Eigen::Index k, double eps, double L, double C);
/// Width lower bound of App. A.2: 2^{Bt} ≥ 2^{|V|} ⇒ t ≥ |V|/B.
double width_lower_bound(double count, int bits_per_parameter);
/// Theorem 4.1's table size read as (L√d/ε)^k (ERRATA 000), with the O-constant 1.
double lsh_table_size(Eigen::Index d, Eigen::Index k, double eps, double L);

}  // namespace sparseact::lsh
