#include <sparseact/parrots/construction.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sparseact::parrots {

namespace {

void require_V(long long V) {
  if (V < 3) throw std::invalid_argument("Theorem 3.3's construction needs |V| ≥ 3 (got " + std::to_string(V) + ")");
}

}  // namespace

long long sequence_length(int V) {
  require_V(V);
  const long long rest = V - 2;  // vertices other than s and d
  return 2LL * V + rest * (rest - 1) / 2;
}

std::vector<Token> encode(const Graph& g) {
  const int V = g.n, s = source(g), d = destination(g);
  std::vector<Token> X;
  X.reserve(std::size_t(sequence_length(V)));
  // L658: "for vertex i, if the source shares an edge with that vertex, then the i'th input value is (s, i).
  // Otherwise, it is (s, 0). The first |V| tokens we see correspond to edges possibly shared with the source."
  for (int i = 0; i < V; ++i) X.push_back({s, has_edge(g, s, i) ? i : kNoVertex});
  // "In between, we can have arbitrary edges (u, v)": the edges away from s and d, then (0, 0) up to C(|V| − 2, 2).
  const long long middle = sequence_length(V) - 2LL * V;
  for (const auto& [u, v] : edges(g))
    if (u != s && u != d && v != s && v != d) X.push_back({u, v});
  while (static_cast<long long>(X.size()) < V + middle) X.push_back({kNoVertex, kNoVertex});
  // "The last |V| input tokens correspond to edges possibly shared with the destination vertex."
  for (int i = 0; i < V; ++i) X.push_back({d, has_edge(g, d, i) ? i : kNoVertex});
  return X;
}

Eigen::VectorXd embed(const Token& x, int V) {
  require_V(V);
  const int s = 0, d = V - 1;
  Eigen::VectorXd e = Eigen::VectorXd::Zero(V);
  // L661 (ERRATA 004): e_i for (u, i) with i > 0 (a vertex, not the symbol 0) and u ∈ {s, d}; 0 otherwise.
  if (x.v != kNoVertex && (x.u == s || x.u == d)) {
    if (x.v < 0 || x.v >= V) throw std::invalid_argument("token names a vertex outside 0 … |V| − 1");
    e[x.v] = 1.0;
  }
  return e;
}

Transformer theorem33(int V) {
  require_V(V);
  Transformer f;
  f.V = V;
  f.N = sequence_length(V);
  f.tau = 1.5 / double(f.N);  // halfway between L665's levels 1/N and 2/N (weights 1/N, ERRATA 004)
  return f;
}

Weights weights(const Transformer& f) {
  require_V(f.V);
  if (f.V > 2048) throw std::invalid_argument("explicit weights are |V|² entries each: |V| ≤ 2048 here");
  const Eigen::Index m = f.V;
  Weights w;
  w.Q_h = Eigen::MatrixXd::Zero(m, m);  // L663: Q_h and K_h "both to have 0 everywhere" (printed "Q_h, V_h"; ERRATA)
  w.K_h = Eigen::MatrixXd::Zero(m, m);
  w.V_h = Eigen::MatrixXd::Identity(m, m);  // L663: "V_h … to be the identity matrix"
  w.W = Eigen::MatrixXd::Identity(m, m);    // ψ(y) = uᵀσ(W y + b): one ReLU per coordinate, firing above τ
  w.b = Eigen::VectorXd::Constant(m, -f.tau);
  w.u = Eigen::VectorXd::Ones(m);
  return w;
}

Eigen::VectorXd attention(const Transformer& f, const Weights& w, const std::vector<Token>& X) {
  if (static_cast<long long>(X.size()) != f.N)
    throw std::invalid_argument("Transformer^N reads sequences of length N = " + std::to_string(f.N));
  const Eigen::Index N = Eigen::Index(X.size()), m = f.V;
  Eigen::MatrixXd Phi(N, m);  // φ(X): row j is φ(x_j)ᵀ
  for (Eigen::Index j = 0; j < N; ++j) Phi.row(j) = embed(X[std::size_t(j)], f.V).transpose();
  // §3.1 (L84): scores φ(x_N)ᵀ Q_h K_hᵀ φ(X)ᵀ, softmax over the N positions, then φ(X) V_h.
  const Eigen::RowVectorXd scores = Phi.row(N - 1) * w.Q_h * w.K_h.transpose() * Phi.transpose();
  const Eigen::RowVectorXd e = (scores.array() - scores.maxCoeff()).exp().matrix();
  const Eigen::RowVectorXd a = e / e.sum();
  return (a * Phi * w.V_h).transpose();
}

