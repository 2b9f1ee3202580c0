#pragma once
// The shortest-path task of paper 004 §4.1 (Figure 2, Figure 4b): a decoder reads a directed Erdős–Rényi graph as a
// list of its arcs, then a query (s, t), and writes a shortest path from s to t.
//
// Tokens (§4.1, |𝒱| = n + 6): the vertices 0 … n − 1, then EDGE, BOS, EOS, PAD, SEP and "/". §4.1 names the tokens
// but not their order; ours (ERRATA 004):
//
//   BOS  EDGE u₁ v₁  EDGE u₂ v₂ …  SEP s t /  v₀ v₁ … v_k EOS  PAD …
//   └──────────── prompt ────────────────┘  └─── answer ───┘
//
// arcs listed in lexicographic order, v₀ = s and v_k = t, right-padded to the data set's longest sequence. The loss
// is masked to the answer (§4.1: "we only penalize the model whenever it makes a mistake on the labels"). A decoded
// answer counts when it is any shortest path (a walk along arcs from s to t with dist(s, t) arcs) followed by EOS;
// the canonical match (the lexicographically first shortest path, what the model was trained on) is reported too.
//
// §4.1 sets p so that the mean shortest-path length is 3.5; on 12–16 vertices the mean peaks near 2.4–2.8 (at a
// mean out-degree near 2), so path_edge_probability returns the p closest to the target on the decreasing branch, or
// the peak when the target is out of reach, and says which.
#include <cstdint>
#include <vector>

#include <sparseact/nn/data.hpp>
#include <sparseact/nn/decoder.hpp>
#include <sparseact/parrots/graphs.hpp>

namespace sparseact::parrots {

struct PathVocab {
  int n = 0;  ///< vertices
  int edge() const { return n; }
  int bos() const { return n + 1; }
  int eos() const { return n + 2; }
  int pad() const { return n + 3; }
  int sep() const { return n + 4; }
  int slash() const { return n + 5; }
  int size() const { return n + 6; }
};

struct PathInstance {
  Digraph g;
  int s = 0, t = 0;
  std::vector<int> path;  ///< the canonical shortest path, s first, t last
};

/// One instance: a directed G(n, p) and a query (s, t), s ≠ t, uniform among the ordered pairs with t reachable
/// from s (graphs without one are redrawn). Throws InputError for n < 3 or n > 200.
PathInstance sample_path_instance(int n, double p, Rng& rng);
/// `count` instances, instance i from Rng(seed, stream_id(stream, i)).
std::vector<PathInstance> sample_path_instances(int n, double p, long count, std::uint64_t seed, std::uint64_t stream);

std::vector<int> path_prompt(const PathInstance& x);  ///< BOS … SEP s t /
std::vector<int> path_answer(const PathInstance& x);  ///< v₀ … v_k EOS
std::size_t path_sequence_length(const PathInstance& x);

/// Inputs: every sequence but its last token, PAD-filled to `length` − 1 rows (0: the longest here); targets: the
/// next token on the answer's positions, −1 elsewhere. Throws InputError when a sequence is longer than `length`.
nn::Dataset path_dataset(const std::vector<PathInstance>& xs, Eigen::Index length = 0);

struct PathScore {
  double valid = 0;      ///< any shortest path, then EOS
  double canonical = 0;  ///< exactly the canonical path, then EOS
  long count = 0;
  std::vector<long> count_by_distance, valid_by_distance;  ///< index dist(s, t) (0 unused)
};
/// Does `answer` (decoded tokens, EOS included when produced) name a shortest path from s to t followed by EOS?
bool is_shortest_path_answer(const PathInstance& x, const std::vector<int>& answer);
/// Greedy decoding of every instance's answer (at most n + 1 tokens). Needs s.max_len ≥ each sequence's length.
PathScore score_paths(const nn::DecoderShape& s, const Eigen::VectorXd& theta, const std::vector<PathInstance>& xs);

struct PathRun {
  PathScore test;
  double final_loss = 0;
};
/// A fresh decoder of shape `s` (init from (seed, stream_id(stream, 0))) trained on `train` by nn::train_decoder
/// (batches from stream_id(stream, 1)), then scored on the held-out instances.
PathRun train_shortest_path(const nn::DecoderShape& s, const nn::Dataset& train, const std::vector<PathInstance>& test, const nn::DecoderTraining& t,
                            std::uint64_t seed, std::uint64_t stream);

struct EdgeProbability {
  double p = 0;            ///< chosen edge probability
  double mean_length = 0;  ///< mean shortest-path length of a random reachable query at p (Monte Carlo)
  double peak_length = 0;  ///< the largest mean over the scanned p
  bool reached = false;    ///< |mean_length − target| ≤ 0.05
};
/// Scans the mean out-degree c = p(n − 1) over [0.5, 8] in steps of 0.05 with `graphs` draws per c (common random
/// numbers: the same stream at every c) and keeps the c ≥ the peak whose mean length is closest to `target`.
EdgeProbability path_edge_probability(int n, double target, int graphs, std::uint64_t seed);

}  // namespace sparseact::parrots
