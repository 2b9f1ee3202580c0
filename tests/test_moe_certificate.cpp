// Certificates in paper 003's eq. (2) layout (moe/certificate): every labeling the engines realise — fixed-feature
// LPs and the 1-D MLP / MoMLP search — re-checked by the one rational verifier (a second, independent evaluation:
// routing by eq. (5), the forward pass of eq. (2), the sign of eq. (3)); JSON round trips keep them exact; tampered
// certificates and certificates outside their class are rejected.
#include <catch2/catch.hpp>

#include <algorithm>

#include <sparseact/core/rng.hpp>
#include <sparseact/moe/certificate.hpp>
#include <sparseact/moe/shatter_record.hpp>

using namespace sparseact;
using namespace sparseact::moe;
using json = nlohmann::json;

namespace {

std::vector<int> bits_of(long bits, int m) {
  std::vector<int> y(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) y[std::size_t(i)] = int((bits >> i) & 1);
  return y;
}

}  // namespace

TEST_CASE("fixed-feature certificates verify in eq. (2) form, and survive JSON", "[moe][certificate]") {
  for (FixedClass kind : {FixedClass::halfspace, FixedClass::homhalfspace, FixedClass::interval, FixedClass::poly, FixedClass::ball, FixedClass::pwaffine}) {
    FeatureClass c{.kind = kind, .n = (kind == FixedClass::interval || kind == FixedClass::poly) ? 1 : 2, .k = 3};
    if (kind == FixedClass::pwaffine) c.prototypes = pwaffine_prototypes(2, 2, 3);
    const int m = std::min(known_vc(c), 6);
    const Eigen::MatrixXd X = class_points(c, m, 11);
    CAPTURE(to_string(kind));
    for (long bits = 0; bits < (1L << m); ++bits) {
      const std::vector<int> y = bits_of(bits, m);
      const Decision d = decide(c, X, y);
      REQUIRE(d.realized);  // m ≤ VC: every labeling of points in general position
      const NetCertificate cert = certificate_of(c, d.certificate);
      CHECK(verify(cert, class_of(c), X, y).empty());
      CHECK(verify(certificate_from_json(to_json(cert)), class_of(c), X, y).empty());
      std::vector<int> flipped = y;
      flipped[0] = 1 - flipped[0];
      CHECK_FALSE(verify(cert, class_of(c), X, flipped).empty());
    }
  }
}

TEST_CASE("the search classes' fits rewritten as σ_γ layers realise the same labelings, exactly", "[moe][certificate]") {
  Rng rng(4, 4);
  std::vector<double> x(6);
  for (auto& v : x) v = rng.normal();
  std::sort(x.begin(), x.end());
  Eigen::MatrixXd X(1, 6);
  for (int i = 0; i < 6; ++i) X(0, i) = x[std::size_t(i)];
  bool saw_fraction = false;
  for (SearchClass kind : {SearchClass::relu, SearchClass::prelu, SearchClass::momlp_relu, SearchClass::momlp})
    for (int W : {1, 2}) {
      const SearchSpec s{kind, W, 2};
      CAPTURE(to_string(kind), W);
      long realised = 0;
      for (long bits = 0; bits < 64; ++bits) {
        const std::vector<int> y = bits_of(bits, 6);
        const auto fit = fit_class(s, x, y);
        if (!fit) continue;
        ++realised;
        const NetCertificate cert = certificate_of(s, *fit);
        const json j = to_json(cert);
        saw_fraction = saw_fraction || j.dump().find('/') != std::string::npos;
        CHECK(verify(cert, class_of(s), X, y).empty());
        CHECK(verify(certificate_from_json(j), class_of(s), X, y).empty());
      }
      CHECK(realised > 0);
    }
  CHECK(saw_fraction);  // some γ = s₀/(δ₁ + s₀) is not a double: written as "p/q" and still exact
}

TEST_CASE("PReLU rewriting: the direct unit, the mirrored unit (δ₁ = −s₀) and a kinkless expert equal the fit's formula", "[moe][certificate]") {
  // f(x) = β + s₀x + Σ δ_w (x − t_w)₊ evaluated directly against the certificate's σ_γ network at many points.
  const std::vector<ExpertFit> fits = {{.beta = 0.5, .s0 = 1.5, .kinks = {0.25, -1}, .delta = {-0.75, 2}, .dir = {1, 1}},
                                       {.beta = -1, .s0 = 2, .kinks = {0.5}, .delta = {-2}, .dir = {1}},  // δ₁ + s₀ = 0: mirrored
                                       {.beta = 0.25, .s0 = -3, .kinks = {}, .delta = {}, .dir = {}}};
  for (const ExpertFit& e : fits) {
    const NetCertificate c = certificate_of(SearchSpec{SearchClass::prelu, 2, 1}, MomlpFit{{0.0}, {e}});
    for (double x = -3; x <= 3; x += 0.125) {
      Rational want = Rational(e.beta) + Rational(e.s0) * Rational(x);
      for (std::size_t w = 0; w < e.kinks.size(); ++w)
        if (x > e.kinks[w]) want += Rational(e.delta[w]) * (Rational(x) - Rational(e.kinks[w]));
      CHECK(evaluate(c, 0, {Rational(x)}) == want);
    }
  }
}

