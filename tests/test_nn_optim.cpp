// Tests of SGD, AdamW, RMSProp and the learning-rate schedules: steps computed by hand on a 3-parameter
// example, agreement with torch.optim in float64 (when /usr/bin/python3 has torch), convergence on
// a convex quadratic to its known minimiser, hooks, and schedules against their closed forms.
#include <catch2/catch.hpp>

#include "python_ref.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <Eigen/Dense>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/nn/optim.hpp>

namespace fs = std::filesystem;
namespace nn = sparseact::nn;
using sparseact::InputError;

namespace {

const Eigen::Vector3d theta0(1.0, -2.0, 0.5);
const Eigen::Vector3d grad0(0.5, 1.0, -2.0);

void require_close(const Eigen::VectorXd& got, const Eigen::VectorXd& want, double tol = 1e-14) {
  REQUIRE(got.size() == want.size());
  for (Eigen::Index i = 0; i < got.size(); ++i) {
    INFO("entry " << i << ": got " << got(i) << ", want " << want(i));
    CHECK(std::abs(got(i) - want(i)) <= tol * std::max(1.0, std::abs(want(i))));
  }
}

// The gradient fed at step t (1-based) in the comparisons with torch: g_i = sin(1.3 t + i) + 0.2 θ_i.
Eigen::VectorXd grad_at(int t, const Eigen::VectorXd& theta) {
  Eigen::VectorXd g(theta.size());
  for (Eigen::Index i = 0; i < theta.size(); ++i) g(i) = std::sin(1.3 * t + static_cast<double>(i)) + 0.2 * theta(i);
  return g;
}


}  // namespace

TEST_CASE("SGD steps computed by hand", "[optim]") {
  Eigen::VectorXd theta = theta0;

  SECTION("momentum 0.9 and L2 weight decay 0.01 (PyTorch's), two steps") {
    nn::Sgd opt;
    opt.lr = 0.1;
    opt.momentum = 0.9;
    opt.weight_decay = 0.01;
    opt.step(theta, grad0);
    // d = g + 0.01 θ = (0.51, 0.98, -1.995); buffer = d; θ -= 0.1 d
    require_close(theta, Eigen::Vector3d(0.949, -2.098, 0.6995));
    opt.step(theta, grad0);
    // d = (0.50949, 0.97902, -1.993005); buffer = 0.9 (0.51, 0.98, -1.995) + d = (0.96849, 1.86102, -3.788505)
    require_close(opt.momentum_buffer, Eigen::Vector3d(0.96849, 1.86102, -3.788505));
    require_close(theta, Eigen::Vector3d(0.852151, -2.284102, 1.0783505));
    CHECK(opt.steps == 2);
  }

  SECTION("Nesterov: the first step moves by lr (1 + μ) g") {
    nn::Sgd opt;
    opt.lr = 0.1;
    opt.momentum = 0.9;
    opt.nesterov = true;
    opt.step(theta, grad0);
    require_close(theta, Eigen::Vector3d(0.905, -2.19, 0.88));
    opt.step(theta, grad0);  // buffer = 1.9 g; d = g + 0.9·1.9 g = 2.71 g
    require_close(theta, Eigen::Vector3d(0.905 - 0.1355, -2.19 - 0.271, 0.88 + 0.542));
  }

  SECTION("decoupled weight decay with a mask") {
    nn::Sgd opt;
    opt.lr = 0.1;
    opt.weight_decay = 0.5;
    opt.decay = nn::WeightDecay::decoupled;
    opt.decay_mask = Eigen::Vector3d(1, 0, 1);
    opt.step(theta, grad0);
    // θ_i (1 - 0.05 m_i) - 0.1 g_i
    require_close(theta, Eigen::Vector3d(0.95 - 0.05, -2.0 - 0.1, 0.475 + 0.2));
  }

  SECTION("L2 weight decay with a mask, a scheduled learning rate") {
    nn::Sgd opt;
    opt.weight_decay = 0.5;
    opt.decay_mask = Eigen::Vector3d(0, 1, 1);
    opt.step(theta, grad0, 0.2);
    // θ - 0.2 (g + 0.5 m θ)
    require_close(theta, Eigen::Vector3d(1 - 0.1, -2 - 0.2 * (1 - 1.0), 0.5 - 0.2 * (-2 + 0.25)));
    CHECK(opt.lr == 0.01);  // the field is not changed by a scheduled step
  }
}

