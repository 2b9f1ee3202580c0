// K-means prototypes (moe/kmeans; paper 003 §6.2): well-separated clusters recovered exactly, the inertia never
// increasing, the same result for the same seed and any thread count, empty clusters re-seeded, bad input refused.
#include <catch2/catch.hpp>

#include <omp.h>

#include <sparseact/core/rng.hpp>
#include <sparseact/moe/kmeans.hpp>

using namespace sparseact;
using namespace sparseact::moe;

namespace {

/// `per` points around each of the columns of `centres`, uniform noise of half-width `noise`.
Eigen::MatrixXd blobs(const Eigen::MatrixXd& centres, int per, double noise, std::uint64_t stream) {
  Rng rng(3, stream);
  Eigen::MatrixXd X(centres.rows(), centres.cols() * per);
  for (Eigen::Index k = 0; k < centres.cols(); ++k)
    for (int j = 0; j < per; ++j)
      for (Eigen::Index i = 0; i < centres.rows(); ++i) X(i, k * per + j) = centres(i, k) + rng.uniform(-noise, noise);
  return X;
}

}  // namespace

TEST_CASE("k-means recovers well-separated clusters exactly, centroids = the clusters' means", "[moe][kmeans]") {
  const Eigen::MatrixXd centres = (Eigen::MatrixXd(2, 3) << 0, 10, 0, 0, 0, 10).finished();
  const Eigen::MatrixXd X = blobs(centres, 30, 0.5, 1);
  for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
    CAPTURE(seed);
    const KMeans km = kmeans(X, 3, seed, 7);
    REQUIRE(km.converged);
    for (int k = 0; k < 3; ++k) {
      const Eigen::Index a = km.assignment[std::size_t(30 * k)];
      for (int j = 0; j < 30; ++j) CHECK(km.assignment[std::size_t(30 * k + j)] == a);
      CHECK((km.centroids.col(a) - X.middleCols(30 * k, 30).rowwise().mean()).norm() < 1e-12);
    }
    CHECK(km.assignment[0] != km.assignment[30]);
    CHECK(km.assignment[30] != km.assignment[60]);
    CHECK(km.assignment[0] != km.assignment[60]);
    double inertia = 0;
    for (Eigen::Index i = 0; i < X.cols(); ++i) inertia += (X.col(i) - km.centroids.col(km.assignment[std::size_t(i)])).squaredNorm();
    CHECK(km.inertia == Approx(inertia).epsilon(1e-12));
  }
}

TEST_CASE("k-means: the inertia never increases, and one seed gives one result for any thread count", "[moe][kmeans]") {
  Rng rng(4, 4);
  Eigen::MatrixXd X(5, 400);
  for (auto& v : X.reshaped()) v = rng.normal();
  const KMeans a = kmeans(X, 6, 11, 2);
  REQUIRE(a.inertia_history.size() == std::size_t(a.iterations + 1));
  for (std::size_t t = 1; t < a.inertia_history.size(); ++t) CHECK(a.inertia_history[t] <= a.inertia_history[t - 1] * (1 + 1e-12));
  CHECK(a.inertia == a.inertia_history.back());
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const KMeans b = kmeans(X, 6, 11, 2);
  omp_set_num_threads(std::max(2, threads));
  const KMeans c = kmeans(X, 6, 11, 2);
  omp_set_num_threads(threads);
  for (const KMeans* o : {&b, &c}) {
    CHECK(o->centroids == a.centroids);
    CHECK(o->assignment == a.assignment);
    CHECK(o->inertia == a.inertia);
  }
  const KMeans capped = kmeans(X, 6, 11, 2, {.max_iter = 1});
  CHECK(capped.iterations == 1);
}

TEST_CASE("k-means re-seeds empty clusters and refuses bad input", "[moe][kmeans]") {
  // Two distinct points for three clusters: a cluster stays empty and is re-seeded at the farthest point.
  const Eigen::MatrixXd X = (Eigen::MatrixXd(1, 5) << 0, 0, 0, 0, 1).finished();
  const KMeans km = kmeans(X, 3, 1, 1, {.max_iter = 5});
  CHECK(km.reseeded > 0);
  CHECK(km.inertia == 0);
  CHECK_THROWS_AS(kmeans(X, 0, 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(kmeans(X, 6, 1, 1), std::invalid_argument);
  Eigen::MatrixXd bad = X;
  bad(0, 2) = NAN;
  CHECK_THROWS_AS(kmeans(bad, 2, 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(kmeans(X, 2, 1, 1, {.max_iter = 0}), std::invalid_argument);
}
