#include <sparseact/lsh/dsm.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <sparseact/core/parallel.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::lsh {

namespace {

constexpr Eigen::Index block_cols = 64;  // columns per parallel block (fixed: results do not depend on threads)

double activate(Activation sigma, double u) noexcept {
  switch (sigma) {
    case Activation::identity: return u;
    case Activation::relu: return u > 0 ? u : 0.0;
    case Activation::ones: return 1.0;
  }
  return u;
}

/// The K largest of u[0..t) (ties to the lower index), written ascending into out[0..K).
void top_k_indices(const double* u, Eigen::Index t, Eigen::Index K, std::int32_t* out, std::vector<double>& buf) {
  if (K >= t) {
    for (Eigen::Index j = 0; j < t; ++j) out[j] = static_cast<std::int32_t>(j);
    return;
  }
  buf.assign(u, u + t);
  std::nth_element(buf.begin(), buf.begin() + (K - 1), buf.end(), std::greater<>());
  const double kth = buf[static_cast<std::size_t>(K - 1)];
  Eigen::Index above = 0;
  for (Eigen::Index j = 0; j < t; ++j) above += u[j] > kth;
  Eigen::Index ties = K - above, n = 0;
  for (Eigen::Index j = 0; j < t && n < K; ++j) {
    if (u[j] > kth) out[n++] = static_cast<std::int32_t>(j);
    else if (u[j] == kth && ties > 0) {
      out[n++] = static_cast<std::int32_t>(j);
      --ties;
    }
  }
}

/// A uniform K-subset of [0, t) from Floyd's algorithm driven by rng, written ascending.
void floyd_subset(Rng& rng, Eigen::Index t, Eigen::Index K, std::int32_t* out, std::vector<char>& flag) {
  if (K >= t) {
    for (Eigen::Index j = 0; j < t; ++j) out[j] = static_cast<std::int32_t>(j);
    return;
  }
  flag.assign(static_cast<std::size_t>(t), 0);
  Eigen::Index n = 0;
  for (Eigen::Index j = t - K; j < t; ++j) {
    auto r = static_cast<Eigen::Index>(rng.below(static_cast<std::uint64_t>(j + 1)));
    if (flag[static_cast<std::size_t>(r)]) r = j;
    flag[static_cast<std::size_t>(r)] = 1;
    out[n++] = static_cast<std::int32_t>(r);
  }
  std::sort(out, out + K);
}

/// U = B X_block + c, column by column as Σ_i b_i x_i (axpys over B's contiguous columns): vectorised, no
/// BLAS, the same numbers for any thread count.
Eigen::MatrixXd preact_block(const DsmModel& m, const Eigen::Ref<const Eigen::MatrixXd>& Xb) {
  Eigen::MatrixXd U(m.width(), Xb.cols());
  for (Eigen::Index n = 0; n < Xb.cols(); ++n) {
    U.col(n) = m.c;
    for (Eigen::Index i = 0; i < Xb.rows(); ++i) U.col(n) += Xb(i, n) * m.B.col(i);
  }
  return U;
}

void check_input(const DsmModel& m, const Eigen::MatrixXd& X) {
  if (X.rows() != m.dims())
    throw std::invalid_argument("dsm: inputs have " + std::to_string(X.rows()) + " rows, the model expects d = " +
                                std::to_string(m.dims()));
}

/// Selects the active units of the columns [begin, end) of X into idx, using U = B X_block + c when the
/// mask needs every pre-activation.
void select_block(const DsmModel& m, const Eigen::MatrixXd& X, Eigen::Index begin, Eigen::Index end, IndexMatrix& idx,
                  Eigen::MatrixXd* U_out) {
  const Eigen::Index t = m.width(), K = m.units_per_input(), nb = end - begin;
  const auto Xb = X.middleCols(begin, nb);
  std::vector<double> buf;
  std::vector<char> flag;
  Eigen::MatrixXd U;
  const bool need_u = m.mask == MaskKind::top_k || m.mask == MaskKind::scaling || m.mask == MaskKind::dense;
  if (need_u) {
    U = preact_block(m, Xb);
  }
  for (Eigen::Index n = 0; n < nb; ++n) {
    std::int32_t* out = idx.col(begin + n).data();
    switch (m.mask) {
      case MaskKind::dense:
        for (Eigen::Index j = 0; j < t; ++j) out[j] = static_cast<std::int32_t>(j);
        break;
      case MaskKind::top_k: top_k_indices(U.col(n).data(), t, K, out, buf); break;
      case MaskKind::random_hash: {
        Rng rng(m.hash_seed, input_hash(X.col(begin + n).data(), X.rows(), m.hash_seed));
        floyd_subset(rng, t, K, out, flag);
        break;
      }
      case MaskKind::switch_route: {
        const Eigen::VectorXd score = m.router.lazyProduct(X.col(begin + n)) + m.router_bias;
        Eigen::Index best = 0;
        for (Eigen::Index l = 1; l < score.size(); ++l)
          if (score(l) > score(best)) best = l;
        for (Eigen::Index k = 0; k < K; ++k) out[k] = static_cast<std::int32_t>(best * K + k);
        break;
      }
      case MaskKind::scaling: {
        const Eigen::Index block = t / K;
        for (Eigen::Index b = 0; b < K; ++b) {
          Eigen::Index best = b * block;
          for (Eigen::Index j = b * block + 1; j < (b + 1) * block; ++j)
            if (U(j, n) > U(best, n)) best = j;
          out[b] = static_cast<std::int32_t>(best);
        }
        break;
      }
      case MaskKind::nearest: {
        // −‖x − key_j‖²: the K nearest keys are its K largest.
        buf.resize(static_cast<std::size_t>(t));
        Eigen::VectorXd negdist(t);
        for (Eigen::Index j = 0; j < t; ++j) negdist(j) = -(m.keys.col(j) - X.col(begin + n)).squaredNorm();
        top_k_indices(negdist.data(), t, K, out, buf);
        break;
      }
    }
  }
  if (U_out) *U_out = std::move(U);
}

}  // namespace

