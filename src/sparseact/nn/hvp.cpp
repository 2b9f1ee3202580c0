#include <sparseact/nn/hvp.hpp>

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <sparseact/core/blas_threads.hpp>

namespace sparseact::nn {

namespace {

using Index = Eigen::Index;

/// C (m×n, leading dimension ldc) = op(A) op(B) + β C, column-major, always by cblas_dgemm: Eigen
/// would take its own coefficient-based product or gemv for small or one-column shapes, whose order
/// of summation differs from dgemm's, and the choice would depend on the width of the block.
void gemm(bool ta, bool tb, Index m, Index n, Index k, const double* A, Index lda, const double* B, Index ldb, double beta,
          double* C, Index ldc) {
  cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0, A, static_cast<int>(lda), B, static_cast<int>(ldb), beta, C,
              static_cast<int>(ldc));
}

/// Products below this many multiply–adds (m·B·k for one probe) are not stacked: OpenBLAS 0.3.x
/// sends dgemm calls with m·n·k ≤ 10⁶ to its "small matrix" kernels (SkylakeX/Cooperlake) and
/// larger ones to its blocked kernels, which sum in another order, so a product is widened only
/// when one probe's share alone is well inside the blocked kernels' range (4× the switch), where a
/// column's numbers do not depend on n: the blocked path splits k by k alone, and m and n by
/// thread count, never k.
constexpr double kStackMinWork = 4e6;

/// C = op(θ's A) R + β C for the np probes' column blocks of R and C (each k × B and m × B, at
/// ldb·B and ldc·B apart): one dgemm of width np·B when the product is large enough
/// (kStackMinWork), else one per probe — the same numbers per column either way.
void gemm_stacked(bool ta, Index m, Index k, const double* A, Index lda, const double* R, Index ldb, double beta,
                  double* C, Index ldc, Index np, Index B) {
  if (double(m) * double(B) * double(k) >= kStackMinWork) {
    gemm(ta, false, m, np * B, k, A, lda, R, ldb, beta, C, ldc);
    return;
  }
  for (Index p = 0; p < np; ++p) gemm(ta, false, m, B, k, A, lda, R + p * B * ldb, ldb, beta, C + p * B * ldc, ldc);
}

/// out_i = Σ_s M(i, s) over the B columns of the rows×B matrix at M (leading dimension rows),
/// s in order: a fixed summation order whatever the block (Eigen's rowwise().sum() groups by packets).
void row_sums(const double* M, Index rows, Index B, double* out) {
  std::fill(out, out + rows, 0.0);
  for (Index s = 0; s < B; ++s) {
    const double* c = M + s * rows;
    for (Index i = 0; i < rows; ++i) out[i] += c[i];
  }
}

/// Σ_i a_i b_i over n entries in a fixed order whatever the block (eight interleaved partial sums,
/// combined pairwise): the Frobenius products ⟨R{δ·}, v ·⟩ of quadratic_forms_block.
double dot(const double* a, const double* b, Index n) {
  double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  Index i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += a[i + k] * b[i + k];
  double tail = 0.0;
  for (; i < n; ++i) tail += a[i] * b[i];
  return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) + tail;
}

/// col += v (rows entries) for each of the B columns.
void add_to_columns(double* M, Index rows, Index B, const double* v) {
  for (Index s = 0; s < B; ++s) {
    double* c = M + s * rows;
    for (Index i = 0; i < rows; ++i) c[i] += v[i];
  }
}

}  // namespace

/// The R-quantities of one stacked pass, each rows × (probes·B) (column-major, leading dimension
/// rows; a pass may use fewer columns than allocated).
struct HessianOperator::Workspace {
  struct Layer {
    Eigen::MatrixXd Rxhat, Rk, RP, RA;  // R{x̂}, R{u + d}, R{P} (then R{δP}), R{A}
    Eigen::VectorXd Rr_r;               // R{r}/r per column
    Eigen::MatrixXd SK, SV;             // quadratic forms only: v_K (u + d), v_V A
  };
  Index capacity = 0, quad_capacity = 0;
  std::vector<Layer> layers;
  Eigen::MatrixXd Rh, Rz, RF, RdF, Rdh, RdA, Rdu, Rdh_in;
  Eigen::MatrixXd Sin, Sout;  // quadratic forms only: v_{W_in} x, v_{W_out} h^L
  Eigen::MatrixXd RF1;  // one probe's R{F}, the argument of loss_hessian_product
  Eigen::VectorXd acc;  // a row sum

