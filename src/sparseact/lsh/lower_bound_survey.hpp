#pragma once
// Theorem 4.3's hard family (lsh/lower_bound.hpp) measured: paper 000, App. A.2's three properties of
// f_σ(x) = Σ_v σ_v max(0, ε − L‖x − v‖₂) on random members, the family's size against √d L/ε, and an
// actual Euclidean LSH on the slice for comparison with Theorem 4.1's table.
//
//   (1) L-Lipschitz on R^d, tested on four kinds of point pairs per member (LipschitzPairs);
//   (2) |F| = 2^{|V|} with |V| ≥ (√d L/(Cε))^k (family_size_sweep; C from the measured |V|);
//   (3) pairwise sup-distance 2ε, measured at the grid centres (separation_survey).
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include <sparseact/lsh/lower_bound.hpp>

namespace sparseact::lsh {

/// The members tested: `random` uniformly random σ (σ_m from stream_id(1, m)), then σ_0 with the sign
/// at one uniformly chosen centre flipped (stream_id(1, 10⁶)): the closest pair, differing at one centre.
struct Members {
  std::vector<Eigen::VectorXd> sigma;  ///< random + 1 members
  Eigen::Index flipped_at = 0;         ///< the centre whose sign the last member flips
};
Members test_members(const BumpFamily& F, int random, std::uint64_t seed);

/// The four kinds of pairs (x, x') of the Lipschitz test, per member:
///   uniform    x, x' uniform on G ∩ cube;
///   local      x' = x + E δ, |δ| ∈ [0.05 s, 1.5 s] (steps in G that straddle cells);
///   off_slice  x' = x + g, g ∈ R^d, |g| ∈ [0.05 s, 1.5 s] (the definition asks it on R^d);
///   radial     x = v + t u, x' = v + t' u in one bump, t ∈ [0, 0.45 ε/L], t' ∈ [0.55 ε/L, ε/L]: ratio L.
enum class PairKind : int { uniform = 0, local = 1, off_slice = 2, radial = 3 };
const char* to_string(PairKind kind) noexcept;

/// `pairs` pairs of `kind` for member m, from the streams of stream_id(stream_id(2, m), kind).
void lipschitz_pairs(const BumpFamily& F, PairKind kind, int member, Eigen::Index pairs, std::uint64_t seed, Eigen::MatrixXd& X1,
                     Eigen::MatrixXd& X2);

/// Property (1) over every member and pair kind.
struct LipschitzSurvey {
  struct Row {
    int member = 0;
    PairKind kind = PairKind::uniform;
    RatioStats ratios;
  };
  std::vector<Row> rows;  ///< member-major, kinds in order
  double max_ratio = 0;   ///< max |f(x) − f(x')|/‖x − x'‖ over every pair: ≤ L
  double min_radial_ratio = std::numeric_limits<double>::infinity();  ///< over the radial pairs: = L
  double max_gradient = 0;  ///< max ‖∇f_σ‖ at the non-radial first points: ≤ L
  int max_overlap = 0;      ///< most supports containing one non-radial sampled point: ≤ 1
};
/// One (member, pair kind) of the survey: the work item of lsh_lower_bound's sweep. Radial pairs give
/// min_radial_ratio (else +∞); the others max_overlap and max_gradient (else 0).
struct LipschitzItem {
  RatioStats ratios;
  int max_overlap = 0;
  double max_gradient = 0;
  double min_radial_ratio = std::numeric_limits<double>::infinity();
};
LipschitzItem lipschitz_item(const BumpFamily& F, const Eigen::VectorXd& sigma, int member, PairKind kind, Eigen::Index pairs,
                             std::uint64_t seed);
/// The survey from its items, member-major with the four kinds in order (as lipschitz_survey runs them).
LipschitzSurvey combine_lipschitz(const std::vector<LipschitzItem>& items);

/// `done` (optional) is called after each member.
LipschitzSurvey lipschitz_survey(const BumpFamily& F, const std::vector<Eigen::VectorXd>& sigma, Eigen::Index pairs,
                                 std::uint64_t seed, const std::function<void()>& done = {});

/// Property (3): every member evaluated at the centres, and the sup-distance on the grid of each pair of
/// distinct members.
struct SeparationSurvey {
  Eigen::MatrixXd at_centres;  ///< |V| × members: f_σ(v)
  double centre_error = 0;     ///< max over members and centres of |f_σ(v) − σ_v ε| (0 up to rounding)
  struct Pair {
    int m1 = 0, m2 = 0;
    double sup_distance = 0;  ///< max_v |f_σ1(v) − f_σ2(v)|
    Eigen::Index differing_signs = 0;
  };
  std::vector<Pair> pairs;  ///< pairs of distinct members (equal σ are skipped)
  double min_sup_distance = std::numeric_limits<double>::infinity();  ///< ≥ 2ε
};
SeparationSurvey separation_survey(const BumpFamily& F, const std::vector<Eigen::VectorXd>& sigma);
/// The same from the members' values at the centres (|V| × members), computed elsewhere (one member
/// per work item: evaluate(F, σ_m, F.centres)).
SeparationSurvey separation_survey(const BumpFamily& F, const std::vector<Eigen::VectorXd>& sigma, Eigen::MatrixXd at_centres);

/// Property (2) for one subspace dimension k: |V| counted for ε/f, f ∈ {0.25, 0.35, 0.5, 0.71, 1, 1.41, 2}
/// (grids above 4·10⁶ cells skipped), with the volume bound, C, Theorem 4.1's table and the width bound.
struct FamilySizeCurve {
  int k = 0;
  std::vector<double> eps, x;  ///< ε and √d L/ε
  std::vector<double> centres, lower_bound, C, lsh_table, width_bound;
  double slope = std::numeric_limits<double>::quiet_NaN();  ///< log–log slope of |V| against √d L/ε (→ k); NaN with < 2 points
};
/// k = 1, 2, 3 where d allows the family (d a multiple of 2^{k−1}); curves without a point are left out.
std::vector<FamilySizeCurve> family_size_sweep(Eigen::Index d, double eps, double L, int bits_per_parameter);

/// (k!)^{1/k}: the limit of C as ε → 0 (lower_bound.hpp, Count).
double asymptotic_proof_constant(Eigen::Index k);

/// The sample lower bound Ω(k (√d L/(Cε))^k log(2√d L/(Cε))) without its constant.
double sample_lower_bound(Eigen::Index d, Eigen::Index k, double eps, double L, double C);

/// Non-empty buckets of a Euclidean LSH (hash.hpp) with `hashes` hashes of width ε/L (stream 3) met by
/// `points` points uniform on G (stream 4): a lower estimate of the LSH's table on the slice.
Eigen::Index slice_buckets(const BumpFamily& F, Eigen::Index hashes, Eigen::Index points, std::uint64_t seed);

}  // namespace sparseact::lsh
