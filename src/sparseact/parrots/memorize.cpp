#include <sparseact/parrots/memorize.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include <boost/multiprecision/cpp_int.hpp>

#include <sparseact/core/lp.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::parrots {

namespace {

using Rational = boost::multiprecision::cpp_rational;

constexpr std::uint64_t kExamplesTag = 0x004'0D26;    // paper 004, App. D.2: the task's sequences and labels
constexpr std::uint64_t kFirstLayerTag = 0x004'0D28;  // paper 004, Lemma D.8: the experts' first layers

/// γ_k = k u/(1 − k u), u = 2⁻⁵³: a k-term dot product computed in doubles is within γ_k Σ|a_i b_i| of the exact one
/// (Higham, Accuracy and Stability, Lemma 3.1 and §3.1), in any summation order and with or without FMA.
double gamma(double k) {
  const double u = 0x1p-53;
  return k * u / (1 - k * u);
}

/// y Σ_j a_j σ(⟨w_j, x⟩) in rationals: every double is a rational, so this is the exact value.
Rational exact_margin(const Eigen::Ref<const Eigen::VectorXd>& x, int y, const Eigen::MatrixXd& W, const Eigen::VectorXd& a) {
  std::vector<Rational> xr(static_cast<std::size_t>(x.size()));
  for (Eigen::Index k = 0; k < x.size(); ++k) xr[std::size_t(k)] = Rational(x(k));
  Rational s = 0;
  for (Eigen::Index j = 0; j < W.cols(); ++j) {
    if (a(j) == 0.0) continue;
    Rational t = 0;
    for (Eigen::Index k = 0; k < W.rows(); ++k) t += Rational(W(k, j)) * xr[std::size_t(k)];
    if (t > 0) s += Rational(a(j)) * t;
  }
  return y > 0 ? s : Rational(-s);
}

}  // namespace

void validate(const MemorizationTask& t) {
  if (t.n < 1) throw std::invalid_argument("memorization: n must be at least 1");
  if (t.N < 1) throw std::invalid_argument("memorization: the sequence length N must be at least 1");
  if (t.m < 1) throw std::invalid_argument("memorization: the dimension m must be at least 1");
  if (!(t.c > 0) || !std::isfinite(t.c)) throw std::invalid_argument("memorization: the variance c must be positive and finite");
}

Eigen::VectorXd average_attention(const Eigen::Ref<const Eigen::MatrixXd>& X) {
  if (X.rows() < 1) throw std::invalid_argument("average_attention: empty sequence");
  return X.colwise().mean().transpose();  // paper 004, L720: x_i = (1/N) Σ_j (X^i)_j
}

Examples draw_examples(const MemorizationTask& t, std::uint64_t seed, std::uint64_t stream) {
  validate(t);
  Rng rng(seed, stream);
  const double sd = std::sqrt(t.c);
  Examples e;
  e.x.resize(t.m, t.n);
  e.y.resize(static_cast<std::size_t>(t.n));
  Eigen::MatrixXd X(t.N, t.m);
  for (int i = 0; i < t.n; ++i) {
    for (int r = 0; r < t.N; ++r)
      for (int k = 0; k < t.m; ++k) X(r, k) = sd * rng.normal();  // paper 004, L130: X^i[j] ~ N(0, c I_m)
    e.x.col(i) = average_attention(X);
    e.y[std::size_t(i)] = rng.rademacher() > 0 ? 1 : -1;  // L130: arbitrary labels; here uniform
  }
  return e;
}

int log2_experts(int K) {
  if (K < 1 || (K & (K - 1)) != 0) throw std::invalid_argument("K = " + std::to_string(K) + " is not a power of 2 (App. D.2, L671)");
  int k = 0;
  while ((1 << k) < K) ++k;
  return k;
}

int route(const Eigen::Ref<const Eigen::VectorXd>& x, int K) {
  const int k = log2_experts(K);
  if (x.size() < k) throw std::invalid_argument("route: the input has fewer than log₂K coordinates");
  int j = 0;
  for (int b = 0; b < k; ++b) j = 2 * j + (x(b) > 0 ? 1 : 0);  // paper 004, Lemma D.6: v_j = sign pattern of x
  return j;
}

int route_argmax(const Eigen::Ref<const Eigen::VectorXd>& x, int K) {
  const int k = log2_experts(K);
  if (x.size() < k) throw std::invalid_argument("route_argmax: the input has fewer than log₂K coordinates");
  int best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < K; ++j) {
    double score = 0;  // r_jᵀx, r_j = (v_j, 0, …, 0) (L671), v_j's entries from j's binary digits
    for (int b = 0; b < k; ++b) score += ((j >> (k - 1 - b)) & 1 ? 1.0 : -1.0) * x(b);
    if (score > best_score) best = j, best_score = score;  // L679's argmax, first maximum on ties
  }
  return best;
}

