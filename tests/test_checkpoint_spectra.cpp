// checkpoint_spectra (issue 16): which tensors are layers, the per-layer table, and the executable end
// to end on checkpoints written by numpy, its quantities against numpy's on the same values.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/errors.hpp>
#include <sparseact/spectral/checkpoint_layers.hpp>
#include <sparseact/spectral/layer_table.hpp>

#include "python_ref.hpp"
#include "support.hpp"

using namespace sparseact;
using namespace sparseact::spectral;
using namespace test_support;

namespace {

/// Rows of a CSV (RFC 4180 quotes, no newlines inside fields), header first.
std::vector<std::vector<std::string>> read_csv(const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_bytes(file));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') row.back() += '"', ++i;
      else if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) row.emplace_back();
      else row.back() += c;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

double column(const std::vector<std::vector<std::string>>& csv, std::size_t row, const std::string& name) {
  for (std::size_t j = 0; j < csv[0].size(); ++j)
    if (csv[0][j] == name) return std::stod(csv.at(row).at(j));
  FAIL("no column " << name);
  return 0;
}

/// Writes a float32 .safetensors file by hand (struct + json; no safetensors package) from numpy arrays,
/// and prints, per 2-D array and per conv slice, numpy's λ_max, Σλ and stable rank of its float64 values.
const char* kWriter = R"(
import json, struct, numpy as np
def write(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors:
        dt = {np.float32: 'F32', np.int64: 'I64'}[a.dtype.type]
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {'dtype': dt, 'shape': list(a.shape), 'data_offsets': [off, off + len(b)]}
        blobs.append(b); off += len(b)
    h = json.dumps(header).encode()
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h))); f.write(h)
        for b in blobs: f.write(b)
rng = np.random.default_rng(7)
W = (rng.standard_normal((96, 48)) * 0.05).astype(np.float32)
C = (rng.standard_normal((40, 36, 3, 3)) * 0.1).astype(np.float32)
Q = (rng.standard_normal((64, 64)) * 0.02).astype(np.float32)
tensors = [('enc.layer.0.mlp.fc1.weight', W), ('enc.layer.0.mlp.fc1.bias', np.zeros(96, np.float32)),
           ('conv.weight', C), ('enc.layer.10.attn.q.weight', Q), ('step', np.array([3], np.int64)),
           ('zero.weight', np.zeros((40, 40), np.float32))]
write(OUT + '/model.safetensors', tensors)
write(OUT + '/scaled.safetensors', [(n, a * 2 if a.dtype == np.float32 else a) for n, a in tensors])
def stats(M):
    M = M.astype(np.float64); e = np.linalg.eigvalsh(M.T @ M if M.shape[0] >= M.shape[1] else M @ M.T)
    print(e.max(), e.sum(), e.sum() / e.max())
stats(W)
for k in range(3):
    for l in range(3): stats(C[:, :, k, l])
stats(Q)
stats(C.reshape(40, -1))
)";

}  // namespace

TEST_CASE("layer names: natural order, blocks and short names", "[checkpoint]") {
  CHECK(natural_less("layer.2.w", "layer.10.w"));
  CHECK_FALSE(natural_less("layer.10.w", "layer.2.w"));
  CHECK(natural_less("a.9", "b.1"));
  CHECK(natural_less("layer.02", "layer.3"));
  CHECK(block_of("encoder.layer.3.attention.self.query.weight") == "encoder.layer.3");
  CHECK(block_of("embeddings.word_embeddings.weight") == "embeddings");
  CHECK(block_of("h.11.mlp.c_fc.weight") == "h.11");
  CHECK(short_layer_name("encoder.layer.0.intermediate.dense.weight") == "encoder.layer.0.intermediate.dense");
  CHECK(short_layer_name("conv.weight[1,2]") == "conv[1,2]");
  const std::string shortened = short_layer_name("model.decoder.layers.11.self_attention.query_key_value.weight", 20);
  CHECK(shortened.rfind("…", 0) == 0);
  CHECK(shortened.substr(3) == "ion.query_key_value");  // 19 characters after the 3-byte ellipsis
}

