// Lipschitz targets of paper 000 §5.1 / App. D: hand-computed values, exact gradients against
// central differences, the coefficient normalisation, and Lipschitz bounds that hold on random pairs.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <stdexcept>

#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/targets.hpp>

using namespace sparseact;
using namespace sparseact::lsh;

namespace {

Eigen::MatrixXd cube_points(Eigen::Index d, Eigen::Index N, std::uint64_t stream) {
  Rng rng(7, stream);
  Eigen::MatrixXd X(d, N);
  for (Eigen::Index n = 0; n < N; ++n)
    for (Eigen::Index i = 0; i < d; ++i) X(i, n) = rng.uniform(-1.0, 1.0);
  return X;
}

// Central differences of f at the columns of X, step h: error O(h²) for smooth f.
Eigen::MatrixXd central_differences(const Target& f, const Eigen::MatrixXd& X, double h) {
  Eigen::MatrixXd G(X.rows(), X.cols());
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    Eigen::MatrixXd P = X, M = X;
    P.row(i).array() += h;
    M.row(i).array() -= h;
    G.row(i) = (f(P) - f(M)).transpose() / (2 * h);
  }
  return G;
}

// max over pairs of |f(x) − f(x')| / (L̂ ‖x − x'‖): uniform pairs and close pairs (steps of 1e-3..0.1).
double worst_pair_ratio(const Target& f, double Lhat, std::uint64_t stream) {
  const Eigen::Index d = f.dims(), N = 2000;
  const Eigen::MatrixXd X1 = cube_points(d, N, stream), X2 = cube_points(d, N, stream + 1);
  Eigen::MatrixXd X3 = X1;
  Rng rng(9, stream);
  for (Eigen::Index n = 0; n < N; ++n) {
    Eigen::VectorXd u(d);
    for (Eigen::Index i = 0; i < d; ++i) u(i) = rng.normal();
    X3.col(n) += rng.uniform(1e-3, 0.1) * u / u.norm();
    X3.col(n) = X3.col(n).cwiseMax(-1.0).cwiseMin(1.0);  // stay in the cube
  }
  const Eigen::VectorXd f1 = f(X1), f2 = f(X2), f3 = f(X3);
  double worst = 0;
  for (Eigen::Index n = 0; n < N; ++n) {
    const double a = (X1.col(n) - X2.col(n)).norm(), b = (X1.col(n) - X3.col(n)).norm();
    if (a > 0) worst = std::max(worst, std::abs(f1(n) - f2(n)) / (Lhat * a));
    if (b > 0) worst = std::max(worst, std::abs(f1(n) - f3(n)) / (Lhat * b));
  }
  return worst;
}

}  // namespace

TEST_CASE("polynomial: hand-computed value, gradient and bound for p = 0.5 x0² x1 − 0.25 x2", "[lsh][targets]") {
  const RandomPolynomial p({{{2, 1, 0}, 0.5}, {{0, 0, 1}, -0.25}}, 3);
  CHECK(p.degree() == 3);
  Eigen::MatrixXd X(3, 2);
  X << 0.3, 1.0, -0.7, -1.0, 0.4, 0.5;
  const Eigen::VectorXd v = p(X);
  CHECK(v(0) == Approx(0.5 * 0.09 * -0.7 - 0.25 * 0.4).epsilon(1e-15));  // −0.1315
  CHECK(v(1) == Approx(0.5 * 1 * -1 - 0.25 * 0.5).epsilon(1e-15));
  const Eigen::MatrixXd G = p.gradient(X);
  CHECK(G(0, 0) == Approx(0.5 * 2 * 0.3 * -0.7).epsilon(1e-15));  // −0.21
  CHECK(G(1, 0) == Approx(0.5 * 0.09).epsilon(1e-15));
  CHECK(G(2, 0) == Approx(-0.25).epsilon(1e-15));
  // (Σ|c| α_i)_i = (1, 0.5, 0.25)
  CHECK(p.lipschitz_bound() == Approx(std::sqrt(1.0 + 0.25 + 0.0625)).epsilon(1e-15));
  CHECK(p.coef_sum() == Approx(0.75));
}

