#include <sparseact/routing/comet_batch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/parallel.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/cuda/comet_forward.hpp>

namespace sparseact::routing {

Eigen::MatrixXd SparseColumns::mask() const {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(rows, index.cols());
  for (Eigen::Index j = 0; j < index.cols(); ++j)
    for (int t = 0; t < count(j); ++t) m(index(t, j), j) = 1.0;
  return m;
}

Eigen::MatrixXd SparseColumns::dense() const {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(rows, index.cols());
  for (Eigen::Index j = 0; j < index.cols(); ++j)
    for (int t = 0; t < count(j); ++t) x(index(t, j), j) = value(t, j);
  return x;
}

namespace {

double activate(nn::PlainActivation f, double a) {
  switch (f) {
    case nn::PlainActivation::relu: return a > 0 ? a : 0.0;
    case nn::PlainActivation::tanh: return std::tanh(a);
    case nn::PlainActivation::identity: return a;
  }
  return a;
}

/// The winners of C_k(c) in ascending order into idx (returns their number).
int winners(const Eigen::VectorXd& c, int k, TieRule rule, int* idx) {
  const Eigen::VectorXd m = kwta(c, k, rule);
  int n = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (m(i) != 0) idx[n++] = int(i);
  return n;
}

CometBatchForward forward_one(const CometNet& net, const Eigen::MatrixXd& X0, double p_k) {
  const nn::PlainMlp& bb = net.backbone;
  const std::size_t L = bb.widths.size() - 1;
  const Eigen::Index M = X0.cols();
  std::vector<Eigen::Index> offset(L + 1, 0);  // θ's layer offsets
  for (std::size_t l = 1; l <= L; ++l) offset[l] = offset[l - 1] + Eigen::Index(bb.widths[l]) * bb.widths[l - 1] + (bb.biases ? bb.widths[l] : 0);
  const auto W = [&](std::size_t l) { return Eigen::Map<const Eigen::MatrixXd>(net.theta.data() + offset[l - 1], bb.widths[l], bb.widths[l - 1]); };
  const auto bias = [&](std::size_t l, Eigen::Index r) {
    return bb.biases ? net.theta(offset[l - 1] + Eigen::Index(bb.widths[l]) * bb.widths[l - 1] + r) : 0.0;
  };

  CometBatchForward out;
  Eigen::MatrixXi prev_idx;  // m_{ℓ−1} per input
  Eigen::MatrixXd prev_z, prev_x;
  Eigen::VectorXi prev_count;
  for (std::size_t l = 1; l < L; ++l) {
    const int N = bb.widths[l], k = active_units(p_k, N);
    SparseColumns s;
    s.rows = N;
    s.index = Eigen::MatrixXi::Constant(k, M, -1);
    s.value = Eigen::MatrixXd::Zero(k, M);
    s.count = Eigen::VectorXi::Zero(M);
    Eigen::MatrixXd z = Eigen::MatrixXd::Zero(k, M);
    Eigen::MatrixXd C, A;
    if (l == 1) C = net.router.V[0] * X0, A = W(1) * X0;  // dense inputs: two GEMMs
    Eigen::VectorXd c(N);
    std::vector<int> idx(static_cast<std::size_t>(N));
    for (Eigen::Index j = 0; j < M; ++j) {
      if (l == 1) {
        c = C.col(j);
      } else {
        c.setZero();
        for (int t = 0; t < prev_count(j); ++t) c.noalias() += net.router.V[l - 1].col(prev_idx(t, j)) * prev_z(t, j);  // (4)
      }
      const int n = winners(c, k, net.router.rule, idx.data());  // (5)
      s.count(j) = n;
      const auto Wl = W(l);
      for (int t = 0; t < n; ++t) {
        const int r = idx[std::size_t(t)];
        s.index(t, j) = r;
        z(t, j) = c(r);  // (6), g = identity
        double a = 0;
        if (l == 1) a = A(r, j);
        else
          for (int u = 0; u < prev_count(j); ++u) a += Wl(r, prev_idx(u, j)) * prev_x(u, j);
        s.value(t, j) = activate(bb.f, a + (l == 1 ? bias(1, r) : bias(l, r)));  // (7)–(8)
      }
    }
    prev_idx = s.index, prev_z = z, prev_x = s.value, prev_count = s.count;
    out.hidden.push_back(std::move(s));
  }
  // The unmasked output layer, from the last hidden layer's kept units.
  const int NL = bb.widths[L];
  out.output.resize(NL, M);
  const auto WL = W(L);
  for (Eigen::Index j = 0; j < M; ++j)
    for (int r = 0; r < NL; ++r) {
      double a = bias(L, r);
      if (L == 1) a += WL.row(r).dot(X0.col(j));
      else
        for (int u = 0; u < prev_count(j); ++u) a += WL(r, prev_idx(u, j)) * prev_x(u, j);
      out.output(r, j) = a;
    }
  return out;
}

// The GPU's CPU twin (core/twin.hpp): one net on the first few inputs again on the CPU. Masks must be
// identical; activations and outputs agree to 1e-12 relative (Frobenius norm over the slice).
constexpr Eigen::Index twin_inputs = 32;

std::string twin_slice(std::size_t nets, Eigen::Index inputs, Eigen::Index all, const std::string& what) {
  return "net 0 of " + std::to_string(nets) + ", the first " + std::to_string(inputs) + " of " + std::to_string(all) + " inputs: " + what;
}

/// The number of entries where two masks differ (∞ when their shapes do).
double mask_mismatches(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return std::numeric_limits<double>::infinity();
  return double((a.array() != b.array()).count());
}

double relative_difference(const Eigen::MatrixXd& gpu, const Eigen::MatrixXd& cpu) {
  if (gpu.rows() != cpu.rows() || gpu.cols() != cpu.cols()) return std::numeric_limits<double>::infinity();
  const double scale = cpu.norm();
  const double diff = (gpu - cpu).norm();
  return scale > 0 ? diff / scale : diff;  // NaN stays NaN
}

void check_forward_twin(const std::vector<const CometNet*>& nets, const Eigen::MatrixXd& X0, double p_k, const std::vector<CometBatchForward>& gpu) {
  const twin::Timer timer;
  const Eigen::Index n = std::min<Eigen::Index>(X0.cols(), twin_inputs);
  const CometBatchForward cpu = forward_one(*nets.front(), X0.leftCols(n), p_k);
  const auto head = [n](const SparseColumns& s) {  // the slice's columns only: never a dense N × M copy of the whole batch
    SparseColumns h;
    h.rows = s.rows, h.index = s.index.leftCols(n), h.value = s.value.leftCols(n), h.count = s.count.head(n);
    return h;
  };
  const auto worst = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b); };
  double masks = gpu.front().hidden.size() == cpu.hidden.size() ? 0 : std::numeric_limits<double>::infinity();
  double act = relative_difference(gpu.front().output.leftCols(n), cpu.output);
  for (std::size_t l = 0; l < std::min(cpu.hidden.size(), gpu.front().hidden.size()); ++l) {
    const SparseColumns g = head(gpu.front().hidden[l]);
    masks += mask_mismatches(g.mask(), cpu.hidden[l].mask());
    act = worst(act, relative_difference(g.dense(), cpu.hidden[l].dense()));
  }
  const double seconds = timer.seconds();
  twin::record({.path = "routing.comet_forward masks",
                .slice = twin_slice(nets.size(), n, X0.cols(), "every hidden layer's m_ℓ, the number of entries that differ"),
                .rule = twin::Rule::identical, .error = masks, .tolerance = 0, .cpu_s = seconds});
  twin::record({.path = "routing.comet_forward activations",
                .slice = twin_slice(nets.size(), n, X0.cols(), "x_ℓ of every hidden layer and the output a_L, the largest ‖Δ‖_F / ‖x‖_F"),
                .rule = twin::Rule::relative, .error = act,
                .tolerance = 1e-12, .cpu_s = 0});
}

