#include <sparseact/lsh/lower_bound_survey.hpp>

#include <algorithm>
#include <cmath>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/lsh/bucket_table.hpp>
#include <sparseact/lsh/hash.hpp>

namespace sparseact::lsh {

namespace {

// A uniformly random unit vector of R^m.
Eigen::VectorXd unit(Rng& rng, Eigen::Index m) {
  Eigen::VectorXd u(m);
  do {
    for (Eigen::Index i = 0; i < m; ++i) u(i) = rng.normal();
  } while (u.norm() == 0);
  return u / u.norm();
}

// E δ for δ ∈ R^k: a direction in G, summed in column order (the sum Eigen's own matrix–vector
// product forms, so the points do not depend on which BLAS a build links).
Eigen::VectorXd in_slice_direction(const BumpFamily& F, const Eigen::VectorXd& delta) {
  Eigen::VectorXd u = Eigen::VectorXd::Zero(F.d);
  for (Eigen::Index j = 0; j < F.k; ++j)
    for (Eigen::Index i = 0; i < F.d; ++i) u(i) += F.E(i, j) * delta(j);
  return u;
}

}  // namespace

Members test_members(const BumpFamily& F, int random, std::uint64_t seed) {
  if (random < 1 || F.size() < 1) throw std::invalid_argument("test_members: needs at least one member and one centre");
  Members M;
  for (int m = 0; m < random; ++m) M.sigma.push_back(random_signs(F, seed, stream_id(1, static_cast<std::uint64_t>(m))));
  Rng pick(seed, stream_id(1, 1000000));
  M.flipped_at = static_cast<Eigen::Index>(pick.below(static_cast<std::uint64_t>(F.size())));
  M.sigma.push_back(M.sigma[0]);
  M.sigma.back()(M.flipped_at) *= -1;
  return M;
}

const char* to_string(PairKind kind) noexcept {
  switch (kind) {
    case PairKind::uniform: return "uniform";
    case PairKind::local: return "local";
    case PairKind::off_slice: return "off_slice";
    case PairKind::radial: return "radial";
  }
  return "?";
}

void lipschitz_pairs(const BumpFamily& F, PairKind kind, int member, Eigen::Index pairs, std::uint64_t seed, Eigen::MatrixXd& X1,
                     Eigen::MatrixXd& X2) {
  const std::uint64_t st = stream_id(stream_id(2, static_cast<std::uint64_t>(member)), static_cast<std::uint64_t>(kind));
  Rng rng(seed, stream_id(st, 1));
  const Eigen::Index V = F.size(), d = F.d, k = F.k;
  const double s = F.side, rad = F.radius();
  if (kind == PairKind::radial) {
    X1.resize(d, pairs);
    X2.resize(d, pairs);
    for (Eigen::Index p = 0; p < pairs; ++p) {
      const Eigen::Index v = static_cast<Eigen::Index>(rng.below(static_cast<std::uint64_t>(V)));
      const Eigen::VectorXd u = in_slice_direction(F, unit(rng, k));
      X1.col(p) = F.centres.col(v) + rng.uniform(0.0, 0.45 * rad) * u;
      X2.col(p) = F.centres.col(v) + rng.uniform(0.55 * rad, rad) * u;
    }
    return;
  }
  X1 = sample_slice(F, pairs, seed, stream_id(st, 0));
  if (kind == PairKind::uniform) {
    X2 = sample_slice(F, pairs, seed, stream_id(st, 2));
    return;
  }
  X2 = X1;
  for (Eigen::Index p = 0; p < pairs; ++p) {
    const Eigen::VectorXd u = kind == PairKind::local ? in_slice_direction(F, unit(rng, k)) : unit(rng, d);
    X2.col(p) += rng.uniform(0.05 * s, 1.5 * s) * u;
  }
}

LipschitzItem lipschitz_item(const BumpFamily& F, const Eigen::VectorXd& sigma, int member, PairKind kind, Eigen::Index pairs,
                             std::uint64_t seed) {
  LipschitzItem item;
  Eigen::MatrixXd X1, X2;
  lipschitz_pairs(F, kind, member, pairs, seed, X1, X2);
  if (kind != PairKind::radial) {
    item.max_overlap = std::max(max_overlap(F, X1), max_overlap(F, X2));
    item.max_gradient = gradient(F, sigma, X1).colwise().norm().maxCoeff();
  }
  item.ratios = lipschitz_ratios(F, sigma, X1, X2);
  if (kind == PairKind::radial) {
    // Every radial pair lies on one ray of one bump, where f_σ is affine with slope ±L.
    const Eigen::VectorXd f1 = evaluate(F, sigma, X1), f2 = evaluate(F, sigma, X2);
    for (Eigen::Index p = 0; p < pairs; ++p)
      item.min_radial_ratio = std::min(item.min_radial_ratio, std::abs(f1(p) - f2(p)) / (X1.col(p) - X2.col(p)).norm());
  }
  return item;
}

LipschitzSurvey combine_lipschitz(const std::vector<LipschitzItem>& items) {
  LipschitzSurvey S;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const LipschitzItem& it = items[i];
    S.rows.push_back({static_cast<int>(i / 4), static_cast<PairKind>(i % 4), it.ratios});
    S.max_overlap = std::max(S.max_overlap, it.max_overlap);
    S.max_gradient = std::max(S.max_gradient, it.max_gradient);
    S.max_ratio = std::max(S.max_ratio, it.ratios.max_ratio);
    S.min_radial_ratio = std::min(S.min_radial_ratio, it.min_radial_ratio);
  }
  return S;
}

