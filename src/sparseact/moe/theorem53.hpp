#pragma once
// Theorem 5.3 of paper 003 (with Lemma B.1, eq. (21) and Tables 1, 6, 7): how many experts, how deep each, for an
// ε-approximation of an ω-uniformly continuous f : K → R^m.
//
//   ω(t) = L t^α,  ω⁻¹(t) = (t/L)^{1/α}                                      (ERRATA: L708 is garbled)
//   δ = ε^{−2r/n}/2 · ω⁻¹(ε / (131 √(nm)))                                    (L703)
//   T(δ) = ( δ 2^{3/2} n^{1/2} / ((n + 1)^{1/2} ω⁻¹(ε/(131√(nm)))) )^{n/2}      Lemma B.1 (i)'s depth term
//   eq. (21):  T(δ) ≤ ( δ 2^{3/2} n^{1/2} / ((2n)^{1/2} ω⁻¹(…)) )^{n/2} = ε^{−r}
//     the equality gives L703's δ; the ≤ needs (n + 1)^{1/2} ≥ (2n)^{1/2}, i.e. n ≤ 1. At L703's δ,
//     T(δ)/ε^{−r} = (2n/(n + 1))^{n/4}: 1 at n = 1, above 1 after (ERRATA).
//   depth (Table 7, PReLU) m(19 + 2n + 11⌈T(δ)⌉), width 16 max{n, 3} + m
//   the routing tree: Lemma 5.1 at δ (leaves = experts, height = routing complexity)
//   Table 1: experts O(max{1, ε^{2r/n − 1/α}}), parameters per expert O(max{1, ε^{−r}});
//   Table 6: experts O(max{1, ε^{2r/n}/ω⁻¹(ε)}), routing O(max{1, log(ε^{2r/n}/ω⁻¹(ε))})
#include <vector>

#include <sparseact/core/result.hpp>
#include <sparseact/moe/lemma51.hpp>

namespace sparseact::moe {

struct Holder {
  double L = 1, alpha = 1;  ///< ω(t) = L t^α, 0 < α ≤ 1
};
double omega_inverse(const Holder& h, double t);

struct Theorem53 {
  double delta = 0;         ///< L703
  double depth_term = 0;    ///< T(δ)
  double eq21_ratio = 0;    ///< T(δ) / ε^{−r}: eq. (21) says ≤ 1
  double depth = 0;         ///< Table 7 (PReLU column)
  double width = 0;         ///< Table 7
  bool tree_valid = false;  ///< δ ≤ rad K, so Lemma 5.1 applies (else the tree below is Lemma 5.1 at δ = rad K)
  Lemma51 tree;             ///< at min(δ, rad K)
  double table1_experts = 0, table1_parameters = 0, table6_experts = 0, table6_routing = 0;
};

/// Throws std::invalid_argument unless n, m ≥ 1, ν ≥ 2, ε > 0, L > 0 and α ∈ (0, 1].
Theorem53 theorem53(Domain d, int n, int m, int nu, double eps, double r, const Holder& h);

/// Theorem 5.3 over a grid, as the table "theorem53": one row per (K, n, ε, ν) in that order, columns domain, n, nu,
/// eps, r, alpha, delta, tree_valid, height, leaves, nodes, depth_term, eq21_ratio, depth, width, table1_experts,
/// table1_parameters, table6_experts, table6_routing.
Table theorem53_table(const std::vector<Domain>& domains, const std::vector<int>& ns, const std::vector<double>& epss,
                      const std::vector<int>& nus, int m, double r, const Holder& h);

}  // namespace sparseact::moe
