#include <sparseact/spectral/checkpoint_layers.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <regex>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/spectral/init.hpp>

namespace sparseact::spectral {

namespace {

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Applies the regex, the rank and min_dim rules to one tensor: the layers it yields, or why not.
struct Verdict {
  std::vector<LayerRef> layers;
  std::string skip_reason;  ///< empty when it yields layers
};

Verdict classify(const std::string& name, const std::vector<std::uint64_t>& shape, bool loadable, const std::string& dtype,
                 const std::optional<std::regex>& match, const LayerSelection& sel) {
  Verdict v;
  if (match && !std::regex_search(name, *match)) return {{}, "not matched by --match"};
  if (!loadable) return {{}, "dtype " + dtype};
  if (shape.size() < 2) return {{}, fmt::format("{}-D", shape.size())};
  if (shape.size() == 3 || shape.size() > 4) return {{}, fmt::format("{}-D (not a matrix or a conv kernel)", shape.size())};
  const auto min_dim = static_cast<std::uint64_t>(sel.min_dim);
  const std::uint64_t out = shape[0], in = shape[1];
  if (shape.size() == 2 || sel.conv == ConvMode::slices) {
    if (out < min_dim || in < min_dim) return {{}, fmt::format("dimension < {}", sel.min_dim)};
    if (shape.size() == 2) return {{LayerRef{name, block_of(name), Eigen::Index(out), Eigen::Index(in), 0, -1}}, ""};
    for (std::uint64_t k = 0; k < shape[2]; ++k)
      for (std::uint64_t l = 0; l < shape[3]; ++l)
        v.layers.push_back({fmt::format("{}[{},{}]", name, k, l), block_of(name), Eigen::Index(out), Eigen::Index(in), 0,
                            std::int64_t(k * shape[3] + l)});
    return v;
  }
  const std::uint64_t cols = in * shape[2] * shape[3];
  if (out < min_dim || cols < min_dim) return {{}, fmt::format("dimension < {}", sel.min_dim)};
  return {{LayerRef{name, block_of(name), Eigen::Index(out), Eigen::Index(cols), 0, -1}}, ""};
}

std::optional<std::regex> compile(const std::string& match) {
  if (match.empty()) return std::nullopt;
  try {
    return std::regex(match, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("--match '{}': not a valid regular expression ({})", match, e.what()));
  }
}

/// Sorts the layers naturally; fails when none is left, saying how the tensors were skipped.
void finish(ModelLayers& m, const LayerSelection& sel) {
  std::stable_sort(m.layers.begin(), m.layers.end(), [](const LayerRef& a, const LayerRef& b) { return natural_less(a.name, b.name); });
  if (!m.layers.empty()) return;
  std::map<std::string, int> reasons;
  for (const SkippedTensor& s : m.skipped) ++reasons[s.reason];
  std::string why;
  for (const auto& [reason, n] : reasons) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, reason);
  if (!sel.match.empty() && reasons.size() == 1 && reasons.count("not matched by --match"))
    throw InputError(fmt::format("{}: --match '{}' matches none of its {} tensors", m.source, sel.match, m.tensors));
  throw InputError(fmt::format("{}: no layer among its {} tensors (skipped: {}; --min-dim {})", m.source, m.tensors,
                               why.empty() ? "none" : why, sel.min_dim));
}

}  // namespace

const char* to_string(ConvMode mode) noexcept { return mode == ConvMode::slices ? "slices" : "reshape"; }

ConvMode parse_conv_mode(const std::string& text) {
  if (text == "slices") return ConvMode::slices;
  if (text == "reshape") return ConvMode::reshape;
  throw InputError(fmt::format("--conv '{}': expected 'slices' or 'reshape'", text));
}

ModelLayers checkpoint_layers(const std::filesystem::path& path, const LayerSelection& selection) {
  const std::optional<std::regex> match = compile(selection.match);
  auto ck = std::make_shared<const Checkpoint>(open_checkpoint(path));
  ModelLayers m;
  m.source = path.string();
  m.format = ck->format;
  m.tensors = ck->tensors.size();
  for (std::size_t t = 0; t < ck->tensors.size(); ++t) {
    const TensorInfo& info = ck->tensors[t];
    Verdict v = classify(info.name, info.shape, info.loadable, info.dtype, match, selection);
    if (v.layers.empty()) m.skipped.push_back({info.name, shape_text(info.shape), v.skip_reason});
    for (LayerRef& layer : v.layers) layer.tensor = t, m.layers.push_back(std::move(layer));
  }
  finish(m, selection);
  m.load = [ck, layers = m.layers](std::size_t i) -> Eigen::MatrixXd {
    const LayerRef& layer = layers.at(i);
    const TensorInfo& info = ck->tensors[layer.tensor];
    Eigen::MatrixXd flat = load_tensor(info);  // rows = out, cols = in·kh·kw (row-major flattening)
    if (layer.slice < 0) return flat;
    return conv_slice(flat, info.shape[1], info.shape[2] * info.shape[3], layer.slice);
  };
  return m;
}

