#pragma once
// .safetensors checkpoints: tensors by name (F32, F64, F16 or BF16; 0-d, 1-d or 2-d). Every entry of
// the header is validated, not just the one asked for. Malformed files raise InputError with a
// one-line message that names the file and what is wrong; nothing here aborts or reads out of
// bounds. Shapes as for .npy (core/npy.hpp): a scalar tensor is 1x1, a 1-d one a single row.
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact {

/// Reads the tensor `name` of a .safetensors file.
Eigen::MatrixXd load_safetensors(const std::filesystem::path& path, const std::string& name);
/// Names of the tensors in a .safetensors file, in header order.
std::vector<std::string> safetensors_names(const std::filesystem::path& path);

}  // namespace sparseact
