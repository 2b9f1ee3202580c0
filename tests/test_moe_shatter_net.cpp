// The search in R^n and at depth J (moe/shatter_net): its counts never exceed the exact ones (on R against
// moe/shatter_search, in the plane against Cover's count), it reaches the textbook VC dimension of one ReLU unit
// (halfspaces: n + 1), and every certificate it returns passes the exact verifier inside its class.
#include <catch2/catch.hpp>

#include <algorithm>

#include <sparseact/core/rng.hpp>
#include <sparseact/moe/shatter_net.hpp>

using namespace sparseact;
using namespace sparseact::moe;

namespace {

Eigen::MatrixXd gaussian(int n, int m, std::uint64_t stream) {
  Rng rng(21, stream);
  Eigen::MatrixXd X(n, m);
  for (auto& v : X.reshaped()) v = rng.normal();
  return X;
}

void all_certificates_verify(const NetGrowth& g, const NetSearchSpec& s, const Eigen::MatrixXd& X) {
  REQUIRE(g.certificates.total == (1L << g.vc_found));
  CHECK(g.certificates.verified == g.certificates.total);
  const Eigen::MatrixXd S = X.leftCols(g.vc_found);
  for (const auto& l : g.certificates.json["labelings"]) {
    const NetCertificate c = certificate_from_json(l["certificate"]);
    CHECK(verify(c, class_of(s), S, l["labels"].get<std::vector<int>>()).empty());
    CHECK(int(c.experts.front().size()) == s.J + 1);
  }
}

}  // namespace

TEST_CASE("one ReLU unit in the plane: the search reaches VC = 3 (halfspaces) and never beats Cover's count", "[moe][shatter_net]") {
  const NetSearchSpec s{.relu = true, .J = 1, .W = 1, .L = 1, .stacks = 64};
  const Eigen::MatrixXd X = gaussian(2, 6, 1);
  const NetGrowth g = net_growth(s, X, 6, 3);
  CHECK(g.vc_found == 3);
  REQUIRE(g.realized.size() == 4);  // stops at the first m with a miss
  CHECK(g.realized[3] <= 14);       // Cover: 2(1 + 3 + 3) labelings of 4 points by halfspaces of R²
  all_certificates_verify(g, s, X);
}

TEST_CASE("on R the search finds no labeling the exact 1-D engine rejects", "[moe][shatter_net]") {
  Rng rng(5, 5);
  std::vector<double> pts(6);
  for (auto& v : pts) v = rng.normal();
  Eigen::MatrixXd X(1, 6);
  for (int i = 0; i < 6; ++i) X(0, i) = pts[std::size_t(i)];
  for (const bool relu : {true, false}) {
    const NetSearchSpec s{.relu = relu, .J = 1, .W = 1, .L = 1, .stacks = 64};
    const NetGrowth g = net_growth(s, X, 6, 9);
    const SearchGrowth exact = search_growth({relu ? SearchClass::relu : SearchClass::prelu, 1, 1}, pts, 6);
    CAPTURE(relu);
    for (std::size_t m = 0; m < g.realized.size(); ++m) CHECK(g.realized[m] <= exact.realized[m]);
    CHECK(g.vc_found <= exact.vc_found);
    all_certificates_verify(g, s, X);
  }
}

TEST_CASE("deeper experts and mixtures: certificates in their class, mixtures shatter more", "[moe][shatter_net]") {
  const Eigen::MatrixXd X = gaussian(2, 8, 2);
  const NetSearchSpec deep{.relu = false, .J = 2, .W = 2, .L = 1, .stacks = 48};
  const NetGrowth gd = net_growth(deep, X, 6, 4);
  CHECK(gd.vc_found >= 3);
  all_certificates_verify(gd, deep, X);
  const NetSearchSpec one{.relu = true, .J = 1, .W = 1, .L = 1, .stacks = 48};
  const NetSearchSpec mix{.relu = true, .J = 1, .W = 1, .L = 2, .stacks = 48, .partitions = 48};
  const NetGrowth g1 = net_growth(one, X, 8, 4), g2 = net_growth(mix, X, 8, 4);
  CHECK(g2.vc_found > g1.vc_found);
  all_certificates_verify(g2, mix, X);
  CHECK_THROWS(net_growth(one, X, 0, 1));
  CHECK_THROWS(net_growth(NetSearchSpec{.J = 0}, X, 3, 1));
}
