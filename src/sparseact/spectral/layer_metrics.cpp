#include <sparseact/spectral/layer_metrics.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/spectral/marchenko_pastur.hpp>
#include <sparseact/spectral/tracy_widom.hpp>

namespace sparseact::spectral {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// wishart_ratio_interval costs two Tracy–Widom quantiles (tens of ms); a model has few layer shapes.
RatioInterval ratio_interval_memo(double N, double P, double level) {
  static std::mutex mutex;
  static std::map<std::tuple<double, double, double>, RatioInterval> memo;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(N, P, level);
  auto it = memo.find(key);
  if (it == memo.end()) it = memo.emplace(key, wishart_ratio_interval(N, P, level)).first;
  return it->second;
}

/// Every quantity NaN, the shape and kind set: the start of each report.
LayerMetrics blank(Eigen::Index N, Eigen::Index M, SpectrumKind kind) {
  LayerMetrics r;
  r.rows = N;
  r.cols = M;
  r.kind = kind;
  r.lambda_max = r.lambda_min_nonzero = r.sum_lambda = nan;
  r.spectral_norm = r.frobenius_norm = r.log10_spectral_norm = r.log10_frobenius_norm = nan;
  r.log10_lambda_max = r.log10_sum_lambda = r.stable_rank = nan;
  r.mp_own.sigma2 = r.mp_own.lambda_minus = r.mp_own.lambda_plus = r.mp_own.tw_threshold = nan;
  r.mp_own.ks = r.mp_own.ks_p_value = nan;
  r.mp_fit = r.mp_own;
  r.mp_soft_rank = r.mp_soft_rank_own = nan;
  r.power_law.alpha = r.power_law.alpha_se = r.power_law.x_min = r.power_law.D = nan;
  r.alpha_weighted = nan;
  r.ratio = r.ratio_limit = r.ratio_init_lo = r.ratio_init_hi = nan;
  r.near_zero_portion = r.majority_ratio = r.extreme_ratio = nan;
  return r;
}

void check_options(const LayerMetricOptions& o) {
  if (!(o.mp_level > 0 && o.mp_level < 1))
    throw std::invalid_argument(fmt::format("layer_metrics: mp_level must be in (0, 1), got {}", o.mp_level));
  if (!(o.ratio_level > 0 && o.ratio_level < 1))
    throw std::invalid_argument(fmt::format("layer_metrics: ratio_level must be in (0, 1), got {}", o.ratio_level));
}

void section84(LayerMetrics& r, const Spectrum& s, const LayerMetricOptions& o) {
  const Section84Reading reading = read_spectrum(s.all_eigenvalues(), o.near_zero, o.majority_fraction);
  r.near_zero_portion = reading.near_zero_portion;
  r.non_near_zero = reading.rest.size();
  r.extreme_ratio = reading.extreme_ratio;
  if (reading.rest.size() >= 2) {
    const Majority maj = majority(reading.rest, o.majority_fraction);
    r.majority_ratio = maj.ratio;
    r.majority_count = maj.count;
  }
}

/// Everything from a spectrum with rank ≥ 1. The §8.4 reading wants W Wᵀ's N eigenvalues: Spectrum's
/// n is the row count, so spectrum_from_gram(N, M, …) is already oriented that way.
LayerMetrics from_spectrum(const Spectrum& s, const LayerMetricOptions& o) {
  LayerMetrics r = blank(s.n, s.d, s.rank >= 2 ? SpectrumKind::regular : SpectrumKind::rank_one);
  r.rank = s.rank;
  r.eigenvalues = s.gram;
  const Eigen::VectorXd nonzero = s.nonzero();
  r.lambda_max = s.lambda_max();
  r.lambda_min_nonzero = s.lambda_min_nonzero();
  r.sum_lambda = nonzero.sum();
  r.spectral_norm = std::sqrt(r.lambda_max);
  r.frobenius_norm = std::sqrt(r.sum_lambda);
  r.log10_lambda_max = std::log10(r.lambda_max);
  r.log10_sum_lambda = std::log10(r.sum_lambda);
  r.log10_spectral_norm = 0.5 * r.log10_lambda_max;
  r.log10_frobenius_norm = 0.5 * r.log10_sum_lambda;
  r.stable_rank = r.sum_lambda / r.lambda_max;
  r.ratio = r.lambda_max / r.lambda_min_nonzero;
  const double big = static_cast<double>(std::max(s.n, s.d)), small = static_cast<double>(std::min(s.n, s.d));
  r.ratio_limit = ratio_limit(small / big);
  if (small < big) {
    const RatioInterval init = ratio_interval_memo(big, small, o.ratio_level);
    r.ratio_init_lo = init.lo;
    r.ratio_init_hi = init.hi;
  }
  section84(r, s, o);
  if (r.kind == SpectrumKind::rank_one) return r;

  r.mp_own = marchenko_pastur_own(nonzero, s.n, s.d, o.mp);
  r.mp_fit = marchenko_pastur_fit(nonzero, s.n, s.d, o.mp);
  r.mp_soft_rank_own = r.mp_own.lambda_plus / r.lambda_max;
  r.mp_soft_rank = r.mp_fit.lambda_plus / r.lambda_max;
  r.spikes = r.mp_fit.valid ? r.mp_fit.spikes : 0;
  r.bulk_is_mp = r.mp_fit.valid && r.mp_fit.ks_p_value >= o.mp_level;

  r.power_law = fit_power_law_tail(std::vector<double>(nonzero.data(), nonzero.data() + nonzero.size()), o.power_law);
  r.alpha_weighted = r.power_law.valid ? r.power_law.alpha * r.log10_lambda_max : nan;
  return r;
}

LayerMetrics all_zero(Eigen::Index N, Eigen::Index M) {
  LayerMetrics r = blank(N, M, SpectrumKind::all_zero);
  r.eigenvalues = Eigen::VectorXd::Zero(std::min(N, M));
  r.lambda_max = r.sum_lambda = r.spectral_norm = r.frobenius_norm = 0;
  r.log10_lambda_max = r.log10_sum_lambda = r.log10_spectral_norm = r.log10_frobenius_norm =
      -std::numeric_limits<double>::infinity();
  r.near_zero_portion = 1;  // every eigenvalue of W Wᵀ is 0
  return r;
}

}  // namespace

