#include <sparseact/moe/shatter.hpp>

#include <cmath>
#include <stdexcept>

#include <boost/multiprecision/cpp_int.hpp>

#include <sparseact/core/lp.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/voronoi.hpp>

namespace sparseact::moe {

namespace {

using Rational = boost::multiprecision::cpp_rational;

struct Named {
  FixedClass c;
  const char* name;
};
constexpr Named kNames[] = {{FixedClass::halfspace, "halfspace"}, {FixedClass::homhalfspace, "homhalfspace"}, {FixedClass::interval, "interval"},
                            {FixedClass::poly, "poly"},           {FixedClass::ball, "ball"},                 {FixedClass::pwaffine, "pwaffine"}};

/// φ(x) of one point for a single-expert class (pwaffine: φ = x per cell).
Eigen::VectorXd features(const FeatureClass& c, const Eigen::VectorXd& x) {
  switch (c.kind) {
    case FixedClass::halfspace:
    case FixedClass::homhalfspace:
    case FixedClass::pwaffine: return x;
    case FixedClass::interval: return Eigen::Vector2d(x(0), x(0) * x(0));
    case FixedClass::poly: {
      Eigen::VectorXd f(c.k);
      double p = 1;
      for (int j = 0; j < c.k; ++j) f(j) = (p *= x(0));
      return f;
    }
    case FixedClass::ball: {
      Eigen::VectorXd f(x.size() + 1);
      f << x, x.squaredNorm();
      return f;
    }
  }
  return x;
}

/// The exact feature value wᵀφ(x) + b in rationals (φ recomputed exactly from x).
Rational exact_score(const FeatureClass& c, const Eigen::VectorXd& x, const Eigen::VectorXd& w, double b) {
  std::vector<Rational> phi;
  const auto R = [](double v) { return Rational(v); };
  switch (c.kind) {
    case FixedClass::halfspace:
    case FixedClass::homhalfspace:
    case FixedClass::pwaffine:
      for (Eigen::Index i = 0; i < x.size(); ++i) phi.push_back(R(x(i)));
      break;
    case FixedClass::interval: phi = {R(x(0)), R(x(0)) * R(x(0))}; break;
    case FixedClass::poly: {
      Rational p = 1;
      for (int j = 0; j < c.k; ++j) phi.push_back(p *= R(x(0)));
      break;
    }
    case FixedClass::ball: {
      Rational s = 0;
      for (Eigen::Index i = 0; i < x.size(); ++i) phi.push_back(R(x(i))), s += R(x(i)) * R(x(i));
      phi.push_back(s);
      break;
    }
  }
  Rational v = R(b);
  for (std::size_t j = 0; j < phi.size(); ++j) v += R(w(Eigen::Index(j))) * phi[j];
  return v;
}

/// 1[wᵀφ(x) + b > 0], exactly. Doubles decide when the score clears its rounding bound: φ and the dot product take
/// at most k = dim(φ)·(degree + 2) + 2 roundings, each a relative error ≤ u = 2⁻⁵³, so the computed score is within
/// γ_k·(|b| + Σ|w_j||φ_j|) of the exact one (Higham, Lemma 3.1; twice that here for the φ products). Only scores inside
/// the bound — at the LP's margin ≥ 1 almost never — are recomputed in rationals.
bool exact_positive(const FeatureClass& c, const Eigen::VectorXd& x, const Eigen::VectorXd& w, double b) {
  const Eigen::VectorXd phi = features(c, x);
  const double score = b + w.dot(phi), magnitude = std::abs(b) + w.cwiseAbs().dot(phi.cwiseAbs());
  const double k = double(phi.size()) * (c.kind == FixedClass::poly ? c.k + 2 : 3) + 2, u = 0x1p-53;
  const double bound = 2 * (k * u / (1 - k * u)) * magnitude;
  if (std::isfinite(score) && std::abs(score) > bound) return score > 0;
  return exact_score(c, x, w, b) > 0;
}

/// One affine (or homogeneous, or sign-constrained) separation LP on the points `ids` of X.
Decision separate(const FeatureClass& c, const Eigen::MatrixXd& X, const std::vector<int>& labels, const std::vector<Eigen::Index>& ids,
                  bool exact) {
  Decision d;
  if (ids.empty()) {
    d.realized = true;
    return d;
  }
  const Eigen::Index dim = features(c, X.col(ids[0])).size();
  const bool bias = c.kind != FixedClass::homhalfspace;
  lp::Problem p;
  p.add_variables(dim, -lp::inf, lp::inf);
  if (c.kind == FixedClass::interval || c.kind == FixedClass::ball) p.set_variable_bounds(dim - 1, -lp::inf, 0.0);  // concave
  if (bias) p.add_variables(1, -lp::inf, lp::inf);
  for (Eigen::Index i : ids) {
    const double s = labels[std::size_t(i)] ? 1.0 : -1.0;
    Eigen::VectorXd row(dim + (bias ? 1 : 0));
    row.head(dim) = s * features(c, X.col(i));
    if (bias) row(dim) = s;
    p.add_constraint(row, 1.0, lp::inf);
  }
  p.set_objective(Eigen::VectorXd::Zero(dim + (bias ? 1 : 0)), lp::Sense::minimize);
  lp::Solution sol = p.solve({.presolve = false, .exact = false});
  if (!sol.optimal() && exact) sol = p.solve({.presolve = false, .exact = true});
  if (!sol.optimal()) return d;
  d.realized = true;
  d.certificate.w.push_back(sol.x.head(dim));
  d.certificate.b.push_back(bias ? sol.x(dim) : 0.0);
  return d;
}

/// The prototype cells of the columns of X (pwaffine), or one cell.
std::vector<std::vector<Eigen::Index>> cells_of(const FeatureClass& c, const Eigen::MatrixXd& X, Eigen::Index m) {
  const Eigen::Index L = c.kind == FixedClass::pwaffine ? c.prototypes.cols() : 1;
  std::vector<std::vector<Eigen::Index>> cells(static_cast<std::size_t>(L));
  for (Eigen::Index i = 0; i < m; ++i) cells[std::size_t(L == 1 ? 0 : voronoi_cell(X.col(i), c.prototypes))].push_back(i);
  return cells;
}

}  // namespace

FixedClass parse_fixed_class(const std::string& name) {
  for (const Named& n : kNames)
    if (name == n.name) return n.c;
  throw std::invalid_argument("class '" + name + "': use halfspace, homhalfspace, interval, poly, ball or pwaffine");
}

const char* to_string(FixedClass c) noexcept {
  for (const Named& n : kNames)
    if (c == n.c) return n.name;
  return "?";
}

int known_vc(const FeatureClass& c) {
  switch (c.kind) {
    case FixedClass::halfspace: return c.n + 1;
    case FixedClass::homhalfspace: return c.n;
    case FixedClass::interval: return 2;
    case FixedClass::poly: return c.k + 1;
    case FixedClass::ball: return c.n + 1;
    case FixedClass::pwaffine: return int(c.prototypes.cols()) * (c.n + 1);
  }
  return 0;
}

Decision decide(const FeatureClass& c, const Eigen::MatrixXd& X, const std::vector<int>& labels, bool exact) {
  Decision all;
  all.realized = true;
  for (const auto& cell : cells_of(c, X, X.cols())) {
    const Decision d = separate(c, X, labels, cell, exact);
    if (!d.realized) return Decision{};
    all.certificate.w.push_back(d.certificate.w.empty() ? Eigen::VectorXd() : d.certificate.w[0]);
    all.certificate.b.push_back(d.certificate.b.empty() ? 0.0 : d.certificate.b[0]);
  }
  return all;
}

bool verify(const FeatureClass& c, const Eigen::MatrixXd& X, const std::vector<int>& labels, const Certificate& cert) {
  const auto cells = cells_of(c, X, X.cols());
  if (cert.w.size() != cells.size()) return false;
  for (std::size_t l = 0; l < cells.size(); ++l)
    for (Eigen::Index i : cells[l]) {
      if (cert.w[l].size() == 0) return false;
      const bool positive = exact_positive(c, X.col(i), cert.w[l], cert.b[l]);
      if (positive != (labels[std::size_t(i)] == 1)) return false;
    }
  return true;
}

namespace {

/// Whether a certificate verified on x_1 … x_{m−1} also labels x_m as `labels` says: only x_m needs checking.
bool gives_last(const FeatureClass& c, const Eigen::MatrixXd& Xm, const std::vector<int>& labels, const Certificate& cert) {
  const Eigen::Index last = Xm.cols() - 1;
  const std::size_t cell = c.kind == FixedClass::pwaffine ? std::size_t(voronoi_cell(Xm.col(last), c.prototypes)) : 0;
  if (cell >= cert.w.size()) return false;
  if (cert.w[cell].size() == 0) return false;  // the cell was empty: its expert is still to be found
  return exact_positive(c, Xm.col(last), cert.w[cell], cert.b[cell]) == (labels[std::size_t(last)] == 1);
}

}  // namespace

Growth growth(const FeatureClass& c, const Eigen::MatrixXd& X, int m_max, bool exact) {
  if (m_max < 1 || m_max > X.cols() || m_max > 24) throw std::invalid_argument("growth: need 1 ≤ m_max ≤ min(points, 24)");
  Growth g;
  // Realised labelings of x_1 … x_m (bit i = label of x_{i+1}) with their certificates.
  std::vector<std::pair<std::uint32_t, Certificate>> level{{0u, Certificate{}}};
  bool first = true;
  for (int m = 1; m <= m_max; ++m) {
    std::vector<std::pair<std::uint32_t, Certificate>> next;
    const Eigen::MatrixXd Xm = X.leftCols(m);
    for (const auto& [bits, parent] : level) {
      for (int y = 0; y <= 1; ++y) {
        const std::uint32_t child = bits | (std::uint32_t(y) << (m - 1));
        std::vector<int> labels(static_cast<std::size_t>(m));
        for (int i = 0; i < m; ++i) labels[std::size_t(i)] = int((child >> i) & 1u);
        if (!first && gives_last(c, Xm, labels, parent)) {  // the parent's (w, b) already gives x_m this label
          ++g.inherited;
          next.push_back({child, parent});
          continue;
        }
        ++g.lps;
        Decision d = decide(c, Xm, labels, exact);
        if (!d.realized) continue;
        if (verify(c, Xm, labels, d.certificate)) next.push_back({child, d.certificate});
        else ++g.unverified;
      }
    }
    first = false;
    g.realized.push_back(long(next.size()));
    if (long(next.size()) == (1L << m)) {
      g.vc_found = m;
      g.shattered.clear();
      for (const auto& [bits, cert] : next) {
        std::vector<int> labels(static_cast<std::size_t>(m));
        for (int i = 0; i < m; ++i) labels[std::size_t(i)] = int((bits >> i) & 1u);
        g.shattered.push_back({labels, cert});
      }
    }
    level = std::move(next);
  }
  return g;
}

long cover_count(int m, int n, bool homogeneous) {
  if (m == 0) return 1;  // the empty labeling
  long total = 0, binom = 1;  // C(m − 1, k)
  const int top = homogeneous ? n - 1 : n;
  for (int k = 0; k <= top && k <= m - 1; ++k) {
    total += binom;
    binom = binom * (m - 1 - k) / (k + 1);
  }
  return 2 * total;
}

Eigen::MatrixXd pwaffine_prototypes(int n, int L, std::uint64_t seed) {
  Rng rng(seed, 0x003'0042);
  Eigen::MatrixXd P(n, L);
  for (auto& v : P.reshaped()) v = 10 * rng.normal();
  return P;
}

Eigen::MatrixXd class_points(const FeatureClass& c, int m, std::uint64_t seed) {
  Rng rng(seed, 0x003'0043);
  const int dim = (c.kind == FixedClass::interval || c.kind == FixedClass::poly) ? 1 : c.n;
  Eigen::MatrixXd X(dim, m);
  for (int i = 0; i < m; ++i) {
    if (c.kind != FixedClass::pwaffine) {
      for (int k = 0; k < dim; ++k) X(k, i) = rng.normal();
      continue;
    }
    const Eigen::Index cell = i % c.prototypes.cols();
    do {  // near its prototype, and in its cell by eq. (5)
      for (int k = 0; k < dim; ++k) X(k, i) = c.prototypes(k, cell) + rng.normal();
    } while (voronoi_cell(X.col(i), c.prototypes) != cell);
  }
  return X;
}

}  // namespace sparseact::moe
