#pragma once
// The empirical spectral distribution (ESD) of K Kᵀ against the Marchenko–Pastur law.
#include <Eigen/Core>

#include <sparseact/spectral/marchenko_pastur.hpp>

namespace sparseact::spectral {

/// Kolmogorov–Smirnov distance sup_x |F_n(x) − F(x)| between the ESD of `eigenvalues` (all of them,
/// zeros included) and `law`. Exact for a law with an atom at 0: both one-sided limits are
/// compared at every sample point.
double ks_distance(const Eigen::VectorXd& eigenvalues, const MarchenkoPastur& law);

}  // namespace sparseact::spectral
