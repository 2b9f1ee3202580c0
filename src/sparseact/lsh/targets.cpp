// Lipschitz targets of paper 000 §5.1 and App. D; see targets.hpp.
#include <sparseact/lsh/targets.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/parallel.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::lsh {

namespace {

void require_rows(const Eigen::MatrixXd& X, Eigen::Index d, const char* who) {
  if (X.rows() != d) throw std::invalid_argument(fmt::format("{}: points have {} coordinates, the target takes {}", who, X.rows(), d));
}

// Compositions of `deg` into d parts, first part largest first (lexicographically descending).
void compositions(Eigen::Index d, int deg, std::vector<int>& cur, Eigen::Index i, std::vector<std::vector<int>>& out) {
  if (i == d - 1) {
    cur[i] = deg;
    out.push_back(cur);
    return;
  }
  for (int e = deg; e >= 0; --e) {
    cur[i] = e;
    compositions(d, deg - e, cur, i + 1, out);
  }
  cur[i] = 0;
}

}  // namespace

// Below about 2^16 flops per call a parallel region costs more than it saves.
constexpr double min_parallel_work = 1 << 16;

namespace {

// The evaluation loops run over blocks of points, each block with its own scratch: the allocation can
// throw, and parallel_for carries that out of the parallel region. Each point is computed alone, so the
// values do not depend on the blocks or the thread count.
template <class Body>
void for_point_blocks(Eigen::Index N, bool parallel, Body&& body) {
  constexpr Eigen::Index block = 256;
  parallel_for(Eigen::Index{0}, (N + block - 1) / block,
               [&](Eigen::Index b) { body(b * block, std::min(N, (b + 1) * block)); }, {.parallel = parallel});
}

}  // namespace

// --- monomials --------------------------------------------------------------------------------------

std::uint64_t monomial_count(Eigen::Index d, int degree) {
  if (d < 1 || degree < 0) return 0;
  // C(d + D, D) = Π_{j=1}^{D} (d + j)/j, exact in integers at each step.
  long double c = 1;
  std::uint64_t exact = 1;
  for (int j = 1; j <= degree; ++j) {
    c = c * static_cast<long double>(d + j) / j;
    if (c > 1e18L) return std::numeric_limits<std::uint64_t>::max();  // saturate
    exact = exact * static_cast<std::uint64_t>(d + j) / static_cast<std::uint64_t>(j);
  }
  return exact;
}

std::vector<std::vector<int>> monomial_exponents(Eigen::Index d, int degree) {
  if (d < 1) throw std::invalid_argument(fmt::format("monomial_exponents: d = {} must be ≥ 1", d));
  if (degree < 0) throw std::invalid_argument(fmt::format("monomial_exponents: degree D = {} must be ≥ 0", degree));
  if (monomial_count(d, degree) > 10'000'000ULL)
    throw std::invalid_argument(fmt::format("monomial_exponents: C(d+D, D) monomials for d = {}, D = {} exceed 10^7", d, degree));
  std::vector<std::vector<int>> out;
  out.reserve(static_cast<std::size_t>(monomial_count(d, degree)));
  std::vector<int> cur(static_cast<std::size_t>(d), 0);
  for (int deg = 0; deg <= degree; ++deg) compositions(d, deg, cur, 0, out);
  return out;
}

// --- RandomPolynomial -------------------------------------------------------------------------------

RandomPolynomial::RandomPolynomial(Eigen::Index d, int degree, double coef_sum, std::uint64_t seed, std::uint64_t stream)
    : d_(d), degree_(degree) {
  if (!(coef_sum >= 0) || !std::isfinite(coef_sum))
    throw std::invalid_argument(fmt::format("RandomPolynomial: coef_sum = {} must be finite and ≥ 0", coef_sum));
  const auto exps = monomial_exponents(d, degree);  // validates d, D
  Rng rng(seed, stream);
  terms_.reserve(exps.size());
  double total = 0;
  for (const auto& a : exps) {
    const double c = rng.uniform(-1.0, 1.0);  // paper 000, App. D.1: U([−1, 1])
    total += std::abs(c);
    terms_.push_back({a, c});
  }
  // App. D.1: "scale the coefficients so that their absolute values sum up to 1.0" (coef_sum).
  for (auto& t : terms_) t.coef *= (total > 0 ? coef_sum / total : 0.0);
  index_terms();
}