TEST_CASE("AdamW steps computed by hand", "[optim]") {
  Eigen::VectorXd theta = theta0;
  nn::AdamW opt;
  opt.lr = 0.1;
  opt.weight_decay = 0.1;
  opt.decay_mask = Eigen::Vector3d(1, 0, 1);  // e.g. a LayerNorm scale in the middle
  opt.step(theta, grad0);
  // Bias correction makes the first step lr·g/(|g| + ε) after θ ← θ(1 - lr·wd·m).
  const double eps = 1e-8;
  require_close(theta, Eigen::Vector3d(0.99 - 0.1 * 0.5 / (0.5 + eps), -2.0 - 0.1 * 1 / (1 + eps),
                                       0.495 + 0.1 * 2 / (2 + eps)));
  require_close(opt.exp_avg, 0.1 * grad0);
  require_close(opt.exp_avg_sq, 0.001 * grad0.cwiseAbs2());

  // Second step with gradient (1, -1, 0) on the first two and -2 on the third.
  const Eigen::Vector3d g2(1.0, -1.0, -2.0);
  const Eigen::VectorXd before = theta;
  opt.step(theta, g2);
  for (int i = 0; i < 3; ++i) {
    const double m = 0.9 * 0.1 * grad0(i) + 0.1 * g2(i);
    const double v = 0.999 * 0.001 * grad0(i) * grad0(i) + 0.001 * g2(i) * g2(i);
    const double bc1 = 1 - 0.81, bc2 = 1 - 0.999 * 0.999;
    const double decayed = before(i) * (1 - 0.1 * 0.1 * (i == 1 ? 0 : 1));
    const double want = decayed - (0.1 / bc1) * m / (std::sqrt(v) / std::sqrt(bc2) + eps);
    INFO("parameter " << i);
    CHECK(theta(i) == Approx(want).epsilon(1e-14));
  }
  CHECK(opt.steps == 2);
  opt.reset();
  CHECK(opt.steps == 0);
  CHECK(opt.exp_avg.size() == 0);
}

TEST_CASE("RMSProp steps computed by hand", "[optim]") {
  Eigen::VectorXd theta = theta0;
  const double eps = 1e-8;

  SECTION("plain: the first step moves each coordinate by lr/√(1 − α) against its gradient's sign") {
    nn::RmsProp opt;
    opt.lr = 0.1;
    opt.alpha = 0.9;
    opt.step(theta, grad0);
    // v = 0.1 g², θ − lr g/(√0.1 |g| + ε)
    for (int i = 0; i < 3; ++i) {
      INFO("parameter " << i);
      CHECK(opt.square_avg(i) == Approx(0.1 * grad0(i) * grad0(i)).epsilon(1e-15));
      CHECK(theta(i) == Approx(theta0(i) - 0.1 * grad0(i) / (std::sqrt(0.1) * std::abs(grad0(i)) + eps)).epsilon(1e-14));
    }
    CHECK(std::abs(theta(0) - theta0(0) + 0.1 / std::sqrt(0.1)) < 1e-7);
    CHECK(opt.steps == 1);
  }

  SECTION("from a given mean square (Keras's ρ = 0.9, ε = 1e-7)") {
    nn::RmsProp opt;
    opt.lr = 0.01;
    opt.alpha = 0.9;
    opt.eps = 1e-7;
    Eigen::VectorXd th(2), g(2);
    th << 1.0, -2.0;
    g << 0.3, -0.1;
    opt.square_avg = Eigen::Vector2d(0.5, 0.0);
    opt.step(th, g);
    // v = 0.9·0.5 + 0.1·0.09 = 0.459, 0.9·0 + 0.1·0.01 = 0.001; θ − lr g/(√v + ε)
    CHECK(opt.square_avg(0) == Approx(0.459).epsilon(1e-15));
    CHECK(opt.square_avg(1) == Approx(0.001).epsilon(1e-15));
    CHECK(th(0) == Approx(0.9955719262258942).epsilon(1e-14));
    CHECK(th(1) == Approx(-1.968377323398).epsilon(1e-12));
  }

  SECTION("centered, momentum and masked L2 weight decay, two steps") {
    nn::RmsProp opt;
    opt.lr = 0.1;
    opt.alpha = 0.9;
    opt.centered = true;
    opt.momentum = 0.5;
    opt.weight_decay = 0.2;
    opt.decay_mask = Eigen::Vector3d(1, 0, 1);
    const Eigen::Vector3d g2(1.0, -1.0, -2.0);
    Eigen::Vector3d v = Eigen::Vector3d::Zero(), gbar = Eigen::Vector3d::Zero(), b = Eigen::Vector3d::Zero();
    Eigen::Vector3d want = theta0;
    for (const Eigen::Vector3d& g : {Eigen::Vector3d(grad0), g2}) {
      for (int i = 0; i < 3; ++i) {
        const double gi = g(i) + (i == 1 ? 0.0 : 0.2 * want(i));  // L2 decay, middle parameter masked
        v(i) = 0.9 * v(i) + 0.1 * gi * gi;
        gbar(i) = 0.9 * gbar(i) + 0.1 * gi;
        b(i) = 0.5 * b(i) + gi / (std::sqrt(v(i) - gbar(i) * gbar(i)) + eps);
        want(i) -= 0.1 * b(i);
      }
      opt.step(theta, g);
    }
    require_close(theta, want, 1e-13);
    // The first centered step: v − ḡ² = 0.1 g² − 0.01 g² = 0.09 g², so the step is lr/0.3 per unit sign.
    nn::RmsProp c;
    c.lr = 0.1;
    c.alpha = 0.9;
    c.centered = true;
    Eigen::VectorXd th = theta0;
    c.step(th, grad0);
    require_close(th, Eigen::Vector3d(1.0 - 0.1 / 0.3, -2.0 - 0.1 / 0.3, 0.5 + 0.1 / 0.3), 1e-7);
  }
}

