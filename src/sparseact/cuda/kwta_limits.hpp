#pragma once
// How wide a hidden layer the card's k-WTA kernels take, and the checks every implementation of them (the
// module and its CPU stand-in) makes before anything is uploaded, so that all of them refuse the same input
// (issue 51: fixes 4 and 5; docs/cuda.md). Host-only; no CUDA header.
//
// A kernel holds one column in its block's shared memory, N doubles (counting) or N 8-byte keys (selection),
// beside its own static shared memory. The module raises each kernel's dynamic cap once per device, to the
// device's opt-in maximum per block (cudaDevAttrMaxSharedMemoryPerBlockOptin) less the kernel's static size
// (cudaFuncGetAttributes), and never lowers it; the widest layer is then (opt-in − static)/8:
//   H100/H200 (232,448 B): 29,056 counting, 28,924 selection;
//   A100 (166,912 B): 20,864 and 20,732;   sm_86/89 boards (101,376 B): 12,672 and 12,540.
// The stand-in enforces an H100's limits, so a width that passes in CI fits the cards the GPU check runs on,
// and a width beyond them is refused on the CPU exactly as on the card.
#include <cstddef>
#include <stdexcept>
#include <string>

#include <Eigen/Core>

#include <sparseact/cuda/comet_forward.hpp>

namespace sparseact::cuda {

struct KwtaLimits {
  int count_widest = 0, select_widest = 0;
  int widest(KwtaKernel kernel) const { return kernel == KwtaKernel::select ? select_widest : count_widest; }
};

/// The kernels' static shared memory as declared: none for counting; for selection hist[256] (1,024 B),
/// prefix_s and fixed_s (16 B) and four ints (16 B). The module reads the compiled sizes instead.
inline constexpr std::size_t kKwtaCountStatic = 0, kKwtaSelectStatic = 1056;
/// An H100's (and H200's) opt-in shared memory per block.
inline constexpr std::size_t kH100SharedOptin = 232448;

constexpr KwtaLimits kwta_limits_for(std::size_t optin_bytes, std::size_t count_static, std::size_t select_static) {
  const auto widest = [&](std::size_t fixed) { return optin_bytes > fixed ? int((optin_bytes - fixed) / 8) : 0; };
  return {widest(count_static), widest(select_static)};
}

/// The stand-in's limits: an H100's.
inline constexpr KwtaLimits kStandinKwtaLimits = kwta_limits_for(kH100SharedOptin, kKwtaCountStatic, kKwtaSelectStatic);

/// Throws std::invalid_argument, naming `who`, unless k ≥ 1, the tie rule is 0 (strict), 1 (inclusive) or 2
/// (exact), and a column of N units fits the kernel (N ≤ limits.widest(kernel)).
inline void check_kwta(const KwtaLimits& limits, KwtaKernel kernel, int N, int k, int rule, const std::string& who) {
  if (k < 1) throw std::invalid_argument(who + ": k = " + std::to_string(k) + " kept units; C_k needs k ≥ 1");
  if (rule < 0 || rule > 2) throw std::invalid_argument(who + ": tie rule " + std::to_string(rule) + " (0 strict, 1 inclusive, 2 exact)");
  if (N > limits.widest(kernel))
    throw std::invalid_argument(who + ": a hidden width of " + std::to_string(N) + " does not fit the " +
                                (kernel == KwtaKernel::select ? "selection" : "counting") + " k-WTA kernel's shared memory (at most " +
                                std::to_string(limits.widest(kernel)) + " on this device)");
}

/// What comet_forward checks before it uploads anything (the module and the stand-in both call it): the shapes,
/// every V, W and b block's size, and each hidden layer's k, tie rule and width against `limits`.
inline void check_comet_nets(const CometGpuNets& nets, const Eigen::MatrixXd& X0, const KwtaLimits& limits) {
  const std::string who = "cuda::comet_forward";
  const std::size_t L = nets.widths.size() - 1;
  const bool backbone = !nets.W.empty();
  if (nets.widths.size() < 3 || nets.nets < 1 || nets.V.size() != L - 1 || nets.k.size() != L - 1 || (backbone && nets.W.size() != L) ||
      (!nets.b.empty() && nets.b.size() != L) || X0.rows() != nets.widths[0])
    throw std::invalid_argument(who + ": shapes disagree");
  for (int w : nets.widths)
    if (w < 1) throw std::invalid_argument(who + ": every width must be at least 1");
  const auto blocks = [&](std::size_t l) { return std::size_t(nets.nets) * std::size_t(nets.widths[l]) * std::size_t(nets.widths[l - 1]); };
  for (std::size_t l = 1; l <= L; ++l) {
    if (l < L && nets.V[l - 1].size() != blocks(l)) throw std::invalid_argument(who + ": a V block has the wrong size");
    if (backbone && nets.W[l - 1].size() != blocks(l)) throw std::invalid_argument(who + ": a W block has the wrong size");
    if (!nets.b.empty() && nets.b[l - 1].size() != std::size_t(nets.nets) * std::size_t(nets.widths[l]))
      throw std::invalid_argument(who + ": a bias block has the wrong size");
    if (l < L) check_kwta(limits, nets.kwta_kernel, nets.widths[l], nets.k[l - 1], nets.tie_rule, who);
  }
}

/// The limits of the device this thread uses (the stand-in's when it is in force). Throws std::runtime_error
/// when CUDA is unavailable.
KwtaLimits kwta_limits();

}  // namespace sparseact::cuda