RandomPolynomial::RandomPolynomial(std::vector<Monomial> terms, Eigen::Index d) : d_(d), terms_(std::move(terms)) {
  if (d < 1) throw std::invalid_argument(fmt::format("RandomPolynomial: d = {} must be ≥ 1", d));
  for (const auto& t : terms_) {
    if (static_cast<Eigen::Index>(t.powers.size()) != d)
      throw std::invalid_argument(fmt::format("RandomPolynomial: a term has {} exponents, d = {}", t.powers.size(), d));
    int deg = 0;
    for (int p : t.powers) {
      if (p < 0) throw std::invalid_argument("RandomPolynomial: negative exponent");
      deg += p;
    }
    degree_ = std::max(degree_, deg);
  }
  index_terms();
}

void RandomPolynomial::index_terms() {
  factors_.clear();
  offsets_.assign(1, 0);
  for (const auto& t : terms_) {
    for (std::size_t i = 0; i < t.powers.size(); ++i)
      if (t.powers[i] > 0) factors_.emplace_back(static_cast<int>(i), t.powers[i]);
    offsets_.push_back(factors_.size());
  }
}

std::string RandomPolynomial::name() const { return fmt::format("polynomial(d={},D={})", d_, degree_); }

double RandomPolynomial::coef_sum() const {
  double s = 0;
  for (const auto& t : terms_) s += std::abs(t.coef);
  return s;
}

// pw[i·(D+1) + e] = x_i^e for column n of X, e = 0 … D: every monomial is a product of these.
static void powers_table(const Eigen::MatrixXd& X, Eigen::Index n, Eigen::Index D1, std::vector<double>& pw) {
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    double p = 1;
    for (Eigen::Index e = 0; e < D1; ++e, p *= X(i, n)) pw[i * D1 + e] = p;
  }
}

// For each column: a table x_i^e (e ≤ D), then each term as a product of its nonzero factors.
Eigen::VectorXd RandomPolynomial::operator()(const Eigen::MatrixXd& X) const {
  require_rows(X, d_, "RandomPolynomial");
  const Eigen::Index N = X.cols(), D1 = degree_ + 1;
  Eigen::VectorXd out(N);
  const bool par = double(N) * double(factors_.size() + terms_.size()) >= min_parallel_work;
  for_point_blocks(N, par, [&](Eigen::Index begin, Eigen::Index end) {
    std::vector<double> pw(static_cast<std::size_t>(d_ * D1));
    for (Eigen::Index n = begin; n < end; ++n) {
      powers_table(X, n, D1, pw);
      double s = 0;
      for (std::size_t t = 0; t < terms_.size(); ++t) {
        double m = terms_[t].coef;
        for (std::size_t f = offsets_[t]; f < offsets_[t + 1]; ++f) m *= pw[factors_[f].first * D1 + factors_[f].second];
        s += m;
      }
      out(n) = s;
    }
  });
  return out;
}

// ∂_i c x^α = c α_i x_i^{α_i − 1} Π_{j≠i} x_j^{α_j}: for each nonzero factor of a term, the product
// of the others (terms have at most D factors, so O(D²) per term).
Eigen::MatrixXd RandomPolynomial::gradient(const Eigen::MatrixXd& X) const {
  require_rows(X, d_, "RandomPolynomial::gradient");
  const Eigen::Index N = X.cols(), D1 = degree_ + 1;
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(d_, N);
  const bool par = double(N) * double(factors_.size() + terms_.size()) * (degree_ + 1) >= min_parallel_work;
  for_point_blocks(N, par, [&](Eigen::Index begin, Eigen::Index end) {
    std::vector<double> pw(static_cast<std::size_t>(d_ * D1));
    for (Eigen::Index n = begin; n < end; ++n) {
      powers_table(X, n, D1, pw);
      for (std::size_t t = 0; t < terms_.size(); ++t) {
        for (std::size_t f = offsets_[t]; f < offsets_[t + 1]; ++f) {
          const auto [var, pow] = factors_[f];
          double m = terms_[t].coef * pow * pw[var * D1 + pow - 1];
          for (std::size_t g = offsets_[t]; g < offsets_[t + 1]; ++g)
            if (g != f) m *= pw[factors_[g].first * D1 + factors_[g].second];
          G(var, n) += m;
        }
      }
    }
  });
  return G;
}

