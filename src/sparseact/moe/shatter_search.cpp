#include <sparseact/moe/shatter_search.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include <boost/multiprecision/cpp_int.hpp>

#include <sparseact/core/lp.hpp>
#include <sparseact/moe/voronoi.hpp>

namespace sparseact::moe {

namespace {

using Rational = boost::multiprecision::cpp_rational;

bool is_relu(const SearchSpec& s) { return s.kind == SearchClass::relu || s.kind == SearchClass::momlp_relu; }
bool is_mixture(const SearchSpec& s) { return s.kind == SearchClass::momlp || s.kind == SearchClass::momlp_relu; }

/// Candidate kinks: before the first point, every gap midpoint, after the last.
std::vector<double> kink_candidates(const std::vector<double>& x) {
  std::vector<double> t{x.front() - 1};
  for (std::size_t i = 0; i + 1 < x.size(); ++i) t.push_back(0.5 * (x[i] + x[i + 1]));
  t.push_back(x.back() + 1);
  return t;
}

/// The LP for fixed kinks and directions.
std::optional<ExpertFit> solve_fixed(const SearchSpec& s, const std::vector<double>& x, const std::vector<int>& labels,
                                     const std::vector<double>& kinks, const std::vector<int>& dir) {
  const bool relu = is_relu(s);
  const Eigen::Index vars = 1 + (relu ? 0 : 1) + Eigen::Index(kinks.size());  // β, [s₀], δ
  lp::Problem p;
  p.add_variables(vars, -lp::inf, lp::inf);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double sg = labels[i] ? 1.0 : -1.0;
    Eigen::VectorXd row(vars);
    Eigen::Index at = 0;
    row(at++) = sg;
    if (!relu) row(at++) = sg * x[i];
    for (std::size_t w = 0; w < kinks.size(); ++w) row(at++) = sg * std::max(0.0, dir[w] * (x[i] - kinks[w]));
    p.add_constraint(row, 1.0, lp::inf);
  }
  p.set_objective(Eigen::VectorXd::Zero(vars), lp::Sense::minimize);
  const lp::Solution sol = p.solve();
  if (!sol.optimal()) return std::nullopt;
  ExpertFit f;
  Eigen::Index at = 0;
  f.beta = sol.x(at++);
  if (!relu) f.s0 = sol.x(at++);
  f.kinks = kinks, f.dir = dir;
  for (std::size_t w = 0; w < kinks.size(); ++w) f.delta.push_back(sol.x(at++));
  return f;
}

Rational exact_value(const ExpertFit& f, double x) {
  Rational v = Rational(f.beta) + Rational(f.s0) * Rational(x);
  for (std::size_t w = 0; w < f.kinks.size(); ++w) {
    const Rational d = Rational(f.dir[w]) * (Rational(x) - Rational(f.kinks[w]));
    if (d > 0) v += Rational(f.delta[w]) * d;
  }
  return v;
}

bool expert_ok(const ExpertFit& f, const std::vector<double>& x, const std::vector<int>& labels) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if ((exact_value(f, x[i]) > 0) != (labels[i] == 1)) return false;
  return true;
}

