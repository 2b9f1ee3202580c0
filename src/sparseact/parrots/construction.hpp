#pragma once
// Theorem 3.3 of paper 004 (proof: Theorem D.5, App. D.1.2, L652–667) and the parameter count of Corollary 3.4
// (L118–124).
//
// The one-layer transformer f ∈ Transformer^N_{|V|,1,1} of §3.1 (L84):
//   f(x_1, …, x_N) = ψ( softmax(φ(x_N)ᵀ Q_h K_hᵀ φ(X)ᵀ) φ(X) V_h ),   ψ(y) = uᵀ σ(W y + b)
// built as App. D.1.2 builds it, with ERRATA 004's reading:
//   tokens   (u, v) ∈ (V ∪ {0}) × (V ∪ {0}) (L658), the paper's "0" meaning "no vertex" (kNoVertex here,
//            since our vertices are 0 … |V| − 1 and s = 0);
//   input    first |V| tokens: (s, i) when s ~ i, else (s, 0), for i = 0 … |V| − 1; last |V| tokens the same
//            for d; "in between, arbitrary edges (u, v)" (L658): here every edge with neither end in {s, d},
//            as (u, v) with u < v, then (0, 0) padding up to C(|V| − 2, 2) middle tokens. Transformer^N reads a
//            fixed length N, and ψ's threshold sits between 1/N and 2/N, so N must not depend on the graph:
//            N = 2|V| + C(|V| − 2, 2), the most middle edges a graph can have. Edges at s or d appear only in
//            the first and last blocks (written as (s, i) they would embed to e_i a second time);
//   φ        (u, v) ↦ e_v when v ≠ 0 and u ∈ {s, d}, else 0 (L661 prints "u = s or u = v"; ERRATA: u ∈ {s, d}),
//            e_v the standard basis vector of R^{|V|}: width m = |V|;
//   Q_h = K_h = 0, V_h = I (L663): every score is 0, softmax gives each token weight 1/N (L665 prints 1/|V|;
//            ERRATA: 1/N), and the attention output is y_i = c_i/N with c_i = [s ~ i] + [d ~ i] ∈ {0, 1, 2}
//            (L665's three cases; c_i = 2 exactly when s–i–d is a length-2 path);
//   ψ        "any thresholding function which achieves this separation suffices" (L667): here
//            ψ(y) = Σ_i σ(y_i − τ), i.e. W = I, b = −τ·1, u = 1 (m' = |V| hidden units), τ = 3/(2N) halfway between
//            the levels 1/N and 2/N; the answer is "yes" iff ψ(y) > 0, i.e. some y_i > τ.
//
// Precision (L667: "O(log N) bits are sufficient"): the attention output is rounded to b fractional bits,
// q_b(y) = min(1, ⌊y·2^b + 1/2⌋ / 2^b) (round half up to a multiple of 2^{−b}, values in [0, 1]); ψ and τ stay
// at full precision. The rounding error is ≤ 2^{−b−1}, so b with 2^{−b−1} < 1/(2N), i.e. b ≥ ⌊log₂ N⌋ + 1,
// always keeps q_b(2/N) > τ ≥ q_b(1/N) (sufficient_bits). Fewer bits can be right too, and not monotonically:
// at N = 6, b = 1 is right, b = 2 rounds 2/N = 1/3 down to τ = 1/4 and answers every yes-instance "no".
//
// Corollary 3.4's counts (§3.1 parameters, embedding φ not counted, H = 1, each MLP's hidden width m' = m):
//   dense  P_d(m)    = 3m² (Q_h, K_h, V_h) + m² + 2m (W, b, u)                     = 4m² + 2m
//   sparse P_s(m, K) = 3m² (shared attention) + K(m² + 2m) (experts W_i, b_i, u_i) + K m (routers r_j)
// L124 matches O(m_d²) with O(K m_s²), m_s = m_d/√K, m_d = |V|, and the sparse model fails once m_s is below
// Theorem 3.2's |V|/log N: K > (log N)². With the exact counts the shared attention is not multiplied by K,
// m_s ≈ m_d·(4/(K + 3))^{1/2}, and K* → 4(log₂ N)² − 3; both are Θ((log N)²) as the corollary says.
// Theorem 3.2's Ω(|V|/log N) is taken with constant 1 and log₂ (N bits of position, log₂ N bits of precision).
//
// Header is C++17 (notebooks); sources may be C++20.
#include <array>
#include <vector>

