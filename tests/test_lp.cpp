// core/lp: GLPK behind a small RAII interface. Textbook LPs with known optima, infeasible and
// unbounded ones on every solver path (presolve on and off, floating point and exact), arguments
// GLPK would abort on, and the feasibility query on sets with closed-form Chebyshev radii. Then
// linear separability as strict feasibility, against Radon's theorem and Cover's function-counting
// theorem: the VC dimension of halfspaces in Rⁿ is n + 1 (paper 003 decides shattering this way).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <Eigen/Dense>

#include <sparseact/core/lp.hpp>
#include <sparseact/core/rng.hpp>

using namespace sparseact;
using lp::inf;

namespace {

std::vector<lp::SolveOptions> every_path() {
  std::vector<lp::SolveOptions> paths;
  for (bool presolve : {true, false})
    for (bool exact : {false, true}) {
      lp::SolveOptions o;
      o.presolve = presolve;
      o.exact = exact;
      paths.push_back(o);
    }
  return paths;
}

std::string describe(const lp::SolveOptions& o) {
  return std::string(o.presolve ? "presolve" : "no presolve") + (o.exact ? ", exact" : ", simplex");
}

/// Wyndor Glass (Hillier & Lieberman, Introduction to Operations Research, §3.1):
/// max 3x + 5y s.t. x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18, x, y ≥ 0; optimum 36 at (2, 6).
lp::Problem wyndor() {
  lp::Problem P;
  P.add_variables(2, 0.0, inf);
  Eigen::MatrixXd A(3, 2);
  A << 1, 0, 0, 2, 3, 2;
  P.add_constraints(A, Eigen::VectorXd::Constant(3, -inf), Eigen::Vector3d(4, 12, 18));
  P.set_objective(Eigen::Vector2d(3, 5), lp::Sense::maximize);
  return P;
}

/// Strict separability of labelled points (columns of X, labels ±1) by an affine halfspace:
/// some (w, c) with y_i (x_iᵀw + c) > 0, i.e. −y_i [x_iᵀ 1] (w, c) < 0 strictly.
struct Separation {
  bool separable;
  Eigen::VectorXd w;
  double c;
};
Separation separate(const Eigen::MatrixXd& X, const std::vector<int>& y) {
  const Eigen::Index n = X.rows(), N = X.cols();
  Eigen::MatrixXd A(N, n + 1);
  for (Eigen::Index i = 0; i < N; ++i) {
    A.row(i).head(n) = -y[i] * X.col(i).transpose();
    A(i, n) = -y[i];
  }
  const lp::Feasibility f = lp::feasibility(A, Eigen::VectorXd::Zero(N));
  return {f.strictly_feasible, f.x.head(n), f.x(n)};
}

/// Labelling number `mask` of N points: y_i = +1 where bit i is set.
std::vector<int> labelling(std::uint32_t mask, Eigen::Index N) {
  std::vector<int> y(N);
  for (Eigen::Index i = 0; i < N; ++i) y[i] = (mask >> i) & 1u ? 1 : -1;
  return y;
}

/// Every labelling the LP calls separable must come with a (w, c) that separates.
bool witness_separates(const Eigen::MatrixXd& X, const std::vector<int>& y, const Separation& s) {
  for (Eigen::Index i = 0; i < X.cols(); ++i)
    if (!(y[i] * (X.col(i).dot(s.w) + s.c) > 0)) return false;
  return true;
}

/// The labellings of the columns of X that no halfspace realises, as bit masks.
std::vector<std::uint32_t> non_separable(const Eigen::MatrixXd& X, bool* witnesses_ok) {
  std::vector<std::uint32_t> out;
  const Eigen::Index N = X.cols();
  for (std::uint32_t mask = 0; mask < (1u << N); ++mask) {
    const std::vector<int> y = labelling(mask, N);
    const Separation s = separate(X, y);
    if (!s.separable) out.push_back(mask);
    else if (!witness_separates(X, y, s)) *witnesses_ok = false;
  }
  return out;
}

/// N integer points in {−9, …, 9}ⁿ in general position: every n + 1 of them affinely independent
/// (the lifted (x, 1) ∈ Rⁿ⁺¹ linearly independent, the hypothesis of Cover's theorem). Integer data
/// make glp_exact exact for the data themselves.
Eigen::MatrixXd general_position_points(Eigen::Index n, Eigen::Index N, std::uint64_t stream) {
  Rng rng(2024, stream);
  for (;;) {
    Eigen::MatrixXd X(n, N);
    for (Eigen::Index i = 0; i < X.size(); ++i) X(i) = static_cast<double>(static_cast<int>(rng.next_u64() % 19) - 9);
    bool general = true;
    // Every (n+1)-subset: choose by bit masks with n + 1 bits set.
    for (std::uint32_t mask = 0; mask < (1u << N) && general; ++mask) {
      if (__builtin_popcount(mask) != n + 1) continue;
      Eigen::MatrixXd M(n + 1, n + 1);
      Eigen::Index col = 0;
      for (Eigen::Index i = 0; i < N; ++i)
        if ((mask >> i) & 1u) {
          M.col(col).head(n) = X.col(i);
          M(n, col++) = 1.0;
        }
      general = std::abs(M.determinant()) > 0.5;  // an integer determinant: 0 or at least 1
    }
    if (general) return X;
  }
}

/// C(N, n + 1) = 2 Σ_{k=0}^{n} C(N − 1, k): dichotomies of N points in general position in Rⁿ that
/// an affine halfspace realises (Cover 1965, Theorem 1, applied to the lifted points in Rⁿ⁺¹).
std::uint32_t cover_count(Eigen::Index N, Eigen::Index n) {
  std::uint32_t sum = 0, binom = 1;  // C(N − 1, k)
  for (Eigen::Index k = 0; k <= n && k <= N - 1; ++k) {
    sum += binom;
    binom = binom * static_cast<std::uint32_t>(N - 1 - k) / static_cast<std::uint32_t>(k + 1);
  }
  return 2 * sum;
}

}  // namespace

