#pragma once
// Lipschitz targets of paper 000 §5.1 and Appendix D, with their Lipschitz constants both bounded
// analytically and estimated (a lower estimate from gradients at sampled points), so the theorems'
// L is known, not assumed.
//
//   Random polynomial (App. D.1): all monomials of total degree ≤ D in d variables (C(d+D, D) of
//     them, the constant included: 495 for d = 8, D = 4), coefficients U[−1, 1] scaled so
//     Σ|c_α| = coef_sum. Default coef_sum = 1, App. D.1's normalisation; §5.1 and App. D.2 say
//     Σ|c_α| < 1/D instead (ERRATA 000), which gives ‖∇p‖₂ ≤ ‖∇p‖₁ ≤ D Σ|c_α| < 1 on the cube.
//   Random hypercube function (§5.1): f(x) = Σ_{y∈{−1,1}^d} v_y Π_i (1 + y_i x_i)/2, v_y uniform on
//     {−1, 1} (ERRATA 000: "(0, 5, 0.5)" means (0.5, 0.5)).
//   Low-dimensional target (App. D.2): p(A x) with A ∈ R^{k×d} orthonormal rows (Haar), p a random
//     polynomial on R^k.
//
// Points are the columns of X (d × N), as everywhere in lsh/. Evaluation and gradients are exact,
// column-parallel under OpenMP, and do not depend on the thread count.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace sparseact::lsh {

/// A target f: R^d → R evaluated on columns, with its exact gradient.
//
// Why virtual and not std::variant<RandomPolynomial, HypercubeFunction, LowDimTarget>: the set of
// targets is open. A notebook or a user can define a new f (say sin(x₁)) by deriving from Target in one
// cell, and every function taking a const Target& (lipschitz_estimate, the notebook's fit_sweep) takes
// it unchanged; a variant closes the set, so a new target means editing this header and every
// std::visit. Under xeus-cling a virtual call is an ordinary call, while std::visit is a template
// instantiated at the call site, which clang-based interpreters handle poorly at a cell's top level
// (docs/DESIGN.md, Notebooks). The cost a variant would save is one indirect call per batch (each call
// evaluates a d × N matrix), nothing next to the O(N · terms) evaluation. Owners hold
// std::unique_ptr<Target> (the analyses) or a concrete target by value (tests, notebooks).
class Target {
 public:
  virtual ~Target() = default;
  virtual Eigen::Index dims() const = 0;
  virtual std::string name() const = 0;
  /// f at each column of X (d × N).
  virtual Eigen::VectorXd operator()(const Eigen::MatrixXd& X) const = 0;
  /// ∇f at each column of X, d × N.
  virtual Eigen::MatrixXd gradient(const Eigen::MatrixXd& X) const = 0;
  /// An upper bound on sup_{x ∈ [−1,1]^d} ‖∇f(x)‖₂: a Lipschitz constant on the cube.
  virtual double lipschitz_bound() const = 0;
};

struct Monomial {
  std::vector<int> powers;  ///< one exponent per variable
  double coef = 0;
};

/// The exponent vectors α ∈ N^d with |α| ≤ D, by total degree, then lexicographically with the
/// first variable's exponent largest first: (0,…,0), (1,0,…), (0,1,…), …, (2,0,…), (1,1,…), …
std::vector<std::vector<int>> monomial_exponents(Eigen::Index d, int degree);
/// C(d + D, D), the number of monomials of total degree ≤ D in d variables.
std::uint64_t monomial_count(Eigen::Index d, int degree);

class RandomPolynomial final : public Target {
 public:
  /// Coefficients U[−1, 1] from Rng(seed, stream), in monomial_exponents order, then scaled so
  /// Σ|c_α| = coef_sum (default 1: App. D.1). Throws std::invalid_argument on d < 1, D < 0,
  /// coef_sum < 0, or more than 10^7 monomials.
  RandomPolynomial(Eigen::Index d, int degree, double coef_sum, std::uint64_t seed, std::uint64_t stream = 0);
  explicit RandomPolynomial(std::vector<Monomial> terms, Eigen::Index d);  ///< for tests: given terms
  Eigen::Index dims() const override { return d_; }
  std::string name() const override;
  Eigen::VectorXd operator()(const Eigen::MatrixXd& X) const override;
  Eigen::MatrixXd gradient(const Eigen::MatrixXd& X) const override;
  double lipschitz_bound() const override;  ///< ‖(Σ_α |c_α| α_i)_i‖₂
  /// An upper bound on sup ‖∇p(z)‖₂ over z in the box |z_i| ≤ r_i intersected with the ball
  /// ‖z‖₂ ≤ ρ (ρ = +∞ for the box alone); see targets.cpp. On the cube (r = 1) it is lipschitz_bound().
  double gradient_bound(const Eigen::VectorXd& box_radii, double ball_radius) const;
  const std::vector<Monomial>& terms() const { return terms_; }
  int degree() const { return degree_; }
  double coef_sum() const;  ///< Σ|c_α|

