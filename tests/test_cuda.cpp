// GPU twins against their CPU results (DESIGN.md, Devices). Tagged [cuda]; without a GPU the
// tests only check that the GPU path refuses cleanly.
#include <catch2/catch.hpp>

#include <sparseact/core/device.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/version.hpp>
#include <sparseact/cuda/gram_eigen.hpp>
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
    for (std::size_t t = 0; t < Ks.size(); ++t) {
      CHECK(gpu[t].rank == cpu[t].rank);
      CHECK((gpu[t].gram - cpu[t].gram).cwiseAbs().maxCoeff() <= 1e-10 * cpu[t].lambda_max());
    }
  }
}
