#include <sparseact/spectral/finite_size.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <sparseact/spectral/esd.hpp>
#include <sparseact/spectral/marchenko_pastur.hpp>
#include <sparseact/spectral/spectrum.hpp>
#include <sparseact/spectral/tracy_widom.hpp>

namespace sparseact::spectral {

int finite_size_columns(int n, double c) { return std::max(2, static_cast<int>(std::lround(n / c))); }

FiniteSizeTrial finite_size_trial(int n, double c, Init init, Distribution dist, std::uint64_t seed, std::uint64_t stream, int trial,
                                  Device device) {
  if (n < 2 || !(c > 0) || trial < 0) throw std::invalid_argument("finite_size_trial: need n ≥ 2, c > 0, trial ≥ 0");
  const int d = finite_size_columns(n, c);
  // K Kᵀ = d σ² S with S ~ MP(n/d) (Theorem 1 with p = n rows and d columns).
  const MarchenkoPastur law(static_cast<double>(n) / d, init_variance(init, n, d) * d);
  const Spectrum s = kkt_spectra({init_weights(n, d, init, dist, seed, stream_id(stream, static_cast<std::uint64_t>(trial)))}, device)[0];
  return {s.ratio(), ks_distance(s.all_eigenvalues(), law)};
}

FiniteSizeCell finite_size_cell(int n, double c, const std::vector<FiniteSizeTrial>& trials) {
  if (trials.empty()) throw std::invalid_argument("finite_size_cell: no trials");
  FiniteSizeCell cell;
  cell.c = c;
  cell.n = n;
  cell.d = finite_size_columns(n, c);
  stats::RunningMean ratio, ks;
  for (const FiniteSizeTrial& t : trials) ratio.push(t.ratio), ks.push(t.ks);
  cell.ratio_mean = ratio.mean();
  cell.ratio_se = ratio.std_error();
  cell.ks_mean = ks.mean();
  cell.ks_se = ks.std_error();
  cell.limit = ratio_limit(static_cast<double>(n) / cell.d);
  cell.tw_mean = wishart_ratio_at_mean(n, cell.d);
  return cell;
}

FiniteSizeCell finite_size_cell(int n, double c, Init init, Distribution dist, int trials, std::uint64_t seed,
                                std::uint64_t stream, Device device, Progress* progress) {
  if (n < 2 || !(c > 0) || trials < 1) throw std::invalid_argument("finite_size_cell: need n ≥ 2, c > 0, trials ≥ 1");
  std::vector<FiniteSizeTrial> draws;
  for (int t = 0; t < trials; ++t) {
    // One matrix at a time: the GPU path's buffers stay small at any trial count.
    draws.push_back(finite_size_trial(n, c, init, dist, seed, stream, t, device));
    if (progress) progress->advance();
  }
  return finite_size_cell(n, c, draws);
}

stats::LinearFit power_law_fit(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& se) {
  if (x.size() != y.size() || x.size() != se.size()) throw std::invalid_argument("power_law_fit: lengths differ");
  std::vector<double> lx(x.size()), ly(y.size()), sigma(y.size());
  for (std::size_t i = 0; i < x.size(); ++i) lx[i] = std::log(x[i]), ly[i] = std::log(y[i]), sigma[i] = se[i] / y[i];
  return stats::weighted_linear_fit(lx, ly, sigma);
}

FiniteSizeRates finite_size_rates(const std::vector<FiniteSizeCell>& cells) {
  std::vector<double> n, excess, excess_se, ks, ks_se;
  for (const FiniteSizeCell& cell : cells) {
    n.push_back(cell.n);
    excess.push_back(std::abs(cell.excess()));
    excess_se.push_back(cell.ratio_se);
    ks.push_back(cell.ks_mean);
    ks_se.push_back(cell.ks_se);
  }
  return {power_law_fit(n, excess, excess_se), power_law_fit(n, ks, ks_se)};
}

}  // namespace sparseact::spectral