LipschitzSurvey lipschitz_survey(const BumpFamily& F, const std::vector<Eigen::VectorXd>& sigma, Eigen::Index pairs,
                                 std::uint64_t seed, const std::function<void()>& done) {
  std::vector<LipschitzItem> items;
  for (int m = 0; m < static_cast<int>(sigma.size()); ++m) {
    for (PairKind kind : {PairKind::uniform, PairKind::local, PairKind::off_slice, PairKind::radial})
      items.push_back(lipschitz_item(F, sigma[static_cast<std::size_t>(m)], m, kind, pairs, seed));
    if (done) done();
  }
  return combine_lipschitz(items);
}

SeparationSurvey separation_survey(const BumpFamily& F, const std::vector<Eigen::VectorXd>& sigma) {
  Eigen::MatrixXd at_centres(F.size(), static_cast<Eigen::Index>(sigma.size()));
  for (std::size_t m = 0; m < sigma.size(); ++m) at_centres.col(static_cast<Eigen::Index>(m)) = evaluate(F, sigma[m], F.centres);
  return separation_survey(F, sigma, std::move(at_centres));
}

SeparationSurvey separation_survey(const BumpFamily& F, const std::vector<Eigen::VectorXd>& sigma, Eigen::MatrixXd at_centres) {
  const int M = static_cast<int>(sigma.size());
  SeparationSurvey S;
  S.at_centres = std::move(at_centres);
  for (int m = 0; m < M; ++m)
    S.centre_error = std::max(S.centre_error, (S.at_centres.col(m) - F.eps * sigma[std::size_t(m)]).cwiseAbs().maxCoeff());
  for (int m1 = 0; m1 < M; ++m1)
    for (int m2 = m1 + 1; m2 < M; ++m2) {
      const Eigen::Index differ = (sigma[std::size_t(m1)].array() != sigma[std::size_t(m2)].array()).count();
      if (differ == 0) continue;  // equal members (possible only for tiny |V|)
      const double sup = (S.at_centres.col(m1) - S.at_centres.col(m2)).cwiseAbs().maxCoeff();
      S.pairs.push_back({m1, m2, sup, differ});
      S.min_sup_distance = std::min(S.min_sup_distance, sup);
    }
  return S;
}

std::vector<FamilySizeCurve> family_size_sweep(Eigen::Index d, double eps, double L, int bits_per_parameter) {
  const double sqd = std::sqrt(double(d));
  std::vector<FamilySizeCurve> curves;
  for (int k = 1; k <= 3; ++k) {
    if (d % (1 << (k - 1)) != 0 || d < k) continue;
    FamilySizeCurve c;
    c.k = k;
    for (double f : {0.25, 0.35, 0.5, 0.71, 1.0, 1.41, 2.0}) {
      const double e = eps / f;
      const double n_axis = std::floor(sqd * L / e);  // cells per axis, ⌊2√d/(2ε/L)⌋
      if (std::pow(n_axis, k) > 4e6) continue;
      const BumpFamily G = make_bump_family(d, k, e, L);
      if (G.size() < 1) continue;
      const double V = double(G.size());
      c.eps.push_back(e);
      c.x.push_back(sqd * L / e);
      c.centres.push_back(V);
      c.lower_bound.push_back(centre_count_lower_bound(d, k, e, L));
      c.C.push_back(proof_constant(d, k, e, L, V));
      c.lsh_table.push_back(lsh_table_size(d, k, e, L));
      c.width_bound.push_back(width_lower_bound(V, bits_per_parameter));
    }
    if (c.x.empty()) continue;
    if (c.x.size() >= 2) c.slope = stats::loglog_fit(c.x, c.centres).slope;
    curves.push_back(std::move(c));
  }
  return curves;
}

double asymptotic_proof_constant(Eigen::Index k) {
  double kfact = 1;
  for (Eigen::Index j = 2; j <= k; ++j) kfact *= double(j);
  return std::pow(kfact, 1.0 / double(k));
}

double sample_lower_bound(Eigen::Index d, Eigen::Index k, double eps, double L, double C) {
  const double sqd = std::sqrt(double(d));
  return double(k) * std::pow(sqd * L / (C * eps), double(k)) * std::log(2 * sqd * L / (C * eps));
}

Eigen::Index slice_buckets(const BumpFamily& F, Eigen::Index hashes, Eigen::Index points, std::uint64_t seed) {
  const EuclideanLsh lsh = make_euclidean_lsh(F.d, hashes, F.eps / F.L, seed, 3);
  return static_cast<Eigen::Index>(assign_buckets(hash(lsh, sample_slice(F, points, seed, 4))).buckets());
}

}  // namespace sparseact::lsh
