#pragma once
// .safetensors checkpoints: tensors by name (F32, F64, F16 or BF16; 0-d, 1-d or 2-d). Every entry of
// the header is validated, not just the one asked for. Malformed files raise InputError with a
// one-line message that names the file and what is wrong; nothing here aborts or reads out of
// bounds. Shapes as for .npy (core/npy.hpp): a scalar tensor is 1x1, a 1-d one a single row.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/binary_input.hpp>

namespace sparseact {

/// Reads the tensor `name` of a .safetensors file.
Eigen::MatrixXd load_safetensors(const std::filesystem::path& path, const std::string& name);
/// Names of the tensors in a .safetensors file, in header order.
std::vector<std::string> safetensors_names(const std::filesystem::path& path);

// The validated header, for readers of whole checkpoints (core/checkpoint.hpp).

struct SafetensorsEntry {
  std::string name;
  std::string dtype;                  ///< as the header spells it
  std::vector<std::uint64_t> shape;   ///< any rank
  std::uint64_t begin = 0, end = 0;   ///< data_offsets, relative to the byte buffer
};

struct SafetensorsHeader {
  std::uint64_t buffer_start = 0;  ///< file offset of the byte buffer (8 + header size)
  std::uint64_t buffer_size = 0;
  std::vector<SafetensorsEntry> tensors;  ///< header order, "__metadata__" excluded
};

/// Parses and validates every entry of the header: JSON, dtype/shape/data_offsets fields, offsets
/// within the buffer, byte counts matching shape × element size (for dtypes the format defines),
/// no two tensors' bytes overlapping, and a buffer that ends where the last tensor does. Reads the
/// header only. Any rank is accepted here; load_safetensors limits ranks to 2.
SafetensorsHeader read_safetensors_header(io::InputFile& file);

/// The element type of a loadable dtype ("F64", "F32", "F16", "BF16"; little-endian), else nothing.
std::optional<io::Dtype> safetensors_dtype(std::string_view dtype);

}  // namespace sparseact
