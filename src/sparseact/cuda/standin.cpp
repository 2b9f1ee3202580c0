// The CPU stand-in for libsparseact_cuda.so (cuda/standin.hpp): the module's entry table, computed on the
// CPU the way the kernels compute (cuda/*.cu), with an optional fault in every result.
#include <sparseact/cuda/standin.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>

#include <sparseact/cuda/kwta_select.hpp>
#include <sparseact/cuda/module_api.hpp>

namespace sparseact::cuda {

namespace on_cpu {

std::atomic<int> chosen{-1};  // −1: not set by use_standin, read the environment

Standin from_environment() {
  const char* v = std::getenv("SPARSEACT_CUDA_STANDIN");
  if (v == nullptr || *v == '\0' || std::string(v) == "off" || std::string(v) == "0") return Standin::off;
  if (std::string(v) == "fault") return Standin::fault;
  return Standin::exact;
}

bool faulty() { return standin() == Standin::fault; }

int device_count() noexcept { return 1; }
std::string device_name() {
  return faulty() ? "CPU stand-in for the CUDA module, with injected faults (SPARSEACT_CUDA_STANDIN=fault)"
                  : "CPU stand-in for the CUDA module (SPARSEACT_CUDA_STANDIN)";
}
void select_device(int) {}
void bind_thread() noexcept {}
int selected_device() noexcept { return 0; }

// cuda/gram_eigen.cu: eigenvalues of the smaller Gram matrix, ascending (here Eigen's solver, not LAPACK's).
std::vector<Eigen::VectorXd> gram_eigenvalues(const std::vector<Eigen::MatrixXd>& Ks) {
  std::vector<Eigen::VectorXd> out;
  for (const Eigen::MatrixXd& K : Ks) {
    const Eigen::MatrixXd G = K.rows() >= K.cols() ? Eigen::MatrixXd(K.transpose() * K) : Eigen::MatrixXd(K * K.transpose());
    Eigen::VectorXd w = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G, Eigen::EigenvaluesOnly).eigenvalues();
    if (faulty() && w.size() > 0) w(w.size() - 1) *= 1 + 1e-6;
    out.push_back(std::move(w));
  }
  return out;
}

// cuda/lsh_hash.cu: ⌊(A X + b)/ε⌋ and the packed signs of W X + c.
Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> lsh_euclidean_codes(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, double eps,
                                                                                const Eigen::MatrixXd& X) {
  const Eigen::MatrixXd P = A * X;
  Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> codes(P.rows(), P.cols());
  for (Eigen::Index n = 0; n < P.cols(); ++n)
    for (Eigen::Index i = 0; i < P.rows(); ++i) {
      const double v = std::floor((P(i, n) + b(i)) / eps);
      if (!(v >= -2147483648.0 && v <= 2147483647.0)) throw std::range_error("cuda::lsh_euclidean_codes: a code lies outside int32");
      codes(i, n) = static_cast<std::int32_t>(v);
    }
  if (faulty() && codes.size() > 0) codes(0, 0) += 1;
  return codes;
}

Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> lsh_sign_codes(const Eigen::MatrixXd& W, const Eigen::VectorXd& c, int tables, int bits,
                                                                            const Eigen::MatrixXd& X) {
  const Eigen::MatrixXd P = W * X;
  Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> words(tables, X.cols());
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (int t = 0; t < tables; ++t) {
      std::uint64_t w = 0;
      for (int j = 0; j < bits; ++j)
        if (P(t * bits + j, n) + c(t * bits + j) > 0.0) w |= std::uint64_t{1} << j;
      words(t, n) = w;
    }
  if (faulty() && words.size() > 0) words(0, 0) ^= 1;
  return words;
}

double activate(int f, double a) { return f == 0 ? (a > 0 ? a : 0.0) : f == 1 ? std::tanh(a) : a; }

// cuda/comet_forward.cu: dense products per net, then C_k per column under the kernel's three rules.
// A unit's rank in the order (value descending, index ascending) is |{j : c_j > c_i}| plus the equal
// values of lower index, so one sort per column decides all three rules as the kernel's counts do.
CometGpuOutput comet_forward(const CometGpuNets& nets, const Eigen::MatrixXd& X0) {
  const std::size_t L = nets.widths.size() - 1;
  const int B = nets.nets;
  const Eigen::Index M = X0.cols();
  const bool backbone = !nets.W.empty();
  check_comet_nets(nets, X0, kStandinKwtaLimits);  // an H100's k-WTA limits (cuda/kwta_limits.hpp), as the module checks its device's
  CometGpuOutput out(B, int(L - 1), backbone);
  for (int net = 0; net < B; ++net) {
    Eigen::MatrixXd z = X0, x = X0;
    for (std::size_t l = 1; l < L; ++l) {
      const int N = nets.widths[l], Np = nets.widths[l - 1], k = nets.k[l - 1];
      const std::size_t block = std::size_t(N) * std::size_t(Np);
      const Eigen::MatrixXd C = Eigen::Map<const Eigen::MatrixXd>(nets.V[l - 1].data() + net * block, N, Np) * z;  // (4)
      Eigen::MatrixXd A;
      if (backbone) A = Eigen::Map<const Eigen::MatrixXd>(nets.W[l - 1].data() + net * block, N, Np) * x;  // (7)
      Eigen::MatrixXd mask = Eigen::MatrixXd::Zero(N, M), zl = Eigen::MatrixXd::Zero(N, M), xl = Eigen::MatrixXd::Zero(backbone ? N : 0, M);
      const auto keep = [&](int i, Eigen::Index j) {  // (6), (8)
        mask(i, j) = 1.0, zl(i, j) = C(i, j);
        if (backbone) xl(i, j) = activate(nets.activation, A(i, j) + (nets.b.empty() ? 0.0 : nets.b[l - 1][std::size_t(net) * N + i]));
      };
      std::vector<int> order(std::size_t(N), 0);
      Eigen::VectorXd selected(N);
      for (Eigen::Index j = 0; j < M; ++j) {
        if (nets.kwta_kernel == KwtaKernel::select) {  // (5) as the selection kernel decides it
          if (!kwta_select::select_column(C.col(j).data(), N, k, nets.tie_rule, selected.data()))
            throw std::invalid_argument("cuda::comet_forward: a routing vector holds a NaN");
          for (int i = 0; i < N; ++i)
            if (selected(i) != 0) keep(i, j);
          continue;
        }
        for (int i = 0; i < N; ++i)  // the counting kernel refuses a NaN as selection does (and a sort could not order one)
          if (std::isnan(C(i, j))) throw std::invalid_argument("cuda::comet_forward: a routing vector holds a NaN");
        std::iota(order.begin(), order.end(), 0);  // (5) as the counting kernel decides it
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return C(a, j) > C(b, j); });
        for (int r = 0; r < N; ++r) {
          const int i = order[std::size_t(r)];
          int gt = r, ge = r;  // units before i in the order: greater, or equal of lower index
          while (gt > 0 && C(order[std::size_t(gt - 1)], j) == C(i, j)) --gt;
          while (ge + 1 < N && C(order[std::size_t(ge + 1)], j) == C(i, j)) ++ge;
          if (nets.tie_rule == 0 ? ge + 1 <= k : nets.tie_rule == 1 ? gt < k : r < k) keep(i, j);
        }
      }
      if (faulty() && M > 0) {
        mask(0, 0) = 1 - mask(0, 0);
        if (backbone) xl(0, 0) += 1;
      }
      out.mask(net, int(l)) = mask;
      if (backbone) out.x(net, int(l)) = xl;
      z = std::move(zl), x = std::move(xl);
    }
    if (backbone) {
      const int N = nets.widths[L], Np = nets.widths[L - 1];
      Eigen::MatrixXd a = Eigen::Map<const Eigen::MatrixXd>(nets.W[L - 1].data() + std::size_t(net) * N * Np, N, Np) * x;
      if (!nets.b.empty()) a.colwise() += Eigen::Map<const Eigen::VectorXd>(nets.b[L - 1].data() + std::size_t(net) * N, N);
      out.output(net) = std::move(a);
    }
  }
  return out;
}