std::vector<int> route_all(const Eigen::MatrixXd& x, int K) {
  std::vector<int> r(static_cast<std::size_t>(x.cols()));
  for (Eigen::Index i = 0; i < x.cols(); ++i) r[std::size_t(i)] = route(x.col(i), K);
  return r;
}

std::vector<long> expert_loads(const std::vector<int>& routes, int K) {
  std::vector<long> loads(static_cast<std::size_t>(K), 0);
  for (int j : routes) {
    if (j < 0 || j >= K) throw std::out_of_range("expert_loads: route outside 0 … K − 1");
    ++loads[std::size_t(j)];
  }
  return loads;
}

Eigen::MatrixXd expert_inputs(const Eigen::MatrixXd& x, int K, const std::vector<int>& ids) {
  const int k = log2_experts(K);
  if (x.rows() <= k) throw std::invalid_argument("expert_inputs: m must exceed log₂K");
  Eigen::MatrixXd out(x.rows() - k, static_cast<Eigen::Index>(ids.size()));
  for (std::size_t c = 0; c < ids.size(); ++c) out.col(Eigen::Index(c)) = x.col(ids[c]).tail(x.rows() - k);  // L724
  return out;
}

Eigen::MatrixXd first_layer(int d, int q, std::uint64_t seed, std::uint64_t stream) {
  if (d < 1 || q < 0) throw std::invalid_argument("first_layer: need d ≥ 1 and q ≥ 0");
  Rng rng(seed, stream);
  Eigen::MatrixXd W(d, q);
  for (int j = 0; j < q; ++j)  // unit after unit: width q's units are the first q of any wider draw (nesting)
    for (int k = 0; k < d; ++k) W(k, j) = rng.normal();
  return W;
}

Eigen::MatrixXd signed_features(const Eigen::MatrixXd& x, const std::vector<int>& y, const Eigen::MatrixXd& W) {
  if (x.rows() != W.rows()) throw std::invalid_argument("signed_features: x and W disagree on the input dimension");
  if (std::size_t(x.cols()) != y.size()) throw std::invalid_argument("signed_features: one label per example");
  Eigen::MatrixXd Z = (x.transpose() * W).cwiseMax(0.0);  // n × q: σ(⟨w_j, x_i⟩)
  for (Eigen::Index i = 0; i < Z.rows(); ++i)
    if (y[std::size_t(i)] < 0) Z.row(i) = -Z.row(i);
  return Z;
}

bool verify_memorization(const Eigen::MatrixXd& x, const std::vector<int>& y, const Eigen::MatrixXd& W, const Eigen::VectorXd& a) {
  if (x.rows() != W.rows() || a.size() != W.cols() || std::size_t(x.cols()) != y.size()) return false;
  if (!a.allFinite()) return false;
  const Eigen::MatrixXd T = W.transpose() * x;  // q × n: the computed ⟨w_j, x_i⟩
  const Eigen::MatrixXd Wabs = W.cwiseAbs();
  const double gd = gamma(double(W.rows())), gq = gamma(double(W.cols()));
  for (Eigen::Index i = 0; i < x.cols(); ++i) {
    // |t̃_j − t_j| ≤ e_j = γ_d Σ_k |w_kj x_ki|; σ is 1-Lipschitz, so each σ(t̃_j) is within e_j of σ(t_j); the
    // q-term sum adds γ_q Σ_j |a_j σ(t̃_j)|. Twice the total covers the rounding of the bound itself.
    const Eigen::VectorXd r = T.col(i).cwiseMax(0.0);
    const Eigen::VectorXd e = gd * (Wabs.transpose() * x.col(i).cwiseAbs());
    const double s = (y[std::size_t(i)] > 0 ? 1.0 : -1.0) * a.dot(r);
    const double bound = 2 * (gq * a.cwiseAbs().dot(r) + (1 + gq) * a.cwiseAbs().dot(e));
    if (std::isfinite(s) && std::abs(s) > bound) {
      if (s < 0) return false;
      continue;
    }
    if (exact_margin(x.col(i), y[std::size_t(i)], W, a) <= 0) return false;  // too close to call in doubles
  }
  return true;
}

