#pragma once
// Memorization by dense and mixture-of-experts models: paper 004 (Mixture of Parrots), §3 Theorems 3.5–3.6
// (L130–160) and Appendix D.2 (Lemmas D.6–D.8, Corollary D.9, Theorem D.12; L669–822).
//
// The task (L130). n sequences X^i ∈ R^{N×m}, entries i.i.d. N(0, c) (the paper takes c = 1: X^i[j] ~ N(0, I_m)),
// labels y_i ∈ {±1} uniform and independent; a model memorizes when sign f(X^i) = y_i for every i.
//
// The reduction (Lemma D.8's proof, L720): "we assume that the attention matrix performs averaging of the input
// sequence", x_i = (1/N) Σ_j X^i[j] (Theorem D.5's Q_h = K_h = 0, V_h = I gives exactly this uniform attention).
// Then x_i ~ N(0, (c/N) I_m) (L720 prints c = 1/L; ERRATA 004 reads c = 1/N). Everything below acts on the m × n
// matrix of the x_i. The attention is the same in the dense and the sparse model and is not counted in the
// parameter counts below (nor in the paper's Õ(n/K + Km)); it would add 3m² to both.
//
// The router (L673–685, Lemma D.6). K = 2^k experts; expert j carries v_j ∈ {±1}^k and r_j = (v_j, 0, …, 0) ∈ R^m,
// and x goes to argmax_j r_jᵀx: the expert whose v_j has the signs of x's first k = log₂K coordinates. We number
// the experts so that j's binary digits (most significant first) are v_j's signs (1 for +1, 0 for −1): the index
// is the binary number [x_1 > 0][x_2 > 0]…[x_k > 0]. A zero coordinate reads as "−" — argmax's first maximum (the
// smallest index) chooses the same, so route() and route_argmax() agree on every x (tests check it).
// The router holds K vectors of dimension m: K·m parameters (L740); with K = 1 there is no router (0).
//
// The experts (Lemma D.8, after Daniely (2020), L712–744): depth-2 nets h(x) = Σ_{j ≤ q} a_j σ(⟨w_j, x⟩) without
// bias (Daniely's h_{W,a} has none; L712, and its ReLU form h′ of L738), σ = ReLU, acting on the last
// d = m − log₂K coordinates of x, "which are not used by the router, so that their distribution is independent
// and Gaussian" (L724). Daniely's 1/√q is absorbed into a. Where Daniely trains W by a gradient step, we keep W
// at its random draw (w_j ~ N(0, I_d), unit after unit from one stream, so the first q units of width q + 1 are
// those of width q) and ask the exact question for the output layer:
//
//     some a ∈ R^q with y_i Σ_j a_j σ(⟨w_j, x_i⟩) ≥ 1 for every i          (an LP in a; GLPK via core/lp)
//
// (σ is positively homogeneous and a is free, so "> 0 for every i" rescales to "≥ 1"). A "yes" carries a and is
// verified in exact rationals (Boost.Multiprecision's cpp_rational, as moe/shatter does); a "yes" that fails the
// check counts as "no". A "no" is GLPK's floating-point simplex (tolerances ~1e-7), not certified.
//
// Minimal width. With nested draws, memorizability is monotone in q: if a works at width q, (a, 0) works at
// width q + 1, whose first q units are the same. So the q that memorize form {q ≥ q*}, and bisection finds q*.
// It starts at Cover's median (below) and gallops outwards; the start only saves LPs, the answer is q* either
// way. Every LP reuses one GLPK problem (units above q fixed at a = 0) so each solve warm-starts from the last.
// These are random-feature widths: a trained first layer can only need fewer units, so q* bounds the minimal
// width of a depth-2 ReLU net from above (what Theorem 3.5 needs), and reads as "what this family needs" for the
// dense model (Theorem 3.6's Ω̃(n) bounds every family).
//
// Cover (1965): n points whose features φ(x_i) ∈ R^q are in general position admit 2 Σ_{k<q} C(n − 1, k) of the
// 2^n labelings by a homogeneous halfspace, so for uniform labels P(q* ≤ q) = P(Bin(n − 1, 1/2) ≤ q − 1):
// q* ≈ 1 + Bin(n − 1, 1/2), median ≈ (n + 1)/2. ReLU features are zero on part of the inputs, so general position
// is not guaranteed; the law is the reference the measured widths are read against, not an assumption.
//
// Parameter counts, as built (no biases anywhere): an expert of width q on d inputs has q·d + q; the dense model
// is the K = 1 expert on all m coordinates, q(m + 1); the MoE's experts share one width q = max over experts of
// their minimal widths (the paper's experts all have the width of L740), so
//   active = router + q(d + 1)      (one expert per input; L740 "O~(n/K) parameters" per expert + O(Km) router)
//   total  = router + K·q(d + 1)    (L740, Corollary D.9's Õ(n + Km))
//
// Header is C++17 (notebooks); sources may be C++20.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/record.hpp>

