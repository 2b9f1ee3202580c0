#pragma once
// The VC-dimension bounds of paper 003 (Theorem 4.2, Lemma B.3, Appendix B.2), every logarithm base 2 as in
// Blumer et al. (1989, Lemma 3.2.3), on which the proof rests:
//
//   D*(J, W)     = J + (J + 1) W² log₂(e · 4(J + 1) W · log₂(e · 2(J + 1) W))          (31), Bartlett et al. 2019
//   V(n, L)      = 2(n + 1)(L − 1) log₂(3L − 3),  0 at L = 1 (one cell: no boundary)     (25)
//   M            = max{d, V(n, L)}
//   eq. (28)     = 2 · (4 log₂ 6 · M) · L log₂(3L)
//   eq. (29)     = 8 L log₂(max{2, L})² · M
//
// The proof's last step (28) ≤ (29) needs log₂(6) log₂(3L) ≤ log₂(max{2, L})², false for L ≤ 12 (ERRATA
// 003): (28) is the bound we use, (29) stands beside it. M cancels, so the step's truth depends on L alone.
namespace sparseact::moe {

/// D* of eq. (31) for PReLU MLPs of depth J ≥ 1 and width W ≥ 1.
double d_star(int J, int W);
/// The Voronoi term V(n, L) of eq. (25).
double voronoi_term(int n, int L);
/// Eq. (28) and eq. (29) for experts of VC dimension at most d, L cells in R^n.
double eq28(double d, int n, int L);
double eq29(double d, int n, int L);
/// Theorem 4.2's bound on VC(NP_{J,W,L:n,1}): eq. (28) with d = D*(J, W).
inline double theorem42_bound(int J, int W, int L, int n) { return eq28(d_star(J, W), n, L); }

}  // namespace sparseact::moe
