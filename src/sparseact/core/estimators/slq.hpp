#pragma once
// Stochastic Lanczos quadrature (SLQ): the spectral density of a symmetric operator A (n×n,
// eigenpairs (λ_k, u_k)) from products alone, as PyHessian (Yao et al. 2020) and
// hessian-eigenthings do for a network's Hessian (Ghorbani, Krishnan & Xiao 2019; Lin, Saad & Yang
// 2016, "Approximating spectral densities of large matrices").
//
// The spectral density φ(λ) = (1/n) Σ_k δ(λ − λ_k) satisfies, for a unit probe v with E[vvᵀ] = I/n
// (Rademacher or Gaussian, normalised; estimators/probes.hpp),
//     E[vᵀ f(A) v] = (1/n) tr f(A) = ∫ f dφ,     vᵀ f(A) v = Σ_k (u_kᵀv)² f(λ_k).
// m Lanczos steps from v (estimators/lanczos.hpp) give the Gauss quadrature of the measure
// Σ_k (u_kᵀv)² δ(λ − λ_k): nodes θ_i (the Ritz values) and weights τ_i² (squared first components
// of T_m's eigenvectors), exact for polynomials f of degree ≤ 2m − 1. Averaged over n_v probes:
//     φ̂(λ) = (1/n_v) Σ_v Σ_i τ_{v,i}² δ(λ − θ_{v,i}),          (the SLQ density)
//     φ̂_σ(λ) = (1/n_v) Σ_v Σ_i τ_{v,i}² g_σ(λ − θ_{v,i}),     g_σ the N(0, σ²) density (broadened)
//     tr f(A) ≈ n · (1/n_v) Σ_v Σ_i τ_{v,i}² f(θ_{v,i}).
// The error band is the spread across probes: at each grid point, and for tr f(A), the standard
// error of the mean over the n_v independent probe values (stats::RunningMean). With Rademacher
// probes and f(x) = x, n Σ_i τ_i² θ_i = zᵀAz: SLQ's trace is Hutchinson's on the same probes.
//
// Probe j: Rng(seed, stream_id(stream, j)); probes run `batch` at a time in lockstep (block products).
// Memory: batch · n · m doubles for the Lanczos bases.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/core/estimators/lanczos.hpp>
#include <sparseact/core/estimators/probes.hpp>
#include <sparseact/core/stats.hpp>

