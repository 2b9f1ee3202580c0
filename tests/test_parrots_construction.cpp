// Theorem 3.3 of paper 004 as App. D.1.2 builds it (parrots/construction): the token sequence, φ, uniform attention
// with weight 1/N, the threshold ψ; hand graphs worked out in comments; the literal and the endpoint evaluation bit
// for bit; the answer against the number of bits; Corollary 3.4's parameter counts by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/parrots/construction.hpp>

using namespace sparseact;
using namespace sparseact::parrots;

namespace {

Graph make(int n, std::vector<std::pair<int, int>> es) {
  Graph g = empty_graph(n);
  for (auto [u, v] : es) add_edge(g, u, v);
  return g;
}

/// The attention output c/N for counts c, as the construction computes it.
Eigen::VectorXd levels(const std::vector<int>& c, long long N) {
  Eigen::VectorXd y(Eigen::Index(c.size()));
  for (std::size_t i = 0; i < c.size(); ++i) y[Eigen::Index(i)] = c[i] * (1.0 / double(N));
  return y;
}

}  // namespace

TEST_CASE("the triangle, token by token", "[parrots]") {
  // |V| = 3, s = 0, d = 2, edges 0–1, 0–2, 1–2. N = 2·3 + C(1, 2) = 6, no middle tokens.
  // s block: (s, ∅) (no loop at 0), (s, 1), (s, 2); d block: (d, 0), (d, 1), (d, ∅).
  // φ: 0, e₁, e₂, e₀, e₁, 0 → counts c = (1, 2, 1), y = c/6 = (1/6, 1/3, 1/6); τ = 3/12 = 1/4 < 1/3: yes (0–1–2).
  const Graph g = make(3, {{0, 1}, {0, 2}, {1, 2}});
  const std::vector<Token> X = encode(g);
  const std::vector<Token> expected{{0, kNoVertex}, {0, 1}, {0, 2}, {2, 0}, {2, 1}, {2, kNoVertex}};
  CHECK(X == expected);
  const Transformer f = theorem33(3);
  CHECK(f.N == 6);
  CHECK(f.tau == 0.25);
  const Weights w = weights(f);
  const Eigen::VectorXd y = attention(f, w, X);
  CHECK(y[0] == 1.0 / 6);
  CHECK(y[1] == 2.0 / 6);
  CHECK(y[2] == 1.0 / 6);
  CHECK(psi(w, y) == Approx(1.0 / 3 - 0.25));
  CHECK(solve(g));
  CHECK(embed({1, 2}, 3).isZero());  // u ∉ {s, d}: a middle edge embeds to 0
  CHECK(embed({2, 0}, 3) == Eigen::Vector3d(1, 0, 0));
}

TEST_CASE("hand graphs: path, stars, disconnected, direct edge", "[parrots]") {
  // Path of length 2 in |V| = 5 (s = 0, d = 4): edges 0–2, 2–4. c₂ = 2 → y₂ = 2/13 > τ = 3/26: yes.
  CHECK(solve(make(5, {{0, 2}, {2, 4}})));
  CHECK(theorem33(5).N == 13);  // 2·5 + C(3, 2)
  // Star centred at s: 0–1, 0–2, 0–3, 0–4. c₁ = c₂ = c₃ = 1, c₄ = 1 ((s, 4)), c₀ = 1 ((d, 0)): max 1 → no
  // (the only route to d is the direct edge).
  CHECK_FALSE(solve(make(5, {{0, 1}, {0, 2}, {0, 3}, {0, 4}})));
  // Star centred at 2: 2–0, 2–1, 2–3, 2–4. c₂ = 2 → yes (0–2–4); middle edges 1–2, 2–3 embed to 0.
  CHECK(solve(make(5, {{0, 2}, {1, 2}, {2, 3}, {2, 4}})));
  // Disconnected, |V| = 4: 0–1 and 2–3. c₁ = 1, c₂ = 1 → no.
  CHECK_FALSE(solve(make(4, {{0, 1}, {2, 3}})));
  // Disconnected with s and d isolated, everything else complete: all middle tokens, c = 0 → no.
  CHECK_FALSE(solve(make(5, {{1, 2}, {1, 3}, {2, 3}})));
  // Direct edge s–d and a middle edge, |V| = 4: c₃ = 1 (from (s, 3)), c₀ = 1 (from (d, 0)) → no.
  CHECK_FALSE(solve(make(4, {{0, 3}, {1, 2}})));
  // Direct edge plus a common neighbour: yes, though dist(s, d) = 1.
  CHECK(solve(make(4, {{0, 3}, {0, 1}, {1, 3}})));
  // The sequence has length N whatever the edges: padding with (∅, ∅).
  CHECK(encode(make(6, {})).size() == std::size_t(theorem33(6).N));
  CHECK(encode(make(6, {{1, 2}, {3, 4}})).at(6 + 0) == Token{1, 2});
  CHECK(encode(make(6, {{1, 2}, {3, 4}})).at(6 + 2) == Token{kNoVertex, kNoVertex});
}

