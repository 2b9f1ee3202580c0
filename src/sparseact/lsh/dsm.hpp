#pragma once
// The Data-Dependent Sparse Model DSM(d, s, t) of paper 000 §2.1 and its simulations (§3):
//
//   g(x) = (A ∘ mask(x)) φ(x) = A (mask(x) ∘ φ(x)),   φ(x) = σ(B x + c),
//
// A ∈ R^{1×t} the trainable top layer (stored as a length-t vector), B ∈ R^{t×d} and c ∈ R^t a fixed
// random bottom layer, mask(x) ∈ {0,1}^{1×t} s-sparse. Masks (MaskKind):
//   dense        all ones (the dense model of §5, width t, every unit activated)
//   top_k        the K largest pre-activations u = B x + c (§3 "Top-K routing"; the §5 DSM). Ties go to
//                the lower index.
//   random_hash  K units chosen by a hash of the input alone (App. D.1): deterministic in x, uniform
//                over K-subsets across inputs, blind to where x lies. Construction: H(x) = a seeded
//                64-bit hash of x's 8d bytes (splitmix64 chained over the coordinates' bit patterns),
//                then Floyd's K-of-t sampling driven by Rng(hash_seed, H(x)). The paper's TF snippet
//                instead projects x to t coordinates, hashes each coordinate's decimal string into
//                [0, num_buckets) and keeps the K largest hashes: the same law (a uniform K-subset
//                that is a function of x), from a different hash.
//   switch_route Switch transformer (§3.1): L = t/s experts of width s; router R(x) = argmax_l (W x + w)_l
//                with a fixed random W ∈ R^{L×d}, w ∈ R^L (Switch learns W; here it is fixed); the mask
//                is the block of expert R(x).
//   scaling      Scaling transformer (§3.1): s blocks of size t' = t/s, one unit per block: the largest
//                pre-activation inside each block (A^x = (α_1 e_{i_1}, …, α_s e_{i_s})).
//   nearest      route to the K stored keys nearest to x in ‖·‖₂ (the §3 interpolation: K = 1).
//
// Bottom layer (the §5 "random-initialized, non-trainable bottom layer"; the paper gives no law):
// B_ij ~ N(0, 1/d), c_j ~ U[−r, r] with r = bias_range (default 1, so the units' hyperplanes cut the
// cube [−1, 1]^d; r = 0 gives TF's default zero bias, where every model is positively homogeneous).
// σ = ReLU (§3's simple examples use σ = identity; k-NN uses the indicator σ ≡ 1 on the Top-K).
//
// Features of a batch are stored sparsely: for each input the indices and values of its activated
// units (exactly K per input for every mask), so training costs O(K) per sample, not O(t).
// Points are the columns of X (d × N), as everywhere in lsh/.
#include <cstdint>
#include <string>

#include <Eigen/Core>

namespace sparseact::lsh {

enum class Activation { identity, relu, ones };
enum class MaskKind { dense, top_k, random_hash, switch_route, scaling, nearest };

const char* to_string(MaskKind mask) noexcept;
const char* to_string(Activation sigma) noexcept;

using IndexMatrix = Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic>;

/// The masked features mask(x) ∘ φ(x) of N inputs, stored as the K activated units of each input.
struct ActiveFeatures {
  Eigen::Index width = 0;  ///< t
  bool all = false;        ///< every unit active (dense): idx is empty and val is t × N
  IndexMatrix idx;         ///< K × N unit indices, ascending within a column
  Eigen::MatrixXd val;     ///< K × N values φ_j(x) of those units
  Eigen::Index active() const { return val.rows(); }
  Eigen::Index size() const { return val.cols(); }
  std::int32_t unit(Eigen::Index k, Eigen::Index n) const { return all ? static_cast<std::int32_t>(k) : idx(k, n); }
};

/// The masked feature matrix mask(x_n) ∘ φ(x_n) as the columns of a dense t × N matrix.
Eigen::MatrixXd to_dense(const ActiveFeatures& F);
/// g(x_n) = Σ_k θ_{idx(k,n)} val(k, n) for every input n.
Eigen::VectorXd predict(const Eigen::VectorXd& theta, const ActiveFeatures& F);

struct DsmModel {
  Eigen::MatrixXd B;  ///< t × d bottom layer (fixed)
  Eigen::VectorXd c;  ///< t bottom-layer bias (fixed)
  Activation sigma = Activation::relu;
  MaskKind mask = MaskKind::dense;
  Eigen::Index active = 0;      ///< K (top_k, random_hash, nearest); s = expert width (switch_route); s = blocks (scaling)
  Eigen::MatrixXd router;       ///< L × d (switch_route)
  Eigen::VectorXd router_bias;  ///< L (switch_route)
  Eigen::MatrixXd keys;         ///< d × t stored points (nearest)
  std::uint64_t hash_seed = 0;  ///< random_hash
  Eigen::VectorXd A;            ///< top layer A ∈ R^{1×t}, as a length-t vector