TEST_CASE("polynomial: C(d+D, D) distinct monomials of degree ≤ D, coefficients scaled to Σ|c| = coef_sum", "[lsh][targets]") {
  CHECK(monomial_count(8, 4) == 495);
  CHECK(monomial_count(64, 4) == 814385);
  CHECK(monomial_count(3, 0) == 1);
  const RandomPolynomial p(8, 4, 1.0, 1);
  REQUIRE(p.terms().size() == 495);
  std::set<std::vector<int>> seen;
  int prev_degree = 0;
  for (const auto& t : p.terms()) {
    int deg = 0;
    for (int e : t.powers) deg += e;
    CHECK(deg <= 4);
    CHECK(deg >= prev_degree);  // ordered by total degree
    prev_degree = deg;
    CHECK(std::abs(t.coef) <= 1.0);
    seen.insert(t.powers);
  }
  CHECK(seen.size() == 495);
  CHECK(p.coef_sum() == Approx(1.0).epsilon(1e-14));
  // §5.1's normalisation Σ|c| < 1/D: then ‖∇p‖ ≤ D Σ|c| < 1 on the cube.
  const RandomPolynomial q(8, 4, 0.999 / 4, 1);
  CHECK(q.coef_sum() == Approx(0.999 / 4).epsilon(1e-14));
  CHECK(q.lipschitz_bound() < 1.0);
  // Same seed and stream, same coefficients up to the scale.
  CHECK(q.terms()[17].coef == Approx(p.terms()[17].coef * 0.999 / 4).epsilon(1e-14));
  CHECK(RandomPolynomial(8, 4, 1.0, 2).terms()[0].coef != p.terms()[0].coef);
  CHECK_THROWS_AS(RandomPolynomial(0, 4, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(RandomPolynomial(8, -1, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(RandomPolynomial(8, 4, -1.0, 1), std::invalid_argument);
}

TEST_CASE("polynomial: the exact gradient agrees with central differences", "[lsh][targets]") {
  const RandomPolynomial p(8, 4, 1.0, 3);
  const Eigen::MatrixXd X = cube_points(8, 50, 1);
  const Eigen::MatrixXd G = p.gradient(X), Gfd = central_differences(p, X, 1e-5);
  CHECK((G - Gfd).cwiseAbs().maxCoeff() < 1e-9);
}

TEST_CASE("hypercube: v_y at the corners exactly, the direct 2^d sum inside", "[lsh][targets]") {
  const Eigen::Index d = 5;
  const HypercubeFunction f(d, 11);
  const auto& v = f.corner_values();
  REQUIRE(v.size() == 32);
  for (double x : v) CHECK(std::abs(x) == 1.0);
  Eigen::MatrixXd corners(d, 32);
  for (int y = 0; y < 32; ++y)
    for (int i = 0; i < d; ++i) corners(i, y) = (y >> i) & 1 ? 1.0 : -1.0;
  const Eigen::VectorXd fc = f(corners);
  for (int y = 0; y < 32; ++y) CHECK(fc(y) == v[y]);  // exactly
  const Eigen::MatrixXd X = cube_points(d, 40, 2);
  const Eigen::VectorXd fx = f(X);
  for (Eigen::Index n = 0; n < X.cols(); ++n) {
    double direct = 0;
    for (int y = 0; y < 32; ++y) {
      double ind = 1;
      for (int i = 0; i < d; ++i) ind *= (1 + corners(i, y) * X(i, n)) / 2;
      direct += v[y] * ind;
    }
    CHECK(fx(n) == Approx(direct).margin(1e-14));
  }
  CHECK_THROWS_AS(HypercubeFunction(21, 1), std::invalid_argument);
  CHECK_THROWS_AS(HypercubeFunction(0, 1), std::invalid_argument);
  CHECK_THROWS_AS(HypercubeFunction(std::vector<double>{1, 2, 3}), std::invalid_argument);
}

TEST_CASE("hypercube: gradient against central differences; Lipschitz bound is the max over corners", "[lsh][targets]") {
  const HypercubeFunction f(8, 5);
  const Eigen::MatrixXd X = cube_points(8, 60, 3);
  // f is multilinear, so central differences are exact up to rounding.
  CHECK((f.gradient(X) - central_differences(f, X, 1e-4)).cwiseAbs().maxCoeff() < 1e-10);
  // The bound equals max over all 256 corners of ‖∇f‖ computed by gradient().
  Eigen::MatrixXd corners(8, 256);
  for (int y = 0; y < 256; ++y)
    for (int i = 0; i < 8; ++i) corners(i, y) = (y >> i) & 1 ? 1.0 : -1.0;
  CHECK(f.lipschitz_bound() == Approx(f.gradient(corners).colwise().norm().maxCoeff()).epsilon(1e-14));
  CHECK(f.lipschitz_bound() <= f.lipschitz_bound_analytic());
  CHECK(f.lipschitz_bound_analytic() == Approx(std::sqrt(8.0)));
  // A hand case in d = 2: v = (v_{−−}, v_{+−}, v_{−+}, v_{++}) = (1, −1, −1, 1), f = x0 x1: ∇f = (x1, x0), sup ‖∇f‖ = √2.
  const HypercubeFunction g(std::vector<double>{1, -1, -1, 1});
  Eigen::MatrixXd x(2, 1);
  x << 0.3, -0.6;
  CHECK(g(x)(0) == Approx(0.3 * -0.6).epsilon(1e-15));
  CHECK(g.gradient(x)(0, 0) == Approx(-0.6).epsilon(1e-15));
  CHECK(g.lipschitz_bound() == Approx(std::sqrt(2.0)).epsilon(1e-15));
}

TEST_CASE("low-dimensional target p(Ax): orthonormal A, values, gradient, the image box", "[lsh][targets]") {
  const LowDimTarget f(64, 8, 4, 1.0, 21);
  const Eigen::MatrixXd& A = f.A();
  REQUIRE(A.rows() == 8);
  REQUIRE(A.cols() == 64);
  CHECK((A * A.transpose() - Eigen::MatrixXd::Identity(8, 8)).cwiseAbs().maxCoeff() < 1e-14);
  const Eigen::MatrixXd X = cube_points(64, 30, 4);
  // f forms A X inside the library (OpenBLAS), the test with Eigen's own product: equal to rounding.
  const Eigen::VectorXd direct = f.polynomial()(A * X);
  CHECK((f(X) - direct).cwiseAbs().maxCoeff() <= 1e-13 * std::max(1.0, direct.cwiseAbs().maxCoeff()));
  CHECK((f.gradient(X) - central_differences(f, X, 1e-5)).cwiseAbs().maxCoeff() < 1e-8);
  // z_j = a_jᵀx reaches ‖a_j‖₁ > 1 at x = sign(a_j): the image is not [−1, 1]^k.
  const Eigen::VectorXd r = f.image_box();
  for (Eigen::Index j = 0; j < 8; ++j) {
    const Eigen::VectorXd x = A.row(j).transpose().unaryExpr([](double a) { return a >= 0 ? 1.0 : -1.0; });
    CHECK((A * x)(j) == Approx(r(j)).epsilon(1e-14));
    CHECK(r(j) > 1.0);
  }
  CHECK((A * X).cwiseAbs().colwise().maxCoeff().maxCoeff() <= r.maxCoeff());
  CHECK_THROWS_AS(LowDimTarget(4, 5, 4, 1.0, 1), std::invalid_argument);
}

TEST_CASE("Lipschitz bounds hold on random pairs and lie above the gradient estimates, for every target", "[lsh][targets]") {
  const RandomPolynomial poly(8, 4, 1.0, 1);
  const HypercubeFunction cube(8, 1);
  const LowDimTarget low(16, 3, 4, 1.0, 1);
  const Target* targets[] = {&poly, &cube, &low};
  std::uint64_t stream = 100;
  for (const Target* f : targets) {
    CAPTURE(f->name());
    const double Lhat = f->lipschitz_bound();
    CHECK(worst_pair_ratio(*f, Lhat, stream) <= 1.0 + 1e-12);
    const double est = lipschitz_estimate(*f, cube_points(f->dims(), 3000, stream + 7));
    CHECK(est > 0);
    CHECK(est <= Lhat * (1 + 1e-12));
    stream += 10;
  }
  // The hypercube bound is sharp: it is attained at a corner.
  Eigen::MatrixXd corners(8, 256);
  for (int y = 0; y < 256; ++y)
    for (int i = 0; i < 8; ++i) corners(i, y) = (y >> i) & 1 ? 1.0 : -1.0;
  CHECK(lipschitz_estimate(cube, corners) == Approx(cube.lipschitz_bound()).epsilon(1e-14));
}

TEST_CASE("targets do not depend on the thread count", "[lsh][targets][reproducible]") {
  const RandomPolynomial poly(8, 4, 1.0, 1);
  const HypercubeFunction cube(10, 2);
  const Eigen::MatrixXd X = cube_points(8, 500, 5), Y = cube_points(10, 500, 6);
  const Eigen::VectorXd a = poly(X), b = cube(Y);
  const Eigen::MatrixXd ga = poly.gradient(X), gb = cube.gradient(Y);
  // Columns are computed independently and identically on any thread: evaluating one column at a
  // time gives the same bits.
  for (Eigen::Index n = 0; n < 500; n += 97) {
    CHECK(poly(X.col(n))(0) == a(n));
    CHECK(cube(Y.col(n))(0) == b(n));
    CHECK((poly.gradient(X.col(n)) - ga.col(n)).cwiseAbs().maxCoeff() == 0.0);
    CHECK((cube.gradient(Y.col(n)) - gb.col(n)).cwiseAbs().maxCoeff() == 0.0);
  }
}
