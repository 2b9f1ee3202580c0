#include <sparseact/moe/targets.hpp>

#include <cmath>
#include <complex>
#include <stdexcept>
#include <vector>

#include <unsupported/Eigen/FFT>

#include <sparseact/core/rng.hpp>

namespace sparseact::moe {

double ackley(const Eigen::Ref<const Eigen::VectorXd>& x, double a, double b) {
  const double n = double(x.size());
  const double mean_sq = x.squaredNorm() / n, mean_cos = (2 * M_PI * x.array()).cos().sum() / n;
  return 20 + M_E - a * std::exp(-b * std::sqrt(mean_sq)) - std::exp(mean_cos);
}

double rastrigin(const Eigen::Ref<const Eigen::VectorXd>& x) {
  return x.squaredNorm() + 10 * (double(x.size()) - (2 * M_PI * x.array()).cos().sum());
}

double fgn_covariance(long k, double H) {
  const double a = std::abs(double(k)), h2 = 2 * H;
  return 0.5 * (std::pow(a + 1, h2) - 2 * std::pow(a, h2) + std::pow(std::abs(a - 1), h2));
}

Eigen::VectorXd fgn_davies_harte(long N, double H, std::uint64_t seed, std::uint64_t stream) {
  if (N < 1) throw std::invalid_argument("Davies–Harte: need N ≥ 1");
  if (!(H > 0 && H < 1)) throw std::invalid_argument("Davies–Harte: the Hurst index must lie in (0, 1)");
  const long M = 2 * N;
  std::vector<std::complex<double>> c(static_cast<std::size_t>(M)), lambda;
  for (long k = 0; k < M; ++k) c[std::size_t(k)] = fgn_covariance(k <= N ? k : M - k, H);  // the circulant's first row
  Eigen::FFT<double> fft;
  fft.fwd(lambda, c);
  Rng rng(seed, stream);
  std::vector<std::complex<double>> v(static_cast<std::size_t>(M));
  for (long k = 0; k <= N; ++k) {
    const double l = lambda[std::size_t(k)].real();
    if (l < -1e-8 * std::abs(lambda[0].real())) throw std::runtime_error("Davies–Harte: the circulant embedding is not non-negative definite");
    const double s = std::sqrt(std::max(l, 0.0));
    if (k == 0 || k == N) {
      v[std::size_t(k)] = s / std::sqrt(double(M)) * rng.normal();
    } else {
      const double re = rng.normal(), im = rng.normal();
      v[std::size_t(k)] = s / std::sqrt(2.0 * double(M)) * std::complex<double>(re, im);
      v[std::size_t(M - k)] = std::conj(v[std::size_t(k)]);
    }
  }
  std::vector<std::complex<double>> w;
  fft.fwd(w, v);  // Σ_j v_j e^{−2πijk/M}: real, with covariance γ on its first N entries
  Eigen::VectorXd X(N);
  for (long k = 0; k < N; ++k) X(k) = w[std::size_t(k)].real();
  return X;
}

Eigen::VectorXd fbm_path(long N, double H, std::uint64_t seed, std::uint64_t stream) {
  const Eigen::VectorXd X = fgn_davies_harte(N, H, seed, stream);
  Eigen::VectorXd B(N + 1);
  B(0) = 0;
  const double scale = std::pow(double(N), -H);
  for (long k = 0; k < N; ++k) B(k + 1) = B(k) + scale * X(k);
  return B;
}

}  // namespace sparseact::moe
