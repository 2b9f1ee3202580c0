// The DSM model of paper 000 §2.1 and its §3 simulations: interpolation, k-NN regression (with the
// ERRATA fix ‖x − b_i‖² = 2 − 2⟨x, b_i⟩), Top-K, random-hash, Switch and Scaling masks, the LSH model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/dsm.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/lsh_model.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {

Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::uint64_t stream) {
  Eigen::MatrixXd M(rows, cols);
  fill_random(M.data(), static_cast<std::size_t>(M.size()), Distribution::normal, 1.0, 7, stream);
  return M;
}

Eigen::MatrixXd cube(Eigen::Index d, Eigen::Index n, std::uint64_t stream) {
  Eigen::MatrixXd M(d, n);
  fill_random(M.data(), static_cast<std::size_t>(M.size()), Distribution::uniform, 1.0 / std::sqrt(3.0), 11, stream);
  return M;
}

}  // namespace

TEST_CASE("DSM interpolation reproduces f at the t points (§3)", "[lsh][dsm]") {
  const Eigen::MatrixXd P = gaussian(5, 40, 1);
  const Eigen::VectorXd f = gaussian(40, 1, 2);
  const DsmModel m = interpolation_model(P, f);
  CHECK(m.units_per_input() == 1);  // s = 1
  const Eigen::VectorXd g = predict(m, P);
  for (Eigen::Index i = 0; i < 40; ++i) CHECK(std::abs(g(i) - f(i)) <= 4 * std::numeric_limits<double>::epsilon() * std::abs(f(i)));
  // mask(x_i) = e_i
  const Eigen::MatrixXd M = mask_matrix(m, P);
  CHECK(M.isApprox(Eigen::MatrixXd::Identity(40, 40)));
}

TEST_CASE("DSM k-NN simulation equals brute-force k-NN regression on unit vectors (§3, ERRATA)", "[lsh][dsm]") {
  Eigen::MatrixXd P = gaussian(6, 300, 3);
  P.colwise().normalize();
  Eigen::MatrixXd Q = gaussian(6, 80, 4);
  Q.colwise().normalize();
  const Eigen::VectorXd f = gaussian(300, 1, 5);
  // ERRATA 000: ‖x − b‖² = 2 − 2⟨x, b⟩ for unit vectors (the printed ‖x − b‖ = 2 − 2⟨x, b⟩ is false).
  const double sq = (Q.col(0) - P.col(0)).squaredNorm(), ip = Q.col(0).dot(P.col(0));
  CHECK(sq == Approx(2 - 2 * ip).epsilon(1e-12));
  CHECK(std::abs(std::sqrt(sq) - (2 - 2 * ip)) > 1e-3);
  for (int k : {1, 3, 10}) {
    CAPTURE(k);
    const DsmModel m = knn_model(P, f, k);
    const Eigen::VectorXd g = predict(m, Q), ref = knn_bruteforce(P, f, Q, k);
    for (Eigen::Index q = 0; q < Q.cols(); ++q) CHECK(g(q) == Approx(ref(q)).margin(1e-13));
    // the mask is the set of the k nearest neighbours
    const IndexMatrix idx = mask_indices(m, Q);
    REQUIRE(idx.rows() == k);
  }
}

TEST_CASE("Top-K mask has exactly K ones and picks the K largest pre-activations", "[lsh][dsm]") {
  const DsmModel m = make_dsm(4, 50, MaskKind::top_k, 7, BottomLayer{}, 3, 0);
  const Eigen::MatrixXd X = cube(4, 200, 1);
  const Eigen::MatrixXd M = mask_matrix(m, X), U = preactivations(m, X);
  for (Eigen::Index n = 0; n < X.cols(); ++n) {
    CHECK(M.col(n).sum() == 7);
    double min_in = INFINITY, max_out = -INFINITY;
    for (Eigen::Index j = 0; j < 50; ++j) (M(j, n) == 1 ? min_in = std::min(min_in, U(j, n)) : max_out = std::max(max_out, U(j, n)));
    CHECK(min_in >= max_out);
  }
  // features = mask ∘ ReLU(Bx + c)
  const Eigen::MatrixXd D = to_dense(features(m, X));
  CHECK(D.isApprox(M.cwiseProduct(U.cwiseMax(0.0))));
  // the dense mask: all ones, features ReLU(Bx + c)
  const DsmModel dense = make_dsm(4, 50, MaskKind::dense, 0, BottomLayer{}, 3, 0);
  CHECK(mask_matrix(dense, X).isApprox(Eigen::MatrixXd::Ones(50, 200)));
  CHECK(to_dense(features(dense, X)).isApprox(U.cwiseMax(0.0)));
}