int tie_code(TieRule r) { return r == TieRule::strict ? 0 : r == TieRule::inclusive ? 1 : 2; }
int activation_code(nn::PlainActivation f) { return f == nn::PlainActivation::relu ? 0 : f == nn::PlainActivation::tanh ? 1 : 2; }

/// The nets packed as the GPU takes them (their k at p_k = 1: every run gives its own).
cuda::CometGpuNets gpu_nets(const std::vector<const CometNet*>& nets) {
  if (nets.empty()) throw std::invalid_argument("comet_forward_batch: no nets");
  const CometNet& first = *nets.front();
  const nn::PlainMlp& bb = first.backbone;
  for (const CometNet* n : nets)
    if (n->backbone.widths != bb.widths || n->backbone.f != bb.f || n->backbone.biases != bb.biases || n->router.rule != first.router.rule)
      throw std::invalid_argument("comet_forward_batch: on the GPU every net must share widths, activation, biases and tie rule");
  const std::size_t L = bb.widths.size() - 1;
  cuda::CometGpuNets g;
  g.widths = bb.widths, g.nets = int(nets.size()), g.tie_rule = tie_code(first.router.rule), g.activation = activation_code(bb.f);
  g.kwta_kernel = kwta_kernel_from_environment();
  g.V.resize(L - 1), g.W.resize(L);
  if (bb.biases) g.b.resize(L);
  for (std::size_t l = 1; l < L; ++l) g.k.push_back(bb.widths[l]);
  for (std::size_t l = 1; l <= L; ++l) {  // every net's blocks after each other
    const std::size_t size = std::size_t(bb.widths[l]) * std::size_t(bb.widths[l - 1]);
    if (l < L) g.V[l - 1].reserve(size * nets.size());
    g.W[l - 1].reserve(size * nets.size());
    if (bb.biases) g.b[l - 1].reserve(std::size_t(bb.widths[l]) * nets.size());
  }
  for (const CometNet* n : nets) {
    Eigen::Index at = 0;
    for (std::size_t l = 1; l <= L; ++l) {
      const Eigen::Index size = Eigen::Index(bb.widths[l]) * bb.widths[l - 1];
      if (l < L) g.V[l - 1].insert(g.V[l - 1].end(), n->router.V[l - 1].data(), n->router.V[l - 1].data() + size);
      g.W[l - 1].insert(g.W[l - 1].end(), n->theta.data() + at, n->theta.data() + at + size);
      at += size;
      if (bb.biases) {
        g.b[l - 1].insert(g.b[l - 1].end(), n->theta.data() + at, n->theta.data() + at + bb.widths[l]);
        at += bb.widths[l];
      }
    }
  }
  return g;
}

