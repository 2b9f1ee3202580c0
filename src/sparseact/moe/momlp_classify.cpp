#include <sparseact/moe/momlp_classify.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/voronoi.hpp>
#include <sparseact/nn/idx.hpp>
#include <sparseact/nn/optim.hpp>
#include <sparseact/nn/train.hpp>

namespace sparseact::moe {

namespace {

// Stream ids under (paper 003, §6.2, replicate): prototypes, experts (then per cell), the baseline.
constexpr std::uint64_t kRoot = 0x003'0602, kPrototypes = 1, kExperts = 2, kBaseline = 3, kInit = 4, kOrder = 5;

std::uint64_t run_stream(const ClassifyConfig& cfg) { return stream_id(kRoot, cfg.replicate); }

void validate(const ClassifyConfig& cfg, const nn::Dataset& train, const nn::Dataset& test) {
  const auto bad = [](const std::string& what) { throw InputError("momlp_classify: " + what); };
  if (cfg.K < 1) bad(fmt::format("K = {} must be at least 1", cfg.K));
  if (cfg.width < 1) bad(fmt::format("width = {} must be at least 1", cfg.width));
  if (cfg.hidden_layers < 1) bad(fmt::format("hidden layers = {} must be at least 1", cfg.hidden_layers));
  if (cfg.epochs < 0) bad(fmt::format("epochs = {} must be at least 0", cfg.epochs));
  if (cfg.batch < 2) bad(fmt::format("batch = {} must be at least 2 (BatchNorm's batch statistics)", cfg.batch));
  if (!(cfg.lr > 0) || !std::isfinite(cfg.lr)) bad(fmt::format("lr = {} must be positive and finite", cfg.lr));
  if (train.size() < 2 || test.size() < 1) bad("need at least 2 training and 1 test points");
  if (cfg.K > train.size()) bad(fmt::format("K = {} exceeds the {} training points", cfg.K, train.size()));
  if (train.labels.size() != std::size_t(train.size()) || test.labels.size() != std::size_t(test.size()) || train.x.rows() != test.x.rows())
    bad("training and test sets must be labelled and of one dimension");
  for (const auto* d : {&train, &test})
    if (std::any_of(d->labels.begin(), d->labels.end(), [](int y) { return y < 0; })) bad("labels must be >= 0");
}

int class_count(const nn::Dataset& train, const nn::Dataset& test) {
  int c = 0;
  for (const auto* d : {&train, &test})
    for (int y : d->labels) c = std::max(c, y + 1);
  return c;
}

/// The most frequent label (lowest on ties); `fallback` for no labels.
int majority(const std::vector<int>& labels, int classes, int fallback) {
  if (labels.empty()) return fallback;
  std::vector<long> n(static_cast<std::size_t>(classes), 0);
  for (int y : labels) ++n[std::size_t(y)];
  return int(std::max_element(n.begin(), n.end()) - n.begin());
}

nn::Dataset subset(const nn::Dataset& d, const std::vector<Eigen::Index>& idx) {
  nn::Dataset s;
  s.x = d.x(Eigen::all, idx);
  for (Eigen::Index i : idx) s.labels.push_back(d.labels[std::size_t(i)]);
  return s;
}

/// An expert (or the baseline) trained on `data`: AdamW with PyTorch's defaults at lr (App. D.3.1), batches
/// of min(batch, n) with the short last batch dropped, `epochs` passes.
struct Expert {
  nn::PreluBnModel model;
  Eigen::VectorXd theta;
};
Expert train_expert(const ClassifyConfig& cfg, const nn::Dataset& data, const nn::PreluBnMlp& net, const Eigen::VectorXd& class_weights,
                    std::uint64_t stream) {
  Expert e{nn::PreluBnModel(net), nn::init_prelu_bn_mlp(net, cfg.seed, stream_id(stream, kInit))};
  const Eigen::Index batch = std::min(cfg.batch, data.size());
  nn::BatchStream order(data, batch, cfg.seed, stream_id(stream, kOrder));
  nn::AdamW adamw;
  adamw.lr = cfg.lr;
  const nn::TrainOptions options{.steps = long(cfg.epochs) * (data.size() / batch), .loss = nn::LossKind::cross_entropy, .class_weights = class_weights};
  nn::train(e.model, e.theta, adamw, nn::constant_schedule(cfg.lr), order, options);
  e.model.eval();
  return e;
}

/// Argmax of each output column (the lowest class on ties).
std::vector<int> argmax(const Eigen::MatrixXd& F) {
  std::vector<int> y(std::size_t(F.cols()));
  for (Eigen::Index j = 0; j < F.cols(); ++j) {
    Eigen::Index best = 0;
    F.col(j).maxCoeff(&best);
    y[std::size_t(j)] = int(best);
  }
  return y;
}

double fraction_correct(const std::vector<int>& predicted, const std::vector<int>& labels) {
  long correct = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
  return labels.empty() ? std::numeric_limits<double>::quiet_NaN() : double(correct) / double(labels.size());
}

/// Points of each cell, in data order.
std::vector<std::vector<Eigen::Index>> members(const std::vector<Eigen::Index>& cell, int K) {
  std::vector<std::vector<Eigen::Index>> m(static_cast<std::size_t>(K));
  for (std::size_t i = 0; i < cell.size(); ++i) m[std::size_t(cell[i])].push_back(Eigen::Index(i));
  return m;
}

/// The MoMLP's Voronoi cells: §6.2's prototypes (K-means centroids of the training inputs, from the replicate's
/// stream, so the MoMLPs and the baseline of one replicate see the same cells) and eq. (5)'s routing.
struct Partition {
  KMeans km;
  std::vector<std::vector<Eigen::Index>> train, test;
};
Partition partition(const ClassifyConfig& cfg, const nn::Dataset& train, const nn::Dataset& test) {
  Partition p{kmeans(train.x, cfg.K, cfg.seed, stream_id(run_stream(cfg), kPrototypes), cfg.kmeans), {}, {}};
  p.train = members(route(p.km.centroids, train.x), cfg.K), p.test = members(route(p.km.centroids, test.x), cfg.K);
  return p;
}

/// Cell sizes, the prototypes, and the accuracy of `test_pred` on each cell's test points.
void describe_cells(ClassifyRun& run, const Partition& cells, const std::vector<int>& test_pred, const std::vector<int>& labels) {
  for (std::size_t k = 0; k < cells.train.size(); ++k) {
    std::vector<int> pred, truth;
    for (Eigen::Index i : cells.test[k]) pred.push_back(test_pred[std::size_t(i)]), truth.push_back(labels[std::size_t(i)]);
    run.cell_train.push_back(double(cells.train[k].size())), run.cell_test.push_back(double(cells.test[k].size()));
    run.cell_test_acc.push_back(fraction_correct(pred, truth));
  }
  run.prototypes = cells.km.centroids, run.kmeans_inertia = cells.km.inertia, run.kmeans_iterations = cells.km.iterations;
}

}  // namespace

nn::Dataset fashion_mnist_pixels(const std::string& split, Eigen::Index n) {
  nn::FashionMnist raw;
  try {
    raw = nn::load_fashion_mnist(split);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("Fashion-MNIST: {} (install dataset-fashion-mnist)", e.what()));
  }
  const Eigen::Index N = raw.images.cols();
  if (n > N) throw InputError(fmt::format("Fashion-MNIST {} split: {} images asked for, the files hold {}", split, n, N));
  if (n <= 0) n = N;
  nn::Dataset d;
  d.x = raw.images.leftCols(n);  // load_idx_images scales u8 pixels by 1/255: [0, 1], as App. D.4
  d.labels.assign(raw.labels.begin(), raw.labels.begin() + n);
  d.description = fmt::format("Fashion-MNIST {} split, first {} images, 28×28 pixels in [0, 1]", split, n);
  return d;
}