// Lipschitz bound on a region Z (paper 000 §5.1 asks for L = O(1) on the cube).
//   |∂_i p(z)| = |Σ_α c_α α_i z^{α − e_i}| ≤ Σ_α |c_α| α_i sup_Z |z^{β}|,  β = α − e_i,
// and sup_Z ‖∇p‖₂ ≤ ‖g‖₂ with g_i that right-hand side. For each monomial z^β two bounds hold on
// Z ⊂ {|z_j| ≤ r_j} ∩ {‖z‖₂ ≤ ρ}, and we take the smaller:
//   box:  |z^β| ≤ Π_j r_j^{β_j};
//   ball: |z^β| ≤ ρ^{|β|} Π_j (β_j/|β|)^{β_j/2}  (maximise Σ β_j log|z_j| on the sphere: z_j² = ρ² β_j/|β|).
// On the cube (r = 1, ρ = √d) the box bound is 1 and g_i = Σ_α |c_α| α_i. The cube is convex, so the
// mean value theorem gives |p(x) − p(x')| ≤ sup ‖∇p‖₂ ‖x − x'‖₂: the bound is a Lipschitz constant.
// Since ‖g‖₂ ≤ ‖g‖₁ = Σ_α |c_α| |α| ≤ D Σ|c_α|, §5.1's Σ|c_α| < 1/D makes p 1-Lipschitz, and App.
// D.1's Σ|c_α| = 1 makes it D-Lipschitz at worst.
double RandomPolynomial::gradient_bound(const Eigen::VectorXd& r, double rho) const {
  if (r.size() != d_) throw std::invalid_argument("RandomPolynomial::gradient_bound: one radius per variable");
  Eigen::VectorXd g = Eigen::VectorXd::Zero(d_);
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    for (std::size_t f = offsets_[t]; f < offsets_[t + 1]; ++f) {
      const int i = factors_[f].first;
      double box = 1, ball_log = 0;
      int total = 0;
      for (std::size_t h = offsets_[t]; h < offsets_[t + 1]; ++h) {
        const int b = factors_[h].second - (h == f ? 1 : 0);
        if (b == 0) continue;
        box *= std::pow(r(factors_[h].first), b);
        total += b;
      }
      double mono = box;
      if (std::isfinite(rho) && total > 0) {
        for (std::size_t h = offsets_[t]; h < offsets_[t + 1]; ++h) {
          const int b = factors_[h].second - (h == f ? 1 : 0);
          if (b > 0) ball_log += 0.5 * b * std::log(static_cast<double>(b) / total);
        }
        mono = std::min(mono, std::exp(total * std::log(rho) + ball_log));
      }
      g(i) += std::abs(terms_[t].coef) * factors_[f].second * mono;
    }
  }
  return g.norm();
}

double RandomPolynomial::lipschitz_bound() const {
  return gradient_bound(Eigen::VectorXd::Ones(d_), std::numeric_limits<double>::infinity());
}

// --- HypercubeFunction ------------------------------------------------------------------------------

HypercubeFunction::HypercubeFunction(Eigen::Index d, std::uint64_t seed, std::uint64_t stream) : d_(d) {
  if (d < 1 || d > max_dims)
    throw std::invalid_argument(fmt::format("HypercubeFunction: d = {} outside [1, {}] (the function stores 2^d corner values)", d, max_dims));
  Rng rng(seed, stream);
  v_.resize(std::size_t{1} << d);
  for (auto& v : v_) v = rng.rademacher();  // §5.1, ERRATA 000: v_y uniform on {−1, 1}
}

HypercubeFunction::HypercubeFunction(std::vector<double> corner_values) : d_(0), v_(std::move(corner_values)) {
  const std::size_t n = v_.size();
  if (n < 2 || (n & (n - 1)) != 0) throw std::invalid_argument(fmt::format("HypercubeFunction: {} corner values is not 2^d with d ≥ 1", n));
  while ((std::size_t{1} << d_) < n) ++d_;
  if (d_ > max_dims) throw std::invalid_argument(fmt::format("HypercubeFunction: d = {} exceeds {}", d_, max_dims));
}