TEST_CASE("Random-hash mask: K ones, a deterministic function of the input, uniform over units", "[lsh][dsm]") {
  const Eigen::Index t = 64, K = 8;
  const DsmModel m = make_dsm(3, t, MaskKind::random_hash, K, BottomLayer{}, 5, 0);
  const Eigen::MatrixXd X = cube(3, 4000, 2);
  const IndexMatrix idx = mask_indices(m, X);
  REQUIRE(idx.rows() == K);
  std::vector<double> count(t, 0);
  for (Eigen::Index n = 0; n < X.cols(); ++n) {
    std::set<int> s(idx.col(n).data(), idx.col(n).data() + K);
    CHECK(s.size() == std::size_t(K));
    for (int j : s) count[std::size_t(j)] += 1;
  }
  // the same input gives the same mask, alone or in another batch, in another position
  Eigen::MatrixXd Y(3, 3);
  Y << X.col(17), X.col(5), X.col(17);
  const IndexMatrix iy = mask_indices(m, Y);
  CHECK(iy.col(0) == idx.col(17));
  CHECK(iy.col(2) == idx.col(17));
  CHECK(iy.col(1) == idx.col(5));
  CHECK(idx.col(17) != idx.col(5));
  // a nearby input gets an unrelated mask (it is blind to geometry)
  Eigen::MatrixXd Z = X.col(17);
  Z(0) += 1e-12;
  CHECK(mask_indices(m, Z).col(0) != idx.col(17));
  // uniform: each unit is chosen with probability K/t; χ² over the t counts
  const double expect = double(X.cols()) * K / t;
  double chi2 = 0;
  for (double c : count) chi2 += (c - expect) * (c - expect) / expect;
  CHECK(chi2 < 120);  // χ²_63 has mean 63, sd 11.2 (counts are slightly negatively correlated: conservative)
}

TEST_CASE("Switch and Scaling-transformer masks have their block structure (§3.1)", "[lsh][dsm]") {
  const Eigen::MatrixXd X = cube(5, 500, 3);
  SECTION("Switch: one expert of width s, L = t/s experts") {
    const DsmModel m = make_dsm(5, 48, MaskKind::switch_route, 6, BottomLayer{}, 9, 0);
    REQUIRE(m.router.rows() == 8);
    const IndexMatrix idx = mask_indices(m, X);
    REQUIRE(idx.rows() == 6);
    std::set<int> experts;
    for (Eigen::Index n = 0; n < X.cols(); ++n) {
      const int first = idx(0, n);
      CHECK(first % 6 == 0);
      for (int k = 0; k < 6; ++k) CHECK(idx(k, n) == first + k);
      const Eigen::VectorXd score = m.router * X.col(n) + m.router_bias;
      Eigen::Index best;
      score.maxCoeff(&best);
      CHECK(first / 6 == best);
      experts.insert(first / 6);
    }
    CHECK(experts.size() > 1);
  }
  SECTION("Scaling: one unit per block of size t/s, the block's largest pre-activation") {
    const DsmModel m = make_dsm(5, 40, MaskKind::scaling, 4, BottomLayer{}, 9, 1);
    const IndexMatrix idx = mask_indices(m, X);
    const Eigen::MatrixXd U = preactivations(m, X);
    REQUIRE(idx.rows() == 4);
    for (Eigen::Index n = 0; n < X.cols(); ++n)
      for (int b = 0; b < 4; ++b) {
        CHECK(idx(b, n) / 10 == b);
        Eigen::Index best;
        U.col(n).segment(b * 10, 10).maxCoeff(&best);
        CHECK(idx(b, n) == b * 10 + best);
      }
  }
  CHECK_THROWS_AS(make_dsm(5, 40, MaskKind::switch_route, 7, BottomLayer{}, 1, 0), std::invalid_argument);
}

TEST_CASE("LSH model: s active buckets, one per table, from the hyperplane codes (§2.2, §3.2)", "[lsh][dsm]") {
  const LshModel m = make_lsh_model(4, 3, 5, 1.0, 2, 0);
  REQUIRE(m.width() == 3 * 32);
  const Eigen::MatrixXd X = cube(4, 300, 4);
  const ActiveFeatures F = features(m, X);
  REQUIRE(F.active() == 3);
  const auto codes = hash(m.lsh, X);
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (int i = 0; i < 3; ++i) {
      CHECK(F.idx(i, n) == i * 32 + static_cast<int>(codes(i, n)));
      CHECK(F.val(i, n) == 1.0);
    }
  // g(x) = Σ_i ĝ^i_{z^i(x)}
  LshModel m2 = m;
  for (Eigen::Index j = 0; j < m2.width(); ++j) m2.values(j) = double(j);
  const Eigen::VectorXd g = predict(m2, X);
  CHECK(g(0) == double(F.idx(0, 0) + F.idx(1, 0) + F.idx(2, 0)));
}
