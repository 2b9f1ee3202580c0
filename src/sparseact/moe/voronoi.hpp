#pragma once
// Voronoi cells of paper 003, eqs. (5)–(6): x belongs to the cell of its nearest prototype, and a point
// equidistant from several goes to the lowest index (C_i = C̃_i \ ∪_{j<i} C̃_j). The comparison of squared
// distances is exact — a tie is a tie, never a rounding accident: the double result decides when the
// difference exceeds its rounding bound, and exact rational arithmetic (Boost.Multiprecision's
// cpp_rational; every double is a rational) decides the rest. No epsilon anywhere.
#include <Eigen/Core>

namespace sparseact::moe {

/// The sign (−1, 0, +1) of ‖x − a‖² − ‖x − b‖², exactly. x, a, b have n entries.
int compare_distances(const double* x, const double* a, const double* b, Eigen::Index n);

/// Eq. (5): the index of the cell of x among the prototypes (columns of P), lowest index on ties, by a
/// linear scan. Adds the number of distances it evaluated (P.cols()) to *queries when given.
Eigen::Index voronoi_cell(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::MatrixXd& P, long* queries = nullptr);

}  // namespace sparseact::moe
