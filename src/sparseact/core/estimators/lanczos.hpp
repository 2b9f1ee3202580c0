#pragma once
// The Lanczos process on a symmetric operator, and Spectra's restarted Lanczos for extreme eigenvalues.
//
// Lanczos tridiagonalisation (Golub & Van Loan, Matrix Computations, §10.1): from a unit vector v₁,
//     w = A v_j − α_j v_j − β_{j−1} v_{j−1},   α_j = v_jᵀ A v_j,   β_j = ‖w‖,   v_{j+1} = w / β_j,
// so that V_mᵀ A V_m = T_m, tridiagonal with diagonal α and off-diagonal β. In floating point the
// v_j lose orthogonality once Ritz values converge (Paige 1971) and T_m grows spurious copies of
// eigenvalues; we reorthogonalise w against every previous v_j, twice ("twice is enough": Giraud,
// Langou & Rozložník 2005), which costs O(n·m) memory and keeps V_m orthonormal to rounding. When
// β_j vanishes (≤ breakdown_tol · max(|α|, β) so far) the Krylov subspace is invariant: T_j's
// eigenvalues are eigenvalues of A, and the process stops there.
//
// The eigenpairs (θ_i, s_i) of T_m are the Ritz values and, with V_m, the Ritz vectors; the squared
// first components τ_i² = (s_i)₁² are the weights of the m-point Gauss quadrature for the spectral
// measure of A seen from v₁: v₁ᵀ f(A) v₁ ≈ Σ_i τ_i² f(θ_i), exact for polynomials of degree ≤ 2m − 1
// (Golub & Meurant 2010). Stochastic Lanczos quadrature (estimators/slq.hpp) averages these rules
// over random v₁.
//
// Several independent start vectors run in lockstep, their products in one block product
// (ops/apply.hpp): with an operator that computes each column on its own (nn::HessianOperator, a
// column-by-column operator), every column's numbers do not depend on how many run together.
//
// lanczos_eigenvalues wraps Spectra's SymEigsSolver (implicitly restarted Lanczos) for a few extreme
// eigenvalues of any operator, to a tolerance, without the O(n·m) basis of a long run.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Spectra/SymEigsSolver.h>

#include <sparseact/core/ops/apply.hpp>

namespace sparseact::estimators {

/// T_k from k Lanczos steps: diagonal α (k), off-diagonal β (k − 1).
struct Tridiagonal {
  Eigen::VectorXd alpha;
  Eigen::VectorXd beta;
  Eigen::MatrixXd basis;   ///< V_k (n×k, orthonormal columns) when LanczosOptions::keep_basis
  bool invariant = false;  ///< stopped early: the Krylov subspace is invariant under A
  Eigen::Index steps() const { return alpha.size(); }
};

struct LanczosOptions {
  Eigen::Index steps = 30;       ///< m, at most rows()
  bool keep_basis = false;       ///< return V_m (needed for Ritz vectors)
  double breakdown_tol = 1e-10;  ///< β_j ≤ breakdown_tol · max(|α_i|, β_i) means an invariant subspace
};

/// One Lanczos run with full reorthogonalisation per column of V0 (each column the start vector,
/// normalised here), all columns in lockstep through block products.
template <class Op>
std::vector<Tridiagonal> lanczos(const Op& op, const Eigen::MatrixXd& V0, const LanczosOptions& opt = {}) {
  const Eigen::Index n = op.rows();
  if (V0.rows() != n) throw std::invalid_argument("lanczos: start vectors must have rows() entries");
  if (opt.steps < 1) throw std::invalid_argument("lanczos: need at least one step");
  const Eigen::Index m = std::min(opt.steps, n);
  const Eigen::Index p = V0.cols();
  std::vector<Eigen::MatrixXd> V(static_cast<std::size_t>(p));
  std::vector<Tridiagonal> T(static_cast<std::size_t>(p));
  std::vector<double> scale(static_cast<std::size_t>(p), 0.0);
  std::vector<Eigen::Index> active;
  for (Eigen::Index c = 0; c < p; ++c) {
    const double norm = V0.col(c).norm();
    if (!(norm > 0) || !std::isfinite(norm)) throw std::invalid_argument("lanczos: a start vector is zero or not finite");
    auto& Vc = V[static_cast<std::size_t>(c)];
    Vc.resize(n, m);
    Vc.col(0) = V0.col(c) / norm;
    T[static_cast<std::size_t>(c)].alpha.resize(m);
    T[static_cast<std::size_t>(c)].beta.resize(m - 1);
    active.push_back(c);
  }
  Eigen::MatrixXd X, W;
  std::vector<Eigen::Index> still;
  for (Eigen::Index j = 0; j < m && !active.empty(); ++j) {
    X.resize(n, static_cast<Eigen::Index>(active.size()));
    for (std::size_t i = 0; i < active.size(); ++i) X.col(static_cast<Eigen::Index>(i)) = V[static_cast<std::size_t>(active[i])].col(j);
    ops::apply(op, X, W);
    still.clear();
    for (std::size_t i = 0; i < active.size(); ++i) {
      const auto c = static_cast<std::size_t>(active[i]);
      Eigen::MatrixXd& Vc = V[c];
      Tridiagonal& Tc = T[c];
      Eigen::VectorXd w = W.col(static_cast<Eigen::Index>(i));
      const double a = Vc.col(j).dot(w);
      w -= a * Vc.col(j);
      if (j > 0) w -= Tc.beta(j - 1) * Vc.col(j - 1);
      const auto Vj = Vc.leftCols(j + 1);
      for (int pass = 0; pass < 2; ++pass) w -= Vj * (Vj.transpose() * w);
      Tc.alpha(j) = a;
      scale[c] = std::max({scale[c], std::abs(a), j > 0 ? Tc.beta(j - 1) : 0.0});
      if (j + 1 == m) continue;
      const double b = w.norm();
      if (b <= opt.breakdown_tol * scale[c]) {  // invariant subspace: T_{j+1} is exact
        Tc.invariant = true;
        Tc.alpha.conservativeResize(j + 1);
        Tc.beta.conservativeResize(j);
        continue;
      }
      Tc.beta(j) = b;
      Vc.col(j + 1) = w / b;
      still.push_back(active[i]);
    }
    active.swap(still);
  }
  if (opt.keep_basis)
    for (std::size_t c = 0; c < T.size(); ++c) T[c].basis = V[c].leftCols(T[c].steps());
  return T;
}

/// One Lanczos run from v0.
template <class Op>
Tridiagonal lanczos(const Op& op, const Eigen::VectorXd& v0, const LanczosOptions& opt = {}) {
  return std::move(lanczos(op, Eigen::MatrixXd(v0), opt).front());
}

/// Ritz values θ (ascending), Gauss-quadrature weights τ² (squared first components of T's
/// eigenvectors; they sum to 1) and, when asked and the basis was kept, the Ritz vectors V S.
struct Ritz {
  Eigen::VectorXd values;
  Eigen::VectorXd weights;
  Eigen::MatrixXd vectors;
};

inline Ritz ritz(const Tridiagonal& T, bool ritz_vectors = false) {
  const Eigen::Index k = T.steps();
  if (k < 1) throw std::invalid_argument("ritz: empty tridiagonal");
  Eigen::MatrixXd S;
  Ritz r;
  if (k == 1) {
    r.values = T.alpha;
    S = Eigen::MatrixXd::Ones(1, 1);
  } else {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es;
    es.computeFromTridiagonal(T.alpha, T.beta, Eigen::ComputeEigenvectors);
    if (es.info() != Eigen::Success) throw std::runtime_error("ritz: tridiagonal eigensolver did not converge");
    r.values = es.eigenvalues();
    S = es.eigenvectors();
  }
  r.weights = S.row(0).transpose().array().square();
  if (ritz_vectors) {
    if (T.basis.cols() != k) throw std::invalid_argument("ritz: Ritz vectors need LanczosOptions::keep_basis");
    r.vectors = T.basis * S;
  }
  return r;
}

// --- Spectra's implicitly restarted Lanczos -------------------------------------------------------

/// Any operator (ops/apply.hpp) as a Spectra MatOp, which also wants the Scalar type. Keeps a
/// reference to `op`.
template <class Op>
class SpectraOp {
 public:
  using Scalar = double;
  explicit SpectraOp(const Op& op) : op_(op) {}
  Eigen::Index rows() const { return op_.rows(); }
  Eigen::Index cols() const { return op_.rows(); }
  void perform_op(const double* x, double* y) const { op_.perform_op(x, y); }

