#pragma once
// NumPy .npy files: float32/float64 arrays in C or Fortran order, either byte order, format
// versions 1.0 to 3.0. Malformed files raise InputError with a one-line message that names the file
// and what is wrong; nothing here aborts or reads out of bounds.
// Shapes: a 0-d array is 1x1, a 1-d one a single row, more than 2 dimensions is an error. An array
// with a zero dimension is not an error: it loads as an empty matrix of that shape (0xk, kx0, or
// 1x0 for an empty vector).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/binary_input.hpp>

namespace sparseact {

/// Reads a 2-d (or 1-d, as one row) float32/float64 array; values are converted to double.
Eigen::MatrixXd load_npy(const std::filesystem::path& path);
/// Writes a float64 C-order .npy, atomically (temporary file, then rename).
void save_npy(const std::filesystem::path& path, const Eigen::MatrixXd& m);

// The header alone, for readers of whole checkpoints (core/checkpoint.hpp), where a .npy is also
// a member of an .npz archive: stored in place at some offset, or deflated.

struct NpyHeader {
  std::string descr;                 ///< the dtype as written ('<f4'), or "structured" for record arrays
  std::optional<io::Dtype> dtype;    ///< float16/32/64 of either byte order; nothing for other types
  std::optional<std::uint64_t> item_size;  ///< bytes per element where descr states it ('<i8': 8)
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;  ///< any rank
  std::string shape_text;            ///< Python's spelling, for messages
  std::uint64_t data_offset = 0;     ///< first data byte, counted from the start of the .npy bytes
};

/// Parses the header of .npy bytes `size` long, read through `read` (positions counted from their
/// start; the parser reads at most the first 12 bytes and then the header). Messages are
/// "FILE: {subject}what", so `subject` ("member 'x.npy': ") places the bytes inside the file.
/// Unsupported dtypes are not an error here (dtype stays empty); malformed headers are.
NpyHeader read_npy_header(const std::filesystem::path& file, const std::string& subject, std::uint64_t size,
                          const io::ByteSource& read);

/// InputError unless the data after the header hold exactly shape × item size bytes (when the
/// item size is known). `size`: all the .npy bytes, header included.
void check_npy_data_size(const std::filesystem::path& file, const std::string& subject, const NpyHeader& h,
                         std::uint64_t size);

}  // namespace sparseact
