#include <sparseact/moe/kmeans.hpp>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <sparseact/core/rng.hpp>

namespace sparseact::moe {

namespace {

struct Assignment {
  std::vector<Eigen::Index> cell;
  Eigen::VectorXd d2;  ///< ‖x_i − c_{a(x_i)}‖²
  double inertia = 0;
};

/// Nearest centroid of every point, lowest index on ties; each point on its own (thread-count free).
Assignment assign(const Eigen::MatrixXd& X, const Eigen::MatrixXd& C) {
  const Eigen::Index N = X.cols();
  Assignment a{std::vector<Eigen::Index>(std::size_t(N)), Eigen::VectorXd(N), 0};
#pragma omp parallel for schedule(static)
  for (Eigen::Index i = 0; i < N; ++i) {
    Eigen::Index best = 0;
    double best_d2 = (X.col(i) - C.col(0)).squaredNorm();
    for (Eigen::Index k = 1; k < C.cols(); ++k) {
      const double d2 = (X.col(i) - C.col(k)).squaredNorm();
      if (d2 < best_d2) best = k, best_d2 = d2;
    }
    a.cell[std::size_t(i)] = best, a.d2(i) = best_d2;
  }
  a.inertia = a.d2.sum();  // one fixed order
  return a;
}

/// k-means++: c_1 uniform, then each next centre drawn with probability ∝ D(x)².
Eigen::MatrixXd plus_plus_seeds(const Eigen::MatrixXd& X, int K, Rng& rng) {
  const Eigen::Index N = X.cols();
  Eigen::MatrixXd C(X.rows(), K);
  C.col(0) = X.col(Eigen::Index(rng.below(std::uint64_t(N))));
  Eigen::VectorXd D2(N);
  for (Eigen::Index i = 0; i < N; ++i) D2(i) = (X.col(i) - C.col(0)).squaredNorm();
  for (int k = 1; k < K; ++k) {
    double total = 0;
    Eigen::Index pick = 0;
    for (Eigen::Index i = 0; i < N; ++i)
      if (D2(i) > 0) total += D2(i), pick = i;  // the last point off the centres: rounding's fallback
    if (total > 0) {
      const double r = rng.uniform() * total;
      double acc = 0;
      for (Eigen::Index i = 0; i < N; ++i)
        if (D2(i) > 0 && (acc += D2(i)) > r) {
          pick = i;
          break;
        }
    } else {
      pick = Eigen::Index(rng.below(std::uint64_t(N)));  // fewer than K distinct points: any point
    }
    C.col(k) = X.col(pick);
    for (Eigen::Index i = 0; i < N; ++i) D2(i) = std::min(D2(i), (X.col(i) - C.col(k)).squaredNorm());
  }
  return C;
}

/// Lloyd's update: means of the clusters; empty ones re-seeded at the farthest points (distinct).
Eigen::MatrixXd update(const Eigen::MatrixXd& X, const Assignment& a, int K, int& reseeded) {
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(X.rows(), K);
  std::vector<Eigen::Index> count(std::size_t(K), 0);
  for (Eigen::Index i = 0; i < X.cols(); ++i) {
    C.col(a.cell[std::size_t(i)]) += X.col(i);
    ++count[std::size_t(a.cell[std::size_t(i)])];
  }
  std::vector<Eigen::Index> far(std::size_t(X.cols()));
  std::iota(far.begin(), far.end(), Eigen::Index(0));
  std::stable_sort(far.begin(), far.end(), [&](Eigen::Index p, Eigen::Index q) { return a.d2(p) > a.d2(q); });
  std::size_t next_far = 0;
  for (int k = 0; k < K; ++k) {
    if (count[std::size_t(k)] > 0) {
      C.col(k) /= double(count[std::size_t(k)]);
    } else {
      C.col(k) = X.col(far[next_far++]);
      ++reseeded;
    }
  }
  return C;
}

}  // namespace

KMeans kmeans(const Eigen::MatrixXd& X, int K, std::uint64_t seed, std::uint64_t stream, const KMeansOptions& options) {
  if (K < 1 || Eigen::Index(K) > X.cols()) throw std::invalid_argument("kmeans: need 1 <= K <= the number of points");
  if (!X.allFinite()) throw std::invalid_argument("kmeans: the points must be finite");
  if (options.max_iter < 1 || !(options.tol >= 0)) throw std::invalid_argument("kmeans: need max_iter >= 1 and tol >= 0");
  // scikit-learn's tolerance: tol times the mean over coordinates of the points' (biased) variance.
  const Eigen::VectorXd mean = X.rowwise().mean();
  const double threshold = options.tol * (X.colwise() - mean).array().square().rowwise().mean().mean();

  Rng rng(seed, stream_id(stream, 0));
  KMeans out;
  out.centroids = plus_plus_seeds(X, K, rng);
  Assignment a = assign(X, out.centroids);
  out.inertia_history.push_back(a.inertia);
  while (out.iterations < options.max_iter) {
    Eigen::MatrixXd C = update(X, a, K, out.reseeded);
    const double shift = (C - out.centroids).squaredNorm();
    out.centroids = std::move(C);
    ++out.iterations;
    Assignment next = assign(X, out.centroids);
    out.inertia_history.push_back(next.inertia);
    const bool unchanged = next.cell == a.cell;
    a = std::move(next);
    if (unchanged || shift <= threshold) {
      out.converged = true;
      break;
    }
  }
  out.assignment = std::move(a.cell);
  out.inertia = a.inertia;
  return out;
}

}  // namespace sparseact::moe
