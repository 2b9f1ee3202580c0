#pragma once
// Stand-in for xeus-cling's `xcpp::display` when tests/notebook/run_notebook.py runs a notebook's
// cells under clang-repl (docs/DESIGN.md, Notebooks). Like xeus-cling, it finds `mime_bundle_repr` by
// argument-dependent lookup; instead of sending the bundle to a Jupyter frontend it prints one
// line, e.g.
//   DISPLAY image/png 41234 image/svg+xml 18311
// (each MIME type with the size of its payload in bytes), so the runner can check that a figure
// was produced. A failure prints a line with "error:", which the runner treats as a failed cell.
#include <exception>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

namespace xcpp {

template <class T>
void display(const T& x) {
  try {
    const nlohmann::json bundle = mime_bundle_repr(x);
    std::string line = "DISPLAY";
    for (auto it = bundle.begin(); it != bundle.end(); ++it) {
      const std::size_t bytes = it.value().is_string() ? it.value().template get_ref<const std::string&>().size()
                                                       : it.value().dump().size();
      line += " " + it.key() + " " + std::to_string(bytes);
    }
    std::cout << line << std::endl;
  } catch (const std::exception& e) {
    std::cout << "error: xcpp::display: " << e.what() << std::endl;
  }
}

}  // namespace xcpp