KwtaLimits kwta_limits() { return kStandinKwtaLimits; }

/// The stand-in's plan (the session handed out is this, cast as cuda/plain_train's stand-in does): the nets as given,
/// the weights "resident" in host memory; each run is comet_forward with its k.
struct CometPlanState {
  CometGpuNets nets;
};
CometPlanState* plan_state(CometPlanSession* s) { return reinterpret_cast<CometPlanState*>(s); }

CometPlanSession* comet_plan_open(const CometGpuNets& nets) {
  check_comet_nets(nets, Eigen::MatrixXd(nets.widths.empty() ? 0 : nets.widths[0], 0), kStandinKwtaLimits);
  return reinterpret_cast<CometPlanSession*>(new CometPlanState{nets});
}

void comet_plan_close(CometPlanSession* s) noexcept { delete plan_state(s); }

CometGpuOutput comet_plan_run(CometPlanSession* session, const Eigen::MatrixXd& X0, const std::vector<int>& k, CometWant want) {
  CometPlanState* s = plan_state(session);
  std::vector<int> saved = k;
  std::swap(s->nets.k, saved);
  CometGpuOutput out;
  try {
    out = on_cpu::comet_forward(s->nets, X0);
  } catch (...) {
    std::swap(s->nets.k, saved);
    throw;
  }
  std::swap(s->nets.k, saved);
  const auto named = [&](int l) { return want.layers.empty() || std::find(want.layers.begin(), want.layers.end(), l) != want.layers.end(); };
  if (want.kept)  // as the module's compact_kept: index order, rows the most any column kept, −1 and 0 below a count
    for (int n = 0; n < out.nets; ++n)
      for (int l = 1; l <= out.hidden_layers; ++l) {
        if (!named(l)) continue;
        const Eigen::MatrixXd& m = out.mask(n, l);
        Eigen::VectorXi count = (m.array() != 0).cast<int>().colwise().sum().transpose();
        const int most = count.size() ? count.maxCoeff() : 0;
        Eigen::MatrixXi idx = Eigen::MatrixXi::Constant(most, m.cols(), -1);
        Eigen::MatrixXd val = Eigen::MatrixXd::Zero(out.backbone ? most : 0, m.cols());
        for (Eigen::Index j = 0; j < m.cols(); ++j)
          for (Eigen::Index i = 0, t = 0; i < m.rows(); ++i)
            if (m(i, j) != 0) {
              idx(t, j) = int(i);
              if (out.backbone) val(t, j) = out.x(n, l)(i, j);
              ++t;
            }
        out.kept_index(n, l) = std::move(idx), out.kept_value(n, l) = std::move(val), out.kept_count(n, l) = std::move(count);
      }
  for (int n = 0; n < out.nets; ++n) {  // what the module would not have downloaded stays empty
    for (int l = 1; l <= out.hidden_layers; ++l) {
      if (!want.masks || !named(l)) out.mask(n, l).resize(0, 0);
      if (out.backbone && (!want.x || !named(l))) out.x(n, l).resize(0, 0);
    }
    if (out.backbone && !want.output) out.output(n).resize(0, 0);
  }
  return out;
}

#include "plain_entries.inc"  // defined in cuda/standin_plain.cpp

}  // namespace on_cpu

void use_standin(Standin mode) { on_cpu::chosen.store(int(mode)); }

Standin standin() noexcept {
  static const Standin env = on_cpu::from_environment();
  const int c = on_cpu::chosen.load();
  return c < 0 ? env : Standin(c);
}

const ModuleApi* standin_module() {
  static const ModuleApi api{&on_cpu::device_count, &on_cpu::device_name,    &on_cpu::select_device,  &on_cpu::bind_thread,
                             &on_cpu::selected_device, &on_cpu::gram_eigenvalues, &on_cpu::lsh_euclidean_codes, &on_cpu::lsh_sign_codes,
                             &on_cpu::comet_forward, &on_cpu::plain_open, &on_cpu::plain_close, &on_cpu::plain_step, &on_cpu::plain_hvp,
                             &on_cpu::plain_hutchinson, &on_cpu::plain_logits, &on_cpu::plain_theta, &on_cpu::kwta_limits,
                             &on_cpu::comet_plan_open, &on_cpu::comet_plan_close, &on_cpu::comet_plan_run};
  return &api;
}

}  // namespace sparseact::cuda