  /// Room for `cols` stacked columns; `quad`: also the products with v kept for the quadratic forms.
  void reserve(const Mlp& net, Index B, Index cols, bool quad) {
    const MlpConfig& cfg = net.config;
    const Index d = cfg.d;
    if (cols > capacity) reserve_pass(net, B, cols);
    if (quad && cols > quad_capacity) {
      for (std::size_t l = 0; l < cfg.blocks.size(); ++l) {
        layers[l].SK.resize(cfg.blocks[l].n, cols);
        if (cfg.blocks[l].value_layer) layers[l].SV.resize(d, cols);
      }
      Sin.resize(d, cols);
      Sout.resize(cfg.d_out, cols);
      quad_capacity = cols;
    }
  }

  void reserve_pass(const Mlp& net, Index B, Index cols) {
    const MlpConfig& cfg = net.config;
    const Index d = cfg.d;
    layers.resize(cfg.blocks.size());
    Index widest = std::max({d, cfg.d_in, cfg.d_out});
    for (std::size_t l = 0; l < cfg.blocks.size(); ++l) {
      const Index n = cfg.blocks[l].n;
      widest = std::max(widest, n);
      if (cfg.blocks[l].layernorm) {
        layers[l].Rxhat.resize(d, cols);
        layers[l].Rr_r.resize(cols);
      }
      layers[l].Rk.resize(d, cols);
      layers[l].RP.resize(n, cols);
      layers[l].RA.resize(n, cols);
      RdA.resize(std::max(RdA.rows(), n), cols);
    }
    for (Eigen::MatrixXd* m : {&Rh, &Rz, &Rdh, &Rdu, &Rdh_in}) m->resize(d, cols);
    RF.resize(cfg.d_out, cols);
    RdF.resize(cfg.d_out, cols);
    RF1.resize(cfg.d_out, B);
    acc.resize(widest);
    capacity = cols;
  }
};

struct HessianOperator::Pool {
  std::mutex mutex;
  std::vector<std::unique_ptr<Workspace>> idle;

  std::unique_ptr<Workspace> acquire() {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!idle.empty()) {
        std::unique_ptr<Workspace> w = std::move(idle.back());
        idle.pop_back();
        return w;
      }
    }
    return std::make_unique<Workspace>();
  }
  void release(std::unique_ptr<Workspace> w) {
    const std::lock_guard<std::mutex> lock(mutex);
    idle.push_back(std::move(w));
  }
};

HessianOperator::HessianOperator(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind)
    : net_(&net), theta_(theta), batch_(&batch), kind_(kind), pool_(std::make_shared<Pool>()) {
  forward(net, theta_, batch.x, fwd_, /*second_order=*/true);
  loss_ = backward(net, theta_, fwd_, batch, kind, grad_, &bwd_);
}

Eigen::VectorXd HessianOperator::apply(const Eigen::VectorXd& v) const {
  if (v.size() != net_->num_params) throw std::invalid_argument("nn: HVP vector has the wrong size");
  Eigen::VectorXd out(v.size());
  perform_op(v.data(), out.data());
  return out;
}

void HessianOperator::perform_op(const double* x_in, double* y_out) const { run_columns(x_in, y_out, nullptr, 0, 1); }

void HessianOperator::run_columns(const double* x_in, double* y_out, double* q_out, Index first, Index last) const {
  if (last <= first) return;
  const Index Np = net_->num_params, B = fwd_.x.cols(), L = static_cast<Index>(net_->layers.size());
  const Index per_pass = std::max<Index>(1, kStackColumns / std::max<Index>(1, B));
  std::unique_ptr<Workspace> ws = pool_->acquire();
  ws->reserve(*net_, B, std::min(per_pass, last - first) * B, q_out != nullptr);
  for (Index j = first; j < last; j += per_pass) {
    const Index np = std::min(per_pass, last - j);
    stacked_pass(x_in + j * Np, y_out ? y_out + j * Np : nullptr, q_out ? q_out + j * L : nullptr, np, *ws);
  }
  pool_->release(std::move(ws));
}

