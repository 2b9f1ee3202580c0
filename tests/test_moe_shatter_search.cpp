// The 1-D search classes of paper 003 (moe/shatter_search): every labeling of sorted points is realised
// iff its sign changes fit the closed form, for ReLU and PReLU layers (W ≤ 2) and MoMLPs (L ≤ 2).
#include <catch2/catch.hpp>

#include <sparseact/moe/shatter_search.hpp>

using namespace sparseact::moe;

TEST_CASE("1-D MLPs and MoMLPs realise exactly the labelings their sign-change counts allow", "[moe][shatter_search]") {
  const std::vector<double> x{-1.3, -0.2, 0.1, 0.7, 1.9, 2.2, 3.5};
  for (SearchClass kind : {SearchClass::relu, SearchClass::prelu, SearchClass::momlp_relu, SearchClass::momlp})
    for (int W : {1, 2}) {
      const SearchSpec s{kind, W, 2};
      if ((kind == SearchClass::momlp || kind == SearchClass::momlp_relu) && W == 2) continue;  // kept quick
      const int allowed = known_vc_1d(s) - 1;  // changes the class allows
      CAPTURE(to_string(kind), W);
      for (long bits = 0; bits < 128; ++bits) {
        std::vector<int> y(7);
        for (int i = 0; i < 7; ++i) y[std::size_t(i)] = int((bits >> i) & 1);
        const auto fit = fit_class(s, x, y);
        CAPTURE(bits);
        CHECK(fit.has_value() == (sign_changes(y) <= allowed));
        if (fit) CHECK(verify_fit(s, x, y, *fit));
      }
    }
}

TEST_CASE("Search growth finds the closed-form VC dimensions on R", "[moe][shatter_search]") {
  const std::vector<double> pts{0.31, -1.2, 2.4, 0.9, -0.4, 1.7, 3.1, -2.2};
  CHECK(search_growth({SearchClass::relu, 1, 1}, pts, 4).vc_found == 2);
  CHECK(search_growth({SearchClass::prelu, 1, 1}, pts, 5).vc_found == 3);
  CHECK(search_growth({SearchClass::momlp, 1, 2}, pts, 8).vc_found == 6);
  CHECK_THROWS_AS(parse_search_class("tanh"), std::invalid_argument);
}
