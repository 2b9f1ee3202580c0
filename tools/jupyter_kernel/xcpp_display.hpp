#pragma once
// xeus-cling's `xcpp::display` for the clang-repl Jupyter kernel (tools/jupyter_kernel/sparseact_kernel.py,
// docs/DESIGN.md, Notebooks). Like xeus-cling, it finds `mime_bundle_repr(x)` by argument-dependent lookup
// (sparseact::plot::mime_bundle_repr for a Figure: image/png in base64, image/svg+xml). It writes the
// bundle as JSON into the folder the kernel names in SPARSEACT_KERNEL_DISPLAY_DIR and prints one line
//   @@SPARSEACT_DISPLAY@@ <file>
// which the kernel turns into a display_data message. A failure prints "error: xcpp::display: ...",
// which the kernel reports as the cell's error.
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

namespace xcpp {

inline int sparseact_kernel_display_count = 0;

template <class T>
void display(const T& x) {
  try {
    const nlohmann::json bundle = mime_bundle_repr(x);
    const char* dir = std::getenv("SPARSEACT_KERNEL_DISPLAY_DIR");
    if (dir == nullptr) throw std::runtime_error("SPARSEACT_KERNEL_DISPLAY_DIR is not set");
    const std::string path = std::string(dir) + "/display_" + std::to_string(++sparseact_kernel_display_count) + ".json";
    {
      std::ofstream out(path, std::ios::binary);
      out << bundle.dump();
      if (!out) throw std::runtime_error("cannot write " + path);
    }
    std::cout << std::flush << "\n@@SPARSEACT_DISPLAY@@ " << path << std::endl;
  } catch (const std::exception& e) {
    std::cout << std::flush;
    std::cerr << "error: xcpp::display: " << e.what() << std::endl;
  }
}

}  // namespace xcpp
