#pragma once
// Loading weight matrices from real checkpoints: NumPy .npy (float32/float64, C and Fortran order)
// and .safetensors (by tensor name). Malformed files raise InputError with a one-line message that
// names the file and what is wrong; nothing here aborts or reads out of bounds.
// Shapes: a 0-d array or scalar tensor is 1x1, a 1-d one a single row, more than 2 dimensions is
// an error. An array with a zero dimension is not an error: it loads as an empty matrix of that
// shape (0xk, kx0, or 1x0 for an empty vector).
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact {

/// Reads a 2-d (or 1-d, as one row) float32/float64 array; values are converted to double.
Eigen::MatrixXd load_npy(const std::filesystem::path& path);
/// Writes a float64 C-order .npy, atomically (temporary file, then rename).
void save_npy(const std::filesystem::path& path, const Eigen::MatrixXd& m);

/// Reads the tensor `name` (F32, F64, F16 or BF16; 1-d or 2-d) of a .safetensors file.
Eigen::MatrixXd load_safetensors(const std::filesystem::path& path, const std::string& name);
/// Names of the tensors in a .safetensors file, in header order.
std::vector<std::string> safetensors_names(const std::filesystem::path& path);

/// "FILE" or "FILE:TENSOR" (the --weights flag): .npy by extension or magic, .safetensors by
/// extension; a safetensors file with a single tensor needs no name.
Eigen::MatrixXd load_matrix(const std::string& spec);

}  // namespace sparseact