const char* to_string(MaskKind mask) noexcept {
  switch (mask) {
    case MaskKind::dense: return "dense";
    case MaskKind::top_k: return "top_k";
    case MaskKind::random_hash: return "random_hash";
    case MaskKind::switch_route: return "switch";
    case MaskKind::scaling: return "scaling";
    case MaskKind::nearest: return "nearest";
  }
  return "?";
}

const char* to_string(Activation sigma) noexcept {
  switch (sigma) {
    case Activation::identity: return "identity";
    case Activation::relu: return "relu";
    case Activation::ones: return "ones";
  }
  return "?";
}

Eigen::MatrixXd to_dense(const ActiveFeatures& F) {
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(F.width, F.size());
  for (Eigen::Index n = 0; n < F.size(); ++n)
    for (Eigen::Index k = 0; k < F.active(); ++k) D(F.unit(k, n), n) = F.val(k, n);
  return D;
}

Eigen::VectorXd predict(const Eigen::VectorXd& theta, const ActiveFeatures& F) {
  if (theta.size() != F.width) throw std::invalid_argument("predict: θ has length " + std::to_string(theta.size()) +
                                                           ", the features width " + std::to_string(F.width));
  Eigen::VectorXd out(F.size());
  const auto N = static_cast<std::int64_t>(F.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < N; ++n) {
    double s = 0;
    const double* v = F.val.col(n).data();
    if (F.all) {
      for (Eigen::Index k = 0; k < F.active(); ++k) s += theta(k) * v[k];
    } else {
      const std::int32_t* j = F.idx.col(n).data();
      for (Eigen::Index k = 0; k < F.active(); ++k) s += theta(j[k]) * v[k];
    }
    out(n) = s;
  }
  return out;
}

Eigen::Index DsmModel::units_per_input() const {
  return mask == MaskKind::dense ? width() : active;
}

