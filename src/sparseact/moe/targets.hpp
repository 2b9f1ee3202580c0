#pragma once
// The regression targets of paper 003 §6.1 (Appendix D.1, Appendix C):
//   Ackley      (37)  20 + e − a exp(−b √(mean x_i²)) − exp(mean cos(2π x_i)),  a = 20, b = 0.2
//   Rastrigin   (38)  Σ x_i² + 10(n − Σ cos(2π x_i))
//   fBm on [0, 1]     fractional Brownian motion of Hurst index H (an H-Hölder path; Appendix C), sampled at
//                     t = k/N by Davies–Harte: the fGn covariance γ(k) = ½(|k+1|^{2H} − 2|k|^{2H} + |k−1|^{2H})
//                     embedded in a circulant of size 2N, whose eigenvalues (one FFT) scale complex Gaussian noise;
//                     a second FFT gives exact fGn, and B(k/N) = N^{−H} Σ_{j<k} X_j.
#include <cstdint>

#include <Eigen/Core>

namespace sparseact::moe {

double ackley(const Eigen::Ref<const Eigen::VectorXd>& x, double a = 20, double b = 0.2);
double rastrigin(const Eigen::Ref<const Eigen::VectorXd>& x);

/// γ(k) of fractional Gaussian noise with Hurst index H ∈ (0, 1).
double fgn_covariance(long k, double H);
/// N fGn increments X_0 … X_{N−1} (unit variance, covariance γ) by Davies–Harte, from Rng(seed, stream).
/// Throws std::invalid_argument for N < 1 or H ∉ (0, 1); std::runtime_error if the circulant is not
/// non-negative definite (it is for fGn; a negative eigenvalue beyond rounding would be a bug).
Eigen::VectorXd fgn_davies_harte(long N, double H, std::uint64_t seed, std::uint64_t stream);
/// B(k/N), k = 0 … N (B(0) = 0): the fBm path on [0, 1].
Eigen::VectorXd fbm_path(long N, double H, std::uint64_t seed, std::uint64_t stream);

}  // namespace sparseact::moe