Eigen::VectorXd attention_from_endpoints(const Transformer& f, const Graph& g) {
  if (g.n != f.V) throw std::invalid_argument("the graph has " + std::to_string(g.n) + " vertices, the transformer reads |V| = " + std::to_string(f.V));
  const int s = source(g), d = destination(g);
  const double weight = 1.0 / double(f.N);  // softmax of N equal scores (Q_h = K_h = 0)
  Eigen::VectorXd y = Eigen::VectorXd::Zero(f.V);
  // φ of the s block is e_i for each neighbour i of s, of the d block e_i for each neighbour of d; middle and
  // padding tokens embed to 0. V_h = I. Sum in sequence order (s block first), as attention() does.
  for (int i : g.adj[std::size_t(s)]) y[i] += weight;
  for (int i : g.adj[std::size_t(d)]) y[i] += weight;
  return y;
}

Eigen::VectorXd round_to_bits(const Eigen::VectorXd& y, int bits) {
  if (bits == kExactBits) return y;
  if (bits < 1 || bits > 52) throw std::invalid_argument("bits must lie in [1, 52] (got " + std::to_string(bits) + ")");
  const double scale = std::ldexp(1.0, bits);
  Eigen::VectorXd q(y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i) q[i] = std::clamp(std::floor(y[i] * scale + 0.5) / scale, 0.0, 1.0);
  return q;
}

double psi(const Weights& w, const Eigen::VectorXd& y) {
  return w.u.dot((w.W * y + w.b).cwiseMax(0.0));
}

double psi(const Transformer& f, const Eigen::VectorXd& y) {
  double out = 0;
  for (Eigen::Index i = 0; i < y.size(); ++i) out += std::max(0.0, y[i] - f.tau);
  return out;
}

bool answer(const Transformer& f, const Eigen::VectorXd& y, int bits) { return psi(f, round_to_bits(y, bits)) > 0; }
bool answer(const Weights& w, const Eigen::VectorXd& y, int bits) { return psi(w, round_to_bits(y, bits)) > 0; }

bool solve(const Graph& g) {
  const Transformer f = theorem33(g.n);
  const Weights w = weights(f);
  return answer(w, attention(f, w, encode(g)));
}

void tally_theorem33(const Transformer& f, const Weights* literal, const Graph& g, int bits_max, Theorem33Tally& t) {
  if (bits_max < 1 || bits_max > 52) throw std::invalid_argument("bits_max must lie in [1, 52]");
  if (t.wrong_at_bits.size() != std::size_t(bits_max)) t.wrong_at_bits.assign(std::size_t(bits_max), 0);
  const bool truth = length2_path_by_bfs(g);
  ++t.graphs;
  t.yes += truth;
  t.brute_force_differs += length2_path_brute_force(g) != truth;
  const Eigen::VectorXd fast = attention_from_endpoints(f, g);
  Eigen::VectorXd y = fast;
  if (literal) {
    y = attention(f, *literal, encode(g));
    t.literal_differs += !(y.array() == fast.array()).all();
  }
  t.levels[std::size_t(std::lround(y.maxCoeff() * double(f.N)))] += 1;  // y_i = c_i/N
  const auto right = [&](int bits) { return (literal ? answer(*literal, y, bits) : answer(f, y, bits)) == truth; };
  t.wrong_exact += !right(kExactBits);
  t.wrong_sufficient += !right(sufficient_bits(f.N));
  for (int b = 1; b <= bits_max; ++b) t.wrong_at_bits[std::size_t(b - 1)] += !right(b);
}