TEST_CASE("SGD, AdamW and RMSProp agree with torch.optim in float64", "[optim]") {
  if (!python_has_torch()) {
    WARN("/usr/bin/python3 has no torch: skipping the comparison with torch.optim");
    return;
  }
  // Six runs of 7 steps on 3 parameters, the learning rate changing every step (a warmup-cosine
  // schedule), the middle parameter excluded from weight decay; torch prints θ after each run.
  const std::string script = R"(
import math, torch
torch.set_default_dtype(torch.float64)
def lr_at(t):  # t = steps taken; warmup 2, cosine to 0.01 at 6
    base, W, T, lo = 0.1, 2, 6, 0.01
    if t < W: return base * (0.25 + 0.75 * t / W)
    return lo + (base - lo) * (1 + math.cos(math.pi * min(t - W, T - W) / (T - W))) / 2
def run(make):
    ps = [torch.tensor([1.0]), torch.tensor([-2.0]), torch.tensor([0.5])]
    for p in ps: p.requires_grad_(True)
    opt = make(ps)
    for t in range(1, 8):
        for g in opt.param_groups: g['lr'] = lr_at(t - 1)
        for i, p in enumerate(ps): p.grad = torch.tensor([math.sin(1.3 * t + i) + 0.2 * p.item()])
        opt.step()
    print(' '.join(repr(p.item()) for p in ps))
def groups(ps, wd): return [{'params': [ps[0], ps[2]], 'weight_decay': wd}, {'params': [ps[1]], 'weight_decay': 0.0}]
run(lambda ps: torch.optim.SGD(ps, lr=0.1))
run(lambda ps: torch.optim.SGD(groups(ps, 0.05), lr=0.1, momentum=0.9))
run(lambda ps: torch.optim.SGD(groups(ps, 0.05), lr=0.1, momentum=0.8, nesterov=True))
run(lambda ps: torch.optim.AdamW(ps, lr=0.1))
run(lambda ps: torch.optim.AdamW(groups(ps, 0.3), lr=0.1, betas=(0.8, 0.95), eps=1e-6))
run(lambda ps: torch.optim.Adam(ps, lr=0.1, weight_decay=0.0))
run(lambda ps: torch.optim.RMSprop(ps, lr=0.1))
run(lambda ps: torch.optim.RMSprop(groups(ps, 0.05), lr=0.1, alpha=0.9, eps=1e-7, momentum=0.7))
run(lambda ps: torch.optim.RMSprop(ps, lr=0.1, alpha=0.95, centered=True))
run(lambda ps: torch.optim.RMSprop(groups(ps, 0.3), lr=0.1, alpha=0.8, eps=1e-6, momentum=0.5, centered=True))
)";
  const std::vector<double> ref = run_python_numbers(script, "optim");
  REQUIRE(ref.size() == 30);
  const nn::LrSchedule schedule = nn::cosine_schedule(0.1, 2, 6, 0.01, 0.25);
  const Eigen::Vector3d mask(1, 0, 1);

  const auto run = [&](auto opt) {
    Eigen::VectorXd theta = theta0;
    for (int t = 1; t <= 7; ++t) opt.step(theta, grad_at(t, theta), schedule(t - 1));
    return theta;
  };
  const auto expect = [&](int k) { return Eigen::Vector3d(ref[3 * k], ref[3 * k + 1], ref[3 * k + 2]); };

  nn::Sgd plain;
  require_close(run(plain), expect(0), 1e-13);
  nn::Sgd momentum;
  momentum.momentum = 0.9;
  momentum.weight_decay = 0.05;
  momentum.decay_mask = mask;
  require_close(run(momentum), expect(1), 1e-13);
  nn::Sgd nesterov = momentum;
  nesterov.momentum = 0.8;
  nesterov.nesterov = true;
  require_close(run(nesterov), expect(2), 1e-13);
  nn::AdamW adamw;  // PyTorch's defaults: wd 0.01
  require_close(run(adamw), expect(3), 1e-13);
  nn::AdamW tuned;
  tuned.beta1 = 0.8;
  tuned.beta2 = 0.95;
  tuned.eps = 1e-6;
  tuned.weight_decay = 0.3;
  tuned.decay_mask = mask;
  require_close(run(tuned), expect(4), 1e-13);
  nn::AdamW adam;  // AdamW without weight decay is Adam
  adam.weight_decay = 0;
  require_close(run(adam), expect(5), 1e-13);
  nn::RmsProp rms;  // PyTorch's defaults: α 0.99, ε 1e-8
  require_close(run(rms), expect(6), 1e-13);
  nn::RmsProp rms_momentum;
  rms_momentum.alpha = 0.9;
  rms_momentum.eps = 1e-7;
  rms_momentum.momentum = 0.7;
  rms_momentum.weight_decay = 0.05;
  rms_momentum.decay_mask = mask;
  require_close(run(rms_momentum), expect(7), 1e-13);
  nn::RmsProp rms_centered;
  rms_centered.alpha = 0.95;
  rms_centered.centered = true;
  require_close(run(rms_centered), expect(8), 1e-13);
  nn::RmsProp rms_all;
  rms_all.alpha = 0.8;
  rms_all.eps = 1e-6;
  rms_all.momentum = 0.5;
  rms_all.centered = true;
  rms_all.weight_decay = 0.3;
  rms_all.decay_mask = mask;
  require_close(run(rms_all), expect(9), 1e-13);
}

