// Paper 002 §5.1.1's pair measurements and NTK (routing/ntk: the Khatri–Rao Gram against J Jᵀ, eqs. (9), (11)) (routing/similarity, routing/pair_study) against direct
// computation, the whole-network law against simulation at width 4096, and the resampling statistics
// they use against numpy's definitions.
#include <catch2/catch.hpp>

#include <cmath>

#include <Eigen/Eigenvalues>

#include <sparseact/core/estimators/top_eigenvalues.hpp>
#include <sparseact/core/ops/apply.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/routing/comet_batch.hpp>
#include <sparseact/routing/ntk.hpp>
#include <sparseact/routing/overlap_law.hpp>
#include <sparseact/routing/pair_study.hpp>
#include <sparseact/routing/similarity.hpp>

using namespace sparseact;
using namespace sparseact::routing;

TEST_CASE("Sample quantile is numpy's default (type 7)", "[stats][resampling]") {
  const std::vector<double> x{10, 1, 4, 2, 3};
  CHECK(stats::quantile(x, 0.0) == 1.0);
  CHECK(stats::quantile(x, 1.0) == 10.0);
  CHECK(stats::quantile(x, 0.5) == 3.0);
  CHECK(stats::quantile(x, 0.3) == Approx(2.2).epsilon(1e-14));   // numpy.quantile([1,2,3,4,10], 0.3)
  CHECK(stats::quantile(x, 0.95) == Approx(8.8).epsilon(1e-14));  // numpy.quantile([1,2,3,4,10], 0.95)
  CHECK(stats::quantile({7.0}, 0.4) == 7.0);
  CHECK_THROWS_AS(stats::quantile({}, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(stats::quantile(x, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(stats::quantile({1.0, std::nan("")}, 0.5), std::invalid_argument);
}

TEST_CASE("Percentile bootstrap of a mean matches the normal interval and is reproducible", "[stats][resampling]") {
  Rng rng(5, 1);
  std::vector<double> x(400);
  for (auto& v : x) v = 3 + 2 * rng.normal();
  const auto mean = [&](const std::vector<std::size_t>& idx) {
    double s = 0;
    for (auto i : idx) s += x[i];
    return s / double(idx.size());
  };
  const stats::Interval ci = stats::bootstrap_interval(x.size(), mean, 4000, 9);
  stats::RunningMean m;
  for (double v : x) m.push(v);
  const double half = 1.959964 * std::sqrt(m.variance() / double(x.size()));
  CHECK(ci.half_width() == Approx(half).epsilon(0.1));
  CHECK(0.5 * (ci.lo + ci.hi) == Approx(m.mean()).margin(0.1 * half));
  const stats::Interval again = stats::bootstrap_interval(x.size(), mean, 4000, 9);
  CHECK(again.lo == ci.lo);
  CHECK(again.hi == ci.hi);
  CHECK_THROWS_AS(stats::bootstrap_interval(0, mean, 100, 1), std::invalid_argument);
  CHECK_THROWS_AS(stats::bootstrap_interval(5, [](const std::vector<std::size_t>&) { return std::nan(""); }, 100, 1), std::invalid_argument);
}

namespace {

CometNetSpec small_spec(nn::PlainActivation f = nn::PlainActivation::relu) {
  return {.widths = {12, 20, 16, 18, 3}, .f = f, .biases = false, .rule = TieRule::strict};
}

}  // namespace

TEST_CASE("Per-column p_k masks equal a router built at that p_k", "[routing][comet]") {
  const CometNetSpec spec = small_spec();
  const CometNet net = make_comet_net(spec, 3, 7);
  const Eigen::MatrixXd X = paper002_pair_inputs(2, 12, 4);  // four inputs
  const std::vector<double> pks{0.1, 0.5, 0.5, 1.0};
  const std::vector<Eigen::MatrixXd> mixed = comet_masks(net.router, X, pks);
  for (int j = 0; j < 4; ++j) {
    CometRouter r = net.router;
    for (std::size_t l = 0; l < r.k.size(); ++l) r.k[l] = active_units(pks[std::size_t(j)], r.widths[l + 1]);
    const std::vector<Eigen::MatrixXd> alone = comet_masks(r, X.col(j));
    for (std::size_t l = 0; l < alone.size(); ++l) CHECK(mixed[l].col(j) == alone[l].col(0));
  }
  CHECK_THROWS_AS(comet_masks(net.router, X, {0.5}), std::invalid_argument);
}

TEST_CASE("Pair similarity equals cosines computed layer by layer", "[routing][pair_study]") {
  const CometNetSpec spec = small_spec();
  const CometNet net = make_comet_net(spec, 11, 2);
  const Eigen::MatrixXd pair = paper002_pair_inputs(1, 12, 8);
  const std::vector<double> pks{0.25, 1.0};
  const std::vector<PairSimilarity> s = pair_similarity(net.router, net.backbone, net.theta, pair, pks);
  REQUIRE(s.size() == 2);
  for (std::size_t p = 0; p < pks.size(); ++p) {
    CometRouter r = net.router;
    for (std::size_t l = 0; l < r.k.size(); ++l) r.k[l] = active_units(pks[p], r.widths[l + 1]);
    const std::vector<Eigen::MatrixXd> masks = comet_masks(r, pair);
    const nn::PlainForward fwd = nn::plain_forward(net.backbone, net.theta, pair, masks);
    Eigen::VectorXd m0(0), m1(0), x0(0), x1(0);
    for (std::size_t l = 0; l < masks.size(); ++l) {
      const Eigen::VectorXd a = masks[l].col(0), b = masks[l].col(1);
      CHECK(s[p].layer_overlap[l] == Approx(a.dot(b) / std::sqrt(a.sum() * b.sum())).epsilon(1e-14));
      const Eigen::VectorXd u = fwd.x[l + 1].col(0), v = fwd.x[l + 1].col(1);
      if (u.norm() > 0 && v.norm() > 0) CHECK(s[p].layer_act_cos[l] == Approx(u.dot(v) / (u.norm() * v.norm())).epsilon(1e-12));
      m0.conservativeResize(m0.size() + a.size()), m0.tail(a.size()) = a;
      m1.conservativeResize(m1.size() + b.size()), m1.tail(b.size()) = b;
      x0.conservativeResize(x0.size() + u.size()), x0.tail(u.size()) = u;
      x1.conservativeResize(x1.size() + v.size()), x1.tail(v.size()) = v;
    }
    CHECK(s[p].mask_cos == Approx(cosine(m0, m1)).epsilon(1e-14));
    CHECK(s[p].act_cos == Approx(cosine(x0, x1)).epsilon(1e-12));
  }
  CHECK(s[1].mask_cos == 1.0);  // p_k = 1 keeps every unit
  CHECK(std::isnan(cosine(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Ones(3))));
}

TEST_CASE("Pair NTK cosines equal the traces of eq. (10) and its W blocks from the explicit NTK", "[routing][pair_study]") {
  const CometNetSpec spec = small_spec(nn::PlainActivation::tanh);
  const CometNet net = make_comet_net(spec, 5, 1);
  const Eigen::MatrixXd pair = paper002_pair_inputs(1, 12, 3);
  const std::vector<PairNtk> k = pair_ntk(net.router, net.backbone, net.theta, pair, {0.5});
  CometRouter r = net.router;
  for (std::size_t l = 0; l < r.k.size(); ++l) r.k[l] = active_units(0.5, r.widths[l + 1]);
  const std::vector<Eigen::MatrixXd> masks = comet_masks(r, pair);
  const nn::PlainForward fwd = nn::plain_forward(net.backbone, net.theta, pair, masks);
  std::vector<Eigen::MatrixXd> b01, b00, b11;
  const Eigen::MatrixXd K01 = nn::plain_ntk(net.backbone, net.theta, fwd, 0, 1, masks, &b01);
  const Eigen::MatrixXd K00 = nn::plain_ntk(net.backbone, net.theta, fwd, 0, 0, masks, &b00);
  const Eigen::MatrixXd K11 = nn::plain_ntk(net.backbone, net.theta, fwd, 1, 1, masks, &b11);
  // And eq. (10) from the Jacobians, independently of the signals' block form.
  const Eigen::MatrixXd J0 = nn::plain_jacobian(net.backbone, net.theta, fwd, 0, masks), J1 = nn::plain_jacobian(net.backbone, net.theta, fwd, 1, masks);
  CHECK((J0 * J1.transpose() - K01).norm() <= 1e-12 * K01.norm());
  CHECK(k[0].ntk_cos == Approx(K01.trace() / std::sqrt(K00.trace() * K11.trace())).epsilon(1e-12));
  for (std::size_t l = 0; l < b01.size(); ++l)
    CHECK(k[0].block_cos[l] == Approx(b01[l].trace() / std::sqrt(b00[l].trace() * b11[l].trace())).epsilon(1e-12));
}

TEST_CASE("PairMeans survive a sweep record bit for bit; fresh and shared nets", "[routing][pair_study]") {
  const CometNetSpec spec = small_spec();
  const Eigen::MatrixXd X = paper002_pair_inputs(3, 12, 2);
  NetSource fresh(spec, 2, 0), shared(spec, 2, 2);
  const PairMeans a = fresh.measure(X.middleCols(2, 2), 1, 2, {0.2, 1.0}, true);
  const PairMeans b = pair_means_from(to_record(a));
  CHECK(b.mask_cos == a.mask_cos);
  CHECK(b.overlap == a.overlap);
  CHECK(b.ntk_block == a.ntk_block);
  CHECK(b.input_cos == a.input_cos);
  // Fresh nets of pair 1 are nets 2 and 3; shared ones are nets 0 and 1 for every pair.
  const CometNet n2 = make_comet_net(spec, 2, 2), n3 = make_comet_net(spec, 2, 3);
  const PairMeans direct = measure_pair(X.middleCols(2, 2), {&n2, &n3}, {0.2, 1.0}, true);
  CHECK(direct.act_cos == a.act_cos);
  const PairMeans s1 = shared.measure(X.middleCols(2, 2), 1, 2, {0.2, 1.0}, false);
  const CometNet n0 = make_comet_net(spec, 2, 0), n1 = make_comet_net(spec, 2, 1);
  CHECK(measure_pair(X.middleCols(2, 2), {&n0, &n1}, {0.2, 1.0}, false).act_cos == s1.act_cos);
}

TEST_CASE("ν and the law gap on hand cases", "[routing][pair_study]") {
  const std::vector<double> in{0.95, 0.99, 0.5}, out{0.8, 0.9, 0.1};
  // Pairs 0, 1 qualify (input ≥ 0.9): (0.2 + 0.1)/(0.05 + 0.01) = 5.
  CHECK(narrowness(in, out, {0, 1, 2}) == Approx(5.0).epsilon(1e-12));
  CHECK(std::isnan(narrowness(in, out, {2})));
  const LawGap g = law_gap({1.0, 1.2, std::nan("")}, {1.1, 1.1, 1.0}, 0.01);
  CHECK(g.n == 2);
  CHECK(g.mean == Approx(0.0).margin(1e-15));
  CHECK(g.holds());
  const LawGap far = law_gap({2.0, 2.0, 2.0}, {1.0, 1.0, 1.0}, 0.5);
  CHECK(far.excess() == Approx(1.0).epsilon(1e-12));
  CHECK_FALSE(far.holds());
}

TEST_CASE("The network law against a width-4096 simulation", "[routing][overlap_law][slow]") {
  // Two inputs at cosine 0.8; three nets 64–4096×3–10; the law's per-layer overlap and activation cosine,
  // and its NTK blocks, within 3 standard errors of the mean over nets: one net's overlap varies by
  // about √(O(1 − O)/k) ≤ 1/(2√k), so 3/√(k · nets) (k = 410 at p_k = 0.1, 2048 at 0.5).
  const CometNetSpec spec{.widths = {64, 4096, 4096, 4096, 10}, .f = nn::PlainActivation::relu, .biases = false};
  Rng rng(1, 2);
  Eigen::MatrixXd pair(64, 2);
  for (Eigen::Index i = 0; i < 64; ++i) pair(i, 0) = rng.normal(), pair(i, 1) = rng.normal();
  pair.col(1) -= pair.col(1).dot(pair.col(0)) / pair.col(0).squaredNorm() * pair.col(0);  // orthogonal to x
  pair.col(1) = 0.8 * pair.col(0) + 0.6 * pair.col(0).norm() / pair.col(1).norm() * pair.col(1);
  std::vector<CometNet> nets;
  for (int n = 0; n < 3; ++n) nets.push_back(make_comet_net(spec, 4, std::uint64_t(n)));
  const PairMeans m = measure_pair(pair, {&nets[0], &nets[1], &nets[2]}, {0.1, 0.5}, true);
  REQUIRE(m.input_cos == Approx(0.8).epsilon(1e-12));
  for (std::size_t p = 0; p < 2; ++p) {
    const NetworkLaw law = comet_network_law(0.8, m.pks[p], spec.widths, spec.f);
    const double tol = 3.0 / std::sqrt(double(law.k[0]) * double(nets.size()));
    for (std::size_t l = 0; l < 3; ++l) {
      CAPTURE(p, l);
      CHECK(m.overlap[p][l] == Approx(law.layers[l].overlap).margin(tol));
      CHECK(m.act_layer[p][l] == Approx(law.layers[l].act_cos).margin(tol));
    }
    CHECK(m.mask_cos[p] == Approx(law.mask_cos).margin(tol));
    CHECK(m.act_cos[p] == Approx(law.act_cos).margin(tol));
    for (std::size_t l = 0; l < 4; ++l) CHECK(m.ntk_block[p][l] == Approx(law.ntk_block_cos[l]).margin(1.5 * tol));
    CHECK(m.ntk_cos[p] == Approx(law.ntk_cos).margin(1.5 * tol));
  }
}

TEST_CASE("The network law's limits: p_k = 1, identity f, identical inputs", "[routing][overlap_law]") {
  const std::vector<int> w{10, 50, 50, 2};
  const NetworkLaw one = comet_network_law(0.3, 1.0, w, nn::PlainActivation::identity);
  for (const LayerLaw& l : one.layers) {
    CHECK(l.overlap == 1.0);
    CHECK(l.act_cos == Approx(0.3).epsilon(1e-14));
  }
  CHECK(one.ntk_cos == Approx(0.3).epsilon(1e-12));  // every block is cos x_{ℓ−1} = 0.3 for a linear net
  const NetworkLaw same = comet_network_law(1.0, 0.2, w, nn::PlainActivation::relu);
  CHECK(same.mask_cos == Approx(1.0).epsilon(1e-12));
  CHECK(same.act_cos == Approx(1.0).epsilon(1e-12));
  CHECK(same.ntk_cos == Approx(1.0).epsilon(1e-12));
  CHECK_THROWS_AS(comet_network_law(0.5, 0.5, w, nn::PlainActivation::tanh), std::invalid_argument);
}

TEST_CASE("The Khatri–Rao NTK Gram equals J Jᵀ from explicit Jacobians; Lanczos on it equals the dense spectrum", "[routing][ntk][ops]") {
  for (const bool biases : {false, true}) {
    CAPTURE(biases);
    const nn::PlainMlp net{{6, 9, 7, 3}, nn::PlainActivation::tanh, biases};
    const Eigen::VectorXd theta = nn::init_plain_mlp(net, 3, 4);
    const CometRouter router = make_comet_router(net.widths, 0.5, 3, 5);
    Rng rng(8, 1);
    Eigen::MatrixXd X(6, 5);
    for (auto& v : X.reshaped()) v = rng.normal();
    const std::vector<Eigen::MatrixXd> masks = comet_masks(router, X);
    const ops::KhatriRaoGramOp K = ntk_gram(net, theta, X, masks);
    const nn::PlainForward fwd = nn::plain_forward(net, theta, X, masks);
    Eigen::MatrixXd J(5 * 3, nn::parameter_count(net));
    for (Eigen::Index i = 0; i < 5; ++i) J.middleRows(i * 3, 3) = nn::plain_jacobian(net, theta, fwd, i, masks);
    const Eigen::MatrixXd direct = J * J.transpose();
    const Eigen::MatrixXd dense = K.dense();
    CHECK((dense - direct).norm() <= 1e-12 * direct.norm());
    CHECK(K.trace() == Approx(direct.trace()).epsilon(1e-12));
    Eigen::MatrixXd V(15, 4), Y;
    for (auto& v : V.reshaped()) v = rng.normal();
    ops::apply(K, V, Y);
    CHECK((Y - direct * V).norm() <= 1e-12 * (direct * V).norm());
    const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(direct).eigenvalues().reverse();
    const estimators::TopEigen top = estimators::top_eigenvalues(K, 3);
    for (int i = 0; i < 3; ++i) CHECK(top.values(i) == Approx(ev(i)).epsilon(1e-9));
  }
}

TEST_CASE("Eq. (11) with x_{ℓ−1} is exact, the printed a_{ℓ−1} is not; eq. (9) is first order", "[routing][ntk]") {
  const nn::PlainMlp net{{5, 8, 8, 8, 2}, nn::PlainActivation::relu, false};
  const Eigen::VectorXd theta = nn::init_plain_mlp(net, 1, 2);
  const CometRouter router = make_comet_router(net.widths, 0.5, 1, 3);
  const Eigen::MatrixXd X = paper002_pair_inputs(1, 5, 6);
  const std::vector<Eigen::MatrixXd> masks = comet_masks(router, X);
  const Eq11Errors e = eq11_errors(net, theta, nn::plain_forward(net, theta, X, masks), 0, 1, masks);
  for (double err : e.with_x) CHECK(err <= 1e-13);
  CHECK(e.printed[0] <= 1e-13);  // ℓ = 1: a_0 is read as x_0
  double worst = 0;
  for (std::size_t l = 1; l < e.printed.size(); ++l) worst = std::max(worst, e.printed[l]);
  CHECK(worst > 1e-3);
  // A smooth net (tanh): the error of eq. (9) falls tenfold with α, and never kinks.
  const nn::PlainMlp smooth{{5, 8, 8, 2}, nn::PlainActivation::tanh, true};
  const Eigen::VectorXd th = nn::init_plain_mlp(smooth, 4, 2);
  const CometRouter r2 = make_comet_router(smooth.widths, 0.5, 4, 3);
  const Eigen::Vector2d y(0.3, -1.0);
  const std::vector<Eq9Step> st = eq9_steps(smooth, th, X, comet_masks(r2, X), y, {1e-2, 1e-3, 1e-4});
  for (std::size_t i = 0; i + 1 < st.size(); ++i) {
    CHECK_FALSE(st[i].kink);
    CHECK(st[i].relative_error / st[i + 1].relative_error == Approx(10).epsilon(0.2));
  }
  CHECK(st.back().relative_error < 1e-2);
  // Without the minus sign (eq. (9) as printed) the step moves the other way: ‖Δ/α − Kg‖ = ‖(Δ/α + Kg) − 2Kg‖, so the printed
  // error lies within the descent form's error of 2 (triangle inequality both ways).
  for (const Eq9Step& s : st) CHECK(std::abs(s.printed_error - 2) <= s.relative_error + 1e-12);
}

TEST_CASE("Batched COMET nets equal single dense forwards: masks identical, activations to 1e-12", "[routing][comet_batch]") {
  for (const bool biases : {false, true}) {
    CAPTURE(biases);
    const CometNetSpec spec{.widths = {20, 64, 48, 64, 5}, .f = nn::PlainActivation::relu, .biases = biases};
    std::vector<CometNet> nets;
    std::vector<const CometNet*> ptrs;
    for (int b = 0; b < 5; ++b) nets.push_back(make_comet_net(spec, 9, std::uint64_t(b)));
    for (const CometNet& n : nets) ptrs.push_back(&n);
    Rng rng(3, 3);
    Eigen::MatrixXd X(20, 33);
    for (auto& v : X.reshaped()) v = rng.normal();
    for (double p : {0.1, 0.5, 1.0}) {
      CAPTURE(p);
      const std::vector<CometBatchForward> one = comet_forward_batch(ptrs, X, p, 1), two = comet_forward_batch(ptrs, X, p, 2);
      for (std::size_t b = 0; b < nets.size(); ++b) {
        CometRouter r = nets[b].router;
        for (std::size_t l = 0; l < r.k.size(); ++l) r.k[l] = active_units(p, r.widths[l + 1]);
        const std::vector<Eigen::MatrixXd> masks = comet_masks(r, X);
        const nn::PlainForward fwd = nn::plain_forward(nets[b].backbone, nets[b].theta, X, masks);
        for (std::size_t l = 0; l < masks.size(); ++l) {
          CHECK(one[b].hidden[l].mask() == masks[l]);
          CHECK((one[b].hidden[l].dense() - fwd.x[l + 1]).norm() <= 1e-12 * fwd.x[l + 1].norm());
          CHECK(two[b].hidden[l].value == one[b].hidden[l].value);  // bits independent of threads
        }
        CHECK((one[b].output - fwd.a.back()).norm() <= 1e-12 * fwd.a.back().norm());
      }
    }
  }
}