/// Prototypes whose Voronoi cells on R split the sorted points after the indices `cuts` (ascending): an LP.
std::optional<std::vector<double>> voronoi_split(const std::vector<double>& x, const std::vector<std::size_t>& cuts) {
  const std::size_t k = cuts.size() + 1;
  if (k == 1) return std::vector<double>{x.front()};
  // Variables p_1 … p_k, c_1 … c_{k−1}, ε; maximise ε.
  const Eigen::Index P = Eigen::Index(k), C = Eigen::Index(k - 1), vars = P + C + 1;
  lp::Problem lp;
  lp.add_variables(P + C, -lp::inf, lp::inf);
  lp.add_variables(1, -lp::inf, 1.0);
  const auto row = [&] { return Eigen::VectorXd::Zero(vars).eval(); };
  for (std::size_t j = 0; j + 1 < k; ++j) {
    const double lo = x[cuts[j]], hi = x[cuts[j] + 1];  // the boundary lies in this gap
    Eigen::VectorXd r = row();
    r(P + Eigen::Index(j)) = 2, r(Eigen::Index(j)) = -1, r(Eigen::Index(j) + 1) = -1;  // 2c = p_j + p_{j+1}
    lp.add_constraint(r, 0.0, 0.0);
    r = row(), r(P + Eigen::Index(j)) = 1, r(vars - 1) = -(hi - lo);  // c − ε(hi − lo) ≥ lo
    lp.add_constraint(r, lo, lp::inf);
    r = row(), r(P + Eigen::Index(j)) = 1, r(vars - 1) = (hi - lo);  // c + ε(hi − lo) ≤ hi
    lp.add_constraint(r, -lp::inf, hi);
    r = row(), r(Eigen::Index(j) + 1) = 1, r(Eigen::Index(j)) = -1, r(vars - 1) = -1;  // p_{j+1} − p_j ≥ ε
    lp.add_constraint(r, 0.0, lp::inf);
  }
  Eigen::VectorXd obj = row();
  obj(vars - 1) = 1;
  lp.set_objective(obj, lp::Sense::maximize);
  const lp::Solution sol = lp.solve();
  if (!sol.optimal() || !(sol.x(vars - 1) > 1e-9)) return std::nullopt;
  std::vector<double> protos(sol.x.data(), sol.x.data() + P);
  // Eq. (5) must send every point to the cell of its run.
  Eigen::MatrixXd Pm(1, P);
  for (Eigen::Index j = 0; j < P; ++j) Pm(0, j) = protos[std::size_t(j)];
  std::size_t cell = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (cell < cuts.size() && i > cuts[cell]) ++cell;
    if (voronoi_cell(Eigen::VectorXd::Constant(1, x[i]), Pm) != Eigen::Index(cell)) return std::nullopt;
  }
  return protos;
}

}  // namespace

SearchClass parse_search_class(const std::string& name) {
  if (name == "relu") return SearchClass::relu;
  if (name == "prelu") return SearchClass::prelu;
  if (name == "momlp_relu") return SearchClass::momlp_relu;
  if (name == "momlp") return SearchClass::momlp;
  throw std::invalid_argument("search class '" + name + "': use relu, prelu, momlp_relu or momlp");
}

const char* to_string(SearchClass c) noexcept {
  switch (c) {
    case SearchClass::relu: return "relu";
    case SearchClass::prelu: return "prelu";
    case SearchClass::momlp_relu: return "momlp_relu";
    case SearchClass::momlp: return "momlp";
  }
  return "?";
}

int known_vc_1d(const SearchSpec& s) {
  const int expert = is_relu(s) ? s.W + 1 : s.W + 2;
  return is_mixture(s) ? s.L * expert : expert;
}

int sign_changes(const std::vector<int>& labels) {
  int c = 0;
  for (std::size_t i = 1; i < labels.size(); ++i) c += labels[i] != labels[i - 1];
  return c;
}

std::optional<ExpertFit> fit_expert(const SearchSpec& s, const std::vector<double>& x, const std::vector<int>& labels) {
  if (x.empty()) return ExpertFit{};
  const std::vector<double> cand = kink_candidates(x);
  const int n = int(cand.size());
  // Every set of ≤ W candidate kinks (and, for ReLU, every direction of each), fewest kinks first.
  for (int w = 0; w <= s.W; ++w) {
    std::vector<int> pick(static_cast<std::size_t>(w));
    std::iota(pick.begin(), pick.end(), 0);
    for (;;) {
      std::vector<double> kinks;
      for (int i : pick) kinks.push_back(cand[std::size_t(i)]);
      const int dirs = is_relu(s) ? (1 << w) : 1;
      for (int d = 0; d < dirs; ++d) {
        std::vector<int> dir(static_cast<std::size_t>(w), 1);
        if (is_relu(s))
          for (int i = 0; i < w; ++i) dir[std::size_t(i)] = ((d >> i) & 1) ? -1 : 1;
        if (auto f = solve_fixed(s, x, labels, kinks, dir); f && expert_ok(*f, x, labels)) return f;
      }
      // Next combination of w out of n.
      int i = w - 1;
      while (i >= 0 && pick[std::size_t(i)] == n - w + i) --i;
      if (i < 0) break;
      ++pick[std::size_t(i)];
      for (int j = i + 1; j < w; ++j) pick[std::size_t(j)] = pick[std::size_t(j - 1)] + 1;
    }
  }
  return std::nullopt;
}

