#include <sparseact/moe/regression_study.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/moe/targets.hpp>

namespace sparseact::moe {

const char* to_string(Target t) noexcept {
  switch (t) {
    case Target::fbm: return "fbm";
    case Target::ackley2: return "ackley2";
    case Target::ackley3: return "ackley3";
    case Target::rastrigin2: return "rastrigin2";
    case Target::rastrigin3: return "rastrigin3";
  }
  return "?";
}

std::vector<Target> parse_targets(const std::string& text) {
  std::vector<Target> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    bool found = false;
    for (Target t : {Target::fbm, Target::ackley2, Target::ackley3, Target::rastrigin2, Target::rastrigin3})
      if (name == to_string(t)) out.push_back(t), found = true;
    if (!found) throw InputError("unknown target '" + name + "' (choose from fbm, ackley2, ackley3, rastrigin2, rastrigin3)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int dimension(Target t) noexcept { return t == Target::fbm ? 1 : (t == Target::ackley2 || t == Target::rastrigin2) ? 2 : 3; }

const char* to_string(Model m) noexcept {
  switch (m) {
    case Model::momlp: return "momlp";
    case Model::baseline: return "baseline";
    case Model::equal_active: return "equal_active";
  }
  return "?";
}

nn::Dataset grid_dataset(Target t, int s, double hurst, std::uint64_t seed) {
  if (s < 2) throw InputError("grid: need at least 2 points a side");
  const int n = dimension(t);
  const double lo = n == 1 ? 0.0 : -1.0, hi = 1.0;  // §6.1: [0, 1] for n = 1, [−1, 1]^n otherwise
  Eigen::Index N = 1;
  for (int i = 0; i < n; ++i) N *= s;
  nn::Dataset d;
  d.x.resize(n, N), d.y.resize(1, N);
  for (Eigen::Index j = 0; j < N; ++j) {
    Eigen::Index r = j;
    for (int i = 0; i < n; ++i, r /= s) d.x(i, j) = lo + (hi - lo) * double(r % s) / (s - 1);
  }
  if (t == Target::fbm) {
    d.y.row(0) = fbm_path(s - 1, hurst, seed, 0x003'0d01).transpose();  // B(k/(s − 1)), k = 0 … s − 1
  } else {
    const bool ack = t == Target::ackley2 || t == Target::ackley3;
    for (Eigen::Index j = 0; j < N; ++j) d.y(0, j) = ack ? ackley(d.x.col(j)) : rastrigin(d.x.col(j));
  }
  d.description = std::string(to_string(t)) + " on a grid of " + std::to_string(s) + "^" + std::to_string(n);
  return d;
}

Split split_80_20(const nn::Dataset& data, std::uint64_t seed, std::uint64_t stream) {
  std::vector<Eigen::Index> order;
  nn::epoch_permutation(order, data.size(), seed, stream, 0);
  const std::size_t n_test = std::size_t(std::llround(0.2 * double(data.size())));
  const std::vector<Eigen::Index> train(order.begin(), order.end() - std::ptrdiff_t(n_test)), test(order.end() - std::ptrdiff_t(n_test), order.end());
  Split s;
  s.train.x = data.x(Eigen::all, train), s.train.y = data.y(Eigen::all, train);
  s.test.x = data.x(Eigen::all, test), s.test.y = data.y(Eigen::all, test);
  return s;
}

RegressionResult run_regression(const RegressionRun& run, const Split& split, std::uint64_t seed, std::uint64_t stream) {
  const MomlpSettings& s = run.momlp;
  const auto mse = [](const Eigen::MatrixXd& F, const Eigen::MatrixXd& Y) { return (F - Y).squaredNorm() / double(Y.size()); };
  // Standardised targets (see RegressionRun::standardize_targets): train on (y − μ)/sd, answer μ + sd·f.
  double mu = 0, sd = 1;
  nn::Dataset train = split.train;
  if (run.standardize_targets && train.y.size() > 1) {
    mu = train.y.mean();
    const double var = (train.y.array() - mu).square().sum() / double(train.y.size() - 1);
    sd = var > 0 ? std::sqrt(var) : 1.0;
    train.y = (train.y.array() - mu) / sd;
  }
  const auto answer = [&](const Eigen::MatrixXd& F) -> Eigen::MatrixXd { return (F.array() * sd + mu).matrix(); };
  RegressionResult r;
  if (run.model == Model::momlp) {
    MomlpSettings ms = s;
    ms.K = run.K;
    const Momlp m = train_momlp(train, ms, seed, stream);
    r.test_mse = mse(answer(predict(m, split.test.x)), split.test.y);
    r.train_mse = mse(answer(predict(m, split.train.x)), split.train.y);
    const double expert = double(nn::parameter_count(m.experts.front().net));
    r.parameters = run.K * expert + double(m.prototypes.size());
    r.active_parameters = expert + double(m.prototypes.size());
    r.cell_sizes = m.cell_sizes;
    return r;
  }
  const int width = run.model == Model::baseline ? baseline_width(s.width, run.K) : s.width;
  const PreluNet f = train_prelu_mlp(train, width, s.hidden_layers, s.stage1_epochs + s.epochs, s.batch, s.lr, s.gamma0, s.shared_gamma,
                                     seed, stream, s.device);
  r.test_mse = mse(answer(predict(f, split.test.x)), split.test.y);
  r.train_mse = mse(answer(predict(f, split.train.x)), split.train.y);
  r.parameters = r.active_parameters = double(nn::parameter_count(f.net));
  return r;
}

std::vector<StudyItem> study_items(const std::vector<Target>& targets, int runs, const std::vector<double>& ks, int K, double hurst,
                                   const std::vector<double>& hursts) {
  std::vector<StudyItem> items;
  for (Target t : targets)
    for (int run = 0; run < runs; ++run) {
      for (double k : ks) items.push_back({t, hurst, run, Model::momlp, int(k)});
      items.push_back({t, hurst, run, Model::baseline, K});
      items.push_back({t, hurst, run, Model::equal_active, K});
    }
  if (std::find(targets.begin(), targets.end(), Target::fbm) != targets.end())
    for (double h : hursts)
      if (h != hurst)
        for (int run = 0; run < runs; ++run)
          for (Model m : {Model::momlp, Model::baseline}) items.push_back({Target::fbm, h, run, m, K});
  return items;
}

std::string sweep_key(const StudyItem& it) {
  return fmt::format("target={} hurst={:g} run={} model={} K={}", to_string(it.target), it.hurst, it.run, to_string(it.model), it.K);
}

Record to_record(const RegressionResult& res) {
  std::vector<double> cells(res.cell_sizes.begin(), res.cell_sizes.end());
  return Record().set("test_mse", res.test_mse).set("train_mse", res.train_mse).set("parameters", res.parameters)
      .set("active_parameters", res.active_parameters).set("cells", cells);
}

std::vector<double> test_mses(const std::vector<StudyItem>& items, const std::vector<Record>& records, Target t, double hurst, Model m, int K) {
  std::vector<double> v;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].target == t && items[i].hurst == hurst && items[i].model == m && items[i].K == K) v.push_back(records[i].num("test_mse"));
  return v;
}

Table runs_table(const std::vector<StudyItem>& items, const std::vector<Record>& records) {
  Table table{"runs", {"target", "hurst", "run", "model", "K", "test_mse", "train_mse", "parameters", "active_parameters", "min_cell"}, {}};
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::vector<double>& cells = records[i].arr("cells");
    table.add_row({double(items[i].target), items[i].hurst, double(items[i].run), double(items[i].model), double(items[i].K),
                   records[i].num("test_mse"), records[i].num("train_mse"), records[i].num("parameters"), records[i].num("active_parameters"),
                   cells.empty() ? std::nan("") : *std::min_element(cells.begin(), cells.end())});
  }
  return table;
}

}  // namespace sparseact::moe