// The multilinear recursion. With v indexed by bits (bit i ↔ y_i = +1), fold the top variable:
//   W_d = v,   W_i[j] = a_i W_{i+1}[j] + b_i W_{i+1}[j + 2^i]   (j < 2^i),   a_i = (1 − x_i)/2, b_i = (1 + x_i)/2,
// for i = d−1, …, 0; f(x) = W_0[0]. This is Σ_y v_y Π_i (1 + y_i x_i)/2 summed one variable at a
// time: O(2^d) per point instead of O(d 2^d) for the direct sum.
// Gradient by reverse mode over the same recursion: with adj_i = ∂f/∂W_i (adj_0 = 1,
// adj_{i+1}[j] = a_i adj_i[j], adj_{i+1}[j + 2^i] = b_i adj_i[j]),
//   ∂f/∂x_i = Σ_{j<2^i} adj_i[j] (W_{i+1}[j + 2^i] − W_{i+1}[j]) / 2,   again O(2^d) per point.
// Level W_i (i < d) is stored at offset 2^i − 1 of a buffer of 2^d − 1 doubles.
Eigen::VectorXd HypercubeFunction::operator()(const Eigen::MatrixXd& X) const {
  require_rows(X, d_, "HypercubeFunction");
  const Eigen::Index N = X.cols();
  Eigen::VectorXd out(N);
  const std::size_t half = std::size_t{1} << (d_ - 1);
  const bool par = double(N) * double(v_.size()) >= min_parallel_work;
  for_point_blocks(N, par, [&](Eigen::Index begin, Eigen::Index end) {
    std::vector<double> w(half);
    for (Eigen::Index n = begin; n < end; ++n) {
      std::size_t m = half;
      {
        const double a = 0.5 * (1 - X(d_ - 1, n)), b = 0.5 * (1 + X(d_ - 1, n));
        for (std::size_t j = 0; j < m; ++j) w[j] = a * v_[j] + b * v_[j + m];
      }
      for (Eigen::Index i = d_ - 2; i >= 0; --i) {
        m >>= 1;
        const double a = 0.5 * (1 - X(i, n)), b = 0.5 * (1 + X(i, n));
        for (std::size_t j = 0; j < m; ++j) w[j] = a * w[j] + b * w[j + m];
      }
      out(n) = w[0];
    }
  });
  return out;
}

Eigen::MatrixXd HypercubeFunction::gradient(const Eigen::MatrixXd& X) const {
  require_rows(X, d_, "HypercubeFunction::gradient");
  const Eigen::Index N = X.cols();
  Eigen::MatrixXd G(d_, N);
  const std::size_t full = std::size_t{1} << d_;
  const bool par = double(N) * double(v_.size()) >= min_parallel_work;
  for_point_blocks(N, par, [&](Eigen::Index begin, Eigen::Index end) {
    std::vector<double> W(full - 1), adj(full), nxt(full);
    for (Eigen::Index n = begin; n < end; ++n) {
      auto level = [&](Eigen::Index i) -> const double* { return i == d_ ? v_.data() : W.data() + ((std::size_t{1} << i) - 1); };
      for (Eigen::Index i = d_ - 1; i >= 0; --i) {
        const std::size_t m = std::size_t{1} << i;
        const double a = 0.5 * (1 - X(i, n)), b = 0.5 * (1 + X(i, n));
        const double* up = level(i + 1);
        double* w = W.data() + (m - 1);
        for (std::size_t j = 0; j < m; ++j) w[j] = a * up[j] + b * up[j + m];
      }
      adj[0] = 1;
      for (Eigen::Index i = 0; i < d_; ++i) {
        const std::size_t m = std::size_t{1} << i;
        const double a = 0.5 * (1 - X(i, n)), b = 0.5 * (1 + X(i, n));
        const double* up = level(i + 1);
        double g = 0;
        for (std::size_t j = 0; j < m; ++j) {
          g += adj[j] * (up[j + m] - up[j]);
          nxt[j] = a * adj[j];
          nxt[j + m] = b * adj[j];
        }
        G(i, n) = 0.5 * g;
        std::swap(adj, nxt);
      }
    }
  });
  return G;
}

// Exact sup of ‖∇f‖₂ over the cube. ∂_i f does not depend on x_i and is multilinear (affine in each
// coordinate) in the others, so (∂_i f)² is convex in each coordinate separately, and so is
// ‖∇f‖₂² = Σ_i (∂_i f)². A function convex in each coordinate separately attains its maximum over
// a box at a corner (maximise one coordinate at a time: a convex function of one variable is
// largest at an endpoint). At a corner y, ∂_i f(y) = (v_{y, y_i=+1} − v_{y, y_i=−1})/2, so
//   sup_{[−1,1]^d} ‖∇f‖₂² = max_y (1/4) Σ_i (v_{y|bit i} − v_{y&~bit i})²,
// computed for every admissible d (≤ 20) in O(d 2^d): no fallback is needed. For v ∈ {±1} it is
// the square root of the largest sensitivity (number of coordinates whose flip changes v).
// The cube is convex, so this sup is the Lipschitz constant of f on the cube.
double HypercubeFunction::lipschitz_bound() const {
  double best = 0;
  const std::size_t n = v_.size();
  for (std::size_t y = 0; y < n; ++y) {
    double s = 0;
    for (Eigen::Index i = 0; i < d_; ++i) {
      const std::size_t bit = std::size_t{1} << i;
      const double diff = v_[y | bit] - v_[y & ~bit];
      s += diff * diff;
    }
    best = std::max(best, s);
  }
  return 0.5 * std::sqrt(best);
}

