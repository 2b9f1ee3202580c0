#include <sparseact/lsh/lsh_learner.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/SVD>
#include <fmt/format.h>

namespace sparseact::lsh {

LshLearner fit_lsh_learner(EuclideanLsh lsh, const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  if (X.cols() != y.size()) throw std::invalid_argument(fmt::format("fit_lsh_learner: {} inputs, {} targets", X.cols(), y.size()));
  if (X.cols() == 0) throw std::invalid_argument("fit_lsh_learner: no training points");
  LshLearner m;
  const CodeMatrix codes = hash(lsh, X);
  m.lsh = std::move(lsh);
  m.table = BucketTable(static_cast<std::size_t>(codes.rows()));
  std::vector<double> sum;
  for (Eigen::Index n = 0; n < codes.cols(); ++n) {
    bool fresh = false;
    const auto b = static_cast<std::size_t>(m.table.insert(codes.col(n).data(), &fresh));
    if (fresh) {
      sum.push_back(0);
      m.members.emplace_back();
    }
    sum[b] += y(n);
    m.members[b].push_back(n);
  }
  m.bucket_of.resize(static_cast<std::size_t>(X.cols()));
  for (std::size_t b = 0; b < m.members.size(); ++b)
    for (Eigen::Index i : m.members[b]) m.bucket_of[static_cast<std::size_t>(i)] = static_cast<Eigen::Index>(b);
  // Coarser copies of the same hash, for the nearest-neighbour fallback: codes shifted to start at 0,
  // halved until every training point shares one coarse bucket.
  m.code_min = codes.rowwise().minCoeff();
  CodeMatrix coarse = codes.colwise() - m.code_min;
  for (int shift = 1; shift <= 32; ++shift) {
    coarse = coarse.unaryExpr([](std::int32_t h) { return h >> 1; });  // h ≥ 0 here: ⌊h/2⌋
    CoarseLevel level{shift, BucketTable(static_cast<std::size_t>(codes.rows())), {}};
    for (Eigen::Index n = 0; n < coarse.cols(); ++n) {
      bool fresh = false;
      const auto b = static_cast<std::size_t>(level.table.insert(coarse.col(n).data(), &fresh));
      if (fresh) level.members.emplace_back();
      level.members[b].push_back(n);
    }
    const bool single = level.table.size() == 1;
    m.levels.push_back(std::move(level));
    if (single) break;
  }
  m.value.resize(static_cast<Eigen::Index>(sum.size()));
  for (std::size_t b = 0; b < sum.size(); ++b) m.value(static_cast<Eigen::Index>(b)) = sum[b] / static_cast<double>(m.members[b].size());
  m.X = X;
  return m;
}

namespace {

/// The training point nearest to x among `candidates` (−1 when there are none).
Eigen::Index nearest_of(const Eigen::MatrixXd& X, const Eigen::VectorXd& x, const std::vector<Eigen::Index>& candidates) {
  double best = std::numeric_limits<double>::infinity();
  Eigen::Index best_i = -1;
  for (Eigen::Index i : candidates) {
    const double dist = (X.col(i) - x).squaredNorm();
    if (dist < best) best = dist, best_i = i;
  }
  return best_i;
}

}  // namespace

LshPrediction predict(const LshLearner& m, const Eigen::MatrixXd& X) {
  LshPrediction p;
  p.y.resize(X.cols());
  const CodeMatrix codes = hash(m.lsh, X);
  const auto D = codes.rows();
  Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1> probe(D);
  std::vector<Eigen::Index> candidates;
  for (Eigen::Index n = 0; n < X.cols(); ++n) {
    const auto own = m.table.find(codes.col(n).data());
    if (own != BucketTable::absent) {
      p.y(n) = m.value(own);
      ++p.direct;
      continue;
    }
    // Probe the 2D codes at distance one: a nearby point differs from x in few hashes, by ±1.
    candidates.clear();
    probe = codes.col(n);
    for (Eigen::Index i = 0; i < D; ++i) {
      for (int step : {-1, 1}) {
        probe(i) += step;
        const auto b = m.table.find(probe.data());
        if (b != BucketTable::absent) {
          const auto& mem = m.members[static_cast<std::size_t>(b)];
          candidates.insert(candidates.end(), mem.begin(), mem.end());
        }
        probe(i) -= step;
      }
    }
    Eigen::Index nearest = nearest_of(m.X, X.col(n), candidates);
    if (nearest >= 0) {
      ++p.probed;
    } else {
      // Coarser widths 2^ℓ ε: the finest level whose bucket of x holds a training point. The shifted
      // code may be negative for a query below every training code: ⌊h/2⌋ by arithmetic shift.
      probe = codes.col(n) - m.code_min;
      for (const CoarseLevel& level : m.levels) {
        probe = probe.unaryExpr([](std::int32_t h) { return h >> 1; });
        const auto b = level.table.find(probe.data());
        if (b != BucketTable::absent) {
          nearest = nearest_of(m.X, X.col(n), level.members[static_cast<std::size_t>(b)]);
          ++p.coarse;
          break;
        }
      }
      if (nearest < 0) {
        (m.X.colwise() - X.col(n)).colwise().squaredNorm().minCoeff(&nearest);
        ++p.exhaustive;
      }
    }
    p.y(n) = m.value(m.bucket_of[static_cast<std::size_t>(nearest)]);
  }
  return p;
}

double width_for_error(double eps, double L, double sigma_min_AU, Eigen::Index K, double share) {
  if (!(eps > 0 && L > 0 && sigma_min_AU > 0 && K > 0 && share > 0))
    throw std::invalid_argument("width_for_error: ε, L, σ_min, K and the share must be positive");
  return share * eps * sigma_min_AU / (L * std::sqrt(static_cast<double>(K)));
}

double sigma_min_projected(const Eigen::MatrixXd& A, const Eigen::MatrixXd& U) {
  const Eigen::MatrixXd AU = A * U;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(AU);
  return svd.singularValues().minCoeff();
}

double theorem41_samples(Eigen::Index d, Eigen::Index k, double L, double eps) {
  const double r = L * std::sqrt(static_cast<double>(d)) / eps;
  return static_cast<double>(k) * std::pow(r, static_cast<double>(k)) * std::log(r);
}

double theorem41_table_size(Eigen::Index d, Eigen::Index k, double L, double eps) {
  return std::pow(L * std::sqrt(static_cast<double>(d)) / eps, static_cast<double>(k));
}

}  // namespace sparseact::lsh