TEST_CASE("lp: Wyndor Glass, max 3x + 5y = 36 at (2, 6), on every solver path", "[lp]") {
  for (const lp::SolveOptions& o : every_path()) {
    INFO(describe(o));
    lp::Problem P = wyndor();
    const lp::Solution s = P.solve(o);
    REQUIRE(s.optimal());
    CHECK(s.objective == Approx(36.0).epsilon(1e-14));
    CHECK(s.x(0) == Approx(2.0).epsilon(1e-14));
    CHECK(s.x(1) == Approx(6.0).epsilon(1e-14));
  }
}

TEST_CASE("lp: a minimum at a vertex with fractional coordinates, and exact rationals", "[lp]") {
  // min x + y s.t. x + 2y ≥ 4, 3x + y ≥ 6, x, y ≥ 0. The vertices of the feasible region are (0, 6),
  // (4, 0) and the crossing (8/5, 6/5), with values 6, 4 and 14/5: the minimum is 14/5.
  for (const lp::SolveOptions& o : every_path()) {
    INFO(describe(o));
    lp::Problem P;
    P.add_variables(2, 0.0, inf);
    P.add_constraint(Eigen::Vector2d(1, 2), 4.0, inf);
    P.add_constraint(Eigen::Vector2d(3, 1), 6.0, inf);
    P.set_objective(Eigen::Vector2d(1, 1), lp::Sense::minimize);
    const lp::Solution s = P.solve(o);
    REQUIRE(s.optimal());
    // glp_exact rounds its rational answer toward zero: within one ulp of the nearest double.
    CHECK(s.objective == Approx(14.0 / 5).epsilon(o.exact ? 3e-16 : 1e-12));
    CHECK(s.x(0) == Approx(8.0 / 5).epsilon(o.exact ? 3e-16 : 1e-12));
    CHECK(s.x(1) == Approx(6.0 / 5).epsilon(o.exact ? 3e-16 : 1e-12));
  }
}

