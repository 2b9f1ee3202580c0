#pragma once
// The transformer pieces paper 004 (§3–4) trains and proves things about, on one sequence at a time: tokens as
// the columns of X ∈ R^{d×T}. Every forward has an exact backward (checked against finite differences).
//
// Multi-head causal self-attention, H heads of width d_h = d/H (θ: W_q, W_k, W_v, W_o, each d×d, column-major):
//   Q = W_q X, K = W_k X, V = W_v X;  per head h (rows h·d_h … (h+1)·d_h − 1):
//   S_h = Q_hᵀ K_h / √d_h,  S_h[i, j] = −∞ for j > i (causal),  P_h = softmax over j of S_h[i, ·]
//   O_h = V_h P_hᵀ (O_h[:, i] = Σ_j P_h[i, j] V_h[:, j]),  Y = W_o O
// backward, per head:  dO = W_oᵀ dY,  dV_h = dO_h P_h,  dP_h = dO_hᵀ V_h,
//   dS_h = P_h ⊙ (dP_h − rowsum(dP_h ⊙ P_h)),  dQ_h = K_h dS_hᵀ/√d_h,  dK_h = Q_h dS_h/√d_h.
//
// RMSNorm (Zhang & Sennrich, 2019), per token: y = g ⊙ x / r, r = √(mean(x²) + ε):
//   dx = (g ⊙ dy)/r − x · ⟨g ⊙ dy, x⟩/(d r³),  dg = Σ_tokens dy ⊙ x/r.
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

struct AttentionShape {
  int d = 1;      ///< model width
  int heads = 1;  ///< H, dividing d
  Eigen::Index parameter_count() const { return 4 * Eigen::Index(d) * d; }
};

struct AttentionCache {
  Eigen::Index T = 0;              ///< tokens per sequence
  Eigen::MatrixXd X, Q, K, V, O;   ///< d × T·B
  std::vector<Eigen::MatrixXd> P;  ///< per sequence b and head h at b·H + h, T × T (row i: query i's weights)
};

/// Y = attention(X) with θ the layer's 4d² parameters (W_q, W_k, W_v, W_o), on B sequences of T tokens stored one
/// after another in the columns of X (T = 0: one sequence, T = X.cols()). Tokens attend within their own sequence
/// only. The projections W_q X, W_k X, W_v X and W_o O are one product each over all T·B tokens; the T × T scores
/// run per sequence, in parallel (each sequence's numbers do not depend on the thread count). Throws
/// std::invalid_argument when H ∤ d or T ∤ X.cols().
Eigen::MatrixXd attention_forward(const AttentionShape& s, const double* theta, const Eigen::MatrixXd& X, AttentionCache& cache,
                                  Eigen::Index T = 0);
/// Adds ∂L/∂θ to grad (4d² entries) and returns ∂L/∂X, given dY = ∂L/∂Y (d × T·B).
Eigen::MatrixXd attention_backward(const AttentionShape& s, const double* theta, const AttentionCache& cache, const Eigen::MatrixXd& dY,
                                   double* grad);

struct RmsNormCache {
  Eigen::MatrixXd X;
  Eigen::RowVectorXd r;  ///< per token
};
inline constexpr double kRmsEps = 1e-6;
/// y = g ⊙ x / r per column (g: d entries).
Eigen::MatrixXd rmsnorm_forward(const double* g, const Eigen::MatrixXd& X, RmsNormCache& cache);
/// Adds ∂L/∂g to grad (d entries) and returns ∂L/∂X.
Eigen::MatrixXd rmsnorm_backward(const double* g, const RmsNormCache& cache, const Eigen::MatrixXd& dY, double* grad);

}  // namespace sparseact::nn
