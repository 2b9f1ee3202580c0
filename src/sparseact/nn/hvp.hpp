#pragma once
// Exact Hessian-vector products H_θ v of the batch loss (paper 001 §3.1: H_θ = [∂²L/∂θ_i∂θ_j]) by
// Pearlmutter's R-operator, R{·} := d/dr (·)(θ + r v)|_{r=0}: a forward R-pass that propagates
// R{h}, R{x̂}, R{P}, R{A}, R{F} alongside the forward pass, then the backward pass of backprop.hpp
// differentiated once more (R{δ·}), whose parameter gradients R{∂L/∂θ} = H v.
//
// Forward R-pass (per block; r = (σ² + ε)^{-1/2}, means over the d features of each column):
//   R{x̂} = r (R{h} − mean R{h} − x̂ t),  t = mean(x̂ ⊙ R{h}),   R{r} = −r² t
//   R{u} = γ ⊙ R{x̂} + v_γ ⊙ x̂ + v_β,   R{u + d} = R{u} + v_d
//   R{P} = v_K (u + d) + K R{u + d} + v_{b_K},   R{A} = σ'(P) ⊙ R{P}
//   R{h^l} = [R{h^{l-1}}] + v_V A + V R{A} + v_{b_V},   R{F} = v_{W_out} h^L + W_out R{h^L} + v_{b_out}
// Backward R-pass:
//   R{δF} = (∂²L/∂F²) R{F}  (loss.hpp)
//   R{g_V} = R{δz} Aᵀ + δz R{A}ᵀ,  R{δA} = v_Vᵀ δz + Vᵀ R{δz}
//   R{δP} = R{δA} ⊙ σ'(P) + δA ⊙ σ''(P) ⊙ R{P}            (the activation's second derivative)
//   R{g_K} = R{δP}(u + d)ᵀ + δP R{u + d}ᵀ,  R{δu} = v_Kᵀ δP + Kᵀ R{δP},  R{g_d} = Σ_s R{δu}
//   LN: R{g_β} = Σ_s R{δu},  R{g_γ} = Σ_s (R{δu} ⊙ x̂ + δu ⊙ R{x̂}),  R{δx̂} = γ ⊙ R{δu} + v_γ ⊙ δu,
//       with q = δx̂ − m₁ − x̂ m₂ (m₁ = mean δx̂, m₂ = mean(δx̂ ⊙ x̂)) and δh = r q:
//       R{δh} = r [ (R{r}/r) q + R{δx̂} − R{m₁} − R{x̂} m₂ − x̂ R{m₂} ]   (LayerNorm's second order)
// σ'' is taken piecewise (activation.hpp); at kinks of σ' the Hessian is that of the active pieces.
//
// A block of probes v¹ … v^P is one R-pass over matrices of P·B columns, probe p in columns
// [pB, (p+1)B): every R-quantity is linear in v, the forward and backward quantities of θ are shared,
// so the products with θ's tensors (K R{u + d}, V R{A}, Vᵀ R{δz}, Kᵀ R{δP}, W_out R{h^L}, W_outᵀ R{δF})
// are one GEMM of width P·B each (when one probe's share is ≥ 4·10⁶ multiply–adds, hvp.cpp); the
// products with v's tensors (v_K (u + d), v_Vᵀ δz, …) and the parameter gradients R{g} (sums over
// the batch) stay one GEMM per probe. Every GEMM goes to cblas_dgemm (never Eigen's small-product
// or gemv paths, which depend on the width) and every sum over features or samples is a plain loop
// in a fixed order, so probe p's numbers are the same for any block size and thread count: a
// column of a blocked dgemm's product depends on its own column of the right factor only (OpenBLAS
// splits k by k, never by n; products small enough for its small-matrix kernels are never
// widened), and a per-probe GEMM sees the same shapes whatever the block. One limit, OpenBLAS's own
// (backprop.hpp's gradient has it too): its serial and threaded drivers cut some depths k between
// GEMM_Q and 2·GEMM_Q (e.g. 400) into different k-blocks, and a block in parallel runs serial BLAS
// while a single product uses the pool, so there the numbers agree to rounding (≤ 1e-12 relative,
// tests/test_nn_hvp_block.cpp) rather than bit for bit.
//
// Quadratic forms (quadratic_forms_block; Hutchinson needs zᵀHz per layer, not Hz): for a weight
// matrix K, ⟨v_K, R{g_K}⟩ = Σ R{δP} ⊙ (v_K (u + d)) + Σ R{u + d} ⊙ (v_Kᵀ δP), and v_K (u + d)
// (forward R-pass) and v_Kᵀ δP (backward R-pass) are computed anyway; likewise V, W_out
// (Σ R{δF} ⊙ v_{W_out} h^L + Σ R{h^L} ⊙ v_{W_out}ᵀ δF) and W_in (Σ R{δh⁰} ⊙ v_{W_in} x), and each
// vector parameter is ⟨v_i, R{g_i}⟩ with R{g_i} its row sum as above. So the pass keeps the
// per-probe products with v aside and skips every parameter-gradient GEMM. The R-quantities are
// the same numbers as perform_op's; each sum is a fixed-order loop over one probe's columns, so
// the same block-size and thread-count rules hold, and each value equals z_lᵀ(Hz)_l to rounding.
#include <memory>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/ops/segments.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/mlp.hpp>