TEST_CASE("RMSProp agrees with torch.optim.RMSprop's recorded float64 iterates", "[optim]") {
  // The last four runs of the script in the test above, printed by torch 2.11.0 (CPU, float64) on a
  // machine that has torch: so the comparison also runs where /usr/bin/python3 has none.
  const double ref[4][3] = {{0.9208337248315751, -0.9708125471518947, 0.5720771877721481},
                            {0.4560007580879868, -1.3786335871097597, 1.2621617340255256},
                            {0.9387219562193642, -1.4655824255834176, 0.6018700629054807},
                            {0.5804035248860842, -1.538378358478943, 0.33836655467297605}};
  const nn::LrSchedule schedule = nn::cosine_schedule(0.1, 2, 6, 0.01, 0.25);
  const Eigen::Vector3d mask(1, 0, 1);
  const auto run = [&](nn::RmsProp opt) {
    Eigen::VectorXd theta = theta0;
    for (int t = 1; t <= 7; ++t) opt.step(theta, grad_at(t, theta), schedule(t - 1));
    return theta;
  };
  const auto expect = [&](int k) { return Eigen::Vector3d(ref[k][0], ref[k][1], ref[k][2]); };
  nn::RmsProp plain;  // lr 0.1, α 0.99, ε 1e-8
  require_close(run(plain), expect(0), 1e-13);
  nn::RmsProp momentum;  // α 0.9, ε 1e-7, momentum 0.7, weight decay 0.05 but not on the middle parameter
  momentum.alpha = 0.9;
  momentum.eps = 1e-7;
  momentum.momentum = 0.7;
  momentum.weight_decay = 0.05;
  momentum.decay_mask = mask;
  require_close(run(momentum), expect(1), 1e-13);
  nn::RmsProp centered;  // α 0.95, centered
  centered.alpha = 0.95;
  centered.centered = true;
  require_close(run(centered), expect(2), 1e-13);
  nn::RmsProp all;  // α 0.8, ε 1e-6, momentum 0.5, centered, masked weight decay 0.3
  all.alpha = 0.8;
  all.eps = 1e-6;
  all.momentum = 0.5;
  all.centered = true;
  all.weight_decay = 0.3;
  all.decay_mask = mask;
  require_close(run(all), expect(3), 1e-13);
}