  Eigen::Index width() const { return B.rows(); }
  Eigen::Index dims() const { return B.cols(); }
  /// Number of activated units per input: t for dense, K, s, or the number of blocks.
  Eigen::Index units_per_input() const;
};

struct BottomLayer {
  double bias_range = 1.0;  ///< c_j ~ U[−r, r]
  Activation sigma = Activation::relu;
};

/// A DSM of width t on R^d with the given mask, the bottom layer (and router, hash seed) drawn from
/// (seed, stream), A = 0. `active`: K for top_k / random_hash, expert width s for switch_route (t must be
/// a multiple), number of blocks s for scaling (t must be a multiple); ignored for dense.
/// Throws std::invalid_argument on inconsistent sizes.
DsmModel make_dsm(Eigen::Index d, Eigen::Index t, MaskKind mask, Eigen::Index active, const BottomLayer& bottom,
                  std::uint64_t seed, std::uint64_t stream = 0);

/// Pre-activations u = B X + c (t × N).
Eigen::MatrixXd preactivations(const DsmModel& model, const Eigen::MatrixXd& X);
/// The activated units of each input (K × N, ascending): the support of mask(x_n).
IndexMatrix mask_indices(const DsmModel& model, const Eigen::MatrixXd& X);
/// mask(x_n) as the columns of a t × N 0/1 matrix.
Eigen::MatrixXd mask_matrix(const DsmModel& model, const Eigen::MatrixXd& X);
/// mask(x) ∘ σ(B x + c) for every column, computed in blocks of columns in parallel (the same numbers
/// for any thread count).
ActiveFeatures features(const DsmModel& model, const Eigen::MatrixXd& X);
/// g(x_n) = (A ∘ mask(x_n)) σ(B x_n + c).
Eigen::VectorXd predict(const DsmModel& model, const Eigen::MatrixXd& X);
/// The 64-bit input hash H(x) of the random-hash mask (seeded, on the bytes of the column).
std::uint64_t input_hash(const double* x, Eigen::Index d, std::uint64_t seed) noexcept;

// --- §3 simulations ----------------------------------------------------------------------------

/// Interpolation (§3): t points x_i (columns of `points`, d × t, none zero) and values f(x_i). σ = identity,
/// s = 1, b_i = x_i, A_i = f(x_i)/⟨b_i, x_i⟩, mask(x) = e_{nearest point}; so g(x_i) = f(x_i).
DsmModel interpolation_model(const Eigen::MatrixXd& points, const Eigen::VectorXd& values);

/// k-NN regression (§3) on unit vectors: rows of B are the n unit vectors b_i (columns of `points`),
/// σ(Bx) = 1 on the k largest ⟨x, b_i⟩ (Top-k mask, σ ≡ 1), A = (1/k)(f(b_1), …, f(b_n)). For unit x,
/// ‖x − b_i‖² = 2 − 2⟨x, b_i⟩ (ERRATA 000: the printed form drops the square), so the Top-k are the k
/// nearest neighbours and g(x) is their mean of f.
DsmModel knn_model(const Eigen::MatrixXd& points, const Eigen::VectorXd& values, int k);

/// Brute-force k-NN regression: the mean of `values` over the k columns of `points` nearest to each
/// column of X in ‖·‖₂ (ties to the lower index).
Eigen::VectorXd knn_bruteforce(const Eigen::MatrixXd& points, const Eigen::VectorXd& values, const Eigen::MatrixXd& X,
                               int k);

}  // namespace sparseact::lsh
