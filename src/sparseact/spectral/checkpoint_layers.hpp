#pragma once
// Which tensors of a checkpoint are layers, and their weight matrices, one at a time (issue 16).
//
// A layer is a loadable tensor (F64, F32, F16, BF16) whose name matches the selection's regex and
// whose matrix has both dimensions ≥ min_dim:
//   - 2-D W (out × in): W itself;
//   - 4-D convolution kernels (out × in × kh × kw, PyTorch's layout), by ConvMode:
//       slices  — the kh·kw matrices W[:, :, k, l] of out × in, one layer each, named "NAME[k,l]"
//                 (WeightWatcher's slices, with its pool=False);
//       reshape — one matrix out × (in·kh·kw), the kernel as the linear map it applies to im2col
//                 patches.
//     WeightWatcher's default (0.7, pool=True) pools the eigenvalues of the kh·kw slices into one ESD
//     per kernel (and conv2d_norm rescales them); a pooled spectrum is not one matrix's, so MP, the
//     Tracy–Widom spike threshold and κ have no single shape to refer to: we do not offer it.
//   - 3-D tensors and tensors of rank > 4 are skipped (no convention makes them one linear map).
// Everything else is skipped and listed with the reason: 1-D (biases, norms), 0-D, a dimension below
// min_dim, an unloadable dtype, a name the regex rejects.
//
// Order: layers are sorted by name in natural order (digit runs compare as numbers), not kept in file
// order: HF's writer stores tensors alphabetically, which puts "layer.10" before "layer.2"; natural
// order lists blocks by depth. A layer's block is its name up to and including the first numeric
// component ("encoder.layer.3"), or its first component when it has none ("embeddings").
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/checkpoint.hpp>

namespace sparseact::spectral {

enum class ConvMode { slices, reshape };
const char* to_string(ConvMode mode) noexcept;
/// "slices" or "reshape"; InputError otherwise.
ConvMode parse_conv_mode(const std::string& text);

struct LayerSelection {
  std::string match;        ///< ECMAScript regex searched in each tensor name; empty: every tensor
  Eigen::Index min_dim = 32;
  ConvMode conv = ConvMode::slices;
};

struct LayerRef {
  std::string name;          ///< the tensor's name, "[k,l]" appended for a conv slice
  std::string block;         ///< for grouping (see above)
  Eigen::Index rows = 0, cols = 0;
  std::size_t tensor = 0;    ///< index into the source's tensors
  std::int64_t slice = -1;   ///< k·kw + l of a conv slice, −1 otherwise
};

struct SkippedTensor {
  std::string name;
  std::string shape;   ///< "[384]"
  std::string reason;  ///< "1-D", "dimension < 32", "dtype I64", "not matched by --match"
};

/// A model as layers: where they come from and how to load each, one at a time.
struct ModelLayers {
  std::string source;   ///< the path as given, or "synthetic …"
  std::string format;   ///< Checkpoint::format, or "synthetic"
  std::size_t tensors = 0;            ///< tensors in the checkpoint
  std::vector<LayerRef> layers;       ///< natural order of names
  std::vector<SkippedTensor> skipped; ///< file order
  /// W of layers[i] (thread-safe: every call opens its own file handle).
  std::function<Eigen::MatrixXd(std::size_t i)> load;
};

/// The layers of the checkpoint at `path` (core/checkpoint.hpp: file, sharded index, folder, .npz, .npy).
/// InputError for a bad checkpoint, an invalid regex, or a selection that leaves no layer (the message
/// says how many tensors there were and why each kind was skipped).
ModelLayers checkpoint_layers(const std::filesystem::path& path, const LayerSelection& selection);

/// A BERT-shaped model at initialisation, generated rather than read (the analysis's self-test and
/// its contract runs): `blocks` blocks of attention query/key/value/output (d × d), intermediate
/// (4d × d) and output (d × 4d) weights, Xavier-normal i.i.d. entries drawn from `seed`, with their
/// LayerNorm vectors listed as skipped 1-D tensors.
ModelLayers synthetic_layers(int blocks, int d, std::uint64_t seed, const LayerSelection& selection);

/// Slice `slice` (= k·kw + l) of a conv kernel loaded flat as out × (in·kh·kw): the out × in matrix W[:, :, k, l].
Eigen::MatrixXd conv_slice(const Eigen::MatrixXd& flat, std::uint64_t in, std::uint64_t kh_kw, std::int64_t slice);

/// Natural order: digit runs compare as numbers ("layer.2" < "layer.10").
bool natural_less(const std::string& a, const std::string& b);

/// The layer's block (see above).
std::string block_of(const std::string& name);

/// A name that fits a figure title: ".weight" dropped, then cut from the left to `max_chars` with a
/// leading "…" (the end of a name says which layer it is).
std::string short_layer_name(const std::string& name, std::size_t max_chars = 48);

}  // namespace sparseact::spectral
