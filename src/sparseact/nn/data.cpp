#include <sparseact/nn/data.hpp>

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/nn/idx.hpp>

namespace sparseact::nn {
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

void check_dataset(const Dataset& data) {
  const Eigen::Index N = data.x.cols();
  if (!data.labels.empty() && static_cast<Eigen::Index>(data.labels.size()) != N)
    throw InputError(fmt::format("data set: {} labels for {} inputs", data.labels.size(), N));
  if (data.y.size() != 0 && data.y.cols() != N)
    throw InputError(fmt::format("data set: {} targets for {} inputs", data.y.cols(), N));
}

}  // namespace

Dataset fashion_mnist(const std::string& split, Eigen::Index n, int pool) {
  if (pool != 1 && pool != 2 && pool != 4 && pool != 7) throw InputError("pool must be 1, 2, 4 or 7");
  FashionMnist raw;
  try {
    raw = load_fashion_mnist(split);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("Fashion-MNIST: {} (install dataset-fashion-mnist)", e.what()));
  }
  const Eigen::Index N = raw.images.cols();
  if (n > N)  // never silently fewer images than asked for
    throw InputError(fmt::format("Fashion-MNIST {} split: {} images asked for, the files hold {}", split, n, N));
  if (n <= 0) n = N;
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

void epoch_permutation(std::vector<Eigen::Index>& order, Eigen::Index N, std::uint64_t seed, std::uint64_t stream,
                       std::uint64_t epoch) {
  order.resize(static_cast<std::size_t>(N));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Eigen::Index>(i);
  Rng rng(seed, stream_id(stream, epoch));
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
}

BatchStream::BatchStream(const Dataset& data, Eigen::Index batch_size, std::uint64_t seed, std::uint64_t stream)
    : data_(&data), b_(batch_size), seed_(seed), stream_(stream) {
  if (batch_size < 1 || batch_size > data.x.cols())
    throw InputError(fmt::format("batch size {} must be in [1, {}] (the training set's size)", batch_size, data.x.cols()));
  check_dataset(data);
  pos_ = data.x.cols();  // forces a shuffle on the first call
  batch_.x.resize(data.x.rows(), b_);
  if (!data.labels.empty()) batch_.labels.resize(static_cast<std::size_t>(b_));
  batch_.index.resize(static_cast<std::size_t>(b_));
  if (data.y.size() != 0) batch_.y.resize(data.y.rows(), b_);
}

const Batch& BatchStream::next() {
  const Eigen::Index N = data_->x.cols();
  if (pos_ + b_ > N) {
    ++epoch_;
    epoch_permutation(order_, N, seed_, stream_, static_cast<std::uint64_t>(epoch_));
    pos_ = 0;
  }
  const bool labels = !data_->labels.empty(), targets = data_->y.size() != 0;
  for (Eigen::Index j = 0; j < b_; ++j) {
    const Eigen::Index i = order_[static_cast<std::size_t>(pos_ + j)];
    batch_.x.col(j) = data_->x.col(i);
    if (labels) batch_.labels[static_cast<std::size_t>(j)] = data_->labels[static_cast<std::size_t>(i)];
    if (targets) batch_.y.col(j) = data_->y.col(i);
    batch_.index[static_cast<std::size_t>(j)] = i;
  }
  pos_ += b_;
  return batch_;
}

Batch make_batch(const Dataset& data, Eigen::Index first, Eigen::Index count) {
  check_dataset(data);
  if (first < 0 || count < 0 || first + count > data.x.cols())
    throw InputError(fmt::format("make_batch: samples [{}, {}) outside the data set's {}", first, first + count, data.x.cols()));
  Batch b;
  b.x = data.x.middleCols(first, count);
  if (!data.labels.empty()) b.labels.assign(data.labels.begin() + first, data.labels.begin() + first + count);
  if (data.y.size() != 0) b.y = data.y.middleCols(first, count);
  for (Eigen::Index i = first; i < first + count; ++i) b.index.push_back(i);
  return b;
}

}  // namespace sparseact::nn
