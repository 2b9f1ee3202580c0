// flatness/: the per-layer quantities of paper 001 §3–4 against per-sample gradients formed
// explicitly, the bound identities (Lemmas 3, 5, 6), per-layer Hessian traces against the full
// Hessian, Theorem 7's numbers against the paper's, and Algorithms 1–2.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <sparseact/core/rng.hpp>
#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/flatness/hessian_trace.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/flatness/refine.hpp>
#include <sparseact/flatness/theorem7.hpp>
#include <sparseact/nn/backprop.hpp>
#include <sparseact/nn/hvp.hpp>

using namespace sparseact;
using namespace sparseact::nn;
using namespace sparseact::flatness;

namespace {

MlpConfig config(ActivationKind act, bool zeroth_bias, bool affine, bool value_layer = true) {
  MlpConfig c;
  c.d_in = 4;
  c.d = 6;
  c.d_out = 3;
  for (int l = 0; l < 2; ++l) {
    BlockConfig b;
    b.n = value_layer ? 9 : 6;
    b.activation.kind = act;
    b.ln_affine = affine;
    b.ln_bias = affine;
    b.zeroth_bias = zeroth_bias;
    b.value_layer = value_layer;
    c.blocks.push_back(b);
  }
  return c;
}

Batch batch(const MlpConfig& c, Eigen::Index B, std::uint64_t seed) {
  Batch b;
  b.x.resize(c.d_in, B);
  fill_random(b.x.data(), static_cast<std::size_t>(b.x.size()), Distribution::normal, 1.0, seed, 1);
  for (Eigen::Index s = 0; s < B; ++s) b.labels.push_back(static_cast<int>((3 * s + 1) % c.d_out));
  return b;
}

Eigen::VectorXd params(const Mlp& net, std::uint64_t seed) {
  Eigen::VectorXd theta = init_params(net, seed);
  Eigen::VectorXd noise(net.num_params);
  fill_random(noise.data(), static_cast<std::size_t>(noise.size()), Distribution::normal, 0.3, seed, 9);
  return theta + noise;
}

}  // namespace

