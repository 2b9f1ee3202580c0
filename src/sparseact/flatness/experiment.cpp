#include <sparseact/flatness/experiment.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/nn/idx.hpp>

namespace sparseact::flatness {
namespace {

Eigen::MatrixXd pool_images(const Eigen::MatrixXd& img, int pool) {
  if (pool == 1) return img;
  const int side = 28 / pool;
  Eigen::MatrixXd out(side * side, img.cols());
  const double inv = 1.0 / (pool * pool);
  for (Eigen::Index s = 0; s < img.cols(); ++s)
    for (int r = 0; r < side; ++r)
      for (int c = 0; c < side; ++c) {
        double acc = 0.0;
        for (int i = 0; i < pool; ++i)
          for (int j = 0; j < pool; ++j) acc += img((r * pool + i) * 28 + (c * pool + j), s);
        out(r * side + c, s) = acc * inv;
      }
  return out;
}

}  // namespace

Dataset fashion_mnist(const std::string& split, Eigen::Index n, int pool) {
  if (pool != 1 && pool != 2 && pool != 4 && pool != 7) throw InputError("pool must be 1, 2, 4 or 7");
  nn::FashionMnist raw;
  try {
    raw = nn::load_fashion_mnist(split);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("Fashion-MNIST: {} (install dataset-fashion-mnist)", e.what()));
  }
  const Eigen::Index N = raw.images.cols();
  if (n <= 0 || n > N) n = N;
  Dataset d;
  d.x = pool_images(raw.images.leftCols(n), pool);
  d.labels.assign(raw.labels.begin(), raw.labels.begin() + n);
  // Fashion-MNIST's training-split pixel statistics (over all 60000 images, 28×28), which pooling
  // keeps for the mean; the deviation shrinks with pooling, so it is taken from the data at hand.
  constexpr double kMean = 0.2860405969887955;
  const double sd = std::sqrt((d.x.array() - kMean).square().mean());
  d.x = ((d.x.array() - kMean) / sd).matrix();
  d.description = fmt::format("Fashion-MNIST {} split, first {} images, {}×{} pixels ({}×{} average pooling), standardised",
                              split, n, 28 / pool, 28 / pool, pool, pool);
  return d;
}

BatchStream::BatchStream(const Dataset& data, Eigen::Index batch_size, std::uint64_t seed, std::uint64_t stream)
    : data_(&data), b_(batch_size), seed_(seed), stream_(stream) {
  if (batch_size < 1 || batch_size > data.x.cols())
    throw InputError(fmt::format("batch size {} must be in [1, {}] (the training set's size)", batch_size, data.x.cols()));
  order_.resize(static_cast<std::size_t>(data.x.cols()));
  pos_ = data.x.cols();  // forces a shuffle on the first call
  batch_.x.resize(data.x.rows(), b_);
  batch_.labels.resize(static_cast<std::size_t>(b_));
}

void BatchStream::shuffle() {
  ++epoch_;
  for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<Eigen::Index>(i);
  Rng rng(seed_, stream_id(stream_, static_cast<std::uint64_t>(epoch_)));
  for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
  pos_ = 0;
}

const nn::Batch& BatchStream::next() {
  if (pos_ + b_ > data_->x.cols()) shuffle();
  for (Eigen::Index j = 0; j < b_; ++j) {
    const Eigen::Index i = order_[static_cast<std::size_t>(pos_ + j)];
    batch_.x.col(j) = data_->x.col(i);
    batch_.labels[static_cast<std::size_t>(j)] = data_->labels[static_cast<std::size_t>(i)];
  }
  pos_ += b_;
  return batch_;
}

nn::Batch make_batch(const Dataset& data, Eigen::Index first, Eigen::Index count) {
  nn::Batch b;
  b.x = data.x.middleCols(first, count);
  b.labels.assign(data.labels.begin() + first, data.labels.begin() + first + count);
  return b;
}

double accuracy(const nn::Mlp& net, const Eigen::VectorXd& theta, const Dataset& data) {
  Eigen::Index correct = 0;
  const Eigen::Index N = data.x.cols(), chunk = 2048;
  for (Eigen::Index first = 0; first < N; first += chunk) {
    const Eigen::Index count = std::min(chunk, N - first);
    const Eigen::MatrixXd F = nn::predict(net, theta, data.x.middleCols(first, count));
    for (Eigen::Index s = 0; s < count; ++s) {
      Eigen::Index arg;
      F.col(s).maxCoeff(&arg);
      if (arg == data.labels[static_cast<std::size_t>(first + s)]) ++correct;
    }
  }
  return static_cast<double>(correct) / static_cast<double>(std::max<Eigen::Index>(N, 1));
}

Eigen::VectorXd weights_only_decay_mask(const nn::Mlp& net) {
  Eigen::VectorXd m = Eigen::VectorXd::Zero(net.num_params);
  for (const nn::ParamInfo& p : net.params)
    if (p.kind == nn::ParamKind::weight) m.segment(p.offset, p.size()).setOnes();
  return m;
}

}  // namespace sparseact::flatness