/// The router alone, as the GPU takes it (route only: no backbone).
cuda::CometGpuNets gpu_router(const CometRouter& router) {
  cuda::CometGpuNets g;
  g.widths = router.widths, g.nets = 1, g.tie_rule = tie_code(router.rule), g.kwta_kernel = kwta_kernel_from_environment();
  for (std::size_t l = 0; l < router.V.size(); ++l) {
    g.V.emplace_back(router.V[l].data(), router.V[l].data() + router.V[l].size());
    g.k.push_back(router.widths[l + 1]);
  }
  return g;
}

}  // namespace

/// SPARSEACT_KWTA_KERNEL=count|select (cuda/comet_forward.hpp); count until select has run on a GPU.
cuda::KwtaKernel kwta_kernel_from_environment() {
  const char* v = std::getenv("SPARSEACT_KWTA_KERNEL");
  if (v == nullptr || *v == '\0' || std::string(v) == "count") return cuda::KwtaKernel::count;
  if (std::string(v) == "select") return cuda::KwtaKernel::select;
  throw std::invalid_argument("SPARSEACT_KWTA_KERNEL=" + std::string(v) + ": use count or select");
}

CometGpuBatch::CometGpuBatch(const std::vector<const CometNet*>& nets) : nets_(nets), plan_(gpu_nets(nets)) {}