void HessianOperator::perform_op_block(const double* x_in, double* y_out, Index ncols) const {
  run_block(x_in, y_out, nullptr, ncols);
}

void HessianOperator::quadratic_forms_block(const double* z_in, Index ncols, double* q_out) const {
  run_block(z_in, nullptr, q_out, ncols);
}

void HessianOperator::run_block(const double* x_in, double* y_out, double* q_out, Index ncols) const {
  if (ncols <= 0) return;
  // The same bits for any thread count, under any OpenBLAS kernel (issue 26), need the same GEMMs
  // with the same BLAS thread count whatever the team: teams take whole stacked passes, the ones a
  // single thread makes (columns [k·per_pass, (k+1)·per_pass)), and BLAS is serial whenever there is
  // more than one pass, on one thread too. (Splitting the columns evenly stacked 3 probes as 1 + 2
  // on two threads against one pass of 3 on one; and OpenBLAS's threaded and serial drivers round
  // some shapes differently. Prescott's kernels showed both.) One pass keeps BLAS's own pool.
  const Index per_pass = std::max<Index>(1, kStackColumns / std::max<Index>(1, fwd_.x.cols()));
  const Index passes = (ncols + per_pass - 1) / per_pass;
  if (passes <= 1) {
    run_columns(x_in, y_out, q_out, 0, ncols);
    return;
  }
  const int teams = omp_in_parallel() ? 1 : static_cast<int>(std::min<Index>(omp_get_max_threads(), passes));
  std::optional<ScopedBlasThreads> serial;
  if (blas_threads() > 1) serial.emplace(1);
#pragma omp parallel num_threads(teams)
  {
    const Index t = omp_get_thread_num(), T = omp_get_num_threads();
    run_columns(x_in, y_out, q_out, std::min(ncols, passes * t / T * per_pass), std::min(ncols, passes * (t + 1) / T * per_pass));
  }
}

