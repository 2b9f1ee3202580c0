#pragma once
// Paper 001 §4.6 / Theorem 7 (spectral concentration of accumulated steps) and §8.5's measurement.
//
// Effective window (§4.6, Appendix D): weight decay w at learning rate η_r weights a step t steps
// back by r^t, r = 1 − η_r w; the tail beyond k has weight r^{k+1}/(1 − r) ≤ τ once
//     k ≥ ln(τ(1 − r))/ln r − 1.
// Theorem 7, with c = p/(bT) ∈ [0, 1], α ≥ a, β ≥ E√(p tr((T − I)ᵀ(T − I))), v ≥ v_0 ≥ 2c:
//     τ_7 = (c/p)(1 + β + 2(√2 + 1)α)
//     eq. (11): (v_0 + (1 − c))/√2 > τ_7/v_0 + 2√(c v_0) + 2√τ_7
//     Q = √(c + (2√2 + 2)cα/(vp) + cβ/(vp) + c/(vp)),  m = min(bT, p)
//     eq. (9):  bound = √2/(c√v) · α²/(v m²) · Q,     eq. (10): bound = √2/(c√v) · α/m · Q
// §8.5's a and β: for vectors x_k (layer inputs, or gradients w.r.t. the layer outputs) with
// second-moment matrix S = (1/N) Σ x_k x_kᵀ, a = tr(S)/tr(S²) and T = aS; the paper reports a by
// tr(T) = tr(S)²/tr(S²) ("we directly compute T^p = aS^p without normalizing S^p and compute ...
// tr(T^p) to illustrate a"), and β = √(p tr((T − I)ᵀ(T − I))). Algebra: ‖T − I‖_F² = p − tr(T),
// so β/p = √(1 − tr(T)/p) < 1 whenever S ≠ 0 — §8.5's "β/p never exceeds 1" holds by construction.
#include <cmath>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>

namespace sparseact::flatness {

/// Smallest integer k with k ≥ ln(τ(1 − r))/ln r − 1, r = 1 − lr·wd; +∞ when lr·wd = 0.
double effective_window(double tau, double lr, double wd);

struct Theorem7Terms {
  double p = 0, bT = 0, alpha = 0, beta = 0, v = 0, v0 = 0;
  double c = 0;        ///< p/(bT)
  double tau = 0;      ///< τ_7
  double lhs11 = 0, rhs11 = 0, margin11 = 0;  ///< eq. (11): margin = lhs − rhs
  bool condition11 = false;                   ///< eq. (11) holds and v_0 ≥ 2c and c ≤ 1
  double bound9 = 0, bound10 = 0;
};

/// All of Theorem 7's numbers for dimension p, bT vectors, α, β and v ≥ v0.
Theorem7Terms theorem7_terms(double p, double bT, double alpha, double beta, double v, double v0);

struct Anisotropy {
  double a = 0;           ///< tr(T) = tr(S)²/tr(S²)  (§8.5's stand-in for a)
  double a_over_p = 0;
  double beta = 0;        ///< √(p tr((T − I)ᵀ(T − I))), T = (tr(S)/tr(S²)) S
  double beta_over_p = 0;
};

/// From the p×p second-moment matrix S (symmetric PSD, not all zero).
Anisotropy anisotropy(const Eigen::MatrixXd& S);

/// The mean of a/p and β/p (and of a, β) over layers, summed in layer order: §8.5 reports one
/// a/p and one β/p per run, the hidden layers' average.
Anisotropy layer_average(const std::vector<Anisotropy>& layers);

/// Appendix D's accumulated second moment with weight decay: the steps of the effective window
/// enter with weights r^{T−t}, r = 1 − η_r w,
///     S = Σ_t r^{T−t} Σ_{s ∈ batch t} x_s x_sᵀ,
/// summed over the steps t at which the vectors are collected (§8.5: every few steps). Only the
/// lower triangle is stored; the scale of S does not enter a/p or β/p.
class DecayedMoment {
 public:
  DecayedMoment(Eigen::Index p, double r) : lower_(Eigen::MatrixXd::Zero(p, p)), r_(r) {}

  /// Adds weight·X Xᵀ for the columns of X (p × batch) collected at step t (t increasing, counted
  /// from 1), after decaying what is already there by r^{t − t_prev}. The weight is explicit
  /// because Eigen 3.4's rankUpdate(c·X) applies the factor c once, not c² (it extracts the
  /// scalar as a BLAS alpha): pass X and c² instead of c·X.
  void add(long t, const Eigen::MatrixXd& X, double weight = 1.0) {
    if (X.rows() != lower_.rows() || t < last_t_) throw std::invalid_argument("DecayedMoment::add: X must have p rows and t must not decrease");
    lower_ *= std::pow(r_, static_cast<double>(t - last_t_));
    last_t_ = t;
    lower_.selfadjointView<Eigen::Lower>().rankUpdate(X, weight);
  }

  /// S with both triangles.
  Eigen::MatrixXd S() const { return lower_.selfadjointView<Eigen::Lower>(); }
  long last_step() const { return last_t_; }

 private:
  Eigen::MatrixXd lower_;
  double r_;
  long last_t_ = 0;
};

/// The number of accumulated vectors Theorem 7's bound uses: bT = b·min(T_ref, k), the run's
/// length capped by the effective window k (§4.6).
double accumulated_vectors(double batch, double T_ref, double window);

}  // namespace sparseact::flatness
