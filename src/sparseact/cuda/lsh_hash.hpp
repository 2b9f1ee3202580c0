#pragma once
// Batch LSH hashing on the GPU (host-only API; no CUDA header here, docs/DESIGN.md Devices): one cuBLAS
// dgemm P = A X (double), then one small kernel per point column that turns P into codes:
//   Euclidean:  code(i, n) = ⌊(P(i, n) + b_i)/ε⌋ as int32 (paper 000 §2.2),
//   hyperplane: word(t, n) = Σ_j 2^j · 1[P(t·m + j, n) + c_{t·m+j} > 0] (the LSH(d, s, m, Δ) model).
// The CPU twin is lsh::hash(…, Device::cpu); a [cuda] test compares them (they can differ only where
// a value lies within rounding of a bucket boundary, since the two products sum in different orders).
#include <cstdint>

#include <Eigen/Core>

namespace sparseact::cuda {

/// D × N codes ⌊(A X + b)/ε⌋ of the columns of X (d × N), A: D × d. Throws std::range_error when a code
/// leaves int32 and std::runtime_error when CUDA is absent or a call fails.
Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> lsh_euclidean_codes(const Eigen::MatrixXd& A, const Eigen::VectorXd& b,
                                                                                double eps, const Eigen::MatrixXd& X);

/// tables × N sign-pattern words of W X + c (W: (tables·bits) × d, bits ≤ 62).
Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> lsh_sign_codes(const Eigen::MatrixXd& W, const Eigen::VectorXd& c,
                                                                            int tables, int bits, const Eigen::MatrixXd& X);

}  // namespace sparseact::cuda
