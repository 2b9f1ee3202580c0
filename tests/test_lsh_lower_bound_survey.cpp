// lsh/lower_bound_survey (paper 000 Theorem 4.3, App. A.2) against closed forms: the flipped member
// differs at one centre, radial pairs have ratio exactly L, members take σ_v ε at the centres and are
// 2ε apart, |V| = ⌊√d L/ε⌋ on a diagonal (k = 1), (k!)^{1/k}, and the LSH's buckets counted by sorting.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/lower_bound_survey.hpp>

using namespace sparseact;
using namespace sparseact::lsh;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("test_members: random members plus the first with one sign flipped", "[lsh][lower][survey]") {
  const BumpFamily F = make_bump_family(16, 2, 0.2, 1.0);
  const Members M = test_members(F, 3, 9);
  REQUIRE(M.sigma.size() == 4);
  CHECK((M.sigma[3].array() != M.sigma[0].array()).count() == 1);
  CHECK(M.sigma[3](M.flipped_at) == -M.sigma[0](M.flipped_at));
  for (const auto& s : M.sigma) CHECK(s.cwiseAbs().minCoeff() == 1.0);
  CHECK(M.sigma[1] == random_signs(F, 9, stream_id(1, 1)));
}

TEST_CASE("lipschitz_pairs: points on the slice, steps of the stated lengths, radial pairs of ratio L", "[lsh][lower][survey]") {
  const double L = 2.5;
  const BumpFamily F = make_bump_family(16, 2, 0.2, L);
  const Eigen::VectorXd sigma = random_signs(F, 4, 0);
  const Eigen::MatrixXd P = F.E * F.E.transpose();  // projection onto G
  Eigen::MatrixXd X1, X2;
  for (PairKind kind : {PairKind::uniform, PairKind::local, PairKind::off_slice, PairKind::radial}) {
    CAPTURE(to_string(kind));
    lipschitz_pairs(F, kind, 1, 300, 4, X1, X2);
    REQUIRE(X1.cols() == 300);
    REQUIRE(X2.cols() == 300);
    CHECK((P * X1 - X1).cwiseAbs().maxCoeff() < 1e-12);  // the first point always lies in G
    if (kind != PairKind::off_slice) CHECK((P * X2 - X2).cwiseAbs().maxCoeff() < 1e-12);
    const Eigen::VectorXd dist = (X1 - X2).colwise().norm();
    if (kind == PairKind::local || kind == PairKind::off_slice) {
      CHECK(dist.minCoeff() >= 0.05 * F.side * (1 - 1e-12));
      CHECK(dist.maxCoeff() <= 1.5 * F.side * (1 + 1e-12));
    }
    if (kind == PairKind::radial) {
      // x = v + t u, x' = v + t' u with t < t' ≤ ε/L: f = σ_v (ε − L t) on the ray, so |Δf| = L |t' − t|.
      const Eigen::VectorXd f1 = evaluate(F, sigma, X1), f2 = evaluate(F, sigma, X2);
      for (Eigen::Index p = 0; p < 300; ++p) CHECK_THAT(std::abs(f1(p) - f2(p)) / dist(p), WithinRel(L, 1e-9));
    }
  }
}