namespace sparseact::estimators {

struct SlqOptions {
  Eigen::Index probes = 16;   ///< n_v
  Eigen::Index steps = 30;    ///< m, Lanczos steps per probe (at most n)
  ProbeKind probe = ProbeKind::rademacher;
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  Eigen::Index batch = 8;     ///< probes run in lockstep
  double breakdown_tol = 1e-10;  ///< LanczosOptions::breakdown_tol
};

/// One Gauss quadrature rule (Ritz values θ_i as `values`, weights τ_i² as `weights`) per probe.
struct Slq {
  Eigen::Index n = 0;              ///< size of the operator
  std::vector<Ritz> quadrature;    ///< per probe
  Eigen::Index matvecs = 0;
  Eigen::Index probes() const { return static_cast<Eigen::Index>(quadrature.size()); }
};

template <class Op>
Slq slq(const Op& op, const SlqOptions& opt = {}) {
  if (opt.probes < 1) throw std::invalid_argument("slq: need at least one probe");
  if (opt.steps < 1) throw std::invalid_argument("slq: need at least one Lanczos step");
  const Eigen::Index batch = std::max<Eigen::Index>(1, opt.batch);
  Slq s;
  s.n = op.rows();
  LanczosOptions lo;
  lo.steps = opt.steps;
  lo.breakdown_tol = opt.breakdown_tol;
  Eigen::MatrixXd V0;
  for (Eigen::Index first = 0; first < opt.probes; first += batch) {
    const Eigen::Index count = std::min(batch, opt.probes - first);
    unit_probe_columns(V0, s.n, first, count, opt.seed, opt.stream, opt.probe);
    for (const Tridiagonal& T : lanczos(op, V0, lo)) {
      s.matvecs += T.steps();
      s.quadrature.push_back(ritz(T));
    }
  }
  return s;
}

/// tr f(A) ≈ n · mean over probes of Σ_i τ_i² f(θ_i); the standard error and the (1 − α) Student-t
/// half-width are across probes (both 0 for a single probe's SE; half-width ∞). `probes` and
/// `matvecs` as in Hutchinson's result.
inline TraceEstimate slq_trace(const Slq& s, const std::function<double(double)>& f, double alpha = 0.05) {
  stats::RunningMean m;
  for (const Ritz& q : s.quadrature) {
    double v = 0.0;
    for (Eigen::Index i = 0; i < q.values.size(); ++i) v += q.weights(i) * f(q.values(i));
    m.push(static_cast<double>(s.n) * v);
  }
  TraceEstimate r;
  r.estimate = m.mean();
  r.std_error = m.std_error();
  r.half_width = m.half_width(alpha);
  r.sample_variance = m.variance();
  r.probes = s.probes();
  r.matvecs = s.matvecs;
  return r;
}

/// The SLQ density broadened by g_σ on a grid, with its standard error across probes at each point.
/// ∫ φ̂_σ = 1 (a probability density over eigenvalues; multiply by n for counts).
struct SpectralDensity {
  Eigen::VectorXd grid;       ///< λ
  Eigen::VectorXd density;    ///< φ̂_σ(λ)
  Eigen::VectorXd std_error;  ///< across probes
  double sigma = 0.0;
  Eigen::Index probes = 0;
};

inline SpectralDensity slq_density(const Slq& s, const Eigen::VectorXd& grid, double sigma) {
  if (!(sigma > 0)) throw std::invalid_argument("slq_density: sigma must be > 0");
  if (s.quadrature.empty()) throw std::invalid_argument("slq_density: no probes");
  const double c = 1.0 / (sigma * std::sqrt(2.0 * 3.14159265358979323846));
  std::vector<stats::RunningMean> at(static_cast<std::size_t>(grid.size()));
  for (const Ritz& q : s.quadrature)
    for (Eigen::Index g = 0; g < grid.size(); ++g) {
      double v = 0.0;
      for (Eigen::Index i = 0; i < q.values.size(); ++i) {
        const double x = (grid(g) - q.values(i)) / sigma;
        v += q.weights(i) * c * std::exp(-0.5 * x * x);
      }
      at[static_cast<std::size_t>(g)].push(v);
    }
  SpectralDensity d;
  d.grid = grid;
  d.density.resize(grid.size());
  d.std_error.resize(grid.size());
  for (Eigen::Index g = 0; g < grid.size(); ++g) {
    d.density(g) = at[static_cast<std::size_t>(g)].mean();
    d.std_error(g) = at[static_cast<std::size_t>(g)].std_error();
  }
  d.sigma = sigma;
  d.probes = s.probes();
  return d;
}

/// The same on `points` equally spaced λ from min θ − 5σ to max θ + 5σ (all probes' nodes).
inline SpectralDensity slq_density(const Slq& s, Eigen::Index points, double sigma) {
  if (points < 2) throw std::invalid_argument("slq_density: need at least two grid points");
  if (s.quadrature.empty()) throw std::invalid_argument("slq_density: no probes");
  double lo = s.quadrature.front().values.minCoeff(), hi = s.quadrature.front().values.maxCoeff();
  for (const Ritz& q : s.quadrature) {
    lo = std::min(lo, q.values.minCoeff());
    hi = std::max(hi, q.values.maxCoeff());
  }
  return slq_density(s, Eigen::VectorXd::LinSpaced(points, lo - 5 * sigma, hi + 5 * sigma), sigma);
}

}  // namespace sparseact::estimators
