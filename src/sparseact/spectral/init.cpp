#include <sparseact/spectral/init.hpp>

#include <cmath>
#include <stdexcept>

#include <sparseact/core/errors.hpp>

namespace sparseact::spectral {

double init_variance(Init init, Eigen::Index n, Eigen::Index d) {
  if (n < 1 || d < 1) throw std::invalid_argument("init_variance: K must have at least one row and column");
  const double fan_in = static_cast<double>(d), fan_out = static_cast<double>(n);
  return init == Init::xavier ? 2.0 / (fan_in + fan_out) : 2.0 / fan_in;
}

Eigen::MatrixXd init_weights(Eigen::Index n, Eigen::Index d, Init init, Distribution dist, std::uint64_t seed,
                             std::uint64_t stream) {
  Eigen::MatrixXd K(n, d);
  fill_random(K.data(), static_cast<std::size_t>(K.size()), dist, std::sqrt(init_variance(init, n, d)), seed, stream);
  return K;
}

Init parse_init(const std::string& name) {
  if (name == "xavier") return Init::xavier;
  if (name == "kaiming") return Init::kaiming;
  throw InputError("--init: expected xavier or kaiming, got '" + name + "'");
}

Distribution parse_distribution(const std::string& name) {
  if (name == "normal") return Distribution::normal;
  if (name == "uniform") return Distribution::uniform;
  throw InputError("--dist: expected normal or uniform, got '" + name + "'");
}

const char* to_string(Init init) noexcept { return init == Init::xavier ? "xavier" : "kaiming"; }
const char* to_string(Distribution dist) noexcept { return dist == Distribution::normal ? "normal" : "uniform"; }

}  // namespace sparseact::spectral
