// mp_spectrum's speed paths (issue 15) keep its numbers bit for bit: the ReLU effective gradients of
// Theorem 6 formed in place equal the plain formulas V·max(KX, 0), Vᵀ(Y − T), G ⊙ 1[KX > 0] evaluated
// with fresh temporaries (the code as it was), and the KS distance with one CDF evaluation per
// eigenvalue equals the one that evaluated F(v−) and F(v) separately.
//
// The reference's products are Eigen's, written here as in the library: in this process they run the
// same GEMM as the library's (the test's and the library's instantiations of Eigen's product are one
// symbol to the dynamic linker, so the library's BLAS binding may not be what runs here; the
// paper-scale mp_spectrum outputs were compared byte for byte with the old code separately).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <Eigen/Dense>

#include <sparseact/core/rng.hpp>
#include <sparseact/spectral/esd.hpp>
#include <sparseact/spectral/init.hpp>
#include <sparseact/spectral/marchenko_pastur.hpp>
#include <sparseact/spectral/projection_bound.hpp>

using namespace sparseact;
using namespace sparseact::spectral;

namespace {


/// sample_eta(relu_gradient) as it was written before the in-place rewrite: every intermediate fresh.
Eigen::MatrixXd relu_eta_reference(const Eigen::MatrixXd& K, const Eigen::MatrixXd& V, Eigen::Index samples, std::uint64_t seed,
                                   std::uint64_t stream) {
  const Eigen::Index d = K.cols();
  Eigen::MatrixXd X(d, samples), T(d, samples);
  fill_random(X.data(), static_cast<std::size_t>(X.size()), Distribution::normal, 1.0, seed, stream_id(stream, 2));
  fill_random(T.data(), static_cast<std::size_t>(T.size()), Distribution::normal, 1.0, seed, stream_id(stream, 3));
  for (Eigen::Index j = 0; j < samples; ++j) X.col(j) *= std::sqrt(static_cast<double>(d)) / X.col(j).norm();
  const Eigen::MatrixXd H = K * X;
  const Eigen::MatrixXd Y = V * H.cwiseMax(0.0);
  const Eigen::MatrixXd G = V.transpose() * (Y - T);
  return G.cwiseProduct((H.array() > 0).cast<double>().matrix());
}

/// ks_distance as it was written before: F(v−) and F(v) each from their own CDF call.
double ks_reference(const Eigen::VectorXd& eigenvalues, const MarchenkoPastur& law) {
  std::vector<double> x(eigenvalues.data(), eigenvalues.data() + eigenvalues.size());
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size();) {
    std::size_t j = i;
    while (j < x.size() && x[j] == x[i]) ++j;
    const double v = x[i];
    const double F_left = v > 0 ? law.cdf(v) : 0.0;
    const double F_right = law.cdf(v);
    d = std::max({d, std::abs(static_cast<double>(i) / n - F_left), std::abs(static_cast<double>(j) / n - F_right)});
    i = j;
  }
  return d;
}

}  // namespace

TEST_CASE("ReLU effective gradients formed in place equal the plain formulas to rounding", "[spectral][speed_paths][thm6]") {
  // The reference's products run in this executable (Eigen's GEMM), the library's in OpenBLAS: the two
  // agree to rounding, not bit for bit (the in-place rewrite itself changes no bits: the same terms in
  // the same order; checked on the analysis's outputs when it was made).
  // Tall and wide K, a sample count that is not a multiple of any kernel's unroll, and sizes large
  // enough that OpenBLAS takes its blocked paths as at paper scale.
  for (auto [n, d, samples] : {std::tuple<Eigen::Index, Eigen::Index, Eigen::Index>{240, 60, 17}, {60, 150, 9}, {700, 180, 101}}) {
    const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::normal, 31);
    const Eigen::MatrixXd V = relu_readout(n, d, 31, 6);
    const Eigen::MatrixXd eta = sample_eta(K, EtaSource::relu_gradient, samples, 31, 6);
    const Eigen::MatrixXd ref = relu_eta_reference(K, V, samples, 31, 6);
    CHECK((eta - ref).cwiseAbs().maxCoeff() <= 1e-12 * ref.cwiseAbs().maxCoeff());
    // Masked entries keep the sign of g_α·0.0 (−0.0 for a negative gradient), as the product did.
    const auto negative_zeros = [](const Eigen::MatrixXd& m) {
      return (m.array() == 0).select(m.array().unaryExpr([](double v) { return std::signbit(v) ? 1.0 : 0.0; }), 0.0).sum();
    };
    CHECK(negative_zeros(eta) == negative_zeros(ref));
    CHECK(negative_zeros(eta) > 0);
  }
}

TEST_CASE("KS distance with one CDF evaluation per eigenvalue equals the two-evaluation form", "[spectral][speed_paths]") {
  // c = 4 (an atom of zeros, the mp_spectrum benchmark's shape) and c = 1/4 (no atom), with ties.
  for (auto [n, d] : {std::pair{400, 100}, std::pair{100, 400}}) {
    const Eigen::MatrixXd K = init_weights(n, d, Init::xavier, Distribution::normal, 8);
    const Eigen::MatrixXd KKt = K * K.transpose();
    Eigen::VectorXd ev = Eigen::VectorXd::Zero(n);
    ev.tail(std::min(n, d)) = (K.transpose() * K).selfadjointView<Eigen::Lower>().eigenvalues().tail(std::min(n, d));
    if (n < d) ev = KKt.selfadjointView<Eigen::Lower>().eigenvalues();
    ev(n - 2) = ev(n - 3);  // a tie among the nonzero eigenvalues
    const MarchenkoPastur law(static_cast<double>(n) / d, init_variance(Init::xavier, n, d) * d);
    const double ks = ks_distance(ev, law), ref = ks_reference(ev, law);
    CHECK(std::memcmp(&ks, &ref, sizeof ks) == 0);
    CHECK(ks > 0);
    CHECK(ks < 0.1);
  }
}
