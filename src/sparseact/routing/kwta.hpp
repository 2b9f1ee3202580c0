#pragma once
// The k-winner-take-all capping function C_k of paper 002 (COMET), eq. (3):
//
//   [C_k(v)]_i = 1  if |{j : v_j ≥ v_i}| ≤ k,  0 otherwise.
//
// Read literally, a tie across the k-th place drops every tied value, so fewer than k units may win
// (ERRATA 002). Three tie rules, all O(N) per vector (one nth_element for the k-th largest value t,
// then one pass):
//   strict     eq. (3) as printed: v_i > t wins; v_i = t wins only if exactly k values are ≥ t.
//              C_2(3, 2, 2, 1) = (1, 0, 0, 0).
//   inclusive  v_i ≥ t, as a public PyTorch implementation does (it may keep more than k).
//              C_2(3, 2, 2, 1) = (1, 1, 1, 0).
//   exact      exactly min(k, N) winners: every v_i > t, then the tied ones lowest index first.
//              C_2(3, 2, 2, 1) = (1, 1, 0, 0).
// The default is strict. The number of winners per layer is k_ℓ = max(1, round(p_k N_ℓ)), halves
// rounded away from zero (ERRATA 002; that implementation floors).
#include <string>

#include <Eigen/Core>

namespace sparseact::routing {

enum class TieRule { strict, inclusive, exact };

/// "strict", "inclusive" or "exact"; throws std::invalid_argument naming the choices otherwise.
TieRule parse_tie_rule(const std::string& name);
const char* to_string(TieRule rule) noexcept;

/// k = max(1, round(p_k · N)), halves away from zero. Throws std::invalid_argument unless 0 < p_k ≤ 1 and N ≥ 1.
int active_units(double p_k, int N);

/// C_k(v) as a 0/1 vector. Throws std::invalid_argument for k < 1 or a NaN in v; k ≥ N keeps every unit.
Eigen::VectorXd kwta(const Eigen::VectorXd& v, int k, TieRule rule = TieRule::strict);

/// C_k of every column of V (N × M: one routing vector per input), as an N × M 0/1 matrix.
Eigen::MatrixXd kwta_columns(const Eigen::MatrixXd& V, int k, TieRule rule = TieRule::strict);

}  // namespace sparseact::routing
