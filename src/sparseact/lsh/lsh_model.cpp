#include <sparseact/lsh/lsh_model.hpp>

#include <stdexcept>
#include <string>

namespace sparseact::lsh {

LshModel make_lsh_model(Eigen::Index d, int tables, int bits, double offset_range, std::uint64_t seed,
                        std::uint64_t stream) {
  if (tables < 1 || bits < 1 || bits > 24)
    throw std::invalid_argument("make_lsh_model: need s ≥ 1 and 1 ≤ m ≤ 24, got s = " + std::to_string(tables) +
                                ", m = " + std::to_string(bits));
  if ((static_cast<std::int64_t>(tables) << bits) > (std::int64_t{1} << 28))
    throw std::invalid_argument("make_lsh_model: s·2^m above 2^28 buckets");
  LshModel m;
  m.lsh = make_hyperplane_lsh(d, tables, bits, offset_range, seed, stream);
  m.values = Eigen::VectorXd::Zero(m.width());
  return m;
}

ActiveFeatures features(const LshModel& model, const Eigen::MatrixXd& X) {
  const auto codes = hash(model.lsh, X);  // s × N sign patterns z^i as integers in [0, 2^m)
  ActiveFeatures F;
  F.width = model.width();
  F.idx.resize(model.tables(), X.cols());
  F.val = Eigen::MatrixXd::Ones(model.tables(), X.cols());
  const std::int64_t per_table = std::int64_t{1} << model.bits();
  for (Eigen::Index n = 0; n < X.cols(); ++n)
    for (int i = 0; i < model.tables(); ++i)
      F.idx(i, n) = static_cast<std::int32_t>(i * per_table + static_cast<std::int64_t>(codes(i, n)));
  return F;
}

Eigen::VectorXd predict(const LshModel& model, const Eigen::MatrixXd& X) { return predict(model.values, features(model, X)); }

}  // namespace sparseact::lsh