// |∂_i f(y)| ≤ (max v − min v)/2 at every corner, so ‖∇f‖₂ ≤ √d (max v − min v)/2 everywhere.
double HypercubeFunction::lipschitz_bound_analytic() const {
  const auto [lo, hi] = std::minmax_element(v_.begin(), v_.end());
  return 0.5 * std::sqrt(static_cast<double>(d_)) * (*hi - *lo);
}

// --- LowDimTarget -----------------------------------------------------------------------------------

LowDimTarget::LowDimTarget(Eigen::Index d, Eigen::Index k, int degree, double coef_sum, std::uint64_t seed,
                           std::uint64_t stream) {
  if (k < 1 || k > d) throw std::invalid_argument(fmt::format("LowDimTarget: need 1 ≤ k ≤ d, got k = {}, d = {}", k, d));
  // Haar-distributed orthonormal rows: the Gram–Schmidt orthonormalisation of a Gaussian d × k
  // matrix (Q of its QR with diag(R) > 0, which makes the law exactly Haar). Modified Gram–Schmidt,
  // applied twice ("twice is enough"), so the rows are orthonormal to rounding.
  Rng rng(seed, stream_id(stream, 0));
  Eigen::MatrixXd Q(d, k);
  for (Eigen::Index j = 0; j < k; ++j)
    for (Eigen::Index i = 0; i < d; ++i) Q(i, j) = rng.normal();
  for (Eigen::Index j = 0; j < k; ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (Eigen::Index l = 0; l < j; ++l) Q.col(j) -= Q.col(l).dot(Q.col(j)) * Q.col(l);
    const double nrm = Q.col(j).norm();
    if (!(nrm > 0)) throw std::runtime_error("LowDimTarget: degenerate Gaussian draw");
    Q.col(j) /= nrm;
  }
  A_ = Q.transpose();
  p_ = std::make_unique<RandomPolynomial>(k, degree, coef_sum, seed, stream_id(stream, 1));
}

std::string LowDimTarget::name() const {
  return fmt::format("lowdim_polynomial(d={},k={},D={})", A_.cols(), A_.rows(), p_->degree());
}

Eigen::VectorXd LowDimTarget::operator()(const Eigen::MatrixXd& X) const {
  require_rows(X, A_.cols(), "LowDimTarget");
  return (*p_)(A_ * X);
}

// ∇_x p(A x) = Aᵀ ∇p(A x).
Eigen::MatrixXd LowDimTarget::gradient(const Eigen::MatrixXd& X) const {
  require_rows(X, A_.cols(), "LowDimTarget::gradient");
  return A_.transpose() * p_->gradient(A_ * X);
}

Eigen::VectorXd LowDimTarget::image_box() const { return A_.cwiseAbs().rowwise().sum(); }

// The image Z = A[−1,1]^d is a zonotope, NOT [−1,1]^k: z_j = a_jᵀx reaches ‖a_j‖₁ (≈ √(2d/π) for a
// Haar row, > 1), and ‖z‖₂ ≤ ‖A‖₂ ‖x‖₂ = ‖x‖₂ ≤ √d. So Z ⊂ Π_j [−‖a_j‖₁, ‖a_j‖₁] ∩ {‖z‖₂ ≤ √d},
// and since Aᵀ is an isometry (‖A‖₂ = 1), sup_cube ‖∇f‖₂ = sup_Z ‖∇p‖₂ ≤ gradient_bound(box, √d).
// The bound is valid but can be far above the gradients met at typical inputs, where z_j has
// variance 1/3; lipschitz_estimate gives the other side.
double LowDimTarget::lipschitz_bound() const {
  return p_->gradient_bound(image_box(), std::sqrt(static_cast<double>(A_.cols())));
}

double lipschitz_estimate(const Target& f, const Eigen::MatrixXd& X) {
  if (X.cols() == 0) return 0;
  return f.gradient(X).colwise().norm().maxCoeff();
}

}  // namespace sparseact::lsh
