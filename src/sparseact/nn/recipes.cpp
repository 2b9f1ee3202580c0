#include <sparseact/nn/recipes.hpp>

#include <algorithm>

#include <sparseact/core/errors.hpp>
#include <sparseact/nn/backprop.hpp>

namespace sparseact::nn {

MlpConfig uniform_mlp_config(Eigen::Index d_in, Eigen::Index d, Eigen::Index n, int blocks, BlockConfig block,
                             Eigen::Index d_out) {
  if (blocks < 0) throw InputError("uniform_mlp_config: blocks must be >= 0");
  MlpConfig cfg;
  cfg.d_in = d_in;
  cfg.d = d;
  cfg.d_out = d_out;
  block.n = n;
  cfg.blocks.assign(static_cast<std::size_t>(blocks), block);
  return cfg;
}

Eigen::VectorXd weights_only_decay_mask(const Mlp& net) {
  Eigen::VectorXd m = Eigen::VectorXd::Zero(net.num_params);
  for (const ParamInfo& p : net.params)
    if (p.kind == ParamKind::weight) m.segment(p.offset, p.size()).setOnes();
  return m;
}

AdamW adamw_weights_only(const Mlp& net, double lr, double wd) {
  AdamW opt;
  opt.lr = lr;
  opt.weight_decay = wd;
  opt.decay_mask = weights_only_decay_mask(net);
  return opt;
}

double accuracy(const Mlp& net, const Eigen::VectorXd& theta, const Dataset& data) {
  if (static_cast<Eigen::Index>(data.labels.size()) != data.x.cols())
    throw InputError("accuracy: the data set needs one label per input");
  Eigen::Index correct = 0;
  const Eigen::Index N = data.x.cols(), chunk = 2048;
  for (Eigen::Index first = 0; first < N; first += chunk) {
    const Eigen::Index count = std::min(chunk, N - first);
    const Eigen::MatrixXd F = predict(net, theta, data.x.middleCols(first, count));
    for (Eigen::Index s = 0; s < count; ++s) {
      Eigen::Index arg;
      F.col(s).maxCoeff(&arg);
      if (arg == data.labels[static_cast<std::size_t>(first + s)]) ++correct;
    }
  }
  return static_cast<double>(correct) / static_cast<double>(std::max<Eigen::Index>(N, 1));
}

}  // namespace sparseact::nn