TEST_CASE("per-layer statistics agree with per-sample gradients formed explicitly", "[flatness]") {
  struct C {
    const char* name;
    MlpConfig cfg;
  };
  const C cases[] = {{"DB-MLP J-SquaredReLU, affine LN", config(ActivationKind::j_squared_relu, true, true)},
                     {"vanilla ReLU, LN without affine", config(ActivationKind::relu, false, false)},
                     {"single hidden Linear (§8.5)", config(ActivationKind::relu, false, false, false)},
                     {"DB GELU no affine", config(ActivationKind::gelu, true, false)}};
  for (const C& cs : cases) {
    INFO(cs.name);
    const Mlp net = make_mlp(cs.cfg);
    const Eigen::VectorXd theta = params(net, 5);
    const Batch b = batch(cs.cfg, 11, 6);
    Eigen::VectorXd g;
    Eigen::MatrixXd G;  // num_params × B, column s = ∇θ ℓ_s
    loss_and_gradient(net, theta, b, LossKind::cross_entropy, g, &G);
    const FlatnessStats st = flatness_stats(net, theta, b, LossKind::cross_entropy);
    CHECK((st.batch_gradient - g).norm() <= 1e-12 * g.norm());
    // E‖∇θ_l ℓ‖² per layer
    for (std::size_t l = 0; l < net.layers.size(); ++l) {
      const LayerInfo& li = net.layers[l];
      const double direct = G.middleRows(li.offset, li.size).colwise().squaredNorm().mean();
      CHECK(st.layer_grad_sq[l] == Approx(direct).epsilon(1e-10));
    }
    CHECK(st.grad_sq == Approx(G.colwise().squaredNorm().mean()).epsilon(1e-10));
    for (std::size_t l = 0; l < net.blocks.size(); ++l) {
      const BlockParams& bp = net.blocks[l];
      const BlockStats& bs = st.blocks[l];
      auto tensor_sq = [&](int index) {
        const ParamInfo& p = net.params[static_cast<std::size_t>(index)];
        return G.middleRows(p.offset, p.size()).colwise().squaredNorm().mean();
      };
      CHECK(bs.x_eta == Approx(tensor_sq(bp.K)).epsilon(1e-10));               // Lemma 2: ∇_K ℓ = η(x+d)ᵀ
      CHECK(bs.eta_sq == Approx(tensor_sq(bp.b_K)).epsilon(1e-10));            // ∇_{b_K} ℓ = η
      if (bp.V >= 0) CHECK(bs.gV_alpha == Approx(tensor_sq(bp.V)).epsilon(1e-10));  // ∇_V ℓ = g_V αᵀ
      if (bp.d >= 0) CHECK(bs.grad_x_sq == Approx(tensor_sq(bp.d)).epsilon(1e-10)); // Lemma 5: ∇_d = ∇_x
      CHECK(bs.eta_KKt_eta == Approx(bs.grad_x_sq).epsilon(1e-10));            // Lemma 6, Gram vs backprop
      CHECK(bs.trace_KKt == Approx(param_view(net, theta, bp.K).squaredNorm()));
    }
    const BoundTerms t = bound_terms(net, st);
    CHECK(t.lemma5 <= t.lemma4 * (1 + 1e-12));  // Lemma 5 is a sum of parts of the gradient norm
    CHECK(t.theorem2 == Approx(t.lemma5).epsilon(1e-10));
    CHECK(t.corollary1 == Approx(t.theorem2).epsilon(1e-12));
    // issue 47: the three right-hand sides, each from its own formula (per-sample backward for Lemma 5), agree to 1e-12
    const BoundIdentities ids = bound_identities(net, theta, b);
    CHECK(std::abs(ids.lemma5 - ids.theorem2) <= 1e-12 * ids.theorem2);
    CHECK(std::abs(ids.corollary1 - ids.theorem2) <= 1e-12 * ids.theorem2);
    CHECK(std::abs(t.theorem2 - ids.theorem2) <= 1e-12 * ids.theorem2);
    const double direct_lemma5 = [&] {  // from the per-sample gradients G of loss_and_gradient
      double sum = 0.0;
      for (const BlockParams& bp : net.blocks)
        for (int index : {bp.d, bp.K, bp.V})
          if (index >= 0) {
            const ParamInfo& p = net.params[static_cast<std::size_t>(index)];
            sum += G.middleRows(p.offset, p.size()).colwise().squaredNorm().mean();
          }
      return sum;
    }();
    CHECK(ids.lemma5 == Approx(direct_lemma5).epsilon(1e-10));
    if (cs.cfg.blocks[0].activation.kind == ActivationKind::relu) {
      // Lemma 3: for ReLU, E‖η‖² = E[g_K² | γ = 1]·E‖γ‖₀ exactly
      for (const BlockStats& bs : st.blocks) CHECK(bs.gK_sq_active * bs.active_count == Approx(bs.eta_sq).epsilon(1e-10));
      CHECK(t.theorem3_relu == Approx(t.theorem3).epsilon(1e-10));
    } else {
      CHECK(std::isnan(t.theorem3_relu));
    }
  }
}

TEST_CASE("sparsity fractions: ReLU counts positive pre-activations, Weird-J counts its flat area", "[flatness]") {
  MlpConfig c = config(ActivationKind::relu, false, false);
  const Mlp net = make_mlp(c);
  const Eigen::VectorXd theta = params(net, 3);
  const Batch b = batch(c, 50, 4);
  ForwardCache f;
  forward(net, theta, b.x, f);
  const auto sp = forward_sparsity(net, theta, b.x);
  for (std::size_t l = 0; l < sp.size(); ++l) {
    const double positive = (f.blocks[l].pre.array() > 0).cast<double>().mean();
    CHECK(sp[l].activation_density == Approx(positive));
    CHECK(sp[l].gradient_density == Approx(positive));
    CHECK(sp[l].flat_fraction == Approx(1 - positive));
  }
  MlpConfig w = c;
  for (auto& bc : w.blocks) bc.activation = {ActivationKind::weird_j_squared_relu, 1.5, 1.6, -1.6};
  const Mlp wnet = make_mlp(w);
  forward(wnet, theta, b.x, f);
  const auto ws = forward_sparsity(wnet, theta, b.x);
  for (std::size_t l = 0; l < ws.size(); ++l) {
    const double inside = ((f.blocks[l].pre.array() - 1.6).abs() < 1.5).cast<double>().mean();
    CHECK(ws[l].flat_fraction == Approx(inside));
    CHECK(ws[l].activation_density == Approx(1 - inside));  // activations ≠ Δy outside the flat area
  }
}

