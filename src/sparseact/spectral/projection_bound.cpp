#include <sparseact/spectral/projection_bound.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <Eigen/Cholesky>
#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/spectral/init.hpp>

namespace sparseact::spectral {

ColumnSpace column_space(Eigen::Index n, Eigen::Index d, const Eigen::MatrixXd& gram_lower) {
  ColumnSpace P;
  P.n = n;
  P.d = d;
  if (d >= n) {
    P.full_rank = true;  // K Kᵀ has full rank n: P = I (when K has rank n; the spectrum decides that)
    return P;
  }
  if (gram_lower.rows() != d || gram_lower.cols() != d)
    throw std::invalid_argument(fmt::format("column_space: Gram matrix {}x{} for a {}x{} K", gram_lower.rows(), gram_lower.cols(), n, d));
  // P = K (KᵀK)⁻¹ Kᵀ, so ‖Pη‖² = zᵀ (KᵀK)⁻¹ z with z = Kᵀη. LLT reads the lower triangle only.
  P.llt.compute(gram_lower);
  P.full_rank = P.llt.info() == Eigen::Success;
  return P;
}

ColumnSpace column_space(const Eigen::MatrixXd& K) {
  return K.cols() >= K.rows() ? column_space(K.rows(), K.cols(), Eigen::MatrixXd()) : column_space(K.rows(), K.cols(), small_gram_lower(K));
}

ProjectionTerms projection_terms(const Eigen::MatrixXd& K, const Eigen::MatrixXd& eta) { return projection_terms(K, column_space(K), eta); }

ProjectionTerms projection_terms(const Eigen::MatrixXd& K, const ColumnSpace& P, const Eigen::MatrixXd& eta) {
  if (eta.rows() != K.rows())
    throw std::invalid_argument(fmt::format("projection_terms: η has {} rows, K has {}", eta.rows(), K.rows()));
  if (P.n != K.rows() || P.d != K.cols())
    throw std::invalid_argument(fmt::format("projection_terms: factor of a {}x{} matrix for a {}x{} K", P.n, P.d, K.rows(), K.cols()));
  if (!P.full_rank) throw std::runtime_error("projection_terms: KᵀK is not positive definite (K rank-deficient)");
  ProjectionTerms t;
  const Eigen::MatrixXd Z = K.transpose() * eta;  // z = Kᵀη, d × samples
  t.quadratic = Z.colwise().squaredNorm().transpose();
  t.norm2 = eta.colwise().squaredNorm().transpose();
  if (K.cols() >= K.rows()) {
    t.projected = t.norm2;  // P = I
  } else {
    const Eigen::MatrixXd W = P.llt.matrixL().solve(Z);  // ‖L⁻¹z‖² = zᵀ(LLᵀ)⁻¹z
    t.projected = W.colwise().squaredNorm().transpose();
  }
  return t;
}

Theorem6Summary theorem6_summary(const ProjectionTerms& terms, double lambda_min_nonzero, double lambda_max) {
  const Eigen::Index m = terms.quadratic.size();
  if (terms.projected.size() != m || terms.norm2.size() != m)
    throw std::invalid_argument("theorem6_summary: terms of different lengths");
  Theorem6Summary s;
  s.bound_ratio = Eigen::VectorXd::Constant(m, NAN);
  s.r = Eigen::VectorXd::Constant(m, NAN);
  s.min_bound_ratio = INFINITY;
  for (Eigen::Index j = 0; j < m; ++j) {
    if (terms.projected(j) == 0) continue;
    s.bound_ratio(j) = terms.quadratic(j) / (lambda_min_nonzero * terms.projected(j));
    s.r(j) = terms.projected(j) / terms.norm2(j);
    s.min_bound_ratio = std::min(s.min_bound_ratio, s.bound_ratio(j));
    s.mean_r += s.r(j);
    s.mean_rayleigh += terms.quadratic(j) / terms.projected(j) / lambda_max;
    ++s.used;
  }
  // Sums in sample order, then one division: the means do not depend on how η was batched.
  s.mean_r /= static_cast<double>(s.used);
  s.mean_rayleigh /= static_cast<double>(s.used);
  return s;
}

double theorem6_rounding_tolerance(double lambda_min_nonzero, double lambda_max, Eigen::Index n, Eigen::Index d) {
  return 64 * (lambda_max / lambda_min_nonzero) * std::numeric_limits<double>::epsilon() * static_cast<double>(std::max(n, d));
}

Eigen::MatrixXd relu_readout(Eigen::Index n, Eigen::Index d, std::uint64_t seed, std::uint64_t stream) {
  return init_weights(d, n, Init::xavier, Distribution::normal, seed, stream_id(stream, 1));
}

Eigen::MatrixXd sample_eta(const Eigen::MatrixXd& K, EtaSource source, Eigen::Index samples, std::uint64_t seed,
                           std::uint64_t stream) {
  Eigen::MatrixXd V;
  return sample_eta(K, source, samples, seed, stream, [&]() -> const Eigen::MatrixXd& {
    V = relu_readout(K.rows(), K.cols(), seed, stream);
    return V;
  });
}

Eigen::MatrixXd sample_eta(const Eigen::MatrixXd& K, EtaSource source, Eigen::Index samples, std::uint64_t seed,
                           std::uint64_t stream, const std::function<const Eigen::MatrixXd&()>& readout) {
  const Eigen::Index n = K.rows(), d = K.cols();
  if (source == EtaSource::gaussian) {
    Eigen::MatrixXd eta(n, samples);
    fill_random(eta.data(), static_cast<std::size_t>(eta.size()), Distribution::normal, 1.0, seed, stream);
    return eta;
  }
  Eigen::MatrixXd X(d, samples), T(d, samples);
  fill_random(X.data(), static_cast<std::size_t>(X.size()), Distribution::normal, 1.0, seed, stream_id(stream, 2));
  fill_random(T.data(), static_cast<std::size_t>(T.size()), Distribution::normal, 1.0, seed, stream_id(stream, 3));
  for (Eigen::Index j = 0; j < samples; ++j) X.col(j) *= std::sqrt(static_cast<double>(d)) / X.col(j).norm();
  // Every n × samples intermediate is formed in place (at paper scale each is 49 MB, a fresh
  // allocation and its page faults): h becomes ReLU(h), whose sign is h's (h > 0 ⇔ max(h, 0) > 0),
  // and g becomes η. The arithmetic is that of V·max(H, 0), Vᵀ(Y − T) and G ⊙ 1[H > 0] term for
  // term, so the bits are too (tests/test_spectral_speed.cpp pins this against the plain formulas).
  Eigen::MatrixXd R = K * X;                                       // pre-activations h = K x
  const Eigen::MatrixXd& V = readout();
  if (V.rows() != d || V.cols() != n)
    throw std::invalid_argument(fmt::format("sample_eta: readout V is {}x{}, expected {}x{}", V.rows(), V.cols(), d, n));
  R = R.cwiseMax(0.0);                                             // ReLU(h), elementwise in place
  Eigen::MatrixXd Y = V * R;                                       // y = V ReLU(h)
  Y -= T;                                                          // y − t
  Eigen::MatrixXd eta = V.transpose() * Y;                         // g_α = ∂ℓ/∂α
  // η = g_α ⊙ γ with γ = σ'(h) = 1[h > 0] for ReLU: a product with 1.0 or 0.0, as before (so a
  // negative g_α masked out stays −0.0), γ never stored.
  eta.array() *= (R.array() > 0).cast<double>();
  return eta;
}

SequentialTerms projection_terms_until(const Eigen::MatrixXd& K, const ColumnSpace& P, EtaSource source, const stats::StoppingRule& rule,
                                       Eigen::Index batch, std::uint64_t seed, std::uint64_t stream,
                                       const std::function<const Eigen::MatrixXd&()>& readout) {
  rule.validate();
  if (batch < 1) throw std::invalid_argument("projection_terms_until: batch must be ≥ 1");
  const Eigen::Index cap = std::max<Eigen::Index>(1, rule.max_samples);
  SequentialTerms out;
  std::vector<ProjectionTerms> parts;
  stats::RunningMean r;
  for (std::uint64_t b = 0; out.drawn < cap && !(r.count() > 0 && rule.done(r)); ++b) {
    const Eigen::Index m = std::min(batch, cap - out.drawn);
    ProjectionTerms t = projection_terms(K, P, sample_eta(K, source, m, seed, stream_id(stream, 16 + b), readout));
    for (Eigen::Index j = 0; j < m; ++j)
      if (t.projected(j) != 0) r.push(t.projected(j) / t.norm2(j));
    out.drawn += m;
    parts.push_back(std::move(t));
  }
  const auto concat = [&](Eigen::VectorXd ProjectionTerms::*field) {
    Eigen::VectorXd v(out.drawn);
    Eigen::Index at = 0;
    for (const ProjectionTerms& t : parts) v.segment(at, (t.*field).size()) = t.*field, at += (t.*field).size();
    return v;
  };
  out.terms = {concat(&ProjectionTerms::quadratic), concat(&ProjectionTerms::projected), concat(&ProjectionTerms::norm2)};
  out.mean_r = r.mean();
  out.r_interval = r.count() >= 2 ? r.interval(rule.alpha) : stats::Interval{-INFINITY, INFINITY};
  out.converged = r.count() > 0 && rule.satisfied(r);
  return out;
}

EtaSource parse_eta_source(const std::string& name) {
  if (name == "gaussian") return EtaSource::gaussian;
  if (name == "relu_gradient") return EtaSource::relu_gradient;
  throw InputError("--eta: expected gaussian or relu_gradient, got '" + name + "'");
}

const char* to_string(EtaSource source) noexcept {
  return source == EtaSource::gaussian ? "gaussian" : "relu_gradient";
}

}  // namespace sparseact::spectral