const char* to_string(SpectrumKind kind) noexcept {
  switch (kind) {
    case SpectrumKind::regular: return "regular";
    case SpectrumKind::rank_one: return "rank_one";
    case SpectrumKind::all_zero: return "all_zero";
    case SpectrumKind::non_finite: return "non_finite";
  }
  return "?";
}

LayerMetrics layer_metrics(const Eigen::MatrixXd& W, const LayerMetricOptions& options) {
  check_options(options);
  if (W.size() == 0) throw std::invalid_argument(fmt::format("layer_metrics: W is {}×{} (empty)", W.rows(), W.cols()));
  if (!W.allFinite()) return blank(W.rows(), W.cols(), SpectrumKind::non_finite);
  if ((W.array() == 0).all()) return all_zero(W.rows(), W.cols());
  // Serial BLAS: OpenBLAS's syrk/syevd give different last bits for different pool sizes, and every number
  // here must be the same for any thread count (a checkpoint's layers are spread over threads instead).
  Spectrum spectrum;
  {
    const ScopedBlasThreads serial(1);
    spectrum = kkt_spectrum(W, options.solver);
  }
  return from_spectrum(spectrum, options);
}

LayerMetrics layer_metrics_from_eigenvalues(Eigen::Index N, Eigen::Index M, Eigen::VectorXd gram_eigenvalues,
                                            const LayerMetricOptions& options) {
  check_options(options);
  if (N < 1 || M < 1) throw std::invalid_argument(fmt::format("layer_metrics: W is {}×{} (empty)", N, M));
  if (gram_eigenvalues.size() != std::min(N, M))
    throw std::invalid_argument(
        fmt::format("layer_metrics: {} eigenvalues for a {}×{} matrix (expected {})", gram_eigenvalues.size(), N, M, std::min(N, M)));
  if (!gram_eigenvalues.allFinite()) return blank(N, M, SpectrumKind::non_finite);
  if ((gram_eigenvalues.array() <= 0).all()) return all_zero(N, M);
  return from_spectrum(spectrum_from_gram(N, M, std::move(gram_eigenvalues)), options);
}

}  // namespace sparseact::spectral
