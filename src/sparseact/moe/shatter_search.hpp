#pragma once
// Shattering by the MLP and MoMLP classes of paper 003 on the real line (Theorem 4.2's objects, n = 1):
//
//   relu, prelu     one hidden layer of width W, affine output (eq. (2), J = 1)
//   momlp_relu,     L experts of that kind on the Voronoi cells of L free distinct prototypes (Definition 3.2,
//   momlp           eq. (5))
//
// On R a PReLU layer of width W is every continuous piecewise-linear function with ≤ W kinks: a unit
// c σ_γ(x − t) has slopes c and cγ on the two sides of t, so f = β + s₀x + Σ_w δ_w (x − t_w)₊ with free
// β, s₀, δ_w. Such a function has ≤ W + 1 zeros, so a labeling of sorted distinct points is realised iff it
// has ≤ W + 1 sign changes (VC W + 2). A ReLU unit c(±(x − t))₊ has no linear part of its own: ≤ W changes
// (VC W + 1). For fixed kinks the labels are an LP in (β, s₀, δ) (resp. (d, c) and directions), so the search
// seeds the kinks at the midpoints of gaps between data points and beyond both ends — random restarts of
// the parameters would miss realisable labelings — and every "yes" is checked in exact rationals.
//
// On R any split of sorted points into ≤ L consecutive runs is a Voronoi partition if boundaries c_j in the
// gaps and prototypes p_j < c_j < p_{j+1} with c_j = (p_j + p_{j+1})/2 exist: an LP (maximal margin), whose
// prototypes are then checked against eq. (5). A MoMLP realises a labeling iff some such split has every
// run's sub-labeling realised by an expert (memoised): ≤ L(c + 1) − 1 changes for experts allowing c.
#include <optional>
#include <string>
#include <vector>

namespace sparseact::moe {

enum class SearchClass { relu, prelu, momlp_relu, momlp };
SearchClass parse_search_class(const std::string& name);
const char* to_string(SearchClass c) noexcept;

struct SearchSpec {
  SearchClass kind = SearchClass::prelu;
  int W = 1;  ///< hidden width of each expert
  int L = 2;  ///< experts (momlp classes)
};
/// The closed form on R: relu W + 1, prelu W + 2, momlp_relu L(W + 1), momlp L(W + 2).
int known_vc_1d(const SearchSpec& s);

/// One expert: f(x) = β + s₀x + Σ_w δ_w (dir_w (x − t_w))₊ (PReLU: dir = +1 and s₀ free; ReLU: s₀ = 0).
struct ExpertFit {
  double beta = 0, s0 = 0;
  std::vector<double> kinks, delta;
  std::vector<int> dir;
};
struct MomlpFit {
  std::vector<double> prototypes;  ///< one per cell, ascending
  std::vector<ExpertFit> experts;  ///< cell by cell
};

/// An expert realising `labels` (0/1) on the points `x` (ascending, distinct), or nullopt.
std::optional<ExpertFit> fit_expert(const SearchSpec& s, const std::vector<double>& x, const std::vector<int>& labels);
/// The class's realisation of the labeling (one cell for relu and prelu), or nullopt.
std::optional<MomlpFit> fit_class(const SearchSpec& s, const std::vector<double>& x, const std::vector<int>& labels);
/// Exact check: routing by eq. (5) and every expert's sign, in rationals.
bool verify_fit(const SearchSpec& s, const std::vector<double>& x, const std::vector<int>& labels, const MomlpFit& fit);

struct SearchGrowth {
  std::vector<long> realized;  ///< Π̂(m) on the first m points (sorted afresh for each m), m = 1 … m_max
  int vc_found = 0;
};
SearchGrowth search_growth(const SearchSpec& s, const std::vector<double>& points, int m_max);

/// Sign changes of a 0/1 sequence.
int sign_changes(const std::vector<int>& labels);

}  // namespace sparseact::moe
