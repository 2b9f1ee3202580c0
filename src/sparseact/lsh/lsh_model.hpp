#pragma once
// The LSH(d, s, m, 0) model of paper 000 §2.2 as trained in §5: s hyperplane tables of m sign bits,
// a trainable scalar per bucket, output
//
//   g(x) = Σ_{i=1}^{s} α_i ĝ^i_{z^i}(x),   z^i = (h^i_1(x), …, h^i_m(x)) ∈ {−1, 1}^m,
//
// with non-trainable hyperplanes h^i_j(x) = sign(w_{ij}ᵀx + c_{ij}) (lsh/hash.hpp: w ~ N(0, I_d),
// c ~ U[−r, r]) and Δ = 0: ĝ^i_z is a constant per bucket. The weights α_i are fixed to 1 (they are
// absorbed into the trainable bucket constants). As in §3.2 this is a DSM(d, s, s·2^m): unit i·2^m + z^i
// of table i is active with value 1, so the model shares the DSM's feature format and trainer.
#include <cstdint>

#include <Eigen/Core>

#include <sparseact/lsh/dsm.hpp>
#include <sparseact/lsh/hash.hpp>

namespace sparseact::lsh {

struct LshModel {
  HyperplaneLsh lsh;       ///< s tables of m bits
  Eigen::VectorXd values;  ///< s·2^m bucket constants ĝ^i_z, unit i·2^m + z
  int tables() const { return lsh.tables; }
  int bits() const { return lsh.bits; }
  Eigen::Index width() const { return static_cast<Eigen::Index>(lsh.tables) << lsh.bits; }  ///< s·2^m buckets
};

/// s tables of m hyperplane bits on R^d (offsets U[−r, r]) from (seed, stream), every bucket constant 0.
/// Throws std::invalid_argument unless 1 ≤ s, 1 ≤ m ≤ 24 and s·2^m ≤ 2^28.
LshModel make_lsh_model(Eigen::Index d, int tables, int bits, double offset_range, std::uint64_t seed,
                        std::uint64_t stream = 0);

/// The s active buckets of each input, value 1: an s × N ActiveFeatures of width s·2^m.
ActiveFeatures features(const LshModel& model, const Eigen::MatrixXd& X);

/// g(x_n) = Σ_i ĝ^i_{z^i(x_n)}.
Eigen::VectorXd predict(const LshModel& model, const Eigen::MatrixXd& X);

}  // namespace sparseact::lsh