TEST_CASE("certificates outside their class, or tampered, are rejected", "[moe][certificate]") {
  // One ReLU unit on R: f(x) = (x − 1)₊ − ½ labels x = 2 as 1 and x = 0 as 0.
  NetCertificate c;
  c.experts = {{RationalLayer{{{1}}, {-1}, {0}}, RationalLayer{{{1}}, {Rational(-1, 2)}, {}}}};
  Eigen::MatrixXd X(1, 2);
  X << 0, 2;
  const CertificateClass relu{.max_cells = 1, .depth = 1, .max_width = 1, .relu = true};
  CHECK(verify(c, relu, X, {0, 1}).empty());
  CHECK_FALSE(verify(c, relu, X, {1, 1}).empty());
  NetCertificate leaky = c;
  leaky.experts[0][0].gamma = {Rational(1, 3)};
  CHECK(verify(leaky, relu, X, {0, 1}).find("ReLU") != std::string::npos);
  CHECK(verify(c, CertificateClass{.max_cells = 1, .depth = 2, .max_width = 1}, X, {0, 1}).find("depth") != std::string::npos);
  // Two cells at equal prototypes are not a Voronoi diagram of distinct points; three cells exceed L = 2.
  NetCertificate two = c;
  two.prototypes = {{0}, {0}};
  two.experts.push_back(c.experts[0]);
  CHECK(verify(two, CertificateClass{.max_cells = 2, .depth = 1, .max_width = 1}, X, {0, 1}).find("coincide") != std::string::npos);
  two.prototypes = {{0}, {1}, {2}};
  two.experts.push_back(c.experts[0]);
  CHECK_FALSE(verify(two, CertificateClass{.max_cells = 2, .depth = 1, .max_width = 1}, X, {0, 1}).empty());
  // Eq. (5) ties: x = 1 is equidistant from 0 and 2 and goes to cell 0.
  NetCertificate tie;
  tie.prototypes = {{0}, {2}};
  tie.experts = {{RationalLayer{{{0}}, {1}, {}}}, {RationalLayer{{{0}}, {-1}, {}}}};
  CHECK(route(tie, {Rational(1)}) == 0);
  CHECK(rational_json(Rational(1, 3)) == "1/3");
  CHECK(rational_json(Rational(3, 4)) == 0.75);
  CHECK(rational_from_json(json("1/3")) == Rational(1, 3));
  CHECK_THROWS(rational_from_json(json("one third")));
  CHECK_THROWS(certificate_from_json(json::object()));
}

TEST_CASE("vc_shatter's work items: each engine's record holds the textbook VC dimension and verified certificates",
          "[moe][certificate][shatter_record]") {
  // Halfspaces in R² (VC 3, Cover's 2Σ_{k≤2} C(m − 1, k) labelings), a ReLU unit of width 1 on R (VC W + 1 = 2).
  const sparseact::Record half = shatter_record(FeatureClass{FixedClass::halfspace, 2, 2, {}}, 5, false, 3);
  CHECK(half.num("vc_found") == 3);
  CHECK(half.arr("realized") == std::vector<double>{2, 4, 8, 14, 22});
  CHECK(half.num("cert_total") == 8);
  CHECK(half.num("cert_verified") == 8);
  CHECK(half.num("unverified") == 0);
  CHECK(json::parse(half.str("certificates"))["labelings"].size() == 8);
  const sparseact::Record relu = shatter_record(SearchSpec{SearchClass::relu, 1, 1}, 4, 3, 7);
  CHECK(relu.num("vc_found") == 2);
  CHECK(relu.num("cert_verified") == relu.num("cert_total"));
  CHECK_FALSE(relu.has("lps"));
  // The network search is a lower bound: never above the 1-D class's exact value, certificates verified.
  const sparseact::Record net = shatter_record(NetSearchSpec{.relu = true, .J = 1, .W = 1, .L = 1, .stacks = 8, .partitions = 4}, 1, 4, 3, 7);
  CHECK(net.num("vc_found") <= 2);
  CHECK(net.num("cert_verified") == net.num("cert_total"));
}
