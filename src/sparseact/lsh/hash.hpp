#pragma once
// Hash families of paper 000 §2.2, hashing N points at once (matrix products plus a pass).
//
//   Euclidean LSH (Datar et al. 2004):  h_i(x) = ⌊(a_iᵀx + b_i)/ε⌋,  a_i ~ N(0, I_d),  b_i ~ U[0, ε],
//     i ∈ [D]: a point's code is D integers. (ERRATA 000, Lemma B.2: a_i unnormalised, so the slab
//     width along a unit direction is ε/‖a_i‖ ≈ ε/√d.)
//   Sign-pattern (hyperplane) LSH, the LSH(d, s, m, Δ) model: s tables of m hash bits each,
//     h_j(x) = sign(w_jᵀx + c_j) ∈ {−1, 1}; a point's code in table i is the m-bit pattern z^i.
//     Offsets c_j ~ U[−r, r] (r = 0: hyperplanes through the origin, Charikar 2002).
//
// Points are the columns of X (d × N), as everywhere in lsh/.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/device.hpp>

namespace sparseact::lsh {

using CodeMatrix = Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic>;  ///< one code per column

struct EuclideanLsh {
  Eigen::MatrixXd a;  ///< D × d, rows a_i ~ N(0, I_d)
  Eigen::VectorXd b;  ///< D offsets b_i ~ U[0, ε]
  double eps = 1.0;   ///< bucket width ε
  Eigen::Index dims() const { return a.cols(); }
  Eigen::Index hashes() const { return a.rows(); }
};

/// D hash functions on R^d with width ε, from the stream (seed, stream).
EuclideanLsh make_euclidean_lsh(Eigen::Index d, Eigen::Index D, double eps, std::uint64_t seed, std::uint64_t stream = 0);

/// Codes of the columns of X (d × N): a D × N matrix of ⌊(AX + b)/ε⌋. Throws std::invalid_argument on
/// a dimension mismatch or a code outside int32.
CodeMatrix hash(const EuclideanLsh& lsh, const Eigen::MatrixXd& X, Device device = Device::cpu);

struct HyperplaneLsh {
  Eigen::MatrixXd w;  ///< (s·m) × d, rows w_j ~ N(0, I_d); rows i·m … i·m+m−1 form table i
  Eigen::VectorXd c;  ///< s·m offsets
  int tables = 1;     ///< s
  int bits = 1;       ///< m ≤ 62 (a table's code fits one 64-bit word)
};

HyperplaneLsh make_hyperplane_lsh(Eigen::Index d, int tables, int bits, double offset_range, std::uint64_t seed,
                                  std::uint64_t stream = 0);

using SignCodes = Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic>;  ///< s × N table words

/// How the CPU computes the projections W X. Both give the same codes: the exact signs of wᵀx + c.
enum class HashPrecision {
  float64,            ///< dgemm on the float64 points (the default)
  float32_certified,  ///< sgemm on float32 copies of W and X (as FAISS hashes; float32 X as it is); a bit whose float32
                      ///< projection lies within float32's rounding of 0 is recomputed from the float64 values
};

struct HashOptions {
  HashPrecision precision = HashPrecision::float64;
  Eigen::Index block_points = 0;  ///< points per block (one BLAS product each); 0: sized so a block stays in cache
};

/// What the certification did. A bit is "recomputed" when its BLAS projection was too close to 0 to
/// trust its sign: it is then decided exactly from w, x and c in float64 (hash.cpp).
struct HashStats {
  Eigen::Index points = 0;             ///< N
  Eigen::Index points_recomputed = 0;  ///< points with at least one recomputed bit
  std::int64_t bits_recomputed = 0;    ///< of N·s·m bits
  double recomputed_fraction() const { return points > 0 ? static_cast<double>(points_recomputed) / static_cast<double>(points) : 0.0; }
};

/// Sign patterns as bucket ids: an s × N matrix, entry (i, n) = Σ_j 2^j · 1[w_{im+j}ᵀx_n + c_{im+j} > 0].
///
/// On the CPU the bit is the sign of the exact value wᵀx + c, for finite inputs: the points are hashed
/// in blocks (one BLAS product into a cache-sized tile, then the sign pass on the tile), and a bit whose
/// computed projection lies within a rigorous bound of the product's rounding error of 0 is decided by
/// exact arithmetic. The codes therefore do not depend on the block size, the thread count, the BLAS or
/// the precision option; they equal the codes of the plain float64 product W X except where that
/// product's rounding flipped a sign (|wᵀx + c| ≤ γ_d Σ_k |w_k x_k|). For NaN or ±∞ inputs a bit is
/// 1[c + Σ_k w_k x_k > 0] evaluated in float64 in the order k = 1 … d. On the GPU (cuBLAS dgemm) the bits
/// are the signs of the float64 product, without certification; options other than the block size
/// do not apply there and stats stays zero but for `points`.
SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXd& X, Device device = Device::cpu);
SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXd& X, const HashOptions& options, HashStats* stats = nullptr,
               Device device = Device::cpu);

/// Float32 points (as FAISS takes them), hashed without a float64 copy of X: the codes of
/// hash(lsh, X.cast<double>(), options), bit for bit (a float32 value promoted to float64 is exact, and
/// the bits are exact signs). With HashPrecision::float32_certified each block goes to sgemm as it is
/// and a bit within float32's rounding of 0 is recomputed from the point promoted to float64 (stats
/// counts them); with float64 each block is promoted into a cache-sized buffer and hashed by dgemm.
/// The options are not defaulted: `hash(lsh, expr)` with an Eigen expression stays the float64 call.
/// On the GPU, X is promoted to float64 and hashed as above.
SignCodes hash(const HyperplaneLsh& lsh, const Eigen::MatrixXf& X, const HashOptions& options, HashStats* stats = nullptr,
               Device device = Device::cpu);

}  // namespace sparseact::lsh
