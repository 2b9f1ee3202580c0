// libsparseact's side of the CUDA functions (cuda/runtime.hpp, gram_eigen.hpp, lsh_hash.hpp,
// comet_forward.hpp): each forwards to libsparseact_cuda.so, opened on first use from the folder that
// holds libsparseact itself (cuda/module_api.hpp says why it is a module). Without the module (a build
// without nvcc) or without an NVIDIA driver on the machine, the runtime reports no device and the
// kernels throw std::runtime_error saying why — what the CPU-only stubs did before.
#include <sparseact/core/device.hpp>
#include <sparseact/cuda/comet_forward.hpp>
#include <sparseact/cuda/gram_eigen.hpp>
#include <sparseact/cuda/kwta_limits.hpp>
#include <sparseact/cuda/lsh_hash.hpp>
#include <sparseact/cuda/module_api.hpp>
#include <sparseact/cuda/plain_train.hpp>
#include <sparseact/cuda/runtime.hpp>
#include <sparseact/cuda/standin.hpp>

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sparseact::cuda {

namespace {

/// A GPU needs the NVIDIA driver: its /proc entry (Linux, containers included) or, under WSL 2, /dev/dxg.
/// Without either, loading the CUDA libraries could only end in "no device": skip it.
bool driver_present() {
  std::error_code ec;
  return std::filesystem::exists("/proc/driver/nvidia", ec) || std::filesystem::exists("/dev/nvidiactl", ec) ||
         std::filesystem::exists("/dev/dxg", ec);
}

struct Module {
  const ModuleApi* api = nullptr;
  std::string why;  ///< when api is null
};

const Module& module() {
  static const Module loaded = [] {
    Module m;
    if (!driver_present()) {
      m.why = "no NVIDIA driver on this machine";
      return m;
    }
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&driver_present), &self) == 0 || self.dli_fname == nullptr) {
      m.why = "cannot locate libsparseact to find libsparseact_cuda.so beside it";
      return m;
    }
    const std::filesystem::path path = std::filesystem::path(self.dli_fname).parent_path() / "libsparseact_cuda.so";
    if (!std::filesystem::exists(path)) {
      m.why = "this build of sparseact has no CUDA kernels (no " + path.string() + ")";
      return m;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* err = dlerror();
      m.why = "cannot load " + path.string() + ": " + (err ? err : "unknown error");
      return m;
    }
    using Entry = const ModuleApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "sparseact_cuda_module_api"));
    if (entry == nullptr) {
      m.why = path.string() + " has no entry table";
      return m;
    }
    m.api = entry();
    return m;
  }();
  return loaded;
}

/// The table in force: the CPU stand-in when one is asked for (cuda/standin.hpp), else the module's, if any.
const ModuleApi* table() {
  return standin() != Standin::off ? standin_module() : module().api;
}

const ModuleApi& kernels() {
  const ModuleApi* api = table();
  if (api == nullptr) throw std::runtime_error("CUDA kernels unavailable: " + module().why);
  return *api;
}

}  // namespace

int device_count() noexcept {
  const ModuleApi* api = table();
  return api ? api->device_count() : 0;
}

std::string device_name() { return table() ? table()->device_name() : ""; }

void select_device(int index) {
  if (table()) table()->select_device(index);
}

void bind_thread() noexcept {
  if (table()) table()->bind_thread();
}

int selected_device() noexcept { return table() ? table()->selected_device() : 0; }

std::vector<Eigen::VectorXd> gram_eigenvalues(const std::vector<Eigen::MatrixXd>& Ks) { return kernels().gram_eigenvalues(Ks); }

Eigen::Matrix<std::int32_t, Eigen::Dynamic, Eigen::Dynamic> lsh_euclidean_codes(const Eigen::MatrixXd& A, const Eigen::VectorXd& b,
                                                                                double eps, const Eigen::MatrixXd& X) {
  return kernels().lsh_euclidean_codes(A, b, eps, X);
}

Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> lsh_sign_codes(const Eigen::MatrixXd& W, const Eigen::VectorXd& c,
                                                                            int tables, int bits, const Eigen::MatrixXd& X) {
  return kernels().lsh_sign_codes(W, c, tables, bits, X);
}

