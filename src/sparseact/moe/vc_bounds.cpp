#include <sparseact/moe/vc_bounds.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sparseact::moe {

namespace {
void require_positive(int v, const char* what) {
  if (v < 1) throw std::invalid_argument(std::string("VC bounds: ") + what + " must be at least 1");
}
}  // namespace

double d_star(int J, int W) {
  require_positive(J, "J"), require_positive(W, "W");
  const double j1 = J + 1.0, w = W;
  return J + j1 * w * w * std::log2(M_E * 4 * j1 * w * std::log2(M_E * 2 * j1 * w));
}

double voronoi_term(int n, int L) {
  require_positive(n, "n"), require_positive(L, "L");
  return L == 1 ? 0.0 : 2.0 * (n + 1) * (L - 1) * std::log2(3.0 * L - 3);
}

double eq28(double d, int n, int L) {
  const double M = std::max(d, voronoi_term(n, L));
  return 2 * (4 * std::log2(6.0) * M) * L * std::log2(3.0 * L);
}

double eq29(double d, int n, int L) {
  const double M = std::max(d, voronoi_term(n, L));
  const double lg = std::log2(std::max(2.0, double(L)));
  return 8 * L * lg * lg * M;
}

}  // namespace sparseact::moe