TEST_CASE("every graph with |V| ≤ 5: literal = endpoints bit for bit, explicit ψ = Σσ(y − τ), answers = BFS", "[parrots]") {
  for (int V = 3; V <= 5; ++V) {
    const Transformer f = theorem33(V);
    const Weights w = weights(f);
    for (std::uint64_t mask = 0; mask < (std::uint64_t(1) << (V * (V - 1) / 2)); ++mask) {
      const Graph g = graph_from_mask(V, mask);
      const Eigen::VectorXd lit = attention(f, w, encode(g)), fast = attention_from_endpoints(f, g);
      CAPTURE(V, mask);
      REQUIRE((lit.array() == fast.array()).all());
      CHECK(psi(w, lit) == Approx(psi(f, lit)).margin(1e-15));
      CHECK(answer(w, lit) == length2_path_by_bfs(g));
      CHECK(answer(f, fast, sufficient_bits(f.N)) == length2_path_by_bfs(g));
    }
  }
}

TEST_CASE("bits: ⌊log₂ N⌋ + 1 suffice, 1 bit fails, the answer is not monotone in b", "[parrots]") {
  // Hand rounding: q₂(0.3) = ⌊1.2 + 0.5⌋/4 = 1/4; q₂(0.375) = ⌊1.5 + 0.5⌋/4 = 1/2 (half up); clamped to [0, 1].
  CHECK(round_to_bits(Eigen::Vector3d(0.3, 0.375, 1.2), 2) == Eigen::Vector3d(0.25, 0.5, 1.0));
  CHECK_THROWS(round_to_bits(Eigen::Vector3d(0, 0, 0), -1));
  CHECK_THROWS(round_to_bits(Eigen::Vector3d(0, 0, 0), 53));
  CHECK(sufficient_bits(6) == 3);
  CHECK(sufficient_bits(8) == 4);
  CHECK(sufficient_bits(13) == 4);
  // |V| = 5, N = 13: the path 0–2–4 gives y₂ = 2/13 ≈ 0.154; with 1 bit q₁ = ⌊0.31 + 0.5⌋/2 = 0 ≤ τ: "no", wrong.
  const Transformer f5 = theorem33(5);
  const Graph path = make(5, {{0, 2}, {2, 4}});
  CHECK_FALSE(answer(f5, attention_from_endpoints(f5, path), 1));
  CHECK(answer(f5, attention_from_endpoints(f5, path), 4));
  // |V| = 3, N = 6, τ = 1/4: y = 2/6 at b = 1 → q = 1/2 (right), at b = 2 → ⌊1.33 + 0.5⌋/4 = 1/4 = τ (wrong), at b = 3 → 3/8 (right).
  const Transformer f3 = theorem33(3);
  const Eigen::VectorXd y3 = levels({0, 2, 0}, f3.N);
  CHECK(answer(f3, y3, 1));
  CHECK_FALSE(answer(f3, y3, 2));
  CHECK(answer(f3, y3, 3));
  // A "no" at level 1/N is never pushed above τ here: q₁(1/6) = 0, q₂(1/6) = 1/4 = τ (not above), q₃(1/6) = 1/8.
  for (int b = 1; b <= 30; ++b) CHECK_FALSE(answer(f3, levels({1, 0, 1}, f3.N), b));

  // The tally on random graphs at |V| = 16: every answer right from ⌊log₂ N⌋ + 1 = 7 bits on, some wrong at 1 bit.
  const Transformer f = theorem33(16);
  CHECK(f.N == 32 + 91);
  Theorem33Tally t;
  for (int k = 0; k < 300; ++k) {
    Rng rng(2, std::uint64_t(k));
    tally_theorem33(f, nullptr, erdos_renyi(16, half_probability_edge(16), rng), 20, t);
  }
  CHECK(t.graphs == 300);
  CHECK(t.yes > 50);
  CHECK(t.yes < 250);
  CHECK(t.wrong_exact == 0);
  CHECK(t.wrong_sufficient == 0);
  CHECK(t.wrong_at_bits[0] > 0);
  CHECK(stable_bits(t.wrong_at_bits) <= sufficient_bits(f.N));
  CHECK(stable_bits({3, 0, 2, 0, 0}) == 4);
  CHECK(first_bits({3, 0, 2, 0, 0}) == 2);
  CHECK(stable_bits({0, 0, 1}) == 4);
}