Memorization memorize(const Eigen::MatrixXd& x, const std::vector<int>& y, const Eigen::MatrixXd& W) {
  Memorization m;
  if (x.cols() == 0) {
    m.memorized = m.lp_feasible = true;
    m.a = Eigen::VectorXd::Zero(W.cols());
    return m;
  }
  lp::Problem p;
  p.add_variables(W.cols(), -lp::inf, lp::inf);
  p.add_constraints(signed_features(x, y, W), 1.0, lp::inf);  // y_i f(x_i) ≥ 1
  p.set_objective(Eigen::VectorXd::Zero(W.cols()), lp::Sense::minimize);
  const lp::Solution s = p.solve({.presolve = false, .exact = false});
  if (!s.optimal()) return m;
  m.lp_feasible = true;
  m.a = s.x;
  m.memorized = verify_memorization(x, y, W, m.a);
  return m;
}

int cover_median_width(int n) {
  if (n < 0) throw std::invalid_argument("cover_median_width: n < 0");
  return (n + 1) / 2;
}

MinimalWidth minimal_width(const Eigen::MatrixXd& x, const std::vector<int>& y, std::uint64_t seed, std::uint64_t stream, int q_max) {
  MinimalWidth r;
  const int ne = int(x.cols());
  if (std::size_t(ne) != y.size()) throw std::invalid_argument("minimal_width: one label per example");
  if (ne == 0) {
    r.q = 0;  // nothing to memorize
    return r;
  }
  if (q_max <= 0) q_max = ne + 32;
  const Eigen::MatrixXd W = first_layer(int(x.rows()), q_max, seed, stream);

  // One LP over all q_max units; width q fixes a_j = 0 for j ≥ q, so every solve starts from the last basis.
  lp::Problem p;
  p.add_variables(q_max, -lp::inf, lp::inf);
  p.add_constraints(signed_features(x, y, W), 1.0, lp::inf);
  p.set_objective(Eigen::VectorXd::Zero(q_max), lp::Sense::minimize);
  int free_below = q_max;  // columns < free_below are free, the rest fixed at 0
  std::map<int, Eigen::VectorXd> certificates;
  const auto memorizes = [&](int q) {
    for (int j = q; j < free_below; ++j) p.set_variable_bounds(j, 0.0, 0.0);
    for (int j = free_below; j < q; ++j) p.set_variable_bounds(j, -lp::inf, lp::inf);
    free_below = q;
    ++r.lps;
    const lp::Solution s = p.solve({.presolve = false, .exact = false});
    if (!s.optimal()) return false;
    Eigen::VectorXd a = s.x.head(q);
    if (!verify_memorization(x, y, W.leftCols(q), a)) {
      ++r.unverified;
      return false;
    }
    certificates[q] = std::move(a);
    return true;
  };

  // Width 0 (f ≡ 0) memorizes nothing: lo = 0 is a known "no". Start at Cover's median, gallop outwards.
  int lo = 0, hi = -1;
  int step = std::max(1, int(std::sqrt(double(ne)) / 2));
  const int q0 = std::clamp(cover_median_width(ne), 1, q_max);
  if (memorizes(q0)) {
    hi = q0;
    for (int q = hi - step; q > lo; q = hi - step) {
      if (!memorizes(q)) {
        lo = q;
        break;
      }
      hi = q;
      step *= 2;
    }
  } else {
    lo = q0;
    while (lo < q_max) {
      const int q = std::min(lo + step, q_max);
      if (memorizes(q)) {
        hi = q;
        break;
      }
      lo = q;
      step *= 2;
    }
  }
  if (hi < 0) return r;  // width q_max does not memorize: q = −1
  while (hi - lo > 1) {  // monotone in q (header comment): lo is a "no", hi a "yes"
    const int mid = lo + (hi - lo) / 2;
    (memorizes(mid) ? hi : lo) = mid;
  }
  r.q = hi;
  r.a = certificates.at(hi);
  return r;
}

ParameterCount moe_parameters(int m, int K, int q) {
  const int k = log2_experts(K);
  if (m <= k) throw std::invalid_argument("moe_parameters: m must exceed log₂K");
  if (q < 0) throw std::invalid_argument("moe_parameters: q < 0");
  ParameterCount c;
  c.router = K > 1 ? long(K) * m : 0;        // L740: K vectors of dimension m
  c.expert = long(q) * (m - k + 1);          // q·(m − log₂K) first-layer weights + q output weights, no biases
  c.active = c.router + c.expert;            // one expert per input
  c.total = c.router + long(K) * c.expert;
  return c;
}

ParameterCount dense_parameters(int m, int q) { return moe_parameters(m, 1, q); }

double lemma_d7_min_n(int K, double delta) {
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("Lemma D.7: δ must lie in (0, 1)");
  return double(K) * K * std::log(1 / delta) / 2;  // L693
}