ModelLayers synthetic_layers(int blocks, int d, std::uint64_t seed, const LayerSelection& selection) {
  if (blocks < 1 || d < 2) throw InputError(fmt::format("synthetic model: need ≥ 1 block and d ≥ 2, got {} and {}", blocks, d));
  const std::optional<std::regex> match = compile(selection.match);
  ModelLayers m;
  m.source = fmt::format("synthetic BERT-shaped model at Xavier-normal initialisation ({} blocks, d = {})", blocks, d);
  m.format = "synthetic";
  struct Shape { std::string name; std::vector<std::uint64_t> shape; };
  std::vector<Shape> shapes;
  const auto D = static_cast<std::uint64_t>(d);
  for (int b = 0; b < blocks; ++b) {
    const std::string p = fmt::format("encoder.layer.{}.", b);
    for (const char* w : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"})
      shapes.push_back({p + w + ".weight", {D, D}});
    shapes.push_back({p + "attention.output.LayerNorm.weight", {D}});
    shapes.push_back({p + "intermediate.dense.weight", {4 * D, D}});
    shapes.push_back({p + "output.dense.weight", {D, 4 * D}});
    shapes.push_back({p + "output.LayerNorm.weight", {D}});
  }
  m.tensors = shapes.size();
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    Verdict v = classify(shapes[t].name, shapes[t].shape, true, "F64", match, selection);
    if (v.layers.empty()) m.skipped.push_back({shapes[t].name, shape_text(shapes[t].shape), v.skip_reason});
    for (LayerRef& layer : v.layers) layer.tensor = t, m.layers.push_back(std::move(layer));
  }
  finish(m, selection);
  // Each tensor its own random stream (its index in the model), so a layer is the same matrix whichever
  // layers the selection keeps and whichever thread draws it.
  m.load = [layers = m.layers, seed](std::size_t i) {
    const LayerRef& layer = layers.at(i);
    return init_weights(layer.rows, layer.cols, Init::xavier, Distribution::normal, seed, layer.tensor);
  };
  return m;
}

Eigen::MatrixXd conv_slice(const Eigen::MatrixXd& flat, std::uint64_t in, std::uint64_t kh_kw, std::int64_t slice) {
  // Row-major flattening of (in, kh, kw) puts W[o, i, k, l] at column i·kh·kw + (k·kw + l).
  const auto n_in = static_cast<Eigen::Index>(in), stride = static_cast<Eigen::Index>(kh_kw);
  Eigen::MatrixXd W(flat.rows(), n_in);
  for (Eigen::Index i = 0; i < n_in; ++i) W.col(i) = flat.col(i * stride + slice);
  return W;
}

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t i1 = i, j1 = j;
      while (i1 < a.size() && a[i1] == '0') ++i1;  // leading zeros do not change the number
      while (j1 < b.size() && b[j1] == '0') ++j1;
      std::size_t i2 = i1, j2 = j1;
      while (i2 < a.size() && digit(a[i2])) ++i2;
      while (j2 < b.size() && digit(b[j2])) ++j2;
      if (i2 - i1 != j2 - j1) return i2 - i1 < j2 - j1;  // more digits: larger
      if (const int c = a.compare(i1, i2 - i1, b, j1, j2 - j1); c != 0) return c < 0;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;  // equal up to leading zeros: any fixed order
}

std::string block_of(const std::string& name) {
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('.', start), name.size());
    const std::string part = name.substr(start, end - start);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
      return name.substr(0, end);
    start = end + 1;
  }
  return name.substr(0, name.find('.'));
}

std::string short_layer_name(const std::string& name, std::size_t max_chars) {
  std::string s = name;
  if (const std::size_t w = s.rfind(".weight"); w != std::string::npos && (w + 7 == s.size() || s[w + 7] == '['))
    s.erase(w, 7);
  if (max_chars < 2 || s.size() <= max_chars) return s;
  // Cut at a UTF-8 character boundary so the "…" never splits one.
  std::size_t cut = s.size() - (max_chars - 1);
  while (cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) ++cut;
  return "…" + s.substr(cut);
}

}  // namespace sparseact::spectral
