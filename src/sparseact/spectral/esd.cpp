#include <sparseact/spectral/esd.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sparseact::spectral {

double ks_distance(const Eigen::VectorXd& eigenvalues, const MarchenkoPastur& law) {
  std::vector<double> x(eigenvalues.data(), eigenvalues.data() + eigenvalues.size());
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  // F_n is a step function and F is continuous except for its atom at 0, so the supremum is attained
  // at a sample point v, from the left or the right: compare F_n(v−) with F(v−) and F_n(v) with F(v).
  for (std::size_t i = 0; i < x.size();) {
    std::size_t j = i;
    while (j < x.size() && x[j] == x[i]) ++j;
    const double v = x[i];
    // F(v−): the atom sits at 0, and F is continuous elsewhere, so F(v−) = F(v) for v > 0 (one
    // evaluation of the quadrature per distinct eigenvalue, not two).
    const double F_right = law.cdf(v);
    const double F_left = v > 0 ? F_right : 0.0;
    d = std::max({d, std::abs(static_cast<double>(i) / n - F_left), std::abs(static_cast<double>(j) / n - F_right)});
    i = j;
  }
  return d;
}

}  // namespace sparseact::spectral
