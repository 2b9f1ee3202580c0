// The bump family of Theorem 4.3 (paper 000, App. A.2); see lower_bound.hpp.
#include <sparseact/lsh/lower_bound.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/rng.hpp>

namespace sparseact::lsh {

namespace {

// A point costs O(dk) (a few 3^k cells for the scans): below about 2^20 flops a parallel region
// costs more than it saves, and on a loaded machine much more.
constexpr double min_parallel_work = 1 << 20;

Eigen::Index ipow(Eigen::Index b, Eigen::Index e) {
  Eigen::Index r = 1;
  for (Eigen::Index i = 0; i < e; ++i) r *= b;
  return r;
}

double factorial(Eigen::Index k) {
  double f = 1;
  for (Eigen::Index i = 2; i <= k; ++i) f *= static_cast<double>(i);
  return f;
}

// The scans below run inside parallel loops and allocate nothing (y is a view of a column), so they
// cannot throw there.

// The centre index of the cell containing y, or −1 (outside the grid, or a cell not in V).
std::int64_t cell_of(const BumpFamily& F, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Index* t = nullptr) {
  std::int64_t lin = 0, stride = 1;
  for (Eigen::Index j = 0; j < F.k; ++j) {
    const double u = std::floor((y(j) - F.grid_lo) / F.side);
    if (!(u >= 0) || u >= static_cast<double>(F.cells_per_axis)) return -1;
    if (t) t[j] = static_cast<Eigen::Index>(u);
    lin += static_cast<std::int64_t>(u) * stride;
    stride *= F.cells_per_axis;
  }
  return F.cell_index[static_cast<std::size_t>(lin)];
}

// Cell multi-index of y, clamped to the grid; false when y lies more than one cell outside it.
bool cell_coords(const BumpFamily& F, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Index* t) {
  for (Eigen::Index j = 0; j < F.k; ++j) {
    const double u = std::floor((y(j) - F.grid_lo) / F.side);
    if (!(u >= -1) || u > static_cast<double>(F.cells_per_axis)) return false;
    t[j] = static_cast<Eigen::Index>(u);
  }
  return true;
}

// Centre index at multi-index t (entries may be out of range: −1 then).
std::int64_t centre_at(const BumpFamily& F, const Eigen::Index* t) {
  std::int64_t lin = 0, stride = 1;
  for (Eigen::Index j = 0; j < F.k; ++j) {
    if (t[j] < 0 || t[j] >= F.cells_per_axis) return -1;
    lin += t[j] * stride;
    stride *= F.cells_per_axis;
  }
  return F.cell_index[static_cast<std::size_t>(lin)];
}

// Calls fn(offset multi-index) for every offset in {−1, 0, 1}^k.
template <class Fn>
void for_neighbours(Eigen::Index k, Fn&& fn) {
  const Eigen::Index total = ipow(3, k);
  Eigen::Index off[3] = {0, 0, 0};
  for (Eigen::Index m = 0; m < total; ++m) {
    Eigen::Index r = m;
    for (Eigen::Index j = 0; j < k; ++j, r /= 3) off[j] = r % 3 - 1;
    fn(off);
  }
}

void require_members(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X) {
  if (sigma.size() != F.size())
    throw std::invalid_argument(fmt::format("bump family: σ has {} signs, |V| = {}", sigma.size(), F.size()));
  if (X.rows() != F.d) throw std::invalid_argument(fmt::format("bump family: points have {} coordinates, d = {}", X.rows(), F.d));
}

}  // namespace

BumpFamily make_bump_family(Eigen::Index d, Eigen::Index k, double eps, double L) {
  if (k < 1 || k > 3) throw std::invalid_argument(fmt::format("--k {}: the bump family is built for k ∈ {{1, 2, 3}}", k));
  const Eigen::Index block = ipow(2, k - 1);
  if (d < k || d % block != 0)
    throw std::invalid_argument(fmt::format("--d {}: needs d ≥ k and d a multiple of 2^(k−1) = {} (orthogonal diagonals)", d, block));
  if (!(eps > 0) || !std::isfinite(eps)) throw std::invalid_argument(fmt::format("--eps {}: must be > 0", eps));
  if (!(L > 0) || !std::isfinite(L)) throw std::invalid_argument(fmt::format("--L {}: must be > 0", L));

  BumpFamily F;
  F.d = d;
  F.k = k;
  F.eps = eps;
  F.L = L;
  F.side = 2 * eps / L;  // paper 000, App. A.2: cubes of side 2ε/L
  const double sqd = std::sqrt(static_cast<double>(d));

  // k linearly independent diagonals of the cube: u_1 = 1, u_j Rademacher block patterns.
  F.diagonals.resize(d, k);
  for (Eigen::Index j = 0; j < k; ++j)
    for (Eigen::Index i = 0; i < d; ++i)
      F.diagonals(i, j) = (j == 0) ? 1.0 : (((i << j) / d) % 2 == 0 ? 1.0 : -1.0);
  F.E = F.diagonals / sqd;

  // P's bounding box is [−√d, √d]^k (max of y_j = e_jᵀx over the cube is ‖e_j‖₁ = √d, attained
  // at x = sign(e_j) ∈ G). n whole cells per axis, centred; the 1e-12 keeps an exact fit exact.
  const double cells = 2 * sqd / F.side;
  if (cells > 1e7) throw std::invalid_argument(fmt::format("--eps {}: √d L/ε = {:.3g} cells per axis is too many", eps, cells / 1));
  F.cells_per_axis = static_cast<Eigen::Index>(std::floor(cells * (1 + 1e-12)));
  const Eigen::Index total = ipow(F.cells_per_axis, k);
  if (static_cast<double>(F.cells_per_axis) > 0 && std::pow(static_cast<double>(F.cells_per_axis), static_cast<double>(k)) > 67108864.0)
    throw std::invalid_argument(fmt::format("--eps {}: the grid would have {}^{} cells, more than 2^26", eps, F.cells_per_axis, k));
  F.grid_lo = -0.5 * static_cast<double>(F.cells_per_axis) * F.side;

  // The constraints ‖E y‖_∞ ≤ 1 have at most 2^{k−1} distinct rows (up to sign): test those.
  std::vector<Eigen::RowVectorXd> rows;
  for (Eigen::Index i = 0; i < d; ++i) {
    const Eigen::RowVectorXd r = F.E.row(i);
    bool seen = false;
    for (const auto& q : rows) seen = seen || (q - r).cwiseAbs().maxCoeff() == 0 || (q + r).cwiseAbs().maxCoeff() == 0;
    if (!seen) rows.push_back(r);
  }
  // A cube with centre c and half-side h lies in P iff |r·c| + h ‖r‖₁ ≤ 1 for every row r (the
  // max of a linear function over a cube is at a vertex).
  const double h = 0.5 * F.side, tol = 1e-12;
  F.cell_index.assign(static_cast<std::size_t>(total), -1);
  std::vector<double> kept;
  Eigen::VectorXd c(k);
  Eigen::Index t[3] = {0, 0, 0};
  for (Eigen::Index lin = 0; lin < total; ++lin) {
    Eigen::Index r = lin;
    for (Eigen::Index j = 0; j < k; ++j, r /= F.cells_per_axis) {
      t[j] = r % F.cells_per_axis;
      c(j) = F.grid_lo + (static_cast<double>(t[j]) + 0.5) * F.side;
    }
    bool cube_in = true, centre_in = true;
    for (const auto& q : rows) {
      const double a = std::abs(q.dot(c));
      centre_in = centre_in && a <= 1 + tol;
      cube_in = cube_in && a + h * q.cwiseAbs().sum() <= 1 + tol;
    }
    if (centre_in) ++F.centre_count;
    if (cube_in) {
      F.cell_index[static_cast<std::size_t>(lin)] = static_cast<std::int64_t>(kept.size() / static_cast<std::size_t>(k));
      for (Eigen::Index j = 0; j < k; ++j) kept.push_back(c(j));
    }
  }
  const Eigen::Index V = static_cast<Eigen::Index>(kept.size()) / k;
  F.centres_y = Eigen::Map<const Eigen::MatrixXd>(kept.data(), k, V);
  F.centres = F.E * F.centres_y;
  return F;
}

bool in_slice(const BumpFamily& F, const Eigen::VectorXd& y, double tol) {
  return (F.E * y).cwiseAbs().maxCoeff() <= 1 + tol;
}

Eigen::VectorXd random_signs(const BumpFamily& F, std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  Eigen::VectorXd s(F.size());
  for (Eigen::Index i = 0; i < s.size(); ++i) s(i) = rng.rademacher();
  return s;
}

// f_σ(x) = σ_v max(0, ε − L‖x − v‖) for the one centre v whose cell contains y = Eᵀx (lower_bound.hpp).
Eigen::VectorXd evaluate(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X) {
  require_members(F, sigma, X);
  const Eigen::MatrixXd Y = F.E.transpose() * X;
  Eigen::VectorXd out = Eigen::VectorXd::Zero(X.cols());
  const bool par = double(X.cols()) * double(F.d) >= min_parallel_work;
#pragma omp parallel for schedule(static) if (par)
  for (Eigen::Index n = 0; n < X.cols(); ++n) {
    const std::int64_t v = cell_of(F, Y.col(n));
    if (v < 0) continue;
    const double r = (X.col(n) - F.centres.col(v)).norm();
    out(n) = sigma(v) * std::max(0.0, F.eps - F.L * r);
  }
  return out;
}

Eigen::VectorXd evaluate_direct(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X) {
  require_members(F, sigma, X);
  Eigen::VectorXd out = Eigen::VectorXd::Zero(X.cols());
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (Eigen::Index v = 0; v < F.size(); ++v)
      out(n) += sigma(v) * std::max(0.0, F.eps - F.L * (X.col(n) - F.centres.col(v)).norm());
  return out;
}

Eigen::MatrixXd gradient(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X) {
  require_members(F, sigma, X);
  const Eigen::MatrixXd Y = F.E.transpose() * X;
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(F.d, X.cols());
  const bool par = double(X.cols()) * double(F.d) >= min_parallel_work;
#pragma omp parallel for schedule(static) if (par)
  for (Eigen::Index n = 0; n < X.cols(); ++n) {
    const std::int64_t v = cell_of(F, Y.col(n));
    if (v < 0) continue;
    const double r = (X.col(n) - F.centres.col(v)).norm();
    if (r > 0 && r < F.radius()) G.col(n) = -sigma(v) * F.L / r * (X.col(n) - F.centres.col(v));
  }
  return G;
}

double sup_distance_on_grid(const BumpFamily& F, const Eigen::VectorXd& sigma1, const Eigen::VectorXd& sigma2) {
  if (F.size() == 0) return 0;
  return (evaluate(F, sigma1, F.centres) - evaluate(F, sigma2, F.centres)).cwiseAbs().maxCoeff();
}

double min_centre_spacing(const BumpFamily& F) {
  double best = std::numeric_limits<double>::infinity();
  const bool par = double(F.size()) * double(ipow(3, F.k)) * double(F.d) >= min_parallel_work;
#pragma omp parallel for schedule(static) reduction(min : best) if (par)
  for (Eigen::Index v = 0; v < F.size(); ++v) {
    Eigen::Index t[3] = {0, 0, 0};
    cell_coords(F, F.centres_y.col(v), t);
    for_neighbours(F.k, [&](const Eigen::Index* off) {
      Eigen::Index u[3] = {0, 0, 0};
      bool self = true;
      for (Eigen::Index j = 0; j < F.k; ++j) {
        u[j] = t[j] + off[j];
        self = self && off[j] == 0;
      }
      if (self) return;
      const std::int64_t w = centre_at(F, u);
      if (w >= 0) best = std::min(best, (F.centres.col(v) - F.centres.col(w)).norm());
    });
  }
  return best;
}

int max_overlap(const BumpFamily& F, const Eigen::MatrixXd& X) {
  if (X.rows() != F.d) throw std::invalid_argument("max_overlap: points must have d coordinates");
  const Eigen::MatrixXd Y = F.E.transpose() * X;
  int worst = 0;
  const bool par = double(X.cols()) * double(ipow(3, F.k)) * double(F.d) >= min_parallel_work;
#pragma omp parallel for schedule(static) reduction(max : worst) if (par)
  for (Eigen::Index n = 0; n < X.cols(); ++n) {
    Eigen::Index t[3] = {0, 0, 0};
    if (!cell_coords(F, Y.col(n), t)) continue;
    int count = 0;
    for_neighbours(F.k, [&](const Eigen::Index* off) {
      Eigen::Index u[3] = {0, 0, 0};
      for (Eigen::Index j = 0; j < F.k; ++j) u[j] = t[j] + off[j];
      const std::int64_t w = centre_at(F, u);
      if (w >= 0 && (X.col(n) - F.centres.col(w)).norm() < F.radius()) ++count;
    });
    worst = std::max(worst, count);
  }
  return worst;
}

Eigen::MatrixXd sample_slice(const BumpFamily& F, Eigen::Index N, std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  const double sqd = std::sqrt(static_cast<double>(F.d));
  Eigen::MatrixXd Y(F.k, N);
  Eigen::VectorXd y(F.k);
  for (Eigen::Index n = 0; n < N;) {
    for (Eigen::Index j = 0; j < F.k; ++j) y(j) = rng.uniform(-sqd, sqd);
    if (in_slice(F, y, 0.0)) Y.col(n++) = y;
  }
  return F.E * Y;
}

RatioStats lipschitz_ratios(const BumpFamily& F, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& X1,
                            const Eigen::MatrixXd& X2) {
  if (X1.cols() != X2.cols()) throw std::invalid_argument("lipschitz_ratios: X1 and X2 need the same number of columns");
  const Eigen::VectorXd f1 = evaluate(F, sigma, X1), f2 = evaluate(F, sigma, X2);
  RatioStats s;
  s.min_distance = std::numeric_limits<double>::infinity();
  for (Eigen::Index j = 0; j < X1.cols(); ++j) {
    const double dist = (X1.col(j) - X2.col(j)).norm();
    if (dist == 0) continue;
    s.max_ratio = std::max(s.max_ratio, std::abs(f1(j) - f2(j)) / dist);
    s.min_distance = std::min(s.min_distance, dist);
    ++s.pairs;
  }
  return s;
}

double centre_count_lower_bound(Eigen::Index d, Eigen::Index k, double eps, double L) {
  const double x = std::sqrt(static_cast<double>(d)) * L / eps - 2.0 * static_cast<double>(k);
  return x > 0 ? std::pow(x, static_cast<double>(k)) / factorial(k) : 0.0;
}

double proof_constant(Eigen::Index d, Eigen::Index k, double eps, double L, double count) {
  if (!(count > 0)) return std::numeric_limits<double>::infinity();
  return std::sqrt(static_cast<double>(d)) * L / (eps * std::pow(count, 1.0 / static_cast<double>(k)));
}

double proof_count(Eigen::Index d, Eigen::Index k, double eps, double L, double C) {
  return std::pow(std::sqrt(static_cast<double>(d)) * L / (C * eps), static_cast<double>(k));
}

double width_lower_bound(double count, int bits_per_parameter) { return count / bits_per_parameter; }

double lsh_table_size(Eigen::Index d, Eigen::Index k, double eps, double L) {
  return std::pow(L * std::sqrt(static_cast<double>(d)) / eps, static_cast<double>(k));
}

}  // namespace sparseact::lsh
