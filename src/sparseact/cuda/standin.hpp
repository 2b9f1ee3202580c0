#pragma once
// A CPU stand-in for the CUDA module, so that everything around the GPU path — the device choice, the
// output layout of the batched COMET forward, the CPU twin and the exit code a disagreement gives — runs
// and is tested on machines without a GPU (CI has none). It computes what the module computes the way
// the module does (dense products, k-WTA by counting, eigenvalues of the smaller Gram matrix, floors and
// sign bits) in plain Eigen, and writes its results through the same CometGpuOutput accessors.
//
// It is switched on for a whole process by the environment, before the first CUDA call:
//   SPARSEACT_CUDA_STANDIN=exact   the stand-in, as faithful as it can be
//   SPARSEACT_CUDA_STANDIN=fault   the stand-in with one wrong value in every result (a flipped mask
//                                  entry and activation, a code off by one, λ_max off by 1e-6): the
//                                  twin check must catch it and the run must fail
// or from code (a test) with use_standin(). The JSON's environment names the stand-in, so a run made
// with it can never pass for a GPU run. Host-only; no CUDA header.
namespace sparseact::cuda {

enum class Standin { off, exact, fault };

/// Routes every CUDA function of this process to the stand-in (or back to the module, with off).
void use_standin(Standin mode);
/// The mode in force: use_standin's, else SPARSEACT_CUDA_STANDIN's (read once), else off.
Standin standin() noexcept;

}  // namespace sparseact::cuda
