#include <sparseact/moe/theorem53.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sparseact::moe {

double omega_inverse(const Holder& h, double t) { return std::pow(t / h.L, 1 / h.alpha); }

Theorem53 theorem53(Domain d, int n, int m, int nu, double eps, double r, const Holder& h) {
  if (n < 1 || m < 1 || nu < 2) throw std::invalid_argument("Theorem 5.3: need n, m ≥ 1 and ν ≥ 2");
  if (!(eps > 0) || !(h.L > 0) || !(h.alpha > 0 && h.alpha <= 1)) throw std::invalid_argument("Theorem 5.3: need ε > 0, L > 0, α ∈ (0, 1]");
  Theorem53 t;
  const double w = omega_inverse(h, eps / (131 * std::sqrt(double(n) * m)));
  t.delta = std::pow(eps, -2 * r / n) / 2 * w;
  t.depth_term = std::pow(t.delta * std::pow(2.0, 1.5) * std::sqrt(double(n)) / (std::sqrt(n + 1.0) * w), n / 2.0);
  t.eq21_ratio = t.depth_term / std::pow(eps, -r);
  t.depth = m * (19.0 + 2 * n + 11 * std::ceil(t.depth_term));
  t.width = 16.0 * std::max(n, 3) + m;
  t.tree_valid = t.delta <= domain_radius(d, n);
  t.tree = lemma51(d, n, nu, std::min(t.delta, domain_radius(d, n)));
  t.table1_experts = std::max(1.0, std::pow(eps, 2 * r / n - 1 / h.alpha));
  t.table1_parameters = std::max(1.0, std::pow(eps, -r));
  const double q = std::pow(eps, 2 * r / n) / omega_inverse(h, eps);
  t.table6_experts = std::max(1.0, q);
  t.table6_routing = std::max(1.0, std::log(q));
  return t;
}

Table theorem53_table(const std::vector<Domain>& domains, const std::vector<int>& ns, const std::vector<double>& epss,
                      const std::vector<int>& nus, int m, double r, const Holder& h) {
  Table thm{"theorem53", {"domain", "n", "nu", "eps", "r", "alpha", "delta", "tree_valid", "height", "leaves", "nodes", "depth_term", "eq21_ratio",
                          "depth", "width", "table1_experts", "table1_parameters", "table6_experts", "table6_routing"}, {}};
  for (Domain d : domains)
    for (int n : ns)
      for (double eps : epss)
        for (int nu : nus) {
          const Theorem53 t = theorem53(d, n, m, nu, eps, r, h);
          thm.add_row({double(int(d)), double(n), double(nu), eps, r, h.alpha, t.delta, t.tree_valid ? 1.0 : 0.0, double(t.tree.height),
                       t.tree.leaves, t.tree.nodes, t.depth_term, t.eq21_ratio, t.depth, t.width, t.table1_experts, t.table1_parameters,
                       t.table6_experts, t.table6_routing});
        }
  return thm;
}

}  // namespace sparseact::moe