namespace sparseact::nn {

/// H_θ as an operator in Spectra's MatOp sense (rows(), cols(), perform_op; core/ops/apply.hpp): the
/// forward and backward passes at θ are done once, each product costs one R-forward and one
/// R-backward pass. Its segments() are the network's layers, so core/estimators reduce per layer.
/// Keeps pointers to `net` and `batch`, which must outlive it; θ is copied. perform_op is const and
/// thread-safe (products may run in parallel): each call borrows a scratch workspace from the
/// operator's pool (one per concurrent caller, grown to the widest block seen, never freed before
/// the operator), so no product allocates its R-quantities.
class HessianOperator {
 public:
  HessianOperator(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind);

  Eigen::Index rows() const { return net_->num_params; }
  Eigen::Index cols() const { return net_->num_params; }
  void perform_op(const double* x_in, double* y_out) const;
  /// Y = H X for ncols column-major columns, one stacked R-pass per kStackColumns columns of P·B.
  /// With more than one pass, OpenMP's team (outside a parallel region) takes whole passes, with
  /// OpenBLAS serial for the call (restored after; on one thread too); one pass runs on BLAS's pool.
  /// The same ncols gives the same bits for any thread count, under any OpenBLAS kernel: the same
  /// GEMMs are issued with the same BLAS thread count. Another ncols stacks other GEMM shapes: its
  /// columns equal perform_op's to rounding (issue 26).
  void perform_op_block(const double* x_in, double* y_out, Eigen::Index ncols) const;
  /// q_out[j·L + l] = z_lᵀ (H z)_l for the ncols column-major columns z = Z[:, j] and the L =
  /// segments().size() layers l, without forming H z (the header comment): the stacked R-pass of
  /// perform_op_block less its parameter-gradient GEMMs, split over threads and passes alike, so
  /// column j's values are the same for any ncols and thread count (up to the OpenBLAS limit
  /// above) and equal the Hz path's per-segment dot products to rounding.
  void quadratic_forms_block(const double* z_in, Eigen::Index ncols, double* q_out) const;
  /// Stacked columns (probes × batch) per R-pass, at least one probe: bounds the workspace.
  static constexpr Eigen::Index kStackColumns = 4096;
  Eigen::VectorXd apply(const Eigen::VectorXd& v) const;
  /// The layers θ_l of the network as segments of θ (core/ops/segments.hpp's convention).
  std::vector<ops::Segment> segments() const { return layer_segments(*net_); }

  double loss() const { return loss_; }
  const Eigen::VectorXd& gradient() const { return grad_; }
  const ForwardCache& forward_cache() const { return fwd_; }

  struct Workspace;  // hvp.cpp: the R-quantities of one stacked pass
  struct Pool;       // hvp.cpp: idle workspaces, shared by copies of the operator

 private:
  /// Y = H X (y_out) or the per-layer quadratic forms (q_out, L per column; the other null) for `np`
  /// columns in one stacked pass over `ws`.
  void stacked_pass(const double* x_in, double* y_out, double* q_out, Eigen::Index np, Workspace& ws) const;
  /// Columns [first, last) in passes of at most kStackColumns stacked columns.
  void run_columns(const double* x_in, double* y_out, double* q_out, Eigen::Index first, Eigen::Index last) const;
  /// perform_op_block / quadratic_forms_block: the columns split over OpenMP's team.
  void run_block(const double* x_in, double* y_out, double* q_out, Eigen::Index ncols) const;

  const Mlp* net_;
  Eigen::VectorXd theta_;
  const Batch* batch_;
  LossKind kind_;
  ForwardCache fwd_;
  BackwardCache bwd_;
  Eigen::VectorXd grad_;
  double loss_ = 0.0;
  std::shared_ptr<Pool> pool_;
};

/// H_θ v for one vector.
Eigen::VectorXd hessian_vector_product(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch,
                                       LossKind kind, const Eigen::VectorXd& v);

/// The full Hessian, column i = H e_i by exact HVPs (columns in parallel; same numbers for any
/// thread count). For tiny nets: num_params² doubles.
Eigen::MatrixXd hessian(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind);

/// The Hessian by central finite differences of exact gradients, column i =
/// (∇L(θ + h e_i) − ∇L(θ − h e_i))/(2h); not symmetrised. An independent check of `hessian`.
Eigen::MatrixXd hessian_finite_difference(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch,
                                          LossKind kind, double h = 1e-5);

}  // namespace sparseact::nn