 private:
  void index_terms();
  Eigen::Index d_;
  int degree_ = 0;
  std::vector<Monomial> terms_;
  /// Sparse form of terms_: the nonzero (variable, exponent) pairs of term t are
  /// factors_[offsets_[t] .. offsets_[t+1]).
  std::vector<std::pair<int, int>> factors_;
  std::vector<std::size_t> offsets_;
};

class HypercubeFunction final : public Target {
 public:
  static constexpr Eigen::Index max_dims = 20;  ///< 2^20 corner values (8 MiB)
  /// v_y = ±1 with probability 1/2 each from Rng(seed, stream), y enumerated by bits. Throws
  /// std::invalid_argument unless 1 ≤ d ≤ max_dims.
  HypercubeFunction(Eigen::Index d, std::uint64_t seed, std::uint64_t stream = 0);
  explicit HypercubeFunction(std::vector<double> corner_values);  ///< v_y, y enumerated by bits (bit i = 1 ↔ y_i = +1)
  Eigen::Index dims() const override { return d_; }
  std::string name() const override { return "hypercube"; }
  Eigen::VectorXd operator()(const Eigen::MatrixXd& X) const override;
  Eigen::MatrixXd gradient(const Eigen::MatrixXd& X) const override;
  /// sup_{[−1,1]^d} ‖∇f‖₂, exactly: the maximum over corners of ‖∇f(y)‖₂ (see targets.cpp), O(d 2^d).
  double lipschitz_bound() const override;
  /// The analytic bound (√d/2)·(max_y v_y − min_y v_y) ≥ lipschitz_bound() (√d for v ∈ {±1}).
  double lipschitz_bound_analytic() const;
  const std::vector<double>& corner_values() const { return v_; }

 private:
  Eigen::Index d_;
  std::vector<double> v_;  ///< 2^d corner values
};

class LowDimTarget final : public Target {  ///< p(A x), App. D.2
 public:
  /// A from the QR of a d × k Gaussian matrix (stream_id(stream, 0)), p a RandomPolynomial on R^k
  /// (stream_id(stream, 1)). Throws std::invalid_argument unless 1 ≤ k ≤ d.
  LowDimTarget(Eigen::Index d, Eigen::Index k, int degree, double coef_sum, std::uint64_t seed, std::uint64_t stream = 0);
  Eigen::Index dims() const override { return A_.cols(); }
  std::string name() const override;
  Eigen::VectorXd operator()(const Eigen::MatrixXd& X) const override;
  Eigen::MatrixXd gradient(const Eigen::MatrixXd& X) const override;
  double lipschitz_bound() const override;  ///< ‖A‖₂ · bound of p on the image A[−1,1]^d (see targets.cpp)
  const Eigen::MatrixXd& A() const { return A_; }
  const RandomPolynomial& polynomial() const { return *p_; }
  /// r_j = max_{x ∈ [−1,1]^d} |(A x)_j| = ‖a_j‖₁: the image A[−1,1]^d lies in Π_j [−r_j, r_j].
  Eigen::VectorXd image_box() const;

 private:
  Eigen::MatrixXd A_;  ///< k × d, orthonormal rows
  std::unique_ptr<RandomPolynomial> p_;
};

/// max over the columns x of X of ‖∇f(x)‖₂: a lower estimate of sup ‖∇f‖₂ over the region X samples
/// (so lipschitz_estimate ≤ lipschitz_bound when X lies in the cube).
double lipschitz_estimate(const Target& f, const Eigen::MatrixXd& X);

}  // namespace sparseact::lsh