DsmModel make_dsm(Eigen::Index d, Eigen::Index t, MaskKind mask, Eigen::Index active, const BottomLayer& bottom,
                  std::uint64_t seed, std::uint64_t stream) {
  if (d < 1 || t < 1) throw std::invalid_argument("make_dsm: need d ≥ 1 and t ≥ 1");
  if (t > (Eigen::Index{1} << 30)) throw std::invalid_argument("make_dsm: width t above 2^30");
  if (mask != MaskKind::dense && (active < 1 || active > t))
    throw std::invalid_argument("make_dsm: the number of active units must lie in [1, t], got " + std::to_string(active));
  if ((mask == MaskKind::switch_route || mask == MaskKind::scaling) && t % active != 0)
    throw std::invalid_argument("make_dsm: switch/scaling need t a multiple of s, got t = " + std::to_string(t) +
                                ", s = " + std::to_string(active));
  if (mask == MaskKind::nearest) throw std::invalid_argument("make_dsm: the nearest mask needs keys (interpolation_model)");
  if (!(bottom.bias_range >= 0)) throw std::invalid_argument("make_dsm: bias_range must be ≥ 0");
  DsmModel m;
  m.mask = mask;
  m.sigma = bottom.sigma;
  m.active = mask == MaskKind::dense ? t : active;
  m.B.resize(t, d);
  fill_random(m.B.data(), static_cast<std::size_t>(m.B.size()), Distribution::normal, 1.0 / std::sqrt(double(d)), seed,
              stream_id(stream, 1));
  m.c = Eigen::VectorXd::Zero(t);
  if (bottom.bias_range > 0)
    fill_random(m.c.data(), static_cast<std::size_t>(t), Distribution::uniform, bottom.bias_range / std::sqrt(3.0), seed,
                stream_id(stream, 2));
  if (mask == MaskKind::switch_route) {
    const Eigen::Index L = t / active;
    m.router.resize(L, d);
    fill_random(m.router.data(), static_cast<std::size_t>(m.router.size()), Distribution::normal, 1.0 / std::sqrt(double(d)),
                seed, stream_id(stream, 3));
    m.router_bias = Eigen::VectorXd::Zero(L);
    if (bottom.bias_range > 0)
      fill_random(m.router_bias.data(), static_cast<std::size_t>(L), Distribution::uniform, bottom.bias_range / std::sqrt(3.0),
                  seed, stream_id(stream, 4));
  }
  m.hash_seed = mix64(seed ^ stream_id(stream, 5));
  m.A = Eigen::VectorXd::Zero(t);
  return m;
}

Eigen::MatrixXd preactivations(const DsmModel& model, const Eigen::MatrixXd& X) {
  check_input(model, X);
  return preact_block(model, X);
}

std::uint64_t input_hash(const double* x, Eigen::Index d, std::uint64_t seed) noexcept {
  std::uint64_t h = mix64(seed ^ 0x5851f42d4c957f2dULL);
  for (Eigen::Index i = 0; i < d; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    h = mix64(h ^ bits);
  }
  return h;
}

IndexMatrix mask_indices(const DsmModel& model, const Eigen::MatrixXd& X) {
  ActiveFeatures F = features(model, X);
  if (!F.all) return std::move(F.idx);
  IndexMatrix all(model.width(), X.cols());
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (Eigen::Index j = 0; j < model.width(); ++j) all(j, n) = static_cast<std::int32_t>(j);
  return all;
}

Eigen::MatrixXd mask_matrix(const DsmModel& model, const Eigen::MatrixXd& X) {
  const IndexMatrix idx = mask_indices(model, X);
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(model.width(), X.cols());
  for (Eigen::Index n = 0; n < idx.cols(); ++n)
    for (Eigen::Index k = 0; k < idx.rows(); ++k) M(idx(k, n), n) = 1.0;
  return M;
}