TEST_CASE("the printed weight 1/|V| (L665) would misread every yes; 1/N (ERRATA 004) does not", "[parrots]") {
  // |V| = 5, N = 13, the path 0–2–4: y₂ = 2/13 ≈ 0.154. A threshold between the printed levels 1/|V| = 0.2 and
  // 2/|V| = 0.4, say 0.3, reads "no"; between 1/N and 2/N (τ = 3/26 ≈ 0.115) it reads "yes".
  Transformer printed = theorem33(5);
  printed.tau = 1.5 / 5;
  const Graph path = make(5, {{0, 2}, {2, 4}});
  CHECK_FALSE(answer(printed, attention_from_endpoints(printed, path)));
  CHECK(answer(theorem33(5), attention_from_endpoints(theorem33(5), path)));
}

TEST_CASE("Corollary 3.4: parameter counts by hand", "[parrots]") {
  // Dense width 3: Q, K, V, W are 3×3 (36) plus b, u (6) = 42 = 4·9 + 2·3, the entries of Theorem 3.3's weights.
  CHECK(dense_parameters(3) == 42);
  const Weights w = weights(theorem33(3));
  CHECK(w.Q_h.size() + w.K_h.size() + w.V_h.size() + w.W.size() + w.b.size() + w.u.size() == dense_parameters(3));
  // MoE width 2, K = 4: attention 3·4 = 12, experts 4·(4 + 4) = 32, routers 4·2 = 8 → 52.
  CHECK(sparse_parameters(2, 4) == 52);
  // m_d = 10: budget 420. K = 4: P_s(m) = 7m² + 12m; m = 6 → 324 ≤ 420, m = 7 → 427 > 420.
  CHECK(matched_sparse_width(10, 4) == 6);
  // |V| = 1024, log₂ N = 10: bound 102.4. Budget 4·1024² + 2048 = 4196352. m = 103 fits while
  // (K + 3)·103² + 3K·103 ≤ 4196352, i.e. K ≤ 381; so m_s(382) ≤ 102 < 102.4 and K* = 382; L124's ⌊10²⌋ + 1 = 101.
  const Corollary34 c = corollary34(1024, 10);
  CHECK(c.K_star == 382);
  CHECK(c.m_s_at_K_star == 102);
  CHECK(c.K_leading == 101);
  CHECK(matched_sparse_width(1024, 381) >= 103);
  CHECK_THROWS(corollary34(2, 10));
  CHECK_THROWS(corollary34(16, 0));
  CHECK_THROWS(theorem33(2));
}
