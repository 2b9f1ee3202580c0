#pragma once
// Shared by the binary readers (core/npy, core/safetensors, nn/idx): one-line InputError messages
// that name the file whatever bytes it or its path holds, overflow-checked sizes, opening a file
// whose size is known before anything is read (what makes validation before allocation possible),
// and, for the two array formats, random-access reads checked against that size and the decoding
// of float16/bfloat16/float32/float64 elements of either byte order into a matrix.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace sparseact::io {

/// `s` with control characters escaped as \xNN (UTF-8 passes through), cut to `max_len` plus "...".
std::string printable(std::string_view s, std::size_t max_len = std::string_view::npos);

/// 's', escaped and cut to 80 characters: a name taken from a file or the user, for a message.
std::string quote_name(std::string_view s);

/// The first `shown` names, escaped, comma-separated, then ", ... (N more)" for the rest.
std::string name_list(const std::vector<std::string>& names, std::size_t shown = 10);

/// Throws InputError("FILE: what").
[[noreturn]] void fail(const std::filesystem::path& file, std::string_view what);

/// a·b, or nothing when it overflows 64 bits.
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);
/// factor · Π dims, or nothing when it overflows 64 bits.
std::optional<std::uint64_t> checked_product(const std::vector<std::uint64_t>& dims, std::uint64_t factor);

/// Opens `path` (a regular file) for binary reading into `in`; returns its size in bytes. Missing
/// files, folders and unreadable files fail with a one-line InputError naming the path.
std::uint64_t open_regular_file(const std::filesystem::path& path, std::ifstream& in);

/// A file opened for random-access reads whose every read is checked against its size.
class InputFile {
 public:
  explicit InputFile(const std::filesystem::path& path);
  const std::filesystem::path& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  /// n bytes at `offset` into dst; InputError past the end or when the read fails.
  void read(std::uint64_t offset, void* dst, std::size_t n);
  std::string read_string(std::uint64_t offset, std::size_t n);

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
};

// Element types and their conversion to double. Loads assemble bytes explicitly, so they are
// correct for either byte order of file and host.

enum class Scalar { f16, bf16, f32, f64 };

struct Dtype {
  Scalar scalar;
  bool big_endian;
  std::size_t size;
  std::string name;  ///< as the format spells it, for messages
};

/// The n-byte unsigned integer at p, in the given byte order.
std::uint64_t load_uint(const unsigned char* p, std::size_t n, bool big_endian);

/// Reads rows*cols elements starting at `offset` into a column-major matrix. The caller has
/// checked that the bytes exist; `row_major` says in which order the file lists them.
Eigen::MatrixXd read_matrix(InputFile& file, std::uint64_t offset, const Dtype& t, Eigen::Index rows, Eigen::Index cols,
                            bool row_major);

/// Fills `n` bytes at `dst` with the array's bytes from byte `pos` of its data on. read_matrix asks
/// for consecutive ranges in increasing order, so a source may be a stream (an inflating .npz member).
using ByteSource = std::function<void(std::uint64_t pos, void* dst, std::size_t n)>;

/// read_matrix over any source of the array's bytes (byte 0: the first element).
Eigen::MatrixXd read_matrix(const ByteSource& source, const Dtype& t, Eigen::Index rows, Eigen::Index cols,
                            bool row_major);

/// Shapes of rank 0, 1, 2 as a matrix: a scalar is 1x1, a vector one row.
std::pair<Eigen::Index, Eigen::Index> matrix_shape(const std::vector<std::uint64_t>& shape);

/// Whether JSON `text` nests no deeper than `limit` brackets: checked before nlohmann builds a
/// document, since a header of a million '[' would otherwise cost far more memory than the file.
bool json_nesting_within(std::string_view text, int limit);

/// The dimensions joined by `sep`.
std::string join_dims(const std::vector<std::uint64_t>& shape, std::string_view sep);

/// Checks common to both array formats: the rank, and dimensions that fit Eigen's signed index
/// (only binding for empty arrays; otherwise the file's size bounds them). `subject` names the array.
void check_matrix_shape(const std::filesystem::path& file, const std::string& subject,
                        const std::vector<std::uint64_t>& shape, const std::string& shape_text);

}  // namespace sparseact::io