namespace sparseact::parrots {

/// The memorization task of §3 (L130): n sequences of length N in dimension m, entries i.i.d. N(0, c).
struct MemorizationTask {
  int n = 256;
  int N = 8;
  int m = 32;
  double c = 1.0;
};
/// Throws std::invalid_argument unless n ≥ 1, N ≥ 1, m ≥ 1 and c > 0 (finite).
void validate(const MemorizationTask& t);

/// The averaging attention's output x = (1/N) Σ_j X[j] of one sequence X ∈ R^{N×m} (L720), as a column.
Eigen::VectorXd average_attention(const Eigen::Ref<const Eigen::MatrixXd>& X);

/// The n examples after the averaging attention: x (m × n, column i = x_i) and y (±1).
struct Examples {
  Eigen::MatrixXd x;
  std::vector<int> y;
};
/// Draws X^1 … X^n (each N × m, row-major order of entries, √c · N(0, 1)) and y_i (±1, one fair bit each) from
/// Rng(seed, stream), sequence by sequence, and averages each sequence.
Examples draw_examples(const MemorizationTask& t, std::uint64_t seed, std::uint64_t stream);

/// log₂K for K a power of 2 (K ≥ 1); throws std::invalid_argument otherwise.
int log2_experts(int K);
/// Lemma D.6's router: the expert whose sign vector matches x's first log₂K coordinates, as the binary number
/// [x_1 > 0]…[x_k > 0] (most significant first). Needs x.size() ≥ log₂K.
int route(const Eigen::Ref<const Eigen::VectorXd>& x, int K);
/// The same router as the paper writes it (L679): argmax_j r_jᵀx, r_j = (v_j, 0, …, 0), first maximum on ties.
int route_argmax(const Eigen::Ref<const Eigen::VectorXd>& x, int K);
/// route() of every column.
std::vector<int> route_all(const Eigen::MatrixXd& x, int K);
/// Examples per expert.
std::vector<long> expert_loads(const std::vector<int>& routes, int K);
/// The expert's input: the last m − log₂K coordinates of the columns `ids` of x (L724).
Eigen::MatrixXd expert_inputs(const Eigen::MatrixXd& x, int K, const std::vector<int>& ids);

/// The random first layer: d × q, column j = w_j ~ N(0, I_d), drawn column after column from Rng(seed, stream),
/// so first_layer(d, q, …) is first_layer(d, q′, …).leftCols(q) for every q′ ≥ q.
Eigen::MatrixXd first_layer(int d, int q, std::uint64_t seed, std::uint64_t stream);
/// y_i σ(⟨w_j, x_i⟩): the LP's rows (n × q) for inputs x (d × n) and first layer W (d × q).
Eigen::MatrixXd signed_features(const Eigen::MatrixXd& x, const std::vector<int>& y, const Eigen::MatrixXd& W);

/// One memorization LP at the width W.cols().
struct Memorization {
  bool memorized = false;  ///< the LP found a and the exact check confirmed it
  bool lp_feasible = false;
  Eigen::VectorXd a;       ///< the output layer (empty unless lp_feasible)
};
Memorization memorize(const Eigen::MatrixXd& x, const std::vector<int>& y, const Eigen::MatrixXd& W);
/// Whether y_i Σ_j a_j σ(⟨w_j, x_i⟩) > 0 for every i, exactly: doubles decide where the value clears a rigorous
/// bound on its rounding error, cpp_rational arithmetic decides the rest.
bool verify_memorization(const Eigen::MatrixXd& x, const std::vector<int>& y, const Eigen::MatrixXd& W, const Eigen::VectorXd& a);

/// The minimal width q* ≤ q_max (nested draws from first_layer(d, q_max, seed, stream)).
struct MinimalWidth {
  int q = -1;           ///< q*; 0 for no examples; −1 when width q_max does not memorize
  int lps = 0;          ///< LPs solved
  int unverified = 0;   ///< LP "yes" answers that failed the exact check (counted as "no")
  Eigen::VectorXd a;    ///< the verified output layer at width q*
};
/// q_max ≤ 0 means n_e + 32 (n_e the number of examples): n_e points with features in general position are
/// memorized at width n_e (a square nonsingular system); ReLU features vanish on about half the inputs, so a few
/// examples can lack an active unit among the first n_e (one example: probability 2^{−n_e}); 32 more units make
/// that negligible, and the search stops near Cover's median long before q_max for large n_e.
MinimalWidth minimal_width(const Eigen::MatrixXd& x, const std::vector<int>& y, std::uint64_t seed, std::uint64_t stream,
                           int q_max = 0);
/// Cover's median of q* for n examples in general position: the smallest q with P(Bin(n − 1, 1/2) ≤ q − 1) ≥ 1/2,
/// i.e. 1 + ⌊(n − 1)/2⌋ = ⌈n/2⌉ (Bin(n − 1, 1/2) is symmetric about (n − 1)/2). 0 for n = 0.
int cover_median_width(int n);

/// Parameter counts as built (header comment).
struct ParameterCount {
  long router = 0;  ///< K·m (0 for K = 1)
  long expert = 0;  ///< q(m − log₂K + 1)
  long active = 0;  ///< router + expert
  long total = 0;   ///< router + K·expert
};
ParameterCount moe_parameters(int m, int K, int q);
/// The dense model: K = 1, q(m + 1).
ParameterCount dense_parameters(int m, int q);

/// Lemma D.7 (L693): n ≥ K² ln(1/δ)/2 examples make a fixed expert's load ≤ 2n/K with probability ≥ 1 − δ.
double lemma_d7_min_n(int K, double delta);
/// Corollary D.9 (L748): n ≥ K² ln(K/δ)/2, the union bound over the K experts.
double corollary_d9_min_n(int K, double delta);
/// Lemma D.8's sufficient expert width (L732): 8 n ln⁴(m − log₂K)/(mK) (natural log, Daniely's).
double lemma_d8_width(int n, int m, int K);
/// The factor Theorem 3.5's Õ hides in an expert's parameter count, as the proof states it: Lemma D.8's width
/// 8 (n/K) ln⁴(d)/m times d + 1 weights per unit (d = m − log₂K) is 8 (n/K)·L with L = ln⁴(d)(d + 1)/m. Dividing an
/// expert's count by L leaves the bound's n/K; with the router's Km, the active (total) count at K = √(n/m) is at most
/// (1 + 8L)·√(nm) (resp. (1 + 8L)·n for n ≥ m).
double theorem35_log_factor(int m, int K);

/// One cell of the study: the task's examples for (n, draw), routed to K experts, each expert's minimal width.
struct MemorizationCell {
  std::vector<long> loads;  ///< examples per expert
  std::vector<int> widths;  ///< q* per expert (empty when the LPs were skipped)
  bool solved = false;      ///< the LPs ran (n/K ≤ max_points)
  int q = -1;               ///< the shared width max_k q*_k (−1 when skipped or some expert failed)
  long lps = 0, unverified = 0;
};
/// Examples from Rng(seed, examples_stream(t.n, draw)): the same for every K (the dense model and every MoE see the
/// same data); expert k's first layer from first_layer_stream(t.n, draw, K, k). The LPs run when n/K ≤ max_points.
MemorizationCell memorization_cell(const MemorizationTask& t, int K, int draw, std::uint64_t seed, long max_points);
std::uint64_t examples_stream(int n, int draw);
std::uint64_t first_layer_stream(int n, int draw, int K, int expert);
/// A cell as a work item's record and back (loads, widths, solved, q, lps, unverified).
Record to_record(const MemorizationCell& cell);
MemorizationCell cell_from_record(const Record& record);

/// A solved cell's parameter counts: as built (shared width q = max_j q*_j), and for comparison with experts of
/// their own minimal widths (mean expert q̄(d + 1), router + that, and router + Σ_j q*_j (d + 1)).
struct CellParameters {
  bool valid = false;        ///< solved and every expert memorized
  long max_load = 0;
  int q = 0;                 ///< the shared width max_j q*_j
  ParameterCount built;      ///< moe_parameters(m, K, q)
  double mean_expert = 0;    ///< (Σ_j q*_j / K)(d + 1)
  double mean_active = 0;    ///< router + mean_expert
  double own_total = 0;      ///< router + Σ_j q*_j (d + 1)
};
CellParameters cell_parameters(const MemorizationCell& cell, int m, int K);
/// K = √(n/m) when that is a power of 2 (Theorem 3.5's choice, L136; K must be a power of 2, L671), else 0.
int sqrt_rule_experts(int n, int m);

}  // namespace sparseact::parrots