TEST_CASE("conv slices are the out × in matrices W[:, :, k, l] of the row-major flattening", "[checkpoint]") {
  const std::uint64_t out = 5, in = 4, kh = 2, kw = 3;
  Eigen::MatrixXd flat(out, in * kh * kw);  // element (o, (i·kh + k)·kw + l) holds the code o·1000 + i·100 + k·10 + l
  for (std::uint64_t o = 0; o < out; ++o)
    for (std::uint64_t i = 0; i < in; ++i)
      for (std::uint64_t k = 0; k < kh; ++k)
        for (std::uint64_t l = 0; l < kw; ++l) flat(Eigen::Index(o), Eigen::Index((i * kh + k) * kw + l)) = double(o * 1000 + i * 100 + k * 10 + l);
  const Eigen::MatrixXd W = conv_slice(flat, in, kh * kw, 1 * 3 + 2);  // k = 1, l = 2
  REQUIRE(W.rows() == 5);
  REQUIRE(W.cols() == 4);
  for (Eigen::Index o = 0; o < 5; ++o)
    for (Eigen::Index i = 0; i < 4; ++i) CHECK(W(o, i) == double(o * 1000 + i * 100 + 12));
}

TEST_CASE("the synthetic model: layers, skipped norms, selection and its errors", "[checkpoint]") {
  const ModelLayers m = synthetic_layers(2, 16, 5, {.match = "", .min_dim = 8, .conv = ConvMode::slices});
  REQUIRE(m.layers.size() == 12);  // 2 blocks × (q, k, v, o, intermediate, output)
  CHECK(m.skipped.size() == 4);    // the LayerNorm vectors
  CHECK(m.skipped[0].reason == "1-D");
  CHECK(m.layers[0].block == "encoder.layer.0");
  const Eigen::MatrixXd W = m.load(4);
  CHECK(W.rows() == m.layers[4].rows);
  CHECK(W.cols() == m.layers[4].cols);
  CHECK(W == m.load(4));  // the same matrix however often and wherever it is drawn
  const ModelLayers mlp = synthetic_layers(2, 16, 5, {.match = R"(intermediate)", .min_dim = 8, .conv = ConvMode::slices});
  REQUIRE(mlp.layers.size() == 2);
  CHECK(mlp.layers[0].rows == 64);
  // The same tensor draws the same matrix whichever layers the selection keeps.
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (m.layers[i].name == mlp.layers[0].name) CHECK(m.load(i) == mlp.load(0));
  CHECK_THROWS_AS(synthetic_layers(2, 16, 5, {.match = "nothing", .min_dim = 8, .conv = ConvMode::slices}), InputError);
  CHECK_THROWS_AS(synthetic_layers(2, 16, 5, {.match = "(", .min_dim = 8, .conv = ConvMode::slices}), InputError);
  const std::string msg = input_error([] { synthetic_layers(2, 16, 5, {.match = "", .min_dim = 100, .conv = ConvMode::slices}); });
  CHECK(msg.find("dimension < 100") != std::string::npos);
}

TEST_CASE("layers.csv: one row per layer, every column, NaN spelled out; pairing by name and shape", "[checkpoint]") {
  const ModelLayers m = synthetic_layers(1, 16, 5, {.match = "", .min_dim = 8, .conv = ConvMode::slices});
  std::vector<LayerMetrics> metrics;
  for (std::size_t i = 0; i < m.layers.size(); ++i) metrics.push_back(layer_metrics(m.load(i)));
  metrics[0] = layer_metrics(Eigen::MatrixXd::Zero(16, 16));  // a degenerate layer: NaN quantities, not an error
  const std::string csv = layers_csv(m.layers, metrics);
  std::istringstream in(csv);
  std::string header, row0;
  std::getline(in, header), std::getline(in, row0);
  CHECK(std::count(header.begin(), header.end(), ',') == long(layer_columns().size()) + 3);
  CHECK(std::count(row0.begin(), row0.end(), ',') == long(layer_columns().size()) + 3);
  CHECK(row0.find(",all_zero,") != std::string::npos);
  CHECK(row0.find(",nan") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == long(m.layers.size()) + 1);

  std::vector<LayerRef> b = m.layers;
  b.erase(b.begin());       // only in a
  b[0].rows += 1;           // shape differs
  b.push_back({.name = "extra", .block = "extra", .rows = 4, .cols = 4, .tensor = 0, .slice = -1});
  const LayerPairing p = pair_layers(m.layers, b);
  CHECK(p.pairs.size() == m.layers.size() - 2);
  CHECK(p.only_in_a.size() == 1);
  CHECK(p.only_in_b == std::vector<std::string>{"extra"});
  CHECK(p.shape_differs.size() == 1);
}

