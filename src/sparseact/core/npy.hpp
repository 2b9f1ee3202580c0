#pragma once
// NumPy .npy files: float32/float64 arrays in C or Fortran order, either byte order, format
// versions 1.0 to 3.0. Malformed files raise InputError with a one-line message that names the file
// and what is wrong; nothing here aborts or reads out of bounds.
// Shapes: a 0-d array is 1x1, a 1-d one a single row, more than 2 dimensions is an error. An array
// with a zero dimension is not an error: it loads as an empty matrix of that shape (0xk, kx0, or
// 1x0 for an empty vector).
#include <filesystem>

#include <Eigen/Core>

namespace sparseact {

/// Reads a 2-d (or 1-d, as one row) float32/float64 array; values are converted to double.
Eigen::MatrixXd load_npy(const std::filesystem::path& path);
/// Writes a float64 C-order .npy, atomically (temporary file, then rename).
void save_npy(const std::filesystem::path& path, const Eigen::MatrixXd& m);

}  // namespace sparseact
