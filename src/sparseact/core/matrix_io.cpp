// load_matrix: the --weights flag's FILE[:TENSOR], dispatched to core/npy or core/safetensors.
#include <sparseact/core/matrix_io.hpp>
#include <sparseact/core/binary_input.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>

namespace sparseact {
namespace {

namespace fs = std::filesystem;
using namespace io;

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Eigen::MatrixXd load_matrix(const std::string& spec) {
  if (spec.empty()) throw InputError("weights: empty file name");
  // Paths may contain ':' themselves, so "FILE:TENSOR" is split at the last ':' only when what
  // precedes it names an existing file or a .safetensors file.
  fs::path file = spec;
  std::optional<std::string> tensor;
  if (const auto colon = spec.rfind(':'); colon != std::string::npos && colon > 0) {
    const std::string before = spec.substr(0, colon);
    std::error_code ec;
    if (fs::is_regular_file(before, ec) || lowercase(before).ends_with(".safetensors")) {
      file = before;
      tensor = spec.substr(colon + 1);
      if (tensor->empty()) fail(file, "empty tensor name after ':'");
    }
  }

  InputFile probe(file);  // "no such file" and friends, before any format guess
  const std::string ext = lowercase(file.extension().string());
  bool is_npy = ext == ".npy";
  const bool is_safetensors = ext == ".safetensors";
  if (!is_npy && !is_safetensors) {
    const std::string start = probe.read_string(0, static_cast<std::size_t>(std::min<std::uint64_t>(probe.size(), 6)));
    is_npy = start == "\x93NUMPY";
    if (!is_npy)
      fail(file, "unknown format: expected a .npy file (by extension or magic) or a .safetensors file (by extension)");
  }

  if (is_npy) {
    if (tensor)
      fail(file, fmt::format("a .npy file holds one array; no tensor name ({}) expected", quote_name(*tensor)));
    return load_npy(file);
  }
  if (tensor) return load_safetensors(file, *tensor);
  const std::vector<std::string> names = safetensors_names(file);
  if (names.size() == 1) return load_safetensors(file, names.front());
  if (names.empty()) fail(file, "the file holds no tensors");
  fail(file, fmt::format("the file holds {} tensors; name one as FILE:TENSOR (available: {})", names.size(),
                         name_list(names)));
}

}  // namespace sparseact