 private:
  const Op& op_;
};

struct SpectraEigen {
  Eigen::VectorXd values;   ///< sorted by the selection rule (largest first, or smallest first)
  Eigen::MatrixXd vectors;  ///< the matching unit eigenvectors, when asked
  Eigen::Index iterations = 0;
  Eigen::Index matvecs = 0;
};

namespace detail {
/// nev eigenpairs of a symmetric operator selected by `rule` (LargestAlge, SmallestAlge, LargestMagn,
/// SmallestMagn), sorted by the same rule; ncv ≤ 0 picks min(n, max(2·nev + 1, 20)).
template <class Op>
SpectraEigen spectra_eigs(const Op& op, Eigen::Index nev, Spectra::SortRule rule, double tol, bool vectors,
                          Eigen::Index ncv = 0, Eigen::Index max_iterations = 5000) {
  const Eigen::Index n = op.rows();
  if (nev < 1 || nev >= n) throw std::invalid_argument("Spectra eigensolver: need 1 <= nev < size of the operator");
  if (ncv <= 0) ncv = std::max<Eigen::Index>(2 * nev + 1, 20);
  ncv = std::clamp<Eigen::Index>(ncv, nev + 1, n);
  SpectraOp<Op> sop(op);
  Spectra::SymEigsSolver<SpectraOp<Op>> solver(sop, nev, ncv);
  solver.init();
  solver.compute(rule, max_iterations, tol, rule);
  if (solver.info() != Spectra::CompInfo::Successful)
    throw std::runtime_error("Lanczos (Spectra SymEigsSolver) did not converge");
  SpectraEigen e;
  e.values = solver.eigenvalues();
  if (vectors) e.vectors = solver.eigenvectors();
  e.iterations = solver.num_iterations();
  e.matvecs = solver.num_operations();
  return e;
}
}  // namespace detail

/// The `nev` largest (descending) or smallest (ascending) eigenvalues of a symmetric operator, to
/// relative tolerance `tol`; adds Spectra's restart count to *iterations when given.
template <class Op>
Eigen::VectorXd lanczos_eigenvalues(const Op& op, int nev, bool largest, double tol = 1e-10,
                                    Eigen::Index* iterations = nullptr) {
  const SpectraEigen e = detail::spectra_eigs(
      op, nev, largest ? Spectra::SortRule::LargestAlge : Spectra::SortRule::SmallestAlge, tol, false);
  if (iterations) *iterations += e.iterations;
  return e.values;
}

}  // namespace sparseact::estimators
