#include <sparseact/nn/mlp.hpp>

#include <cmath>
#include <stdexcept>

#include <sparseact/core/rng.hpp>

namespace sparseact::nn {
namespace {

int add(Mlp& net, LayerInfo& layer, std::string name, ParamKind kind, Eigen::Index rows, Eigen::Index cols) {
  ParamInfo p;
  p.name = layer.name + "." + std::move(name);
  p.kind = kind;
  p.layer = static_cast<int>(net.layers.size());
  p.offset = net.num_params;
  p.rows = rows;
  p.cols = cols;
  net.num_params += p.size();
  layer.size += p.size();
  ++layer.num_params;
  net.params.push_back(std::move(p));
  return static_cast<int>(net.params.size()) - 1;
}

LayerInfo open_layer(const Mlp& net, std::string name) {
  LayerInfo l;
  l.name = std::move(name);
  l.offset = net.num_params;
  l.first_param = static_cast<int>(net.params.size());
  return l;
}

}  // namespace

Mlp make_mlp(const MlpConfig& config) {
  if (config.d_in < 1 || config.d < 1 || config.d_out < 1)
    throw std::invalid_argument("nn: d_in, d and d_out must be >= 1");
  Mlp net;
  net.config = config;

  LayerInfo in = open_layer(net, "input");
  net.W_in = add(net, in, "W", ParamKind::weight, config.d, config.d_in);
  net.b_in = add(net, in, "b", ParamKind::bias, config.d, 1);
  net.layers.push_back(in);

  for (std::size_t l = 0; l < config.blocks.size(); ++l) {
    const BlockConfig& bc = config.blocks[l];
    if (bc.n < 1) throw std::invalid_argument("nn: block width n must be >= 1");
    if (!(bc.ln_eps >= 0.0)) throw std::invalid_argument("nn: LayerNorm eps must be >= 0");
    if (bc.activation.kind == ActivationKind::weird_j_squared_relu && !(bc.activation.w_half > 0.0))
      throw std::invalid_argument("nn: Weird-J-SquaredReLU needs w_half > 0");
    if (!bc.value_layer && bc.n != config.d)
      throw std::invalid_argument("nn: a block without a value layer needs n = d");
    LayerInfo layer = open_layer(net, "block" + std::to_string(l + 1));
    BlockParams bp;
    if (bc.layernorm && bc.ln_affine) bp.gamma = add(net, layer, "ln.gamma", ParamKind::ln_scale, config.d, 1);
    if (bc.layernorm && bc.ln_bias) bp.beta = add(net, layer, "ln.beta", ParamKind::ln_shift, config.d, 1);
    if (bc.zeroth_bias) bp.d = add(net, layer, "d", ParamKind::zeroth_bias, config.d, 1);
    bp.K = add(net, layer, "K", ParamKind::weight, bc.n, config.d);
    bp.b_K = add(net, layer, "b_K", ParamKind::bias, bc.n, 1);
    if (bc.value_layer) {
      bp.V = add(net, layer, "V", ParamKind::weight, config.d, bc.n);
      bp.b_V = add(net, layer, "b_V", ParamKind::bias, config.d, 1);
    }
    net.blocks.push_back(bp);
    net.layers.push_back(layer);
  }

  LayerInfo out = open_layer(net, "output");
  net.W_out = add(net, out, "W", ParamKind::weight, config.d_out, config.d);
  net.b_out = add(net, out, "b", ParamKind::bias, config.d_out, 1);
  net.layers.push_back(out);
  return net;
}

int find_param(const Mlp& net, const std::string& name) {
  for (std::size_t i = 0; i < net.params.size(); ++i)
    if (net.params[i].name == name) return static_cast<int>(i);
  return -1;
}

Eigen::VectorXd init_params(const Mlp& net, std::uint64_t seed, std::uint64_t stream) {
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(net.num_params);
  for (std::size_t i = 0; i < net.params.size(); ++i) {
    const ParamInfo& p = net.params[i];
    if (p.kind == ParamKind::weight) {
      fill_random(theta.data() + p.offset, static_cast<std::size_t>(p.size()), Distribution::normal,
                  1.0 / std::sqrt(static_cast<double>(p.cols)), seed, stream_id(stream, i));
    } else if (p.kind == ParamKind::ln_scale) {
      theta.segment(p.offset, p.size()).setOnes();
    }
  }
  return theta;
}

}  // namespace sparseact::nn