CometGpuOutput comet_forward(const CometGpuNets& nets, const Eigen::MatrixXd& X0) { return kernels().comet_forward(nets, X0); }

KwtaLimits kwta_limits() { return kernels().kwta_limits(); }

CometGpuPlan::CometGpuPlan(const CometGpuNets& nets) : api_(&kernels()), session_(api_->comet_plan_open(nets)) {}
CometGpuPlan::~CometGpuPlan() {
  if (session_) api_->comet_plan_close(session_);
}
CometGpuPlan::CometGpuPlan(CometGpuPlan&& o) noexcept : api_(o.api_), session_(o.session_) { o.session_ = nullptr; }
CometGpuPlan& CometGpuPlan::operator=(CometGpuPlan&& o) noexcept {
  if (this != &o) {
    if (session_) api_->comet_plan_close(session_);
    api_ = o.api_, session_ = o.session_, o.session_ = nullptr;
  }
  return *this;
}
CometGpuOutput CometGpuPlan::run(const Eigen::MatrixXd& X0, const std::vector<int>& k, CometWant want) {
  return api_->comet_plan_run(session_, X0, k, want);
}

PlainTrainer::PlainTrainer(const PlainTrainSpec& spec, const Eigen::VectorXd& theta0, const Eigen::MatrixXd& X, const std::vector<int>& labels,
                           const Eigen::MatrixXd& Y)
    : api_(&kernels()), session_(api_->plain_open(spec, theta0, X, labels, Y)) {}
PlainTrainer::~PlainTrainer() {
  if (session_) api_->plain_close(session_);
}
PlainTrainer::PlainTrainer(PlainTrainer&& o) noexcept : api_(o.api_), session_(o.session_) { o.session_ = nullptr; }
PlainTrainer& PlainTrainer::operator=(PlainTrainer&& o) noexcept {
  if (this != &o) {
    if (session_) api_->plain_close(session_);
    api_ = o.api_, session_ = o.session_, o.session_ = nullptr;
  }
  return *this;
}
double PlainTrainer::sgd_step(const std::vector<Eigen::Index>& index, double lr) {
  if (!(lr > 0)) throw std::invalid_argument("cuda::PlainTrainer::sgd_step: the learning rate must be positive");
  return api_->plain_step(session_, index, PlainUpdate::sgd, lr, nullptr);
}
double PlainTrainer::adam_step(const std::vector<Eigen::Index>& index, double lr) {
  if (!(lr > 0)) throw std::invalid_argument("cuda::PlainTrainer::adam_step: the learning rate must be positive");
  return api_->plain_step(session_, index, PlainUpdate::adam, lr, nullptr);
}
double PlainTrainer::gradient(const std::vector<Eigen::Index>& index, Eigen::VectorXd& grad) {
  return api_->plain_step(session_, index, PlainUpdate::none, 0.0, &grad);
}
Eigen::VectorXd PlainTrainer::hvp(const std::vector<Eigen::Index>& index, const Eigen::VectorXd& v) { return api_->plain_hvp(session_, index, v); }
Eigen::VectorXd PlainTrainer::hutchinson(const std::vector<Eigen::Index>& index, int probes, std::uint64_t seed) {
  return api_->plain_hutchinson(session_, index, probes, seed);
}
Eigen::MatrixXd PlainTrainer::logits(const Eigen::MatrixXd& X) { return api_->plain_logits(session_, X); }
Eigen::VectorXd PlainTrainer::theta() const { return api_->plain_theta(session_); }

}  // namespace sparseact::cuda

namespace sparseact {
bool cuda_device_present() noexcept { return cuda::device_count() > 0; }
}  // namespace sparseact
