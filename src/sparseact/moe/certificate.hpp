#pragma once
// Certificates of realised labelings in paper 003's own terms, one format and one verifier for every class of
// vc_shatter and vc_super_expressive:
//
//   a MoMLP (Definition 3.2): prototypes p_1 … p_L (none: a single cell), x routed by eq. (5) (lowest index on
//   exact ties); expert l is eq. (2) on features φ(x),
//     layers ({A⁽⁰⁾, b⁽⁰⁾, γ⁽⁰⁾}, …, {A⁽ᴶ⁾, b⁽ᴶ⁾}):  x⁽ʲ⁺¹⁾ = σ_{γ⁽ʲ⁾} • (A⁽ʲ⁾ x⁽ʲ⁾ + b⁽ʲ⁾),  f = A⁽ᴶ⁾ x⁽ᴶ⁾ + b⁽ᴶ⁾,
//   with σ_γ(z) = z (z ≥ 0), γz (z < 0) per neuron (Definition 3.1), or σ_γ(z) = γz + (1 − γ)σ*(z) for the
//   super-expressive activation (Definition 4.3, eq. (9)); label 1 iff f(x) > 0 (eq. (3)).
//   φ = x for networks; the fixed-feature classes use φ = (x, …, x^k) (poly, interval: k = 2) or (x, ‖x‖²) (ball)
//   and J = 0 (one affine layer).
//
// Every entry is an exact rational: the verifier routes and evaluates in cpp_rational, so a certificate either
// realises its labeling or it does not, without rounding. JSON writes an entry that is a double exactly as a
// number and any other rational as the string "p/q"; reading accepts both.
//
// A certificate also has to lie in its class (`CertificateClass`): at most L cells, depth J, width ≤ W, γ = 0
// for ReLU classes, b = 0 for homogeneous halfspaces, the last weight ≤ 0 for intervals and balls.
#include <string>
#include <vector>

#include <Eigen/Core>
#include <boost/multiprecision/cpp_int.hpp>
#include <nlohmann/json.hpp>

#include <sparseact/moe/shatter.hpp>
#include <sparseact/moe/shatter_search.hpp>

namespace sparseact::moe {

using Rational = boost::multiprecision::cpp_rational;

enum class FeatureMap { identity, powers, ball_lift };
enum class Activation { prelu, sigma_star };

struct RationalLayer {
  std::vector<std::vector<Rational>> A;  ///< rows
  std::vector<Rational> b;
  std::vector<Rational> gamma;  ///< one per neuron; empty for the output layer
};

struct NetCertificate {
  Activation activation = Activation::prelu;
  FeatureMap phi = FeatureMap::identity;
  int degree = 1;                                   ///< powers: k
  std::vector<std::vector<Rational>> prototypes;    ///< L points (empty: one cell)
  std::vector<std::vector<RationalLayer>> experts;  ///< one per cell, eq. (2)'s order
};

struct CertificateClass {
  int max_cells = 1;         ///< L
  int depth = 0;             ///< J: hidden layers of each expert
  int max_width = 0;         ///< W (0: no limit, J = 0)
  bool relu = false;         ///< every γ = 0
  bool bias_free = false;    ///< b = 0 (homogeneous halfspaces)
  bool last_nonpositive = false;  ///< the last feature weight ≤ 0 (intervals, balls)
};

/// f_l(φ(x)) for expert l, exactly.
Rational evaluate(const NetCertificate& c, std::size_t expert, const std::vector<Rational>& x);
/// Eq. (5) in rationals.
std::size_t route(const NetCertificate& c, const std::vector<Rational>& x);
/// "" when the certificate lies in the class and labels every column of X as `labels`; else the first reason
/// it does not ("point 3: label 0, f = 1/2", "γ ≠ 0 in a ReLU class", …).
std::string verify(const NetCertificate& c, const CertificateClass& cls, const Eigen::MatrixXd& X, const std::vector<int>& labels);

/// The fixed-feature classes' (w, b) per cell as eq. (2) with J = 0.
NetCertificate certificate_of(const FeatureClass& fc, const Certificate& cert);
CertificateClass class_of(const FeatureClass& fc);
/// The search classes on R: ExpertFit's β + s₀x + Σ δ_w (dir_w(x − t_w))₊ rewritten as one hidden layer of
/// σ_γ units (ReLU: γ = 0; PReLU: the linear part s₀x carried by one unit's γ), exactly.
NetCertificate certificate_of(const SearchSpec& s, const MomlpFit& fit);
CertificateClass class_of(const SearchSpec& s);
/// Proposition 4.4's one σ*-unit for labels b_1 … b_k: hidden A = a = Σ b_i 2^i + ½, b = 0, γ = 0; output 1, −1.
NetCertificate super_expressive_certificate(const std::vector<int>& labels);
/// x_i = 2^{−i}, i = 1 … k, as a 1 × k matrix (exact doubles for k ≤ 1074).
Eigen::MatrixXd dyadic_points(int k);

/// Certificates for every labeling of a shattered set, verified here by `verify`:
/// {"class", "points", "labelings": [{"labels", "certificate"}…]} and the counts.
struct CertificateSet {
  nlohmann::json json;
  long total = 0, verified = 0;
};
/// The fixed class's first g.vc_found points (columns of X) and g.shattered.
CertificateSet certify_shattered(const FeatureClass& c, const Eigen::MatrixXd& X, const Growth& g);
/// The search class's first m points, sorted (as search_growth sorts them), every labeling fitted afresh.
CertificateSet certify_shattered(const SearchSpec& s, std::vector<double> points, int m);

nlohmann::json to_json(const NetCertificate& c);
/// Throws std::invalid_argument on a malformed certificate.
NetCertificate certificate_from_json(const nlohmann::json& j);
/// A rational as JSON: a number when it is a double exactly, else "p/q".
nlohmann::json rational_json(const Rational& r);
Rational rational_from_json(const nlohmann::json& j);

}  // namespace sparseact::moe