#include <Eigen/Core>

#include <sparseact/parrots/graphs.hpp>

namespace sparseact::parrots {

/// The paper's symbol 0 in a token (u, v) ∈ (V ∪ {0}) × (V ∪ {0}): "no vertex" (L658).
constexpr int kNoVertex = -1;

struct Token {
  int u = kNoVertex, v = kNoVertex;
};
inline bool operator==(const Token& a, const Token& b) { return a.u == b.u && a.v == b.v; }

/// N = 2|V| + C(|V| − 2, 2): the s block, the middle (edges away from s and d, padded), the d block. |V| ≥ 3.
long long sequence_length(int V);

/// The input sequence X = (x_1, …, x_N) of App. D.1.2 for the graph g (|V| = g.n ≥ 3).
std::vector<Token> encode(const Graph& g);

/// φ(x) ∈ R^{|V|}: e_v when v ≠ 0 and u ∈ {s, d} (s = 0, d = |V| − 1), else 0 (L661 with ERRATA 004).
Eigen::VectorXd embed(const Token& x, int V);

/// Theorem D.5's transformer for graphs on |V| vertices: width |V|, H = 1, threshold τ = 3/(2N).
struct Transformer {
  int V = 0;        ///< |V| = width m
  long long N = 0;  ///< sequence length
  double tau = 0;   ///< ψ's threshold, between 1/N and 2/N
};
/// Throws std::invalid_argument for |V| < 3.
Transformer theorem33(int V);

/// The explicit parameters: Q_h = K_h = 0, V_h = I (|V| × |V|, L663); ψ's W = I, b = −τ·1, u = 1.
struct Weights {
  Eigen::MatrixXd Q_h, K_h, V_h, W;
  Eigen::VectorXd b, u;
};
/// |V|² entries each: meant for small |V| (throws std::invalid_argument above |V| = 2048).
Weights weights(const Transformer& f);

/// The attention output at the last token, literally: softmax(φ(x_N)ᵀ Q_h K_hᵀ φ(X)ᵀ) φ(X) V_h, with φ(X) the
/// N × |V| matrix of embeddings. Throws std::invalid_argument unless X has N tokens.
Eigen::VectorXd attention(const Transformer& f, const Weights& w, const std::vector<Token>& X);
/// The same vector from the 2|V| tokens of the s and d blocks alone (every other token embeds to 0): y_i = c_i/N,
/// c_i = [s ~ i] + [d ~ i]. Bit for bit equal to attention() (each y_i is a sum of at most two copies of 1/N).
Eigen::VectorXd attention_from_endpoints(const Transformer& f, const Graph& g);

/// No rounding: the attention output at full double precision.
constexpr int kExactBits = 0;
/// q_b(y) entrywise: round half up to a multiple of 2^{−b}, clamped to [0, 1]; b ∈ [1, 52] (kExactBits: y itself).
Eigen::VectorXd round_to_bits(const Eigen::VectorXd& y, int bits);

/// ψ(y) = uᵀ σ(W y + b) with the explicit matrices.
double psi(const Weights& w, const Eigen::VectorXd& y);
/// ψ(y) = Σ_i σ(y_i − τ): the same function (W = I, b = −τ·1, u = 1) without forming W.
double psi(const Transformer& f, const Eigen::VectorXd& y);

/// f's answer to Definition 3.1 from the attention output y, rounded to `bits` bits: ψ(q_b(y)) > 0.
bool answer(const Transformer& f, const Eigen::VectorXd& y, int bits = kExactBits);
/// The same with the explicit ψ matrices.
bool answer(const Weights& w, const Eigen::VectorXd& y, int bits = kExactBits);
/// f(G) at full precision, end to end through the literal sequence (small |V|).
bool solve(const Graph& g);

/// ⌊log₂ N⌋ + 1: the fewest bits b with 2^b > N, so that the rounding error 2^{−b−1} < 1/(2N) cannot move 1/N or
/// 2/N across τ = 3/(2N). N ≥ 1.
int sufficient_bits(long long N);

/// Theorem 3.3 on graphs, against BFS (the work of the analysis's parts (b) and (c)).
struct Theorem33Tally {
  long long graphs = 0;
  long long yes = 0;                        ///< length2_path_by_bfs
  std::array<long long, 3> levels{};        ///< graphs by max_i c_i ∈ {0, 1, 2} (L665's three cases)
  long long wrong_exact = 0;                ///< f's answer at full precision ≠ BFS
  long long wrong_sufficient = 0;           ///< at sufficient_bits(N) bits ≠ BFS
  long long literal_differs = 0;            ///< literal attention() ≠ attention_from_endpoints() (bits), where run
  long long brute_force_differs = 0;        ///< length2_path_brute_force ≠ length2_path_by_bfs
  std::vector<long long> wrong_at_bits;     ///< [b − 1]: answers at b bits ≠ BFS, b = 1 … bits_max
};
/// Adds g to t. With `literal` the attention runs through encode() and the explicit matrices (and is compared
/// with attention_from_endpoints, which is used otherwise); ψ is then the explicit uᵀσ(W y + b).
void tally_theorem33(const Transformer& f, const Weights* literal, const Graph& g, int bits_max, Theorem33Tally& t);
/// Every graph on |V| vertices whose mask (graph_from_mask) lies in [lo, hi), evaluated literally; Lemma D.2 (⟸)
/// on each graph goes into d2.
Theorem33Tally theorem33_every_graph(int V, std::uint64_t lo, std::uint64_t hi, int bits_max, LemmaD2Tally& d2);
/// G(|V|, p) graphs k = lo … hi − 1 at p = half_probability_edge(|V|), graph k drawn from Rng(seed, stream_id(stream, k))
/// (the same graphs however the range is split), evaluated through attention_from_endpoints.
Theorem33Tally theorem33_random_graphs(int V, long long lo, long long hi, int bits_max, std::uint64_t seed, std::uint64_t stream);
/// The smallest b ≥ 1 from which every answer is right at every b' ∈ [b, bits_max] ("still right" going down
/// from high precision); bits_max + 1 when the answers at bits_max are not all right.
int stable_bits(const std::vector<long long>& wrong_at_bits);
/// The smallest b with no wrong answer (bits_max + 1 when none): not monotone in b, see the header comment.
int first_bits(const std::vector<long long>& wrong_at_bits);

// --- Corollary 3.4 ---------------------------------------------------------------------------------------------

/// P_d(m) = 4m² + 2m (see the header comment). m ≥ 1.
long long dense_parameters(long long m);
/// P_s(m, K) = 3m² + K(m² + 2m) + K m. m ≥ 0, K ≥ 1.
long long sparse_parameters(long long m, long long K);
/// The largest width m_s ≥ 0 with P_s(m_s, K) ≤ P_d(m_d): the widest MoE with no more parameters than the dense model.
long long matched_sparse_width(long long m_d, long long K);

struct Corollary34 {
  long long V = 0;           ///< |V| = m_d (Theorem 3.3's width)
  double log2_N = 0;
  double width_bound = 0;    ///< Theorem 3.2's |V|/log₂ N (constant 1)
  long long K_star = 0;      ///< the fewest experts K with matched_sparse_width(|V|, K) < width_bound
  long long m_s_at_K_star = 0;
  long long K_leading = 0;   ///< L124's leading order, m_s = m_d/√K: ⌊(log₂ N)²⌋ + 1
};
/// Throws std::invalid_argument unless |V| ≥ 3, log₂ N > 0 and |V| ≤ 2^24.
Corollary34 corollary34(long long V, double log2_N);

}  // namespace sparseact::parrots