void HessianOperator::stacked_pass(const double* x_in, double* y_out, double* q_out, Index np, Workspace& ws) const {
  const Mlp& net = *net_;
  const MlpConfig& cfg = net.config;
  const Index Np = net.num_params, B = fwd_.x.cols(), C = np * B, d = cfg.d, din = cfg.d_in, dout = cfg.d_out;
  const ForwardCache& f = fwd_;
  const BackwardCache& b = bwd_;
  auto W = [&](int i) { return theta_.data() + net.params[static_cast<std::size_t>(i)].offset; };        // θ's tensor
  auto Vt = [&](int i, Index p) { return x_in + p * Np + net.params[static_cast<std::size_t>(i)].offset; };  // probe p's
  auto H = [&](int i, Index p) { return y_out + p * Np + net.params[static_cast<std::size_t>(i)].offset; };  // (H v^p)'s
  auto col = [&](Eigen::MatrixXd& M, Index p) { return M.data() + p * B * M.rows(); };  // probe p's first column
  // Quadratic forms (q_out, no y_out): v_lᵀ (H v)_l accumulates in Q(p, l), each parameter's share
  // ⟨v_i, R{g_i}⟩ taken from quantities the R-pass has anyway (hvp.hpp), in a fixed order.
  const bool quad = q_out != nullptr;
  const Index L = static_cast<Index>(net.layers.size());
  auto Q = [&](int i, Index p) -> double& { return q_out[p * L + net.params[static_cast<std::size_t>(i)].layer]; };
  ws.reserve(net, B, C, quad);
  if (quad) std::fill(q_out, q_out + np * L, 0.0);

  // ---- forward R-pass
  for (Index p = 0; p < np; ++p) {  // R{h^0} = v_{W_in} x + v_{b_in}
    if (quad) {  // keep v_{W_in} x
      gemm(false, false, d, B, din, Vt(net.W_in, p), d, f.x.data(), din, 0.0, col(ws.Sin, p), d);
      std::copy(col(ws.Sin, p), col(ws.Sin, p) + d * B, col(ws.Rh, p));
    } else {
      gemm(false, false, d, B, din, Vt(net.W_in, p), d, f.x.data(), din, 0.0, col(ws.Rh, p), d);
    }
    add_to_columns(col(ws.Rh, p), d, B, Vt(net.b_in, p));
  }
  for (std::size_t l = 0; l < cfg.blocks.size(); ++l) {
    const BlockConfig& bc = cfg.blocks[l];
    const BlockParams& bp = net.blocks[l];
    const BlockCache& c = f.blocks[l];
    Workspace::Layer& r = ws.layers[l];
    const Index n = bc.n;
    for (Index p = 0; p < np; ++p) {
      for (Index s = 0; s < B; ++s) {
        const Index j = p * B + s;
        const double* Rh = ws.Rh.data() + j * d;
        double* Rk = r.Rk.data() + j * d;
        if (bc.layernorm) {
          const double* xh = c.xhat.data() + s * d;
          double* Rx = r.Rxhat.data() + j * d;
          double sum = 0.0, dot = 0.0;
          for (Index i = 0; i < d; ++i) sum += Rh[i];
          for (Index i = 0; i < d; ++i) dot += xh[i] * Rh[i];
          const double mean = sum / double(d), t = dot / double(d), rs = c.rstd(s);  // t = mean(x̂ ⊙ R{h})
          for (Index i = 0; i < d; ++i) Rx[i] = ((Rh[i] - mean) - xh[i] * t) * rs;
          r.Rr_r(j) = -(rs * t);  // R{r}/r = −r t
          if (bp.gamma >= 0) {
            const double *g = W(bp.gamma), *vg = Vt(bp.gamma, p);
            for (Index i = 0; i < d; ++i) Rk[i] = Rx[i] * g[i] + xh[i] * vg[i];
          } else {
            std::copy(Rx, Rx + d, Rk);
          }
          if (bp.beta >= 0) {
            const double* vb = Vt(bp.beta, p);
            for (Index i = 0; i < d; ++i) Rk[i] += vb[i];
          }
        } else {
          std::copy(Rh, Rh + d, Rk);
        }
        if (bp.d >= 0) {
          const double* vd = Vt(bp.d, p);
          for (Index i = 0; i < d; ++i) Rk[i] += vd[i];
        }
      }
      // R{P} = v_K (u + d) + K R{u + d} + v_{b_K}: the first term per probe, the second stacked below
      if (quad) {  // keep v_K (u + d)
        gemm(false, false, n, B, d, Vt(bp.K, p), n, c.k_in.data(), d, 0.0, col(r.SK, p), n);
        std::copy(col(r.SK, p), col(r.SK, p) + n * B, col(r.RP, p));
      } else {
        gemm(false, false, n, B, d, Vt(bp.K, p), n, c.k_in.data(), d, 0.0, col(r.RP, p), n);
      }
    }
    gemm_stacked(false, n, d, W(bp.K), n, r.Rk.data(), d, 1.0, r.RP.data(), n, np, B);
    for (Index p = 0; p < np; ++p) add_to_columns(col(r.RP, p), n, B, Vt(bp.b_K, p));
    for (Index j = 0; j < C; ++j) {  // R{A} = σ'(P) ⊙ R{P}
      const double* d1 = c.d1.data() + (j % B) * n;
      const double* RP = r.RP.data() + j * n;
      double* RA = r.RA.data() + j * n;
      for (Index i = 0; i < n; ++i) RA[i] = d1[i] * RP[i];
    }
    const double* Rz = r.RA.data();  // without a value layer the block's output is R{A} (n = d)
    if (bp.V >= 0) {  // R{z} = v_V A + V R{A} + v_{b_V}
      for (Index p = 0; p < np; ++p) {
        if (quad) {  // keep v_V A
          gemm(false, false, d, B, n, Vt(bp.V, p), d, c.act.data(), n, 0.0, col(r.SV, p), d);
          std::copy(col(r.SV, p), col(r.SV, p) + d * B, col(ws.Rz, p));
        } else {
          gemm(false, false, d, B, n, Vt(bp.V, p), d, c.act.data(), n, 0.0, col(ws.Rz, p), d);
        }
      }
      gemm_stacked(false, d, n, W(bp.V), d, r.RA.data(), n, 1.0, ws.Rz.data(), d, np, B);
      for (Index p = 0; p < np; ++p) add_to_columns(col(ws.Rz, p), d, B, Vt(bp.b_V, p));
      Rz = ws.Rz.data();
    }
    double* Rh = ws.Rh.data();
    if (bc.residual)
      for (Index i = 0; i < d * C; ++i) Rh[i] += Rz[i];
    else
      std::copy(Rz, Rz + d * C, Rh);
  }
  // R{F} = v_{W_out} h^L + W_out R{h^L} + v_{b_out}
  for (Index p = 0; p < np; ++p) {
    if (quad) {  // keep v_{W_out} h^L
      gemm(false, false, dout, B, d, Vt(net.W_out, p), dout, f.h_last.data(), d, 0.0, col(ws.Sout, p), dout);
      std::copy(col(ws.Sout, p), col(ws.Sout, p) + dout * B, col(ws.RF, p));
    } else {
      gemm(false, false, dout, B, d, Vt(net.W_out, p), dout, f.h_last.data(), d, 0.0, col(ws.RF, p), dout);
    }
  }
  gemm_stacked(false, dout, d, W(net.W_out), dout, ws.Rh.data(), d, 1.0, ws.RF.data(), dout, np, B);
  for (Index p = 0; p < np; ++p) add_to_columns(col(ws.RF, p), dout, B, Vt(net.b_out, p));

  // ---- backward R-pass
  for (Index p = 0; p < np; ++p) {
    std::copy(col(ws.RF, p), col(ws.RF, p) + dout * B, ws.RF1.data());
    const Eigen::MatrixXd RdF = loss_hessian_product(kind_, f.logits, ws.RF1, *batch_);
    std::copy(RdF.data(), RdF.data() + dout * B, col(ws.RdF, p));
    if (quad) {  // ⟨v_{W_out}, R{δF} h^Lᵀ⟩ + ⟨v_{b_out}, Σ_s R{δF}⟩; ⟨v_{W_out}, δF R{h^L}ᵀ⟩ below
      double& q = Q(net.W_out, p);
      q += dot(RdF.data(), col(ws.Sout, p), dout * B);
      row_sums(RdF.data(), dout, B, ws.acc.data());
      q += dot(ws.acc.data(), Vt(net.b_out, p), dout);
    } else {
      gemm(false, true, dout, d, B, RdF.data(), dout, f.h_last.data(), d, 0.0, H(net.W_out, p), dout);
      gemm(false, true, dout, d, B, b.dlogits.data(), dout, col(ws.Rh, p), d, 1.0, H(net.W_out, p), dout);
      row_sums(RdF.data(), dout, B, H(net.b_out, p));
    }
    gemm(true, false, d, B, dout, Vt(net.W_out, p), dout, b.dlogits.data(), dout, 0.0, col(ws.Rdh, p), d);
    if (quad) Q(net.W_out, p) += dot(col(ws.Rh, p), col(ws.Rdh, p), d * B);  // Σ R{h^L} ⊙ v_{W_out}ᵀ δF
  }
  gemm_stacked(true, d, dout, W(net.W_out), dout, ws.RdF.data(), dout, 1.0, ws.Rdh.data(), d, np, B);

  for (std::size_t li = cfg.blocks.size(); li-- > 0;) {
    const BlockConfig& bc = cfg.blocks[li];
    const BlockParams& bp = net.blocks[li];
    const BlockCache& c = f.blocks[li];
    const BlockSignals& sg = b.blocks[li];
    Workspace::Layer& r = ws.layers[li];
    const Index n = bc.n;
    Eigen::MatrixXd& Rdz = ws.Rdh;
    const double* RdA = Rdz.data();  // without a value layer δA = δz
    if (bp.V >= 0) {
      for (Index p = 0; p < np; ++p) {
        if (quad) {  // ⟨v_V, R{δz} Aᵀ⟩ + ⟨v_{b_V}, Σ_s R{δz}⟩; ⟨v_V, δz R{A}ᵀ⟩ below
          double& q = Q(bp.V, p);
          q += dot(col(Rdz, p), col(r.SV, p), d * B);
          row_sums(col(Rdz, p), d, B, ws.acc.data());
          q += dot(ws.acc.data(), Vt(bp.b_V, p), d);
        } else {
          gemm(false, true, d, n, B, col(Rdz, p), d, c.act.data(), n, 0.0, H(bp.V, p), d);
          gemm(false, true, d, n, B, sg.dz.data(), d, col(r.RA, p), n, 1.0, H(bp.V, p), d);
          row_sums(col(Rdz, p), d, B, H(bp.b_V, p));
        }
        gemm(true, false, n, B, d, Vt(bp.V, p), d, sg.dz.data(), d, 0.0, ws.RdA.data() + p * B * n, n);
        if (quad) Q(bp.V, p) += dot(col(r.RA, p), ws.RdA.data() + p * B * n, n * B);  // Σ R{A} ⊙ v_Vᵀ δz
      }
      gemm_stacked(true, n, d, W(bp.V), d, Rdz.data(), d, 1.0, ws.RdA.data(), n, np, B);
      RdA = ws.RdA.data();
    }
    for (Index j = 0; j < C; ++j) {  // R{δP} = R{δA} ⊙ σ'(P) + δA ⊙ σ''(P) ⊙ R{P}, over R{P}
      const Index s = j % B;
      const double *d1 = c.d1.data() + s * n, *d2 = c.d2.data() + s * n, *dA = sg.dA.data() + s * n, *Ra = RdA + j * n;
      double* RP = r.RP.data() + j * n;
      for (Index i = 0; i < n; ++i) RP[i] = Ra[i] * d1[i] + dA[i] * d2[i] * RP[i];
    }
    const Eigen::MatrixXd& RdP = r.RP;
    for (Index p = 0; p < np; ++p) {
      if (quad) {  // ⟨v_K, R{δP}(u + d)ᵀ⟩ + ⟨v_{b_K}, Σ_s R{δP}⟩; ⟨v_K, δP R{u + d}ᵀ⟩ below
        double& q = Q(bp.K, p);
        q += dot(RdP.data() + p * B * n, col(r.SK, p), n * B);
        row_sums(RdP.data() + p * B * n, n, B, ws.acc.data());
        q += dot(ws.acc.data(), Vt(bp.b_K, p), n);
      } else {
        gemm(false, true, n, d, B, RdP.data() + p * B * n, n, c.k_in.data(), d, 0.0, H(bp.K, p), n);
        gemm(false, true, n, d, B, sg.dP.data(), n, col(r.Rk, p), d, 1.0, H(bp.K, p), n);
        row_sums(RdP.data() + p * B * n, n, B, H(bp.b_K, p));
      }
      gemm(true, false, d, B, n, Vt(bp.K, p), n, sg.dP.data(), n, 0.0, col(ws.Rdu, p), d);
      if (quad) Q(bp.K, p) += dot(col(r.Rk, p), col(ws.Rdu, p), d * B);  // Σ R{u + d} ⊙ v_Kᵀ δP
    }
    gemm_stacked(true, d, n, W(bp.K), n, RdP.data(), n, 1.0, ws.Rdu.data(), d, np, B);
    for (Index p = 0; p < np; ++p) {
      const bool beta = bc.layernorm && bp.beta >= 0;
      if (quad) {  // R{g_d} = R{g_β} = Σ_s R{δu}
        if (bp.d < 0 && !beta) continue;
        row_sums(col(ws.Rdu, p), d, B, ws.acc.data());
        double& q = Q(bp.K, p);
        if (bp.d >= 0) q += dot(ws.acc.data(), Vt(bp.d, p), d);
        if (beta) q += dot(ws.acc.data(), Vt(bp.beta, p), d);
        continue;
      }
      if (bp.d >= 0) row_sums(col(ws.Rdu, p), d, B, H(bp.d, p));
      if (beta) row_sums(col(ws.Rdu, p), d, B, H(bp.beta, p));
    }
    const double* Rdh_in = ws.Rdu.data();
    if (bc.layernorm) {
      const double* g = bp.gamma >= 0 ? W(bp.gamma) : nullptr;
      for (Index p = 0; p < np; ++p) {
        const double* vg = bp.gamma >= 0 ? Vt(bp.gamma, p) : nullptr;
        double* acc = ws.acc.data();
        std::fill(acc, acc + d, 0.0);
        for (Index s = 0; s < B; ++s) {
          const Index j = p * B + s;
          const double *du = sg.du.data() + s * d, *xh = c.xhat.data() + s * d;
          const double *Rx = r.Rxhat.data() + j * d, *Rdu = ws.Rdu.data() + j * d;
          double* out = ws.Rdh_in.data() + j * d;
          if (g) {  // R{g_γ} += R{δu} ⊙ x̂ + δu ⊙ R{x̂}
            for (Index i = 0; i < d; ++i) acc[i] += Rdu[i] * xh[i] + du[i] * Rx[i];
          }
          // δx̂ = γ ⊙ δu, R{δx̂} = γ ⊙ R{δu} + v_γ ⊙ δu (kept in `out` until the means are known)
          double m1 = 0.0, m2 = 0.0, Rm1 = 0.0, Rm2 = 0.0;
          for (Index i = 0; i < d; ++i) {
            const double dx = g ? du[i] * g[i] : du[i];
            const double Rdx = g ? Rdu[i] * g[i] + du[i] * vg[i] : Rdu[i];
            out[i] = Rdx;
            m1 += dx;
            m2 += dx * xh[i];
            Rm1 += Rdx;
            Rm2 += Rdx * xh[i] + dx * Rx[i];
          }
          m1 /= double(d), m2 /= double(d), Rm1 /= double(d), Rm2 /= double(d);
          const double rs = c.rstd(s), Rr_r = r.Rr_r(j);
          for (Index i = 0; i < d; ++i) {  // R{δh} = r [ (R{r}/r) q + R{δx̂} − R{m₁} − R{x̂} m₂ − x̂ R{m₂} ]
            const double dx = g ? du[i] * g[i] : du[i];
            const double q = (dx - m1) - xh[i] * m2;
            out[i] = ((((out[i] - Rm1) - Rx[i] * m2) - xh[i] * Rm2) + q * Rr_r) * rs;
          }
        }
        if (g && quad) Q(bp.gamma, p) += dot(acc, vg, d);
        if (g && !quad) std::copy(acc, acc + d, H(bp.gamma, p));
      }
      Rdh_in = ws.Rdh_in.data();
    }
    double* Rdh = ws.Rdh.data();
    if (bc.residual)
      for (Index i = 0; i < d * C; ++i) Rdh[i] += Rdh_in[i];
    else
      std::copy(Rdh_in, Rdh_in + d * C, Rdh);
  }
  for (Index p = 0; p < np; ++p) {
    if (quad) {  // ⟨v_{W_in}, R{δh⁰} xᵀ⟩ + ⟨v_{b_in}, Σ_s R{δh⁰}⟩
      double& q = Q(net.W_in, p);
      q += dot(col(ws.Rdh, p), col(ws.Sin, p), d * B);
      row_sums(col(ws.Rdh, p), d, B, ws.acc.data());
      q += dot(ws.acc.data(), Vt(net.b_in, p), d);
      continue;
    }
    gemm(false, true, d, din, B, col(ws.Rdh, p), d, f.x.data(), din, 0.0, H(net.W_in, p), d);
    row_sums(col(ws.Rdh, p), d, B, H(net.b_in, p));
  }
}