Theorem33Tally theorem33_every_graph(int V, std::uint64_t lo, std::uint64_t hi, int bits_max, LemmaD2Tally& d2) {
  const Transformer f = theorem33(V);
  const Weights w = weights(f);
  Theorem33Tally t;
  t.wrong_at_bits.assign(std::size_t(bits_max), 0);
  for (std::uint64_t mask = lo; mask < hi; ++mask) {
    const Graph g = graph_from_mask(V, mask);
    tally_theorem33(f, &w, g, bits_max, t);
    tally_lemma_d2_backward(g, d2);
  }
  return t;
}

Theorem33Tally theorem33_random_graphs(int V, long long lo, long long hi, int bits_max, std::uint64_t seed, std::uint64_t stream) {
  const Transformer f = theorem33(V);
  const double p = half_probability_edge(V);
  Theorem33Tally t;
  t.wrong_at_bits.assign(std::size_t(bits_max), 0);
  for (long long k = lo; k < hi; ++k) {
    Rng rng(seed, stream_id(stream, std::uint64_t(k)));
    tally_theorem33(f, nullptr, erdos_renyi(V, p, rng), bits_max, t);
  }
  return t;
}

int stable_bits(const std::vector<long long>& wrong_at_bits) {
  int b = int(wrong_at_bits.size()) + 1;
  while (b > 1 && wrong_at_bits[std::size_t(b - 2)] == 0) --b;
  return b;
}

int first_bits(const std::vector<long long>& wrong_at_bits) {
  for (std::size_t i = 0; i < wrong_at_bits.size(); ++i)
    if (wrong_at_bits[i] == 0) return int(i) + 1;
  return int(wrong_at_bits.size()) + 1;
}

int sufficient_bits(long long N) {
  if (N < 1) throw std::invalid_argument("sufficient_bits needs N ≥ 1");
  int b = 0;
  while ((1LL << b) <= N) ++b;  // the fewest b with 2^b > N: ⌊log₂ N⌋ + 1, in integers
  return b;
}

long long dense_parameters(long long m) {
  if (m < 1) throw std::invalid_argument("dense_parameters needs m ≥ 1");
  return 4 * m * m + 2 * m;
}

long long sparse_parameters(long long m, long long K) {
  if (m < 0 || K < 1) throw std::invalid_argument("sparse_parameters needs m ≥ 0 and K ≥ 1");
  return 3 * m * m + K * (m * m + 2 * m) + K * m;
}

long long matched_sparse_width(long long m_d, long long K) {
  if (m_d < 1 || K < 1) throw std::invalid_argument("matched_sparse_width needs m_d ≥ 1 and K ≥ 1");
  const long long budget = dense_parameters(m_d);
  // P_s is increasing in m; start from the quadratic's estimate √(budget/(K + 3)) and step to the exact answer.
  long long m = static_cast<long long>(std::sqrt(double(budget) / double(K + 3)));
  while (m > 0 && sparse_parameters(m, K) > budget) --m;
  while (sparse_parameters(m + 1, K) <= budget) ++m;
  return m;
}

Corollary34 corollary34(long long V, double log2_N) {
  require_V(V);
  if (!(log2_N > 0)) throw std::invalid_argument("Corollary 3.4 needs N > 1");
  if (V > (1LL << 24)) throw std::invalid_argument("Corollary 3.4 here: |V| ≤ 2^24 (the counts stay exact in 64 bits)");
  Corollary34 c;
  c.V = V;
  c.log2_N = log2_N;
  c.width_bound = double(V) / log2_N;
  const auto too_narrow = [&](long long K) { return double(matched_sparse_width(V, K)) < c.width_bound; };
  // matched_sparse_width is non-increasing in K: double until too narrow, then bisect.
  long long hi = 1;
  while (!too_narrow(hi)) hi *= 2;
  long long lo = hi / 2;  // not too narrow (or 0 when K = 1 already is)
  while (hi - lo > 1) {
    const long long mid = lo + (hi - lo) / 2;
    (too_narrow(mid) ? hi : lo) = mid;
  }
  c.K_star = hi;
  c.m_s_at_K_star = matched_sparse_width(V, hi);
  c.K_leading = static_cast<long long>(std::floor(log2_N * log2_N)) + 1;
  return c;
}

}  // namespace sparseact::parrots