TEST_CASE("lp: equality, ranged row, free and one-sided variables, objective constant", "[lp]") {
  // min 2x₁ + 3x₂ − x₃ + x₄ + 5 s.t. x₁ + x₂ + x₃ + x₄ = 10, x₁ − x₂ ≥ −2, −3 ≤ x₃ − x₄ ≤ 4,
  // x₁ ∈ [−1, 6], x₂ ≥ 0, x₃ ≤ 8, x₄ free. The region is a polytope (x₂ ≤ x₁ + 2 ≤ 8 bounds the
  // rest); enumerating every basic solution (numpy, all 4-subsets of the 9 inequalities, equality
  // as two) gives the minimum −1 at (−1, 0, 7.5, 3.5).
  for (const lp::SolveOptions& o : every_path()) {
    INFO(describe(o));
    lp::Problem P;
    P.add_variables(1, -1.0, 6.0);
    P.add_variables(1, 0.0, inf);
    P.add_variables(1, -inf, 8.0);
    CHECK(P.add_variables(1, -inf, inf) == 3);
    CHECK(P.add_constraint(Eigen::Vector4d(1, 1, 1, 1), 10.0, 10.0) == 0);
    P.add_constraint(Eigen::Vector4d(1, -1, 0, 0), -2.0, inf);
    P.add_constraint(Eigen::Vector4d(0, 0, 1, -1), -3.0, 4.0);
    P.set_objective(Eigen::Vector4d(2, 3, -1, 1), lp::Sense::minimize, 5.0);
    CHECK(P.variables() == 4);
    CHECK(P.constraints() == 3);
    const lp::Solution s = P.solve(o);
    REQUIRE(s.optimal());
    CHECK(s.objective == Approx(-1.0).epsilon(1e-13));
    CHECK((s.x - Eigen::Vector4d(-1, 0, 7.5, 3.5)).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("lp: infeasible and unbounded LPs on every solver path", "[lp]") {
  for (const lp::SolveOptions& o : every_path()) {
    INFO(describe(o));
    {  // x + y ≤ 1 and x + y ≥ 2
      lp::Problem P;
      P.add_variables(2, 0.0, inf);
      P.add_constraint(Eigen::Vector2d(1, 1), -inf, 1.0);
      P.add_constraint(Eigen::Vector2d(1, 1), 2.0, inf);
      P.set_objective(Eigen::Vector2d(1, 0), lp::Sense::maximize);
      const lp::Solution s = P.solve(o);
      CHECK(s.status == lp::Status::infeasible);
      CHECK(std::isnan(s.objective));
      CHECK(s.x.size() == 0);
    }
    {  // max x + y s.t. x − y ≤ 1, x, y ≥ 0: the ray (1, 1) stays feasible
      lp::Problem P;
      P.add_variables(2, 0.0, inf);
      P.add_constraint(Eigen::Vector2d(1, -1), -inf, 1.0);
      P.set_objective(Eigen::Vector2d(1, 1), lp::Sense::maximize);
      CHECK(P.solve(o).status == lp::Status::unbounded);
      // The same region has a minimum: 0 at the origin.
      P.set_objective(Eigen::Vector2d(1, 1), lp::Sense::minimize);
      const lp::Solution s = P.solve(o);
      REQUIRE(s.optimal());
      CHECK(s.objective == 0.0);
    }
    {  // Infeasible and dual infeasible at once (x₁ − x₂ ∈ [1, 0] is empty; −x₃ is unbounded below):
       // no x exists, so the verdict is infeasible, not unbounded.
      lp::Problem P;
      P.add_variables(3, -inf, inf);
      P.add_constraint(Eigen::Vector3d(1, -1, 0), 1.0, inf);
      P.add_constraint(Eigen::Vector3d(1, -1, 0), -inf, 0.0);
      P.set_objective(Eigen::Vector3d(0, 0, -1), lp::Sense::minimize);
      CHECK(P.solve(o).status == lp::Status::infeasible);
    }
  }
}

TEST_CASE("lp: LPs without constraint coefficients are decided exactly", "[lp]") {
  lp::Problem P;
  P.add_variables(1, -2.0, 3.0);
  P.add_variables(1, 0.0, inf);
  P.set_objective(Eigen::Vector2d(1, 1e-12), lp::Sense::minimize, 1.0);  // GLPK's trivial path would call 1e-12 zero
  lp::Solution s = P.solve();
  REQUIRE(s.optimal());
  CHECK(s.objective == -1.0);
  CHECK(s.x == Eigen::Vector2d(-2, 0));
  P.set_objective(Eigen::Vector2d(1, 1e-12), lp::Sense::maximize);
  CHECK(P.solve().status == lp::Status::unbounded);
  // A zero row reads lo ≤ 0 ≤ hi: 1e-9 ≤ 0 is false, however small (GLPK's tolerance is 1e-7).
  P.add_constraint(Eigen::Vector2d(0, 0), 1e-9, inf);
  CHECK(P.solve().status == lp::Status::infeasible);
  P.set_constraint_bounds(0, -1e-9, 0.0);
  P.set_objective(Eigen::Vector2d(-1, 0), lp::Sense::minimize);
  s = P.solve();
  REQUIRE(s.optimal());
  CHECK(s.x == Eigen::Vector2d(3, 0));
  // No variables at all.
  lp::Problem empty;
  s = empty.solve();
  REQUIRE(s.optimal());
  CHECK(s.objective == 0.0);
  CHECK(s.x.size() == 0);
}

TEST_CASE("lp: changing bounds and objective re-solves the same problem", "[lp]") {
  lp::Problem P = wyndor();
  P.set_variable_bounds(0, 0.0, 1.0);  // x ≤ 1: the optimum moves to (1, 6), 3 + 30 = 33
  lp::Solution s = P.solve();
  REQUIRE(s.optimal());
  CHECK(s.objective == Approx(33.0));
  P.set_constraint_bounds(1, -inf, 8.0);  // 2y ≤ 8: (1, 4), 3 + 20 = 23
  s = P.solve();
  REQUIRE(s.optimal());
  CHECK(s.objective == Approx(23.0));
  P.set_variable_bounds(1, 5.0, 5.0);  // y = 5 against 2y ≤ 8
  CHECK(P.solve().status == lp::Status::infeasible);
}

TEST_CASE("lp: arguments GLPK would abort on throw instead", "[lp]") {
  lp::Problem P;
  const double nan = std::nan("");
  CHECK_THROWS_AS(P.add_variables(2, 1.0, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(P.add_variables(2, nan, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(P.add_variables(2, inf, inf), std::invalid_argument);
  CHECK_THROWS_AS(P.add_variables(2, -inf, -inf), std::invalid_argument);
  CHECK_THROWS_AS(P.add_variables(-1, 0.0, 1.0), std::invalid_argument);
  CHECK(P.variables() == 0);
  P.add_variables(2, 0.0, 1.0);
  CHECK_THROWS_AS(P.add_constraint(Eigen::Vector3d(1, 1, 1), 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(P.add_constraint(Eigen::Vector2d(1, nan), 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(P.add_constraint(Eigen::Vector2d(1, inf), 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(P.add_constraint(Eigen::Vector2d(1, 1), 2.0, 1.0), std::invalid_argument);
  Eigen::MatrixXd A(2, 2);
  A << 1, 2, 3, 4;
  CHECK_THROWS_AS(P.add_constraints(A, Eigen::Vector2d(0, 0), Eigen::Vector2d(1, -1)), std::invalid_argument);
  CHECK(P.constraints() == 0);  // a bad row leaves the problem as it was
  CHECK_THROWS_AS(P.set_variable_bounds(2, 0.0, 1.0), std::out_of_range);
  CHECK_THROWS_AS(P.set_constraint_bounds(0, 0.0, 1.0), std::out_of_range);
  CHECK_THROWS_AS(P.set_objective(Eigen::Vector3d(1, 1, 1), lp::Sense::minimize), std::invalid_argument);
  CHECK_THROWS_AS(P.set_objective(Eigen::Vector2d(1, 1), lp::Sense::minimize, inf), std::invalid_argument);
  CHECK_THROWS_AS(lp::feasibility(A, Eigen::Vector3d(1, 1, 1)), std::invalid_argument);
  CHECK_THROWS_AS(lp::feasibility(A, Eigen::Vector2d(1, nan)), std::invalid_argument);
}

TEST_CASE("lp: Problem moves, and a moved-from one refuses work", "[lp]") {
  lp::Problem P = wyndor();
  lp::Problem Q = std::move(P);
  CHECK(Q.solve().objective == Approx(36.0));
  CHECK_THROWS_AS(P.solve(), std::logic_error);  // NOLINT(bugprone-use-after-move): the contract under test
  CHECK_THROWS_AS(P.variables(), std::logic_error);
  P = std::move(Q);
  CHECK(P.solve().objective == Approx(36.0));
  std::vector<lp::Problem> many;
  for (int i = 0; i < 50; ++i) many.push_back(wyndor());  // reallocation moves them
  for (lp::Problem& p : many) CHECK(p.solve().optimal());
}

TEST_CASE("lp: nothing on stdout, from a fresh thread's GLPK environment too", "[lp]") {
  std::fflush(stdout);
  char path[] = "/tmp/sparseact_lp_stdout_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved = ::dup(1);
  ::dup2(fd, 1);
  std::thread t([] {  // GLPK 5 keeps term_out per thread: this thread starts with it on
    for (const lp::SolveOptions& o : every_path()) {
      lp::Problem P = wyndor();
      P.solve(o);
      P.add_constraint(Eigen::Vector2d(1, 1), 100.0, inf);
      P.solve(o);
    }
  });
  t.join();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  ::close(fd);
  ::unlink(path);
  CHECK(size == 0);
}

TEST_CASE("lp::feasibility: Chebyshev radii in closed form, empty and touching sets", "[lp]") {
  for (bool exact : {true, false}) {
    INFO((exact ? "exact" : "simplex"));
    // The unit square [0, 1]²: the largest inscribed ball has radius 1/2, centre (1/2, 1/2).
    Eigen::MatrixXd A(4, 2);
    A << 1, 0, -1, 0, 0, 1, 0, -1;
    lp::Feasibility f = lp::feasibility(A, Eigen::Vector4d(1, 0, 1, 0), exact);
    CHECK(f.feasible);
    CHECK(f.strictly_feasible);
    CHECK(f.depth == Approx(0.5).epsilon(1e-15));
    CHECK((f.x - Eigen::Vector2d(0.5, 0.5)).norm() < 1e-14);
    // The triangle x, y ≥ 0, x + y ≤ 1: inradius 2·area/perimeter = 1/(2 + √2).
    Eigen::MatrixXd T(3, 2);
    T << -1, 0, 0, -1, 1, 1;
    f = lp::feasibility(T, Eigen::Vector3d(0, 0, 1), exact);
    CHECK(f.strictly_feasible);
    CHECK(f.depth == Approx(1.0 / (2.0 + std::sqrt(2.0))).epsilon(1e-9));  // exact reads √2 as a fraction within 1e-10
    // A half-plane holds balls of any radius: depth is the cap, 1.
    f = lp::feasibility(Eigen::RowVector2d(1, 1), Eigen::VectorXd::Constant(1, -3.0), exact);
    CHECK(f.strictly_feasible);
    CHECK(f.depth == 1.0);
    CHECK(f.x.sum() < -3.0);
    // Empty: x ≤ −1 and x ≥ 0. max_x min(−1 − x, x) = −1/2 at x = −1/2.
    Eigen::MatrixXd E(2, 1);
    E << 1, -1;
    f = lp::feasibility(E, Eigen::Vector2d(-1, 0), exact);
    CHECK_FALSE(f.feasible);
    CHECK_FALSE(f.strictly_feasible);
    CHECK(f.depth == Approx(-0.5).epsilon(1e-15));
    // Zero rows: 0 ≤ −1 is empty, 0 ≤ 0 is not strict, 0 ≤ 1 changes nothing.
    Eigen::MatrixXd Z(2, 2);
    Z << 0, 0, 1, 0;
    CHECK_FALSE(lp::feasibility(Z, Eigen::Vector2d(-1, 5), exact).feasible);
    f = lp::feasibility(Z, Eigen::Vector2d(0, 5), exact);
    CHECK((f.feasible && !f.strictly_feasible));
    CHECK(lp::feasibility(Z, Eigen::Vector2d(1, 5), exact).strictly_feasible);
    CHECK(lp::feasibility(Eigen::MatrixXd(0, 3), Eigen::VectorXd(0), exact).strictly_feasible);
  }
  // Touching: x ≤ 0 and x ≥ 0 leave the single point 0, feasible and not strictly. Exactly 0 with
  // glp_exact; the simplex's depth is 0 only to its tolerance.
  Eigen::MatrixXd A(2, 1);
  A << 1, -1;
  const lp::Feasibility f = lp::feasibility(A, Eigen::Vector2d(0, 0));
  CHECK(f.feasible);
  CHECK_FALSE(f.strictly_feasible);
  CHECK(f.depth == 0.0);
  CHECK(f.x(0) == 0.0);
}

TEST_CASE("lp::feasibility: XOR is not linearly separable, AND and OR are", "[lp]") {
  Eigen::MatrixXd X(2, 4);  // (0,0), (0,1), (1,0), (1,1)
  X << 0, 0, 1, 1, 0, 1, 0, 1;
  const std::vector<int> xor_labels{-1, 1, 1, -1}, and_labels{-1, -1, -1, 1}, or_labels{-1, 1, 1, 1};
  CHECK_FALSE(separate(X, xor_labels).separable);
  CHECK_FALSE(separate(X, {1, -1, -1, 1}).separable);  // XNOR
  for (const auto& y : {and_labels, or_labels}) {
    const Separation s = separate(X, y);
    CHECK(s.separable);
    CHECK(witness_separates(X, y, s));
  }
}

TEST_CASE("lp::feasibility: halfspaces in Rⁿ shatter n + 1 points and no n + 2 (n = 1, 2, 3)", "[lp]") {
  for (Eigen::Index n = 1; n <= 3; ++n) {
    INFO("n = " << n);
    bool witnesses_ok = true;
    // n + 1 affinely independent points, 0 and e₁, …, eₙ: all 2ⁿ⁺¹ labellings realised.
    Eigen::MatrixXd simplex = Eigen::MatrixXd::Zero(n, n + 1);
    simplex.rightCols(n).setIdentity();
    CHECK(non_separable(simplex, &witnesses_ok).empty());
    // n + 2 points in general position: exactly two labellings fail (Cover: C(n+2, n+1) = 2ⁿ⁺² − 2
    // realised), and they are the Radon partition and its complement. Radon's partition, found
    // without any LP: λ ≠ 0 with Σ λ_i x_i = 0 and Σ λ_i = 0 (the kernel of [X; 1ᵀ]) splits the
    // points by the sign of λ_i, and the two convex hulls meet at Σ_{λ_i>0} λ_i x_i / Σ_{λ_i>0} λ_i.
    for (std::uint64_t trial = 0; trial < 3; ++trial) {
      const Eigen::MatrixXd X = general_position_points(n, n + 2, 10 * n + trial);
      Eigen::MatrixXd M(n + 1, n + 2);
      M.topRows(n) = X;
      M.row(n).setOnes();
      const Eigen::VectorXd lambda = Eigen::FullPivLU<Eigen::MatrixXd>(M).kernel().col(0);
      std::uint32_t radon = 0;
      for (Eigen::Index i = 0; i < n + 2; ++i) radon |= (lambda(i) > 0 ? 1u : 0u) << i;
      const std::uint32_t all = (1u << (n + 2)) - 1;
      const std::vector<std::uint32_t> bad = non_separable(X, &witnesses_ok);
      CHECK((1u << (n + 2)) - bad.size() == cover_count(n + 2, n));
      REQUIRE(bad.size() == 2);
      CHECK(((bad[0] == radon && bad[1] == (all ^ radon)) || (bad[1] == radon && bad[0] == (all ^ radon))));
    }
    CHECK(witnesses_ok);
  }
}

TEST_CASE("lp::feasibility: every 4 points in the plane have a labelling no halfplane realises", "[lp]") {
  // VC dimension 3 in R²: no 4 points are shattered, in general position or not.
  std::vector<Eigen::MatrixXd> configurations;
  Eigen::MatrixXd square(2, 4), triangle_and_centre(2, 4), collinear(2, 4), three_on_a_line(2, 4), repeated(2, 4);
  square << 0, 1, 1, 0, 0, 0, 1, 1;
  triangle_and_centre << 0, 3, 0, 1, 0, 0, 3, 1;
  collinear << 0, 1, 2, 3, 0, 1, 2, 3;
  three_on_a_line << 0, 1, 2, 0, 0, 0, 0, 1;
  repeated << 0, 0, 1, 2, 0, 0, 1, 0;
  configurations = {square, triangle_and_centre, collinear, three_on_a_line, repeated};
  for (std::uint64_t s = 0; s < 5; ++s) configurations.push_back(general_position_points(2, 4, 100 + s));
  bool witnesses_ok = true;
  for (const Eigen::MatrixXd& X : configurations) {
    INFO("points\n" << X);
    CHECK_FALSE(non_separable(X, &witnesses_ok).empty());
  }
  CHECK(witnesses_ok);
  // Beyond the VC dimension, Cover's count for 6 points in general position: C(6, 3) = 32 of 64.
  const Eigen::MatrixXd X = general_position_points(2, 6, 7);
  CHECK((1u << 6) - non_separable(X, &witnesses_ok).size() == cover_count(6, 2));
  CHECK(cover_count(6, 2) == 32);
  CHECK(witnesses_ok);
}

TEST_CASE("lp::feasibility: the same verdicts from OpenMP threads, each with its own GLPK", "[lp][reproducible]") {
  const Eigen::MatrixXd X = general_position_points(3, 6, 5);
  const int labellings = 1 << 6;
  std::vector<int> serial(labellings), parallel(labellings);
  for (int m = 0; m < labellings; ++m) serial[m] = separate(X, labelling(m, 6)).separable;
#pragma omp parallel for num_threads(2) schedule(dynamic)
  for (int m = 0; m < labellings; ++m) parallel[m] = separate(X, labelling(m, 6)).separable;
  CHECK(serial == parallel);
  CHECK(static_cast<std::uint32_t>(std::count(serial.begin(), serial.end(), 1)) == cover_count(6, 3));
}