TEST_CASE("optimizers converge on a convex quadratic to its known minimiser", "[optim]") {
  // f(θ) = ½ θᵀAθ − bᵀθ, A SPD with eigenvalues in [0.5, 2] (seeded), ∇f = Aθ − b.
  const int n = 10;
  sparseact::Rng rng(11, 3);
  Eigen::MatrixXd q(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) q(i, j) = rng.normal();
  const Eigen::MatrixXd orth = Eigen::HouseholderQR<Eigen::MatrixXd>(q).householderQ();
  Eigen::VectorXd eig(n), b(n);
  for (int i = 0; i < n; ++i) {
    eig(i) = 0.5 + 1.5 * i / (n - 1);
    b(i) = rng.normal();
  }
  const Eigen::MatrixXd a = orth * eig.asDiagonal() * orth.transpose();
  const Eigen::VectorXd minimiser = a.ldlt().solve(b);

  SECTION("SGD, heavy ball and Nesterov") {
    for (bool nesterov : {false, true}) {
      INFO("nesterov " << nesterov);
      nn::Sgd opt;
      opt.lr = 0.1;
      opt.momentum = 0.8;
      opt.nesterov = nesterov;
      Eigen::VectorXd theta = Eigen::VectorXd::Zero(n);
      for (int t = 0; t < 400; ++t) opt.step(theta, a * theta - b);
      CHECK((theta - minimiser).norm() < 1e-10);
    }
  }

  SECTION("L2 weight decay minimises f + (wd/2)‖m⊙θ‖²") {
    Eigen::VectorXd mask = Eigen::VectorXd::Ones(n);
    mask(0) = mask(3) = 0;
    nn::Sgd opt;
    opt.lr = 0.1;
    opt.momentum = 0.5;
    opt.weight_decay = 0.3;
    opt.decay_mask = mask;
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(n);
    for (int t = 0; t < 600; ++t) opt.step(theta, a * theta - b);
    const Eigen::MatrixXd regularised = a + 0.3 * Eigen::MatrixXd(mask.asDiagonal());
    CHECK((theta - regularised.ldlt().solve(b)).norm() < 1e-10);
  }

  SECTION("RMSProp with momentum, the learning rate annealed to 0") {
    nn::RmsProp opt;
    opt.alpha = 0.9;
    opt.momentum = 0.5;
    const nn::LrSchedule schedule = nn::cosine_schedule(0.02, 0, 4000, 0.0);
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(n);
    for (long t = 0; t < 4000; ++t) opt.step(theta, a * theta - b, schedule(t));
    CHECK((theta - minimiser).norm() < 1e-3 * minimiser.norm());
  }

  SECTION("AdamW under a warmup-cosine schedule") {
    nn::AdamW opt;
    opt.weight_decay = 0;
    const nn::LrSchedule schedule = nn::cosine_schedule(0.05, 100, 3000, 0.0);
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(n);
    for (long t = 0; t < 3000; ++t) opt.step(theta, a * theta - b, schedule(t));
    CHECK((theta - minimiser).norm() < 1e-3 * minimiser.norm());
  }
}