std::vector<CometBatchForward> CometGpuBatch::forward(const Eigen::MatrixXd& X0, double p_k) {
  if (!(p_k > 0 && p_k <= 1)) throw std::invalid_argument("comet_forward_batch: p_k must lie in (0, 1]");
  const std::vector<int>& widths = nets_.front()->backbone.widths;
  if (X0.rows() != widths.front()) throw std::invalid_argument("comet_forward_batch: inputs have the wrong dimension");
  const std::size_t L = widths.size() - 1;
  std::vector<int> k;
  for (std::size_t l = 1; l < L; ++l) k.push_back(active_units(p_k, widths[l]));
  // The kept units come back compacted on the card (int32 indices and x there), as the CPU path's sparse columns
  // hold them: no dense masks or activations cross the bus, and no host conversion (issue 51, finding 2).
  cuda::CometGpuOutput o = plan_.run(X0, k, {.masks = false, .x = false, .output = true, .kept = true});
  std::vector<CometBatchForward> out(nets_.size());
  for (std::size_t b = 0; b < nets_.size(); ++b) {
    for (int l = 1; l < int(L); ++l) {
      SparseColumns h;
      h.rows = widths[std::size_t(l)];
      h.index = std::move(o.kept_index(int(b), l)), h.value = std::move(o.kept_value(int(b), l)), h.count = std::move(o.kept_count(int(b), l));
      out[b].hidden.push_back(std::move(h));
    }
    out[b].output = std::move(o.output(int(b)));
  }
  if (twin::due("routing.comet_forward")) check_forward_twin(nets_, X0, p_k, out);
  return out;
}

CometGpuMasks::CometGpuMasks(const CometRouter& router) : router_(&router), plan_(gpu_router(router)) {}

std::vector<Eigen::MatrixXd> CometGpuMasks::masks(const Eigen::MatrixXd& X0, double p_k) {
  const CometRouter& router = *router_;
  if (X0.rows() != router.widths.front()) throw std::invalid_argument("comet_masks_gpu: inputs have the wrong dimension");
  std::vector<int> k;
  for (std::size_t l = 0; l < router.V.size(); ++l) k.push_back(active_units(p_k, router.widths[l + 1]));
  std::vector<Eigen::MatrixXd> masks = plan_.run(X0, k, {.masks = true, .x = false, .output = false}).masks_of(0);
  if (twin::due("routing.comet_masks")) {
    const twin::Timer timer;
    const Eigen::Index n = std::min<Eigen::Index>(X0.cols(), twin_inputs);
    CometRouter r = router;
    for (std::size_t l = 0; l < r.k.size(); ++l) r.k[l] = k[l];
    const std::vector<Eigen::MatrixXd> cpu = comet_masks(r, X0.leftCols(n));
    double differ = cpu.size() == masks.size() ? 0 : std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < std::min(cpu.size(), masks.size()); ++l) differ += mask_mismatches(masks[l].leftCols(n), cpu[l]);
    twin::record({.path = "routing.comet_masks",
                  .slice = "the first " + std::to_string(n) + " of " + std::to_string(X0.cols()) + " inputs: every hidden layer's m_ℓ, the number of entries that differ",
                  .rule = twin::Rule::identical, .error = differ, .tolerance = 0, .cpu_s = timer.seconds()});
  }
  return masks;
}

std::vector<Eigen::MatrixXd> comet_masks_gpu(const CometRouter& router, const Eigen::MatrixXd& X0, double p_k) {
  return CometGpuMasks(router).masks(X0, p_k);
}

std::vector<CometBatchForward> comet_forward_batch(const std::vector<const CometNet*>& nets, const Eigen::MatrixXd& X0, double p_k, int threads,
                                                   Device device) {
  if (!(p_k > 0 && p_k <= 1)) throw std::invalid_argument("comet_forward_batch: p_k must lie in (0, 1]");
  for (const CometNet* n : nets)
    if (X0.rows() != n->backbone.widths.front()) throw std::invalid_argument("comet_forward_batch: inputs have the wrong dimension");
  if (device == Device::cuda && !nets.empty()) return CometGpuBatch(nets).forward(X0, p_k);
  std::vector<CometBatchForward> out(nets.size());
  ScopedBlasThreads serial(1);  // one net per thread; a net's BLAS calls stay serial
#if defined(_OPENMP)
  const int previous = omp_get_max_threads();
  if (threads > 0) omp_set_num_threads(threads);
#endif
  parallel_for(std::size_t(0), nets.size(), [&](std::size_t b) { out[b] = forward_one(*nets[b], X0, p_k); }, {.dynamic = true});
#if defined(_OPENMP)
  if (threads > 0) omp_set_num_threads(previous);
#endif
  return out;
}

}  // namespace sparseact::routing