std::optional<MomlpFit> fit_class(const SearchSpec& s, const std::vector<double>& x, const std::vector<int>& labels) {
  if (!std::is_sorted(x.begin(), x.end())) throw std::invalid_argument("fit_class: points must be ascending");
  const int L = is_mixture(s) ? s.L : 1;
  std::map<std::pair<std::size_t, std::size_t>, std::optional<ExpertFit>> memo;  // run [a, b] → its expert
  const auto run_fit = [&](std::size_t a, std::size_t b) -> const std::optional<ExpertFit>& {
    auto it = memo.find({a, b});
    if (it != memo.end()) return it->second;
    const std::vector<double> xs(x.begin() + long(a), x.begin() + long(b) + 1);
    const std::vector<int> ys(labels.begin() + long(a), labels.begin() + long(b) + 1);
    return memo.emplace(std::make_pair(a, b), fit_expert(s, xs, ys)).first->second;
  };
  const std::size_t m = x.size();
  for (int k = 1; k <= L && std::size_t(k) <= m; ++k) {
    std::vector<std::size_t> cuts(static_cast<std::size_t>(k - 1));  // cut after index cuts[j]
    std::iota(cuts.begin(), cuts.end(), 0);
    for (;;) {
      bool ok = true;
      std::size_t start = 0;
      for (std::size_t j = 0; j <= cuts.size() && ok; ++j) {
        const std::size_t end = j < cuts.size() ? cuts[j] : m - 1;
        ok = run_fit(start, end).has_value();
        start = end + 1;
      }
      if (ok) {
        if (auto protos = voronoi_split(x, cuts)) {
          MomlpFit fit;
          fit.prototypes = *protos;
          start = 0;
          for (std::size_t j = 0; j <= cuts.size(); ++j) {
            const std::size_t end = j < cuts.size() ? cuts[j] : m - 1;
            fit.experts.push_back(*run_fit(start, end));
            start = end + 1;
          }
          return fit;
        }
      }
      // Next set of k − 1 cuts among the m − 1 gaps.
      int i = k - 2;
      while (i >= 0 && cuts[std::size_t(i)] == m - 2 - std::size_t(k - 2 - i)) --i;
      if (i < 0) break;
      ++cuts[std::size_t(i)];
      for (int j = i + 1; j < k - 1; ++j) cuts[std::size_t(j)] = cuts[std::size_t(j - 1)] + 1;
    }
  }
  return std::nullopt;
}

bool verify_fit(const SearchSpec& s, const std::vector<double>& x, const std::vector<int>& labels, const MomlpFit& fit) {
  (void)s;
  if (fit.experts.empty() || fit.prototypes.size() != fit.experts.size()) return false;
  Eigen::MatrixXd P(1, Eigen::Index(fit.prototypes.size()));
  for (std::size_t j = 0; j < fit.prototypes.size(); ++j) P(0, Eigen::Index(j)) = fit.prototypes[j];
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Eigen::Index cell = voronoi_cell(Eigen::VectorXd::Constant(1, x[i]), P);
    if ((exact_value(fit.experts[std::size_t(cell)], x[i]) > 0) != (labels[i] == 1)) return false;
  }
  return true;
}

SearchGrowth search_growth(const SearchSpec& s, const std::vector<double>& points, int m_max) {
  if (m_max < 1 || std::size_t(m_max) > points.size() || m_max > 20) throw std::invalid_argument("search_growth: need 1 ≤ m_max ≤ min(points, 20)");
  SearchGrowth g;
  for (int m = 1; m <= m_max; ++m) {
    std::vector<double> x(points.begin(), points.begin() + m);
    std::sort(x.begin(), x.end());
    long realised = 0;
    for (long bits = 0; bits < (1L << m); ++bits) {
      std::vector<int> y(static_cast<std::size_t>(m));
      for (int i = 0; i < m; ++i) y[std::size_t(i)] = int((bits >> i) & 1);
      const auto fit = fit_class(s, x, y);
      realised += fit && verify_fit(s, x, y, *fit);
    }
    g.realized.push_back(realised);
    if (realised == (1L << m)) g.vc_found = m;
  }
  return g;
}

}  // namespace sparseact::moe