TEST_CASE("lipschitz_survey and separation_survey: the family's properties (1) and (3)", "[lsh][lower][survey]") {
  const double eps = 0.25, L = 1.0;
  const BumpFamily F = make_bump_family(16, 1, eps, L);
  const Members M = test_members(F, 3, 2);
  int members_done = 0;
  const LipschitzSurvey lip = lipschitz_survey(F, M.sigma, 500, 2, [&] { ++members_done; });
  CHECK(members_done == 4);
  CHECK(lip.rows.size() == 16);
  CHECK(lip.max_ratio <= L * (1 + 1e-12));
  CHECK_THAT(lip.min_radial_ratio, WithinRel(L, 1e-9));
  CHECK(lip.max_gradient <= L * (1 + 1e-12));
  CHECK(lip.max_overlap <= 1);

  const SeparationSurvey sep = separation_survey(F, M.sigma);
  REQUIRE(sep.at_centres.rows() == F.size());
  for (int m = 0; m < 4; ++m)  // f_σ(v) = σ_v ε: each centre is the apex of its own bump only
    CHECK((sep.at_centres.col(m) - eps * M.sigma[std::size_t(m)]).cwiseAbs().maxCoeff() < 1e-15);
  CHECK(sep.centre_error < 1e-15);
  CHECK(sep.pairs.size() == 6);  // 4 members (|V| = 16 makes equal random members unlikely)
  CHECK_THAT(sep.min_sup_distance, WithinRel(2 * eps, 1e-14));
  for (const auto& p : sep.pairs) CHECK_THAT(p.sup_distance, WithinRel(2 * eps, 1e-14));
  const auto flipped = std::find_if(sep.pairs.begin(), sep.pairs.end(), [](const auto& p) { return p.m1 == 0 && p.m2 == 3; });
  REQUIRE(flipped != sep.pairs.end());
  CHECK(flipped->differing_signs == 1);
}

TEST_CASE("family_size_sweep: |V| = ⌊√d L/ε⌋ on a diagonal, each count that of the family built alone", "[lsh][lower][survey]") {
  const std::vector<FamilySizeCurve> curves = family_size_sweep(16, 0.1, 1.0, 32);
  REQUIRE(curves.size() == 3);  // 16 is a multiple of 1, 2 and 4
  const FamilySizeCurve& c1 = curves[0];
  CHECK(c1.k == 1);
  REQUIRE(c1.x.size() == 7);
  for (std::size_t i = 0; i < c1.x.size(); ++i) {
    // k = 1: the slice is the diagonal segment of length 2√d, cut into cells of side 2ε/L, all inside.
    CHECK(c1.centres[i] == std::floor(4.0 / c1.eps[i] * (1 + 1e-12)));
    CHECK(c1.width_bound[i] == c1.centres[i] / 32);
    CHECK_THAT(c1.lsh_table[i], WithinRel(4.0 / c1.eps[i], 1e-14));
  }
  CHECK_THAT(c1.slope, WithinAbs(1.0, 0.05));
  for (const auto& c : curves) {
    CAPTURE(c.k);
    for (std::size_t i = 0; i < c.x.size(); ++i) {
      CHECK(c.centres[i] == double(make_bump_family(16, c.k, c.eps[i], 1.0).size()));
      CHECK(c.centres[i] >= c.lower_bound[i]);
    }
  }
  CHECK(family_size_sweep(6, 0.1, 1.0, 32).size() == 2);  // 6 is not a multiple of 4: no k = 3
}

TEST_CASE("asymptotic_proof_constant, sample_lower_bound and slice_buckets in closed form and by sorting", "[lsh][lower][survey]") {
  CHECK(asymptotic_proof_constant(1) == 1.0);
  CHECK_THAT(asymptotic_proof_constant(2), WithinRel(std::sqrt(2.0), 1e-15));
  CHECK_THAT(asymptotic_proof_constant(3), WithinRel(std::cbrt(6.0), 1e-15));
  // k (√d L/(Cε))^k log(2√d L/(Cε)) at d = 16, k = 2, ε = 0.1, L = 1, C = 2: 2 · 20² · log 40.
  CHECK_THAT(sample_lower_bound(16, 2, 0.1, 1.0, 2.0), WithinRel(800 * std::log(40.0), 1e-14));

  const BumpFamily F = make_bump_family(16, 2, 0.2, 1.0);
  const Eigen::Index buckets = slice_buckets(F, 4, 3000, 5);
  const auto codes = hash(make_euclidean_lsh(16, 4, 0.2, 5, 3), sample_slice(F, 3000, 5, 4));
  std::vector<std::vector<std::int32_t>> cols;
  for (Eigen::Index n = 0; n < codes.cols(); ++n) cols.emplace_back(codes.col(n).data(), codes.col(n).data() + codes.rows());
  std::sort(cols.begin(), cols.end());
  CHECK(buckets == std::unique(cols.begin(), cols.end()) - cols.begin());
}
