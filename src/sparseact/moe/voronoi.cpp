#include <sparseact/moe/voronoi.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/multiprecision/cpp_int.hpp>

namespace sparseact::moe {

namespace {

using Rational = boost::multiprecision::cpp_rational;

double squared_distance(const double* x, const double* a, Eigen::Index n) {
  double s = 0;
  for (Eigen::Index k = 0; k < n; ++k) s += (x[k] - a[k]) * (x[k] - a[k]);
  return s;
}

Rational exact_squared_distance(const double* x, const double* a, Eigen::Index n) {
  Rational s = 0;
  for (Eigen::Index k = 0; k < n; ++k) {
    const Rational d = Rational(x[k]) - Rational(a[k]);
    s += d * d;
  }
  return s;
}

}  // namespace

int compare_distances(const double* x, const double* a, const double* b, Eigen::Index n) {
  const double da = squared_distance(x, a, n), db = squared_distance(x, b, n);
  // Each squared distance carries a relative error below (n + 2)u (a difference, a square, n − 1 sums;
  // Higham's γ_{n+2}), so a gap larger than (n + 4)u (da + db) is real.
  const double u = std::numeric_limits<double>::epsilon() / 2;
  if (std::isfinite(da) && std::isfinite(db) && std::abs(da - db) > double(n + 4) * u * (da + db)) return da < db ? -1 : 1;
  const Rational ea = exact_squared_distance(x, a, n), eb = exact_squared_distance(x, b, n);
  return ea < eb ? -1 : (ea > eb ? 1 : 0);
}

Eigen::Index voronoi_cell(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::MatrixXd& P, long* queries) {
  if (P.cols() == 0) throw std::invalid_argument("voronoi_cell: no prototypes");
  if (P.rows() != x.size()) throw std::invalid_argument("voronoi_cell: prototypes and input differ in dimension");
  const Eigen::VectorXd xv = x;
  Eigen::Index best = 0;
  for (Eigen::Index i = 1; i < P.cols(); ++i)
    if (compare_distances(xv.data(), P.col(i).data(), P.col(best).data(), xv.size()) < 0) best = i;  // strict: ties keep the lower index
  if (queries) *queries += long(P.cols());
  return best;
}

}  // namespace sparseact::moe
