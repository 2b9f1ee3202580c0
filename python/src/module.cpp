// module.cpp — the Python extension module sparseact._sparseact (issue 31): the library's measurements on
// numpy arrays. The package sparseact (python/sparseact/__init__.py) re-exports it with pure-Python
// helpers (checkpoint_spectra's table, run()).
#include <sparseact/core/errors.hpp>
#include <sparseact/core/version.hpp>

#include "arrays.hpp"

PYBIND11_MODULE(_sparseact, m) {
  namespace py = pybind11;
  m.doc() = "sparseact: measurements of sparsely activated networks (spectra, trace estimators, COMET routing, LSH) on numpy arrays.";
  // The library's bad-input errors are Python's ValueError, with the same one-line message.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const sparseact::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.attr("library_version") = sparseact::version();
  sparseact::python::bind_spectral(m);
  sparseact::python::bind_estimators(m);
  sparseact::python::bind_routing(m);
  sparseact::python::bind_lsh(m);
}
