#pragma once
// Random probe vectors for the stochastic estimators. Probe j of a run is drawn from its own stream,
// Rng(seed, stream_id(stream, j)) (core/rng.hpp), so the probes — and every estimate built from them —
// do not depend on the thread count, on the batch size, or on how many probes came before.
#include <cmath>
#include <cstdint>

#include <Eigen/Core>

#include <sparseact/core/rng.hpp>

namespace sparseact::estimators {

enum class ProbeKind {
  rademacher,  ///< entries ±1 with probability 1/2: E[zzᵀ] = I, and the least variance for Hutchinson
  gaussian,    ///< entries N(0, 1): E[zzᵀ] = I
};

/// Columns first, …, first + count − 1 of an n-row probe matrix: Z.col(j) is probe first + j, drawn
/// from Rng(seed, stream_id(stream, first + j)). Columns are filled in parallel (OpenMP) when large.
inline void probe_columns(Eigen::MatrixXd& Z, Eigen::Index n, Eigen::Index first, Eigen::Index count,
                          std::uint64_t seed, std::uint64_t stream, ProbeKind kind = ProbeKind::rademacher) {
  Z.resize(n, count);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count > 1 && n * count > 4096)
#endif
  for (Eigen::Index j = 0; j < count; ++j) {
    Rng rng(seed, stream_id(stream, static_cast<std::uint64_t>(first + j)));
    double* z = Z.col(j).data();
    if (kind == ProbeKind::rademacher) {
      // rng.rademacher()'s values bit for bit, without its branch: a random sign mispredicts half the time, which
      // made drawing a probe cost as much as a small model's Hessian-vector product (issue 31's benchmark).
      for (Eigen::Index i = 0; i < n; ++i) z[i] = static_cast<double>(static_cast<int>(rng.next_u64() >> 63) * 2 - 1);
    } else {
      for (Eigen::Index i = 0; i < n; ++i) z[i] = rng.normal();
    }
  }
}

/// Rademacher columns (Hutchinson's and Hutch++'s probes).
inline void rademacher_columns(Eigen::MatrixXd& Z, Eigen::Index n, Eigen::Index first, Eigen::Index count,
                               std::uint64_t seed, std::uint64_t stream) {
  probe_columns(Z, n, first, count, seed, stream, ProbeKind::rademacher);
}

/// The same probes scaled to unit length, v = z/‖z‖ (a Lanczos start vector): E[vvᵀ] = I/n for
/// both kinds (‖z‖² = n exactly for Rademacher; by rotational symmetry for Gaussian).
inline void unit_probe_columns(Eigen::MatrixXd& V, Eigen::Index n, Eigen::Index first, Eigen::Index count,
                               std::uint64_t seed, std::uint64_t stream, ProbeKind kind = ProbeKind::rademacher) {
  probe_columns(V, n, first, count, seed, stream, kind);
  for (Eigen::Index j = 0; j < count; ++j) V.col(j) /= V.col(j).norm();
}

}  // namespace sparseact::estimators