nn::PreluBnMlp classify_net(const ClassifyConfig& cfg, int d_in, int classes, int width) {
  std::vector<int> widths{d_in};
  widths.insert(widths.end(), std::size_t(cfg.hidden_layers), width);
  widths.push_back(classes);
  return nn::PreluBnMlp{.widths = widths, .shared_gamma = cfg.shared_gamma};
}

Eigen::VectorXd cell_class_weights(const std::vector<int>& labels, int classes) {
  Eigen::VectorXd count = Eigen::VectorXd::Zero(classes);
  for (int y : labels) count(y) += 1;
  const double present = double((count.array() > 0).count());
  Eigen::VectorXd w = Eigen::VectorXd::Zero(classes);
  for (int c = 0; c < classes; ++c)
    if (count(c) > 0) w(c) = double(labels.size()) / (present * count(c));
  return w;
}

ClassifyRun train_momlp_classifier(const ClassifyConfig& cfg, const nn::Dataset& train, const nn::Dataset& test) {
  validate(cfg, train, test);
  std::optional<ScopedBlasThreads> serial;  // one thread per run, the same bits wherever it runs (a sweep's items
  if (blas_threads() > 1) serial.emplace(1);  // already are: OpenBLAS's count is global, left alone there)
  const int classes = class_count(train, test), d_in = int(train.x.rows());
  const std::uint64_t stream = run_stream(cfg);
  const Partition cells = partition(cfg, train, test);
  const int overall = majority(train.labels, classes, 0);
  const nn::PreluBnMlp net = classify_net(cfg, d_in, classes, cfg.width);

  ClassifyRun run;
  std::vector<int> test_pred(std::size_t(test.size())), train_pred(std::size_t(train.size()));
  for (int k = 0; k < cfg.K; ++k) {
    const auto& in_train = cells.train[std::size_t(k)];
    const auto& in_test = cells.test[std::size_t(k)];
    const nn::Dataset cell = subset(train, in_train);
    std::vector<int> on_test, on_train;
    if (cell.size() < 2) {  // BatchNorm cannot train on one point: the cell answers a majority class
      ++run.degenerate_cells;
      const int y = majority(cell.labels, classes, overall);
      on_test.assign(in_test.size(), y), on_train.assign(in_train.size(), y);
    } else {  // eq. (40): expert k sees its own cell's training points only
      const Eigen::VectorXd w = cfg.weighted ? cell_class_weights(cell.labels, classes) : Eigen::VectorXd();
      const Expert e = train_expert(cfg, cell, net, w, stream_id(stream_id(stream, kExperts), std::uint64_t(k)));
      if (!in_test.empty()) on_test = argmax(e.model.predict(e.theta, test.x(Eigen::all, in_test)));
      on_train = argmax(e.model.predict(e.theta, cell.x));
    }
    for (std::size_t i = 0; i < on_test.size(); ++i) test_pred[std::size_t(in_test[i])] = on_test[i];
    for (std::size_t i = 0; i < on_train.size(); ++i) train_pred[std::size_t(in_train[i])] = on_train[i];
  }
  run.test_acc = fraction_correct(test_pred, test.labels), run.train_acc = fraction_correct(train_pred, train.labels);
  describe_cells(run, cells, test_pred, test.labels);
  run.params_expert = nn::parameter_count(net), run.params_total = cfg.K * run.params_expert;
  run.params_baseline = nn::parameter_count(classify_net(cfg, d_in, classes, baseline_width(cfg.width, cfg.K)));
  return run;
}

ClassifyRun train_classify_baseline(const ClassifyConfig& cfg, const nn::Dataset& train, const nn::Dataset& test) {
  validate(cfg, train, test);
  std::optional<ScopedBlasThreads> serial;
  if (blas_threads() > 1) serial.emplace(1);
  const int classes = class_count(train, test);
  const nn::PreluBnMlp net = classify_net(cfg, int(train.x.rows()), classes, baseline_width(cfg.width, cfg.K));
  const Expert e = train_expert(cfg, train, net, Eigen::VectorXd(), stream_id(run_stream(cfg), kBaseline));
  ClassifyRun run;
  const std::vector<int> test_pred = argmax(e.model.predict(e.theta, test.x));
  run.test_acc = fraction_correct(test_pred, test.labels);
  run.train_acc = fraction_correct(argmax(e.model.predict(e.theta, train.x)), train.labels);
  describe_cells(run, partition(cfg, train, test), test_pred, test.labels);  // the same replicate's MoMLP cells
  run.params_expert = run.params_total = run.params_baseline = nn::parameter_count(net);
  return run;
}

}  // namespace sparseact::moe
