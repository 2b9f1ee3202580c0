// GPU twins against their CPU results (docs/DESIGN.md, Devices). Tagged [cuda]; without a GPU the
// tests only check that the GPU path refuses cleanly.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <cstdlib>

#include <filesystem>

#include <sparseact/core/device.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/version.hpp>
#include <sparseact/cuda/gram_eigen.hpp>
#include <sparseact/cuda/module_api.hpp>
#include <sparseact/cuda/standin.hpp>
#include <sparseact/routing/comet_batch.hpp>
#include <sparseact/routing/utilization.hpp>
#include <sparseact/spectral/init.hpp>
#include <sparseact/spectral/spectrum.hpp>

using namespace sparseact;
using namespace sparseact::spectral;

TEST_CASE("Device resolution without and with a GPU", "[cuda][device]") {
  CHECK(resolve_device("cpu") == Device::cpu);
  CHECK_THROWS_AS(resolve_device("tpu"), InputError);
  if (!cuda_device_present()) {
    CHECK(resolve_device("auto") == Device::cpu);
    CHECK_THROWS_AS(resolve_device("cuda"), InputError);
  } else {
    CHECK(resolve_device("auto") == Device::cuda);
  }
}

TEST_CASE("The CUDA module loads on its own, every entry resolved, whether or not a GPU is here", "[cuda][device]") {
  // libsparseact opens libsparseact_cuda.so only where an NVIDIA driver is present (cuda/dispatch.cpp); this
  // opens it anyway, with every symbol bound now, so a machine without a GPU still checks that the module
  // links and hands over a complete table.
  const std::filesystem::path module = std::filesystem::path(SPARSEACT_BINARY_DIR) / "lib" / "libsparseact_cuda.so";
  if (!built_with_cuda()) {
    CHECK_FALSE(std::filesystem::exists(module));
    return;
  }
  REQUIRE(std::filesystem::exists(module));
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO((handle ? "" : dlerror()));
  REQUIRE(handle != nullptr);
  using Entry = const cuda::ModuleApi* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(handle, "sparseact_cuda_module_api"));
  REQUIRE(entry != nullptr);
  const cuda::ModuleApi* api = entry();
  REQUIRE(api != nullptr);
  CHECK(api->device_count != nullptr);
  CHECK(api->gram_eigenvalues != nullptr);
  CHECK(api->lsh_sign_codes != nullptr);
  CHECK(api->comet_forward != nullptr);
  for (const void* entry : {(const void*)api->plain_open, (const void*)api->plain_close, (const void*)api->plain_step, (const void*)api->plain_hvp,
                            (const void*)api->plain_hutchinson, (const void*)api->plain_logits, (const void*)api->plain_theta})
    CHECK(entry != nullptr);  // cuda/plain_train.hpp's session
  CHECK(api->device_count() >= 0);  // 0 without a driver: the runtime answers, it does not crash
  CHECK(api->device_count() == (cuda_device_present() ? api->device_count() : 0));
}

TEST_CASE("cuBLAS/cuSOLVER spectrum of K Kᵀ equals the CPU one", "[cuda]") {
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible (built with CUDA: " << built_with_cuda() << "): GPU agreement not tested here");
    CHECK_THROWS(cuda::gram_eigenvalues({init_weights(20, 10, Init::xavier, Distribution::normal, 1)}));
    return;
  }
  for (auto [n, d] : {std::pair{3072, 768}, std::pair{500, 1200}}) {
    std::vector<Eigen::MatrixXd> Ks;
    for (int t = 0; t < 3; ++t) Ks.push_back(init_weights(n, d, Init::kaiming, Distribution::uniform, 5, t));
    const auto gpu = kkt_spectra(Ks, Device::cuda);
    const auto cpu = kkt_spectra(Ks, Device::cpu);
    REQUIRE(gpu.size() == cpu.size());
    for (std::size_t t = 0; t < Ks.size(); ++t) {
      REQUIRE(gpu[t].gram.size() == cpu[t].gram.size());
      CHECK(gpu[t].rank == cpu[t].rank);
      CHECK((gpu[t].gram - cpu[t].gram).cwiseAbs().maxCoeff() <= 1e-10 * cpu[t].lambda_max());
    }
  }
}