TEST_CASE("post-step hooks run after every step, in order", "[optim]") {
  std::vector<long> seen;
  nn::Sgd opt;
  opt.lr = 1.0;
  // A projection (Algorithm 1's kind): keep θ₀ ≥ 0.8; then a recorder.
  opt.hooks.push_back([](Eigen::VectorXd& theta, long) { theta(0) = std::max(theta(0), 0.8); });
  opt.hooks.push_back([&](Eigen::VectorXd& theta, long step) {
    CHECK(theta(0) >= 0.8);
    seen.push_back(step);
  });
  Eigen::VectorXd theta = theta0;
  for (int t = 0; t < 3; ++t) opt.step(theta, grad0);
  CHECK(seen == std::vector<long>{1, 2, 3});
  CHECK(theta(0) == 0.8);
  CHECK(theta(1) == -5.0);

  nn::AdamW adam;
  int calls = 0;
  adam.hooks.push_back([&](Eigen::VectorXd&, long) { ++calls; });
  adam.step(theta, grad0);
  CHECK(calls == 1);
}

TEST_CASE("learning-rate schedules match their closed forms", "[optim]") {
  const nn::LrSchedule constant = nn::constant_schedule(0.3);
  for (long t : {0L, 1L, 1000L}) CHECK(constant(t) == 0.3);

  const nn::LrSchedule warm = nn::linear_warmup_schedule(0.4, 10);
  CHECK(warm(0) == 0.0);
  CHECK(warm(5) == Approx(0.2).epsilon(1e-15));
  CHECK(warm(9) == Approx(0.36).epsilon(1e-15));
  CHECK(warm(10) == 0.4);
  CHECK(warm(500) == 0.4);
  const nn::LrSchedule warm_from = nn::linear_warmup_schedule(0.4, 4, 0.5);
  CHECK(warm_from(0) == 0.2);
  CHECK(warm_from(2) == Approx(0.3).epsilon(1e-15));

  const double base = 0.1, lo = 0.001;
  const nn::LrSchedule cos = nn::cosine_schedule(base, 100, 1100, lo);
  CHECK(cos(0) == 0.0);
  CHECK(cos(50) == Approx(0.05).epsilon(1e-15));
  CHECK(cos(100) == base);                                            // peak after warmup
  CHECK(cos(600) == Approx((base + lo) / 2).epsilon(1e-14));          // half way: cos(π/2) = 0
  CHECK(cos(350) == Approx(lo + (base - lo) * (1 + std::sqrt(0.5)) / 2).epsilon(1e-14));  // cos(π/4)
  CHECK(cos(1100) == Approx(lo).epsilon(1e-14));
  CHECK(cos(5000) == Approx(lo).epsilon(1e-14));                      // held at η_min
  for (long t = 100; t < 1100; ++t) {
    INFO("t " << t);
    REQUIRE(cos(t + 1) <= cos(t));
    const double want = lo + (base - lo) * (1 + std::cos(std::numbers::pi * (t - 100) / 1000.0)) / 2;
    REQUIRE(cos(t) == Approx(want).epsilon(1e-14));
  }
  // Without warmup, step 0 is the base rate (PyTorch's CosineAnnealingLR).
  CHECK(nn::cosine_schedule(base, 0, 10)(0) == base);
}

TEST_CASE("invalid optimizer settings are InputErrors naming the field", "[optim]") {
  Eigen::VectorXd theta = theta0;
  nn::Sgd sgd;
  sgd.nesterov = true;
  CHECK_THROWS_WITH(sgd.step(theta, grad0), Catch::Contains("Nesterov"));
  sgd.nesterov = false;
  CHECK_THROWS_AS(sgd.step(theta, Eigen::Vector2d(1, 2)), InputError);
  sgd.decay_mask = Eigen::Vector2d(1, 0);
  CHECK_THROWS_WITH(sgd.step(theta, grad0), Catch::Contains("decay_mask"));
  nn::AdamW adam;
  adam.beta2 = 1.0;
  CHECK_THROWS_WITH(adam.step(theta, grad0), Catch::Contains("beta2"));
  CHECK_THROWS_AS(adam.step(theta, grad0, -1.0), InputError);
  nn::RmsProp rms;
  rms.alpha = 1.0;
  CHECK_THROWS_WITH(rms.step(theta, grad0), Catch::Contains("alpha"));
  rms.alpha = 0.9;
  rms.momentum = -0.1;
  CHECK_THROWS_WITH(rms.step(theta, grad0), Catch::Contains("momentum"));
  CHECK_THROWS_WITH(nn::cosine_schedule(0.1, 10, 10), Catch::Contains("total_steps"));
  CHECK(theta == theta0);  // nothing moved
}
