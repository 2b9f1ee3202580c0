#include <sparseact/nn/data_cache.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace sparseact::nn {

const Dataset& shared_fashion_mnist(const std::string& split, Eigen::Index n, int pool) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, Eigen::Index, int>, std::unique_ptr<const Dataset>> cache;
  // Held while loading: a second item asking for the same data waits instead of loading it again.
  const std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{split, n, pool}];
  if (!slot) {
    try {
      slot = std::make_unique<const Dataset>(fashion_mnist(split, n, pool));
    } catch (...) {
      cache.erase({split, n, pool});
      throw;
    }
  }
  return *slot;
}

}  // namespace sparseact::nn