double corollary_d9_min_n(int K, double delta) {
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("Corollary D.9: δ must lie in (0, 1)");
  return double(K) * K * std::log(K / delta) / 2;  // L748
}

double lemma_d8_width(int n, int m, int K) {
  const int k = log2_experts(K);
  if (m <= k) throw std::invalid_argument("Lemma D.8: m must exceed log₂K");
  return 8.0 * n * std::pow(std::log(double(m - k)), 4) / (double(m) * K);  // L732
}

double theorem35_log_factor(int m, int K) {
  const int k = log2_experts(K);
  if (m <= k) throw std::invalid_argument("Theorem 3.5: m must exceed log₂K");
  const double d = double(m - k);
  return std::pow(std::log(d), 4) * (d + 1) / double(m);  // L732 and L740: width 8n ln⁴(d)/(mK), d + 1 weights per unit
}

std::uint64_t examples_stream(int n, int draw) { return stream_id(stream_id(kExamplesTag, std::uint64_t(n)), std::uint64_t(draw)); }

std::uint64_t first_layer_stream(int n, int draw, int K, int expert) {
  return stream_id(stream_id(stream_id(stream_id(kFirstLayerTag, std::uint64_t(n)), std::uint64_t(draw)), std::uint64_t(K)),
                   std::uint64_t(expert));
}

MemorizationCell memorization_cell(const MemorizationTask& t, int K, int draw, std::uint64_t seed, long max_points) {
  validate(t);
  const int k = log2_experts(K);
  if (t.m <= k) throw std::invalid_argument("memorization_cell: m must exceed log₂K (the experts' inputs are the last m − log₂K)");
  MemorizationCell cell;
  const Examples ex = draw_examples(t, seed, examples_stream(t.n, draw));
  const std::vector<int> routes = route_all(ex.x, K);
  cell.loads = expert_loads(routes, K);
  if (double(t.n) / K > double(max_points)) return cell;
  cell.solved = true;
  cell.q = 0;
  for (int j = 0; j < K; ++j) {
    std::vector<int> ids, yj;
    for (int i = 0; i < t.n; ++i)
      if (routes[std::size_t(i)] == j) ids.push_back(i), yj.push_back(ex.y[std::size_t(i)]);
    const MinimalWidth w = minimal_width(expert_inputs(ex.x, K, ids), yj, seed, first_layer_stream(t.n, draw, K, j));
    cell.widths.push_back(w.q);
    cell.lps += w.lps;
    cell.unverified += w.unverified;
    cell.q = (w.q < 0 || cell.q < 0) ? -1 : std::max(cell.q, w.q);
  }
  return cell;
}

Record to_record(const MemorizationCell& cell) {
  Record r;
  r.set("loads", std::vector<double>(cell.loads.begin(), cell.loads.end()));
  r.set("widths", std::vector<double>(cell.widths.begin(), cell.widths.end()));
  r.set("solved", cell.solved ? 1.0 : 0.0).set("q", double(cell.q)).set("lps", double(cell.lps)).set("unverified", double(cell.unverified));
  return r;
}

MemorizationCell cell_from_record(const Record& record) {
  MemorizationCell cell;
  for (double v : record.arr("loads")) cell.loads.push_back(long(v));
  for (double v : record.arr("widths")) cell.widths.push_back(int(v));
  cell.solved = record.num("solved") == 1.0;
  cell.q = int(record.num("q"));
  cell.lps = long(record.num("lps"));
  cell.unverified = long(record.num("unverified"));
  return cell;
}

CellParameters cell_parameters(const MemorizationCell& cell, int m, int K) {
  CellParameters p;
  for (long l : cell.loads) p.max_load = std::max(p.max_load, l);
  p.valid = cell.solved && cell.q >= 0;
  p.q = std::max(cell.q, 0);
  p.built = moe_parameters(m, K, p.q);
  if (!p.valid) return p;
  const double d1 = double(m - log2_experts(K) + 1);
  double sum_q = 0;
  for (int q : cell.widths) sum_q += q;
  p.mean_expert = sum_q / K * d1;
  p.mean_active = double(p.built.router) + p.mean_expert;
  p.own_total = double(p.built.router) + sum_q * d1;
  return p;
}

int sqrt_rule_experts(int n, int m) {
  if (n < 1 || m < 1 || n % m != 0) return 0;
  const int ratio = n / m;
  for (int k = 0; (1L << (2 * k)) <= ratio; ++k)
    if ((1L << (2 * k)) == ratio) return 1 << k;
  return 0;
}

}  // namespace sparseact::parrots
