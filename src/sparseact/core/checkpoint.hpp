#pragma once
// Whole checkpoints as lists of tensors, read one tensor at a time (issue 16).
//
// A checkpoint is one of
//   - a .safetensors file;
//   - a sharded model: its model.safetensors.index.json ({"weight_map": {tensor: shard file}}), the
//     shards beside it;
//   - a .npz archive (np.savez: stored entries; np.savez_compressed: deflated entries, inflated by zlib);
//   - a .npy file (one tensor, named after the file's stem);
//   - a folder holding one of these: the index when there is one, else every .safetensors file (in
//     name order), else every .npz and .npy file (in name order).
// open_checkpoint validates every header, every entry and every shard before anything is loaded, so a
// bad checkpoint fails before any work (InputError, one line naming the file and the tensor): truncated
// files, header sizes beyond the file, malformed JSON, offsets out of bounds or overlapping, an index
// naming a missing shard or a tensor its shard lacks, a folder with no weights. Unknown dtypes are
// listed (TensorInfo::loadable = false), not an error: a checkpoint's integer buffers are not layers;
// load_tensor refuses them.
//
// Memory: open_checkpoint reads headers only. load_tensor reads one tensor's bytes in bounded chunks
// straight into the result (core/binary_input.hpp), so analysing a checkpoint tensor by tensor costs the
// largest tensor plus a small buffer, whatever the file's size. A deflated .npz member is inflated
// once to prove its size and CRC-32 before the matrix is allocated, then again into it: no file
// makes the reader allocate more than a small multiple of the bytes it has read and checked (issue
// 26). Every .npz member's CRC-32 is verified, as numpy's reader does.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace sparseact {

struct TensorInfo {
  std::string name;                  ///< as the checkpoint names it ("encoder.layer.0.attention.self.query.weight")
  std::vector<std::uint64_t> shape;  ///< as stored (row-major dimensions: out, in, kh, kw for a conv kernel)
  std::string dtype;                 ///< "F64", "F32", "F16", "BF16", or the file's own spelling when not loadable
  bool loadable = false;             ///< dtype is one of F64, F32, F16, BF16
  std::filesystem::path file;        ///< the file holding the data (the shard, the .npz, the .npy)
  // Where the data are, for load_tensor; filled by open_checkpoint.
  std::uint64_t offset = 0;          ///< first byte of the data (of the compressed stream when `deflated`)
  std::uint64_t stored_bytes = 0;    ///< bytes at `offset` (compressed size when `deflated`)
  bool deflated = false;             ///< a deflated .npz member holding a whole .npy file
  bool fortran_order = false;        ///< .npy column-major data
  bool big_endian = false;           ///< .npy '>' byte order
  // .npz members: the archive directory's record of the whole member (.npy header and data), which
  // load_tensor checks before it allocates (deflated) or as it reads (stored).
  bool npz_member = false;
  std::uint64_t member_offset = 0;   ///< first byte of the member's bytes as stored (compressed when `deflated`)
  std::uint64_t member_size = 0;     ///< the member's size once inflated (its stored size when not deflated)
  std::uint32_t crc32 = 0;           ///< the member's CRC-32, as the directory records it
};

struct Checkpoint {
  std::filesystem::path source;      ///< the path as given
  std::string format;                ///< "safetensors", "safetensors-sharded", "npz", "npy", or "folder of …"
  std::vector<std::filesystem::path> files;  ///< every file read (shards in name order)
  std::vector<TensorInfo> tensors;   ///< shards in name order, each in its header's order
};

/// Reads every header of the checkpoint at `path` (file or folder) and validates it; loads no tensor data.
Checkpoint open_checkpoint(const std::filesystem::path& path);

/// The tensor's values, converted exactly to double, as a rows × cols matrix with rows = shape[0] and
/// cols = the product of the other dimensions (row-major flattening: a conv kernel out × in × kh × kw
/// becomes out × (in·kh·kw), element (o, (i·kh + k)·kw + l)). A 0-d tensor is 1 × 1, a 1-d one 1 × n.
/// InputError for a dtype that is not loadable or data that went missing since open_checkpoint.
Eigen::MatrixXd load_tensor(const TensorInfo& tensor);

/// "model-00001-of-00002.safetensors: encoder.layer.0.attention.self.query.weight" style subject for messages.
std::string describe(const TensorInfo& tensor);

}  // namespace sparseact