TEST_CASE("per-layer Hessian traces: exact against the full Hessian, Hutchinson within its interval", "[flatness]") {
  MlpConfig c = config(ActivationKind::j_squared_relu, true, true);
  const Mlp net = make_mlp(c);
  const Eigen::VectorXd theta = params(net, 7);
  const Batch b = batch(c, 16, 8);
  const HessianOperator op(net, theta, b, LossKind::cross_entropy);
  const Eigen::MatrixXd H = hessian(net, theta, b, LossKind::cross_entropy);
  const auto segs = layer_segments(net);
  const estimators::TraceEstimate ex = exact_layer_traces(op, 7);
  CHECK(ex.estimate == Approx(H.trace()).epsilon(1e-12));
  REQUIRE(ex.segments.size() == segs.size());
  for (std::size_t l = 0; l < segs.size(); ++l) {
    CHECK(ex.segments[l].name == net.layers[l].name);
    CHECK(ex.segments[l].estimate ==
          Approx(H.block(segs[l].offset, segs[l].offset, segs[l].size, segs[l].size).trace()).epsilon(1e-12));
  }

  estimators::TraceOptions opt;
  opt.seed = 3;
  opt.stop.min_samples = opt.stop.max_samples = 400;
  const estimators::TraceEstimate hu = hutchinson_layer_traces(op, opt);
  // the whole-network part is the whole-network Hutchinson on the same probes, to rounding: the
  // per-layer run sums the operator's per-layer quadratic forms (nn/hvp.hpp quadratic_forms_block),
  // the whole-network run takes zᵀ(Hz) (measured 3e-16 relative)
  const estimators::TraceEstimate whole = estimators::hutchinson(op, opt);
  CHECK(hu.estimate == Approx(whole.estimate).epsilon(1e-12));
  CHECK(hu.std_error == Approx(whole.std_error).epsilon(1e-12));
  REQUIRE(hu.segments.size() == segs.size());
  double sum = 0.0;
  for (std::size_t l = 0; l < segs.size(); ++l) {
    INFO("layer " << l);
    CHECK(std::abs(hu.segments[l].estimate - ex.segments[l].estimate) <= 4.5 * hu.segments[l].std_error + 1e-12);
    sum += hu.segments[l].estimate;
  }
  CHECK(sum == Approx(hu.estimate).epsilon(1e-10));
  CHECK(std::abs(hu.estimate - ex.estimate) <= 4.5 * hu.std_error);
  // the stopping rule stops once the interval is narrow enough
  estimators::TraceOptions rule;
  rule.seed = 4;
  rule.stop.rel_tol = 0.05;
  rule.stop.max_samples = 5000;
  const estimators::TraceEstimate stopped = hutchinson_layer_traces(op, rule);
  CHECK(stopped.converged);
  CHECK(stopped.half_width <= 0.05 * std::abs(stopped.estimate));
}

TEST_CASE("Theorem 7: the paper's effective windows and eq. (11) margin", "[flatness]") {
  CHECK(effective_window(1e-3, 1e-3, 0.1) == 161172.0);  // paper 001 §4.6
  CHECK(effective_window(1e-3, 1e-3, 0.3) == 50057.0);
  CHECK(std::isinf(effective_window(1e-3, 1e-3, 0.0)));
  // the window's defining property: r^{k+1}/(1−r) ≤ τ at k, not at k − 1
  const double r = 1 - 1e-4, k = effective_window(1e-3, 1e-3, 0.1);
  CHECK(std::pow(r, k + 1) / (1 - r) <= 1e-3);
  CHECK(std::pow(r, k) / (1 - r) > 1e-3);
  // §4.6: c ≈ 4.8e-4 (768/(32·50,042)), v0 = 1e-3, α/p = 0.05, β/p = 1 → margin ≈ 0.061
  const double p = 768;
  const Theorem7Terms t = theorem7_terms(p, 32.0 * 50042.0, 0.05 * p, 1.0 * p, 1e-3, 1e-3);
  CHECK(t.c == Approx(4.796e-4).epsilon(1e-3));
  CHECK(t.condition11);
  CHECK(t.margin11 == Approx(0.061).margin(1e-3));
  CHECK_THROWS(theorem7_terms(p, 100, 1, 1, 1e-4, 1e-3));  // v < v0
}

