#pragma once
// Reading IDX files (LeCun's MNIST format, also Fashion-MNIST's), plain or gzip-compressed, and
// the Fashion-MNIST data set that Debian's `dataset-fashion-mnist` installs.
//
// IDX layout: two zero bytes, a type code (0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32,
// 0x0E f64), the number of dimensions, then one big-endian u32 per dimension, then the elements,
// big-endian, in row-major order (the last dimension varies fastest).
//
// Malformed files raise InputError with a one-line message that names the file. Sizes come from
// an untrusted header: for a plain file the promised data size must equal what follows the header
// exactly; for a gzip file (detected by its magic, not its name) the promised size must be within
// what deflate can expand the compressed bytes to (at most 1032:1), the data must end exactly
// where the header says and the gzip checksum must hold. Nothing is allocated before these checks
// that is larger than the file could justify.
//
// Paper 001 §8.5 trains on MNIST; this toolkit uses Fashion-MNIST as its stand-in (same shape:
// 28×28 grey-scale images, 10 classes), and analyses say so in their outputs.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact::nn {

/// Element type codes of the IDX format.
enum class IdxType : std::uint8_t { u8 = 0x08, i8 = 0x09, i16 = 0x0B, i32 = 0x0C, f32 = 0x0D, f64 = 0x0E };

/// Bytes per element of `type`.
std::size_t idx_type_size(IdxType type) noexcept;
/// "u8", "i8", "i16", "i32", "f32", "f64".
const char* to_string(IdxType type) noexcept;

/// A whole IDX file: its element type, its dimensions and its elements, row-major, as doubles
/// (every IDX type converts to double exactly).
struct IdxArray {
  IdxType type = IdxType::u8;
  std::vector<std::uint64_t> dims;
  Eigen::VectorXd values;
};

/// Reads any IDX file, plain or gzip-compressed.
IdxArray read_idx(const std::filesystem::path& path);

/// Images of an IDX file with at least one dimension, N = dims[0] samples of
/// dims[1]·dims[2]·… features each, as a features × N matrix (column j is sample j, its pixels in
/// row-major order). u8 pixels are scaled by 1/255 to [0, 1]; other types are returned as stored.
Eigen::MatrixXd load_idx_images(const std::filesystem::path& path);

/// Labels of a 1-d IDX file of an integer type (u8, i8, i16, i32).
std::vector<int> load_idx_labels(const std::filesystem::path& path);

/// Where Debian's dataset-fashion-mnist puts the files.
inline const char* default_fashion_mnist_dir() noexcept { return "/usr/share/datasets/fashion-mnist"; }

/// The ten class names, by label.
const std::vector<std::string>& fashion_mnist_classes();

/// One split of Fashion-MNIST.
struct FashionMnist {
  Eigen::MatrixXd images;    ///< 784 × N, pixels in [0, 1]
  std::vector<int> labels;   ///< N labels in 0..9
  std::string split;         ///< "train" or "test"
  std::filesystem::path images_file, labels_file;
};

/// Loads split "train" (60000 images) or "test" (10000) from `dir`, which holds the standard file
/// names (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
/// t10k-labels-idx1-ubyte), each plain or with a .gz suffix. Checks that the images are 28×28 u8,
/// the labels u8 in 0..9, and that both files hold the same number of samples. A missing folder or
/// file is an InputError that says to install dataset-fashion-mnist.
FashionMnist load_fashion_mnist(const std::filesystem::path& dir, const std::string& split);
/// The same, from default_fashion_mnist_dir().
FashionMnist load_fashion_mnist(const std::string& split);

}  // namespace sparseact::nn