TEST_CASE("checkpoint_spectra on a numpy-written checkpoint: quantities equal numpy's; conv both ways; --compare", "[checkpoint][analyses]") {
  TempDir dir("ckspec");
  const std::vector<double> ref = run_python_numbers("OUT = '" + dir.path.string() + "'\n" + kWriter, "ckspec");
  REQUIRE(ref.size() == 3 * 12);  // W, 9 conv slices, Q, the reshaped kernel
  const auto close = [](double ours, double numpy) { return std::abs(ours - numpy) <= 1e-9 * std::abs(numpy); };

  const fs::path out = dir / "out";
  const Run r = run("checkpoint_spectra " + (dir / "model.safetensors").string() + " --min-dim 32 --threads 2 --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  CHECK(r.output.find("peak memory:") != std::string::npos);
  const auto csv = read_csv(out / "layers.csv");
  REQUIRE(csv.size() == 1 + 12);  // conv[0,0] … conv[2,2], enc.layer.0.mlp.fc1, enc.layer.10.attn.q, zero (natural order)
  CHECK(csv[1][0] == "conv.weight[0,0]");
  CHECK(csv[10][0] == "enc.layer.0.mlp.fc1.weight");
  CHECK(csv[11][0] == "enc.layer.10.attn.q.weight");
  CHECK(csv[12][0] == "zero.weight");
  CHECK(csv[12][3] == "all_zero");  // a degenerate layer is a row of the table, not an error
  // Reference order: W, the 9 slices (k, l), Q.
  const std::size_t ref_row[] = {10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11};
  for (std::size_t k = 0; k < 11; ++k) {
    CAPTURE(k, csv[ref_row[k]][0]);
    CHECK(close(column(csv, ref_row[k], "lambda_max"), ref[3 * k]));
    CHECK(close(column(csv, ref_row[k], "sum_lambda"), ref[3 * k + 1]));
    CHECK(close(column(csv, ref_row[k], "stable_rank"), ref[3 * k + 2]));
    CHECK(close(column(csv, ref_row[k], "log10_spectral_norm"), 0.5 * std::log10(ref[3 * k])));
    CHECK(close(column(csv, ref_row[k], "log10_frobenius_norm"), 0.5 * std::log10(ref[3 * k + 1])));
  }
  const auto j = read_json(out / "checkpoint_spectra.json");
  CHECK(j["data"]["skipped"].size() == 2);  // the bias (1-D) and the I64 step counter
  CHECK(j["data"]["layers"].size() == 12);
  bool has_section84 = false;
  for (const auto& c : j["checks"]) has_section84 |= c["id"] == "section84_within_300";
  CHECK(has_section84);  // enc.layer.0.mlp.fc1 is an MLP input layer

  // --conv reshape: one 40 × 324 matrix.
  const fs::path out2 = dir / "out2";
  const Run r2 = run("checkpoint_spectra " + (dir / "model.safetensors").string() + " --conv reshape --match conv --out " + out2.string());
  REQUIRE((r2.code == 0 || r2.code == 3 || r2.code == 4));
  const auto csv2 = read_csv(out2 / "layers.csv");
  REQUIRE(csv2.size() == 2);
  CHECK(column(csv2, 1, "cols") == 324);
  CHECK(close(column(csv2, 1, "lambda_max"), ref[33]));
  CHECK(close(column(csv2, 1, "stable_rank"), ref[35]));

  // --compare with every weight doubled: λ ×4, so Δlog₁₀λ_max = log₁₀ 4 and the scale-free quantities do not move.
  const fs::path out3 = dir / "out3";
  const Run r3 = run("checkpoint_spectra " + (dir / "model.safetensors").string() + " --compare " + (dir / "scaled.safetensors").string() +
                     " --esd-figures 0 --out " + out3.string());
  REQUIRE((r3.code == 0 || r3.code == 3 || r3.code == 4));
  const auto cmp = read_csv(out3 / "compare.csv");
  REQUIRE(cmp.size() == 13);
  for (std::size_t row = 1; row < cmp.size() - 1; ++row) {  // the last, the zero layer, has no logarithms
    CHECK(column(cmp, row, "log10_lambda_max_diff") == Approx(std::log10(4.0)).epsilon(1e-12));
    CHECK(std::abs(column(cmp, row, "stable_rank_diff")) <= 1e-9);
    CHECK(std::abs(column(cmp, row, "alpha_diff")) <= 1e-9);
  }
}

TEST_CASE("checkpoint_spectra: bad checkpoints exit 2 with one line naming the file, nothing written", "[checkpoint][analyses]") {
  TempDir dir("ckspec-bad");
  run_python_numbers("OUT = '" + dir.path.string() + "'\n" + kWriter, "ckspec-bad");
  const std::string good = read_bytes(dir / "model.safetensors");
  write_bytes(dir / "truncated.safetensors", good.substr(0, good.size() - 100));
  fs::create_directories(dir / "empty");
  write_bytes(dir / "empty" / "notes.txt", "no weights here");
  fs::create_directories(dir / "sharded");
  write_bytes(dir / "sharded" / "model.safetensors.index.json",
              R"({"weight_map": {"enc.layer.0.mlp.fc1.weight": "model-00001-of-00002.safetensors",
                                  "enc.layer.0.mlp.fc1.bias": "model-00001-of-00002.safetensors",
                                  "conv.weight": "model-00001-of-00002.safetensors",
                                  "enc.layer.10.attn.q.weight": "model-00001-of-00002.safetensors",
                                  "step": "model-00001-of-00002.safetensors",
                                  "zero.weight": "model-00001-of-00002.safetensors",
                                  "b.weight": "model-00002-of-00002.safetensors"}})");
  fs::copy_file(dir / "model.safetensors", dir / "sharded" / "model-00001-of-00002.safetensors");
  for (const auto& [path, names] : std::vector<std::pair<fs::path, std::string>>{
           {dir / "truncated.safetensors", "truncated.safetensors"},
           {dir / "empty", "empty"},
           {dir / "sharded", "model-00002-of-00002.safetensors"},
           {dir / "missing.safetensors", "missing.safetensors"}}) {
    CAPTURE(path);
    const fs::path out = dir / "out";
    const Run r = run("checkpoint_spectra " + path.string() + " --out " + out.string());
    CHECK(r.code == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK(r.output.find(names) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("checkpoint_spectra reads a 40 GB checkpoint tensor by tensor: peak memory near the largest layer", "[checkpoint][analyses]") {
  // A sparse file: a 10^10-element F32 vector (40 GB of holes, more than this machine's memory), skipped as
  // 1-D, and a 512 × 512 layer with real data after it; and the same layer alone in a small file. Neither
  // open_checkpoint nor the analysis may read the vector: both runs' peak resident memory (the program's
  // own, mostly its shared libraries, plus the layer) agree to within a few MiB.
  TempDir dir("ckspec-big");
  run_python_numbers("OUT = '" + dir.path.string() + "'\n" + R"(
import json, struct, numpy as np
n = 10**10
W = (np.random.default_rng(1).standard_normal((512, 512)) * 0.05).astype(np.float32)
def write(path, entries, gap):
    h = json.dumps(entries).encode()
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h))); f.write(h)
        f.seek(8 + len(h) + gap); f.write(W.tobytes())
write(OUT + '/big.safetensors', {'huge.bias': {'dtype': 'F32', 'shape': [n], 'data_offsets': [0, 4 * n]},
      'layer.weight': {'dtype': 'F32', 'shape': [512, 512], 'data_offsets': [4 * n, 4 * n + W.nbytes]}}, 4 * n)
write(OUT + '/small.safetensors', {'layer.weight': {'dtype': 'F32', 'shape': [512, 512], 'data_offsets': [0, W.nbytes]}}, 0)
)", "ckspec-big");
  const fs::path file = dir / "big.safetensors";
  REQUIRE(fs::file_size(file) > 40'000'000'000ull);
  const auto peak_mib = [&](const std::string& name) {
    const fs::path out = dir / ("out-" + name);
    const Run r = run("checkpoint_spectra " + (dir / (name + ".safetensors")).string() + " --esd-figures 1 --threads 1 --out " + out.string());
    INFO(r.output);
    REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
    const auto at = r.output.find("peak memory: ");
    REQUIRE(at != std::string::npos);
    const auto j = read_json(out / "checkpoint_spectra.json");
    CHECK(j["data"]["layers"].size() == 1);
    return std::stod(r.output.substr(at + 13));
  };
  const double big = peak_mib("big"), small = peak_mib("small");
  CHECK(big <= small + 16);  // the 40 GB file costs no more than its one layer
  CHECK(read_json(dir / "out-big" / "checkpoint_spectra.json")["data"]["skipped"][0]["reason"] == "1-D");
}
