#pragma once
// Weight matrices from real checkpoints, whichever the format: the --weights flag's FILE[:TENSOR].
// The formats themselves are core/npy.hpp and core/safetensors.hpp (included here, so this header
// is all a user of weight files needs).
#include <string>

#include <Eigen/Core>

#include <sparseact/core/npy.hpp>
#include <sparseact/core/safetensors.hpp>

namespace sparseact {

/// "FILE" or "FILE:TENSOR" (the --weights flag): .npy by extension or magic, .safetensors by
/// extension; a safetensors file with a single tensor needs no name. Malformed files and specs
/// raise InputError with a one-line message naming the file.
Eigen::MatrixXd load_matrix(const std::string& spec);

}  // namespace sparseact