TEST_CASE("anisotropy: isotropic S gives a = p and β = 0, and β/p = √(1 − a/p) in general", "[flatness]") {
  const Anisotropy iso = anisotropy(3.7 * Eigen::MatrixXd::Identity(10, 10));
  CHECK(iso.a == Approx(10.0));
  CHECK(iso.beta == Approx(0.0).margin(1e-12));
  Eigen::MatrixXd X(10, 40);
  fill_random(X.data(), static_cast<std::size_t>(X.size()), Distribution::normal, 1.0, 1, 2);
  X.row(0) *= 5.0;
  const Eigen::MatrixXd S = X * X.transpose() / 40.0;
  const Anisotropy an = anisotropy(S);
  CHECK(an.a_over_p < 1.0);
  CHECK(an.beta_over_p == Approx(std::sqrt(1.0 - an.a_over_p)).epsilon(1e-12));
  // rank one: tr(T) = 1
  const Eigen::VectorXd u = X.col(0);
  CHECK(anisotropy(u * u.transpose()).a == Approx(1.0));
  CHECK_THROWS(anisotropy(Eigen::MatrixXd::Zero(3, 3)));
}

TEST_CASE("Algorithms 1 and 2 as post-step hooks", "[flatness][nn]") {
  MlpConfig c = config(ActivationKind::j_squared_relu, true, true);
  for (auto& bc : c.blocks) bc.ln_bias = false;  // Algorithm 1 wants unbiased LayerNorms
  const Mlp net = make_mlp(c);
  Eigen::VectorXd theta = params(net, 2);
  const BlockParams& bp = net.blocks[0];
  param_view(net, theta, bp.gamma)(0, 0) = 0.5;
  param_view(net, theta, bp.gamma)(1, 0) = 2.0;
  param_view(net, theta, bp.d)(0, 0) = 0.3;   // > 0.1·max(0.5, 1) = 0.1
  param_view(net, theta, bp.d)(1, 0) = -0.15; // within 0.1·2 = 0.2
  param_view(net, theta, bp.d)(2, 0) = -5.0;
  const Eigen::VectorXd before = theta;
  algorithm1_hook(net, 0.1)(theta, 1);
  const auto g = param_view(net, theta, bp.gamma);
  const auto d = param_view(net, theta, bp.d);
  CHECK(g.minCoeff() >= 1.0);
  CHECK(g(1, 0) == 2.0);
  CHECK(d(0, 0) == Approx(0.1));  // clamped after γ was raised to 1
  CHECK(d(1, 0) == -0.15);
  CHECK(d(2, 0) == Approx(-0.1 * std::abs(g(2, 0))));
  CHECK(param_view(net, theta, bp.K) == param_view(net, before, bp.K));  // nothing else moves

  Eigen::VectorXd th2 = before;
  param_view(net, th2, bp.gamma)(2, 0) = 0.0;
  param_view(net, th2, bp.gamma)(3, 0) = -0.2;
  const auto hook = algorithm2_hook(net, 10);
  hook(th2, 5);  // floor = 0.5
  const auto g2 = param_view(net, th2, bp.gamma);
  CHECK(g2(0, 0) == 0.5);
  CHECK(g2(1, 0) == 2.0);
  CHECK(g2(2, 0) == 0.5);   // zero uplifted towards the positive side
  CHECK(g2(3, 0) == -0.5);  // sign kept
  hook(th2, 20);            // floor = 1
  CHECK(param_view(net, th2, bp.gamma).cwiseAbs().minCoeff() >= 1.0);
  CHECK_THROWS(algorithm1_hook(net, -1.0));
  CHECK_THROWS(algorithm2_hook(net, 0));
}
