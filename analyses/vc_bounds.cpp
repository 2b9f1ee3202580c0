// vc_bounds — paper 003 Theorem 4.2 (Lemma B.3, eqs. (25)–(32)): the VC-dimension bound of mixtures of
// PReLU MLP experts, term by term, over a grid of depth J, width W, leaves L and input dimension n.
//
// The bound composes Bartlett et al.'s D* for one expert (eq. (31)), the VC dimension of Voronoi diagrams
// with at most L cells (eq. (25)) and two applications of Blumer et al.'s lemma (eqs. (26)–(28)). The proof
// then simplifies (28) to (29); we check that last step for every L: it is false exactly for L ≤ 12, whatever the
// logarithm's base (an erratum, ERRATA 003).
// The measured VC dimensions these bounds must exceed come from vc_shatter.
#include <cmath>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/moe/vc_bounds.hpp>

using namespace sparseact;
using namespace sparseact::app;

int main(int argc, char** argv) {
  Analysis analysis({.name = "vc_bounds",
                     .paper = "003",
                     .claims = {"Theorem 4.2", "Lemma B.3"},
                     .description = "Theorem 4.2's VC bound for MoMLPs term by term (eqs. (25), (28), (29), (31)) and the proof's step (28) ≤ (29)"});
  auto& app = analysis.app();
  std::string J_text = "1,2,4,8", W_text = "2,4,16,64", L_text = "1,2,3,4,6,8,12,13,16,32,64,128,1024", n_text = "1,2,8";
  app.add_option("--J", J_text, "expert depths (comma list)")->capture_default_str();
  app.add_option("--W", W_text, "expert widths")->capture_default_str();
  app.add_option("--L", L_text, "numbers of leaves (experts)")->capture_default_str();
  app.add_option("--n", n_text, "input dimensions")->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const auto ints = [](const std::string& flag, const std::string& text) {
      std::vector<int> v;
      for (double x : parse_number_list(flag, text, 1, 1e6, true)) v.push_back(int(x));
      return v;
    };
    const std::vector<int> Js = ints("--J", J_text), Ws = ints("--W", W_text), Ls = ints("--L", L_text), ns = ints("--n", n_text);

    // --- Run: every term over the grid --------------------------------------------------------------
    Table bounds{"bounds", {"J", "W", "L", "n", "d_star", "voronoi", "eq28", "eq29"}, {}};
    for (int J : Js)
      for (int W : Ws)
        for (int L : Ls)
          for (int n : ns) {
            const double d = moe::d_star(J, W);
            bounds.add_row({double(J), double(W), double(L), double(n), d, moe::voronoi_term(n, L), moe::eq28(d, n, L), moe::eq29(d, n, L)});
          }

    // --- Check: the proof's simplification (28) ≤ (29), per L (M cancels: it depends on L alone) ------
    std::vector<Point> step;
    std::vector<int> fails;
    for (int L : Ls) {
      const double lhs = moe::eq28(1.0, 1, L), rhs = moe::eq29(1.0, 1, L);
      step.push_back({fmt::format("L = {}", L), lhs / rhs, 1.0});
      if (lhs > rhs) fails.push_back(L);
    }
    // (28) ≤ (29) ⟺ log 6 · log(3L) ≤ (log max{2, L})²: M > 0 cancels and so does the logarithm's base (every
    // term is a product of two logarithms). With x = ln L (L ≥ 2) it is x² − ln 6·x − ln 6·ln 3 ≥ 0, i.e. L ≥ L*.
    const double l6 = std::log(6.0), l3 = std::log(3.0);
    const double L_star = std::exp((l6 + std::sqrt(l6 * l6 + 4 * l6 * l3)) / 2);
    for_all(a, {.id = "step_28_29", .claim = "Theorem 4.2 (proof, Appendix B.2)",
                .statement = "eq. (28) ≤ eq. (29) for every L ≥ 1; M = max{d, 2(n + 1)(L − 1) log(3L − 3)} > 0 and the logarithm's base cancel, "
                             "so it reads log 6 · log(3L) ≤ (log max{2, L})² (measured: (28)/(29), bound 1)",
                .note = fmt::format("False exactly for L ∈ {{1, …, 12}} whatever the base: for L ≥ 2, x = ln L must satisfy x² − ln 6·x − ln 6·ln 3 ≥ 0, "
                                    "i.e. L ≥ L* = exp((ln 6 + √(ln²6 + 4 ln 6 ln 3))/2) = {:.4f}; L = 1 (max{{2, L}} = 2) fails too, with the "
                                    "Voronoi term 0·log 0 read as 0. Smallest counterexample with every term defined: L = 2, where (28) = 16 (log₂ 6)² M "
                                    "≈ 106.9 M > (29) = 16 M. Failing here: L ∈ {{{}}}. We report (28) as Theorem 4.2's bound and (29) beside it.",
                                    L_star, fmt::join(fails, ", ")),
                .erratum = "ERRATA.md 003: Theorem 4.2 step (28)→(29)"},
            Relation::at_most, step, "values of L");
    a.result.data["step_28_29_threshold_L_star"] = L_star;

    // The bound's shape: the Voronoi term overtakes D* once L is large enough (the max in (28) switches).
    json crossover = json::array();
    for (int J : Js)
      for (int W : Ws)
        for (int n : ns) {
          int L = 1;
          while (L < (1 << 30) && moe::voronoi_term(n, L) < moe::d_star(J, W)) L *= 2;
          crossover.push_back({{"J", J}, {"W", W}, {"n", n}, {"d_star", moe::d_star(J, W)}, {"voronoi_exceeds_d_star_from_L_at_most", L}});
        }
    a.result.data["voronoi_overtakes_d_star"] = crossover;
    a.result.data["step_28_29_fails_at_L"] = fails;
    a.add_table(std::move(bounds));

    // --- Figure: (28) and (29) against L for the first (J, W, n) ------------------------------------------
    plot::Figure fig{.name = "vc_bounds_eq28_eq29", .title = fmt::format("Theorem 4.2's bound, J = {}, W = {}, n = {}", Js[0], Ws[0], ns[0]),
                     .xlabel = "experts L", .ylabel = "VC bound", .logx = true, .logy = true, .legend = "top left"};
    plot::Series s28{.label = "eq. (28) (the bound)", .style = plot::Style::linespoints}, s29{.label = "eq. (29)", .style = plot::Style::linespoints},
        sd{.label = "D* (one expert, eq. (31))", .style = plot::Style::lines, .dashed = true};
    for (int L : Ls) {
      const double d = moe::d_star(Js[0], Ws[0]);
      s28.x.push_back(L), s28.y.push_back(moe::eq28(d, ns[0], L));
      s29.x.push_back(L), s29.y.push_back(moe::eq29(d, ns[0], L));
      sd.x.push_back(L), sd.y.push_back(d);
    }
    fig.series = {s28, s29, sd};
    a.add_figure(std::move(fig));
  });
}
