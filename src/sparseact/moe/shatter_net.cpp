#include <sparseact/moe/shatter_net.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <sparseact/core/lp.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/voronoi.hpp>

namespace sparseact::moe {

using json = nlohmann::json;

namespace {

struct Layer {
  Eigen::MatrixXd A;
  Eigen::VectorXd b, gamma;
};

constexpr double kGammas[] = {-1.0, -0.5, 0.0, 0.25, 0.5, 1.0};

Eigen::MatrixXd apply(const Layer& l, const Eigen::MatrixXd& F) {
  Eigen::MatrixXd Z = (l.A * F).colwise() + l.b;
  for (Eigen::Index r = 0; r < Z.rows(); ++r)
    for (Eigen::Index c = 0; c < Z.cols(); ++c)
      if (Z(r, c) < 0) Z(r, c) *= l.gamma(r);
  return Z;
}

/// Hidden stack number t for the points X: every unit cuts between two of the points' current features.
std::vector<Layer> draw_stack(const NetSearchSpec& s, const Eigen::MatrixXd& X, std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  std::vector<Layer> stack;
  Eigen::MatrixXd F = X;
  for (int j = 0; j < s.J; ++j) {
    Layer l{Eigen::MatrixXd(s.W, F.rows()), Eigen::VectorXd(s.W), Eigen::VectorXd(s.W)};
    for (int w = 0; w < s.W; ++w) {
      for (Eigen::Index k = 0; k < F.rows(); ++k) l.A(w, k) = rng.normal();
      const Eigen::Index i = Eigen::Index(rng.below(std::uint64_t(F.cols()))), i2 = Eigen::Index(rng.below(std::uint64_t(F.cols())));
      l.b(w) = -l.A.row(w).dot((F.col(i) + F.col(i2)) / 2);
      l.gamma(w) = s.relu ? 0.0 : kGammas[rng.below(6)];
    }
    F = apply(l, F);
    stack.push_back(std::move(l));
  }
  return stack;
}

std::vector<Rational> exact_row(const Eigen::VectorXd& v) {
  std::vector<Rational> r;
  for (Eigen::Index i = 0; i < v.size(); ++i) r.emplace_back(v(i));
  return r;
}

std::vector<RationalLayer> to_rational(const std::vector<Layer>& stack, const Eigen::VectorXd& c, double d) {
  std::vector<RationalLayer> out;
  for (const Layer& l : stack) {
    RationalLayer r;
    for (Eigen::Index w = 0; w < l.A.rows(); ++w) r.A.push_back(exact_row(l.A.row(w).transpose()));
    r.b = exact_row(l.b), r.gamma = exact_row(l.gamma);
    out.push_back(std::move(r));
  }
  out.push_back(RationalLayer{{exact_row(c)}, {Rational(d)}, {}});
  return out;
}

/// f = −1 everywhere, in the class's shape: the expert of a cell that holds no point.
std::vector<RationalLayer> silent_expert(const NetSearchSpec& s, int n) {
  std::vector<Layer> stack;
  int width = n;
  for (int j = 0; j < s.J; ++j, width = s.W) stack.push_back({Eigen::MatrixXd::Zero(s.W, width), Eigen::VectorXd::Zero(s.W), Eigen::VectorXd::Zero(s.W)});
  return to_rational(stack, Eigen::VectorXd::Zero(s.W), -1.0);
}

bool labels_exactly(const std::vector<RationalLayer>& expert, const Eigen::MatrixXd& X, const std::vector<int>& labels) {
  NetCertificate c;
  c.experts = {expert};
  for (Eigen::Index i = 0; i < X.cols(); ++i) {
    std::vector<Rational> x = exact_row(X.col(i));
    if ((evaluate(c, 0, x) > 0) != (labels[std::size_t(i)] == 1)) return false;
  }
  return true;
}

std::uint64_t mask_of(const std::vector<Eigen::Index>& cells, Eigen::Index cell) {
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (cells[i] == cell) m |= std::uint64_t(1) << i;
  return m;
}

}  // namespace

std::optional<std::vector<RationalLayer>> search_expert(const NetSearchSpec& s, const Eigen::MatrixXd& X, const std::vector<int>& labels,
                                                        std::uint64_t seed, std::uint64_t stream) {
  for (int t = 0; t < s.stacks; ++t) {
    const std::vector<Layer> stack = draw_stack(s, X, seed, stream_id(stream, std::uint64_t(t)));
    Eigen::MatrixXd H = X;
    for (const Layer& l : stack) H = apply(l, H);
    // s_i (cᵀ h_i + d) ≥ 1 in (c, d).
    lp::Problem p;
    p.add_variables(H.rows() + 1, -lp::inf, lp::inf);
    for (Eigen::Index i = 0; i < H.cols(); ++i) {
      const double si = labels[std::size_t(i)] == 1 ? 1.0 : -1.0;
      Eigen::VectorXd row(H.rows() + 1);
      row << si * H.col(i), si;
      p.add_constraint(row, 1.0, lp::inf);
    }
    p.set_objective(Eigen::VectorXd::Zero(H.rows() + 1), lp::Sense::minimize);
    const lp::Solution sol = p.solve();
    if (!sol.optimal()) continue;
    std::vector<RationalLayer> expert = to_rational(stack, sol.x.head(H.rows()), sol.x(H.rows()));
    if (labels_exactly(expert, X, labels)) return expert;
  }
  return std::nullopt;
}

CertificateClass class_of(const NetSearchSpec& s) { return {.max_cells = s.L, .depth = s.J, .max_width = s.W, .relu = s.relu}; }

NetGrowth net_growth(const NetSearchSpec& s, const Eigen::MatrixXd& X, int m_max, std::uint64_t seed) {
  if (m_max < 1 || m_max > std::min<Eigen::Index>(X.cols(), 14) || s.J < 1 || s.W < 1 || s.L < 1 || s.stacks < 1 || s.partitions < 1)
    throw std::invalid_argument("net_growth: need 1 ≤ m_max ≤ min(points, 14) and J, W, L, stacks, partitions ≥ 1");
  const int n = int(X.rows());
  NetGrowth g;
  std::vector<std::pair<std::vector<int>, NetCertificate>> previous, current;
  for (int m = 1; m <= m_max; ++m) {
    const Eigen::MatrixXd S = X.leftCols(m);
    // Voronoi partitions of the first m points by sampled distinct prototypes (eq. (5)); one cell when L = 1.
    std::vector<std::pair<Eigen::MatrixXd, std::vector<Eigen::Index>>> partitions;
    std::set<std::vector<Eigen::Index>> seen;
    const Eigen::VectorXd lo = S.rowwise().minCoeff(), hi = S.rowwise().maxCoeff();
    for (int q = 0; q < (s.L == 1 ? 1 : s.partitions); ++q) {
      Rng rng(seed, stream_id(0x003'5e7, std::uint64_t(m) * 100000 + std::uint64_t(q)));
      Eigen::MatrixXd P(n, s.L);
      for (int l = 0; l < s.L; ++l)
        for (int k = 0; k < n; ++k)
          P(k, l) = q % 2 ? rng.uniform(lo(k) - 0.1, hi(k) + 0.1) : S(k, Eigen::Index(rng.below(std::uint64_t(m)))) + 0.3 * rng.normal();
      std::vector<Eigen::Index> cells(std::size_t(m), 0);
      if (s.L > 1) {
        bool distinct = true;
        for (int l = 0; l < s.L; ++l)
          for (int k = 0; k < l; ++k) distinct = distinct && P.col(l) != P.col(k);
        if (!distinct) continue;
        for (int i = 0; i < m; ++i) cells[std::size_t(i)] = voronoi_cell(S.col(i), P);
      }
      if (seen.insert(cells).second) partitions.push_back({P, cells});
    }
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::optional<std::vector<RationalLayer>>> memo;  // (cell mask, labels on it)
    const auto expert_for = [&](std::uint64_t mask, const std::vector<int>& y) -> const std::optional<std::vector<RationalLayer>>& {
      std::uint64_t bits = 0;
      std::vector<Eigen::Index> idx;
      std::vector<int> sub;
      for (int i = 0; i < m; ++i)
        if (mask >> i & 1) idx.push_back(i), sub.push_back(y[std::size_t(i)]), bits |= std::uint64_t(y[std::size_t(i)]) << i;
      const auto key = std::make_pair(mask, bits);
      if (auto it = memo.find(key); it != memo.end()) return it->second;
      return memo[key] = search_expert(s, S(Eigen::all, idx), sub, seed, stream_id(0x003'5e8, mask));
    };
    current.clear();
    long realised = 0;
    for (long bits = 0; bits < (1L << m); ++bits) {
      std::vector<int> y(static_cast<std::size_t>(m));
      for (int i = 0; i < m; ++i) y[std::size_t(i)] = int(bits >> i & 1);
      std::optional<NetCertificate> found;
      // A parent's certificate settles the child that agrees with it at the new point, without a search.
      for (const auto& [py, pc] : previous)
        if (std::equal(py.begin(), py.end(), y.begin()) && verify(pc, class_of(s), S, y).empty()) {
          found = pc;
          break;
        }
      for (std::size_t q = 0; !found && q < partitions.size(); ++q) {
        NetCertificate c;
        if (s.L > 1)
          for (int l = 0; l < s.L; ++l) c.prototypes.push_back(exact_row(partitions[q].first.col(l)));
        bool ok = true;
        for (int l = 0; ok && l < s.L; ++l) {
          const std::uint64_t mask = mask_of(partitions[q].second, l);
          if (mask == 0) {
            c.experts.push_back(silent_expert(s, n));
            continue;
          }
          const auto& e = expert_for(mask, y);
          ok = e.has_value();
          if (ok) c.experts.push_back(*e);
        }
        if (ok && verify(c, class_of(s), S, y).empty()) found = std::move(c);
      }
      if (found) ++realised, current.push_back({y, *found});
    }
    g.realized.push_back(realised);
    if (realised == (1L << m)) {
      g.vc_found = m;
      previous = current;
    } else {
      break;  // a miss: vc_found is settled (as a lower bound), and larger m cost 2^m searches each
    }
  }
  // Certificates of the largest set found shattered.
  const Eigen::MatrixXd S = X.leftCols(g.vc_found);
  json labelings = json::array();
  for (const auto& [y, c] : previous) {
    ++g.certificates.total, g.certificates.verified += verify(c, class_of(s), S, y).empty();
    labelings.push_back({{"labels", y}, {"certificate", to_json(c)}});
  }
  json pts = json::array();
  for (Eigen::Index i = 0; i < S.cols(); ++i) pts.push_back(std::vector<double>(S.col(i).data(), S.col(i).data() + S.rows()));
  g.certificates.json = {{"class", s.L > 1 ? (s.relu ? "momlp_relu" : "momlp") : (s.relu ? "relu" : "prelu")}, {"n", n}, {"J", s.J}, {"W", s.W}, {"L", s.L},
                         {"search", "random hidden stacks + LP (lower bound)"}, {"points", pts}, {"labelings", labelings}};
  return g;
}

}  // namespace sparseact::moe