Eigen::VectorXd hessian_vector_product(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch,
                                       LossKind kind, const Eigen::VectorXd& v) {
  return HessianOperator(net, theta, batch, kind).apply(v);
}

Eigen::MatrixXd hessian(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch, LossKind kind) {
  const HessianOperator op(net, theta, batch, kind);
  const Eigen::Index P = net.num_params, chunk = 64;
  Eigen::MatrixXd Hm(P, P), E;
  for (Eigen::Index first = 0; first < P; first += chunk) {  // columns H e_i through the block product
    const Eigen::Index w = std::min(chunk, P - first);
    E = Eigen::MatrixXd::Zero(P, w);
    for (Eigen::Index j = 0; j < w; ++j) E(first + j, j) = 1.0;
    op.perform_op_block(E.data(), Hm.col(first).data(), w);
  }
  return Hm;
}

Eigen::MatrixXd hessian_finite_difference(const Mlp& net, const Eigen::VectorXd& theta, const Batch& batch,
                                          LossKind kind, double h) {
  const Eigen::Index P = net.num_params;
  Eigen::MatrixXd Hm(P, P);
#pragma omp parallel
  {
    Eigen::VectorXd t = theta, gp, gm;
#pragma omp for schedule(static)
    for (Eigen::Index i = 0; i < P; ++i) {
      t(i) = theta(i) + h;
      loss_and_gradient(net, t, batch, kind, gp);
      t(i) = theta(i) - h;
      loss_and_gradient(net, t, batch, kind, gm);
      t(i) = theta(i);
      Hm.col(i) = (gp - gm) / (2.0 * h);
    }
  }
  return Hm;
}

}  // namespace sparseact::nn