ActiveFeatures features(const DsmModel& m, const Eigen::MatrixXd& X) {
  check_input(m, X);
  const Eigen::Index t = m.width(), K = m.units_per_input(), N = X.cols();
  ActiveFeatures F;
  F.width = t;
  F.all = m.mask == MaskKind::dense;
  F.val.resize(K, N);
  if (!F.all) F.idx.resize(K, N);
  IndexMatrix& idx = F.idx;
  const auto blocks = static_cast<std::int64_t>((N + block_cols - 1) / block_cols);
  // Blocks allocate their pre-activations: parallel_for carries a failure out of the parallel region.
  parallel_for(std::int64_t{0}, blocks, [&](std::int64_t b) {
    const Eigen::Index begin = b * block_cols, end = std::min(N, begin + block_cols);
    if (F.all) {
      const Eigen::MatrixXd U = preact_block(m, X.middleCols(begin, end - begin));
      for (Eigen::Index n = begin; n < end; ++n)
        for (Eigen::Index j = 0; j < t; ++j) F.val(j, n) = activate(m.sigma, U(j, n - begin));
      return;
    }
    Eigen::MatrixXd U;
    select_block(m, X, begin, end, idx, &U);
    for (Eigen::Index n = begin; n < end; ++n) {
      for (Eigen::Index k = 0; k < K; ++k) {
        const std::int32_t j = idx(k, n);
        const double u = U.size() ? U(j, n - begin) : m.B.row(j).dot(X.col(n)) + m.c(j);
        F.val(k, n) = activate(m.sigma, u);
      }
    }
  }, {.dynamic = true});
  return F;
}

Eigen::VectorXd predict(const DsmModel& model, const Eigen::MatrixXd& X) {
  if (model.A.size() != model.width()) throw std::invalid_argument("predict: A must have length t");
  return predict(model.A, features(model, X));
}

DsmModel interpolation_model(const Eigen::MatrixXd& points, const Eigen::VectorXd& values) {
  const Eigen::Index t = points.cols();
  if (values.size() != t || t < 1) throw std::invalid_argument("interpolation_model: need one value per point");
  DsmModel m;
  m.B = points.transpose();  // b_i = x_i, so ⟨b_i, x_i⟩ = ‖x_i‖² ≠ 0
  m.c = Eigen::VectorXd::Zero(t);
  m.sigma = Activation::identity;
  m.mask = MaskKind::nearest;
  m.active = 1;  // s = 1
  m.keys = points;
  m.A.resize(t);
  for (Eigen::Index i = 0; i < t; ++i) {
    const double bx = points.col(i).squaredNorm();
    if (bx == 0) throw std::invalid_argument("interpolation_model: a point is zero (⟨b_i, x_i⟩ = 0)");
    m.A(i) = values(i) / bx;  // A_i = f(x_i)/⟨b_i, x_i⟩
  }
  return m;
}

DsmModel knn_model(const Eigen::MatrixXd& points, const Eigen::VectorXd& values, int k) {
  const Eigen::Index n = points.cols();
  if (values.size() != n || k < 1 || k > n) throw std::invalid_argument("knn_model: need one value per point and 1 ≤ k ≤ n");
  DsmModel m;
  m.B = points.transpose();
  m.c = Eigen::VectorXd::Zero(n);
  m.sigma = Activation::ones;  // σ(Bx) = indicator of the Top-k of Bx
  m.mask = MaskKind::top_k;
  m.active = k;
  m.A = values / static_cast<double>(k);  // A = (1/k)(f(b_1), …, f(b_n))
  return m;
}

Eigen::VectorXd knn_bruteforce(const Eigen::MatrixXd& points, const Eigen::VectorXd& values, const Eigen::MatrixXd& X,
                               int k) {
  const Eigen::Index n = points.cols();
  if (values.size() != n || k < 1 || k > n || X.rows() != points.rows())
    throw std::invalid_argument("knn_bruteforce: inconsistent sizes");
  Eigen::VectorXd out(X.cols());
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  Eigen::VectorXd dist(n);
  for (Eigen::Index q = 0; q < X.cols(); ++q) {
    for (Eigen::Index i = 0; i < n; ++i) dist(i) = (points.col(i) - X.col(q)).squaredNorm();
    std::iota(order.begin(), order.end(), Eigen::Index{0});
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](Eigen::Index a, Eigen::Index b) {
      return dist(a) < dist(b) || (dist(a) == dist(b) && a < b);
    });
    double s = 0;
    for (int i = 0; i < k; ++i) s += values(order[static_cast<std::size_t>(i)]);
    out(q) = s / k;
  }
  return out;
}

}  // namespace sparseact::lsh