namespace {

using namespace sparseact::routing;

/// Masks identical to the CPU's, activations and outputs to 1e-12, every shape REQUIREd before a value is
/// compared (a Release build has no Eigen assertions: a shape mismatch would read out of bounds). Several nets,
/// unequal hidden widths, so a mix-up of nets or layers in the GPU output's order cannot pass.
void comet_gpu_matches_cpu() {
  const CometNetSpec spec{.widths = {30, 256, 200, 256, 10}, .f = nn::PlainActivation::relu, .biases = true};
  std::vector<CometNet> nets;
  std::vector<const CometNet*> ptrs;
  for (int b = 0; b < 4; ++b) nets.push_back(make_comet_net(spec, 3, std::uint64_t(b)));
  for (const CometNet& n : nets) ptrs.push_back(&n);
  const Eigen::MatrixXd X = paper002_pair_inputs(40, 30, 5);
  for (double p : {0.05, 0.1, 0.5, 1.0}) {
    CAPTURE(p);
    const auto cpu = comet_forward_batch(ptrs, X, p, 2, Device::cpu), gpu = comet_forward_batch(ptrs, X, p, 2, Device::cuda);
    REQUIRE(gpu.size() == cpu.size());
    for (std::size_t b = 0; b < nets.size(); ++b) {
      CAPTURE(b);
      REQUIRE(gpu[b].hidden.size() == cpu[b].hidden.size());
      for (std::size_t l = 0; l < cpu[b].hidden.size(); ++l) {
        CAPTURE(l);
        const Eigen::MatrixXd cm = cpu[b].hidden[l].mask(), gm = gpu[b].hidden[l].mask();
        REQUIRE(gm.rows() == cm.rows());
        REQUIRE(gm.cols() == cm.cols());
        CHECK((gm.array() != cm.array()).count() == 0);
        const Eigen::MatrixXd c = cpu[b].hidden[l].dense(), g = gpu[b].hidden[l].dense();
        REQUIRE(g.rows() == c.rows());
        REQUIRE(g.cols() == c.cols());
        CHECK((g - c).norm() <= 1e-12 * c.norm());
      }
      REQUIRE(gpu[b].output.rows() == cpu[b].output.rows());
      REQUIRE(gpu[b].output.cols() == cpu[b].output.cols());
      CHECK((gpu[b].output - cpu[b].output).norm() <= 1e-12 * cpu[b].output.norm());
    }
    // The router alone (comet_utilization's path) and a pair's cosines (comet_overlap's).
    CometRouter r = nets[0].router;
    for (std::size_t l = 0; l < r.k.size(); ++l) r.k[l] = active_units(p, r.widths[l + 1]);
    const std::vector<Eigen::MatrixXd> masks_cpu = comet_masks(r, X), masks_gpu = comet_masks_gpu(nets[0].router, X, p);
    REQUIRE(masks_gpu.size() == masks_cpu.size());
    for (std::size_t l = 0; l < masks_cpu.size(); ++l) {
      REQUIRE(masks_gpu[l].rows() == masks_cpu[l].rows());
      REQUIRE(masks_gpu[l].cols() == masks_cpu[l].cols());
      CHECK(masks_gpu[l] == masks_cpu[l]);
    }
    const PairMeans a = measure_pair(X.leftCols(2), ptrs, {p}, false, Device::cpu), g = measure_pair(X.leftCols(2), ptrs, {p}, false, Device::cuda);
    REQUIRE(g.mask_cos.size() == a.mask_cos.size());
    REQUIRE(g.act_cos.size() == a.act_cos.size());
    CHECK(g.mask_cos == a.mask_cos);
    CHECK(g.act_cos[0] == Approx(a.act_cos[0]).epsilon(1e-12));
  }
  // Ties: an all-equal column under each rule keeps what the CPU keeps.
  for (TieRule rule : {TieRule::strict, TieRule::inclusive, TieRule::exact}) {
    CometRouter r = make_comet_router({3, 8, 1}, 0.25, 1, 2, rule);
    r.V[0].setConstant(0.5);
    const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 2);
    const Eigen::MatrixXd gpu = comet_masks_gpu(r, x, 0.25)[0], cpu = comet_masks(r, x)[0];
    REQUIRE(gpu.rows() == cpu.rows());
    REQUIRE(gpu.cols() == cpu.cols());
    CHECK(gpu == cpu);
  }
}

}  // namespace

TEST_CASE("COMET nets on the GPU: masks identical to the CPU's, activations to 1e-12", "[cuda][routing]") {
  using namespace sparseact::routing;
  if (!cuda_device_present()) {
    WARN("no CUDA GPU visible (built with CUDA: " << built_with_cuda() << "): COMET GPU agreement not tested here");
    const CometNet net = make_comet_net({.widths = {30, 16, 10}}, 3, 0);
    CHECK_THROWS(comet_forward_batch({&net}, paper002_pair_inputs(4, 30, 5), 0.1, 1, Device::cuda));
    return;
  }
  for (const char* kernel : {"count", "select"}) {  // cuda/comet_forward.hpp: both k-WTA kernels
    CAPTURE(kernel);
    ::setenv("SPARSEACT_KWTA_KERNEL", kernel, 1);
    comet_gpu_matches_cpu();
  }
  ::unsetenv("SPARSEACT_KWTA_KERNEL");
}

TEST_CASE("The GPU path's host side on the CPU stand-in: the same masks and activations as the CPU", "[standin][routing]") {
  // cuda/standin.hpp: the module's entry table computed on the CPU the way the kernels compute, written
  // through the same CometGpuOutput accessors, so the consumer's reading order is tested without a GPU.
  cuda::use_standin(cuda::Standin::exact);
  REQUIRE(cuda_device_present());
  for (const char* kernel : {"count", "select"}) {  // the stand-in decides as each kernel does
    CAPTURE(kernel);
    ::setenv("SPARSEACT_KWTA_KERNEL", kernel, 1);
    comet_gpu_matches_cpu();
  }
  ::unsetenv("SPARSEACT_KWTA_KERNEL");
  cuda::use_standin(cuda::Standin::off);
}
