// arrays.hpp — what the Python module's bindings share (python/, not the library): checking numpy
// arguments and turning them into the Eigen types the library's functions take.
//
// A numpy argument must be a numpy.ndarray of float64 with the expected number of dimensions, C- or
// Fortran-contiguous, non-empty and finite; otherwise ValueError names the argument and what was wrong
// (a non-contiguous slice is refused rather than copied silently: np.ascontiguousarray makes the copy
// explicit). The library's functions take `const Eigen::MatrixXd&`, so a checked array is read once
// into that matrix, in its own order (a Fortran array is copied as it lies, a C array as the
// transpose of a row-major map); results go back as numpy arrays that own the Eigen storage (moved,
// not copied).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <Eigen/Core>

namespace sparseact::python {

namespace py = pybind11;

inline std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  if (a.ndim() == 1) s += ",";
  return s + ")";
}

/// The argument as a checked float64 array of `ndim` dimensions (1 or 2); ValueError otherwise.
inline py::array checked_array(const py::handle& obj, const char* name, int ndim, bool finite = true) {
  if (!py::isinstance<py::array>(obj))
    throw py::value_error(std::string(name) + ": expected a numpy.ndarray of float64, got " +
                          std::string(Py_TYPE(obj.ptr())->tp_name));
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (a.dtype().num() != py::dtype::of<double>().num() || a.dtype().kind() != 'f' || a.itemsize() != 8 ||
      !a.dtype().attr("isnative").cast<bool>())
    throw py::value_error(std::string(name) + ": dtype must be float64, got " + std::string(py::str(a.dtype())) +
                          " (convert with numpy.asarray(" + name + ", dtype=numpy.float64))");
  if (a.ndim() != ndim)
    throw py::value_error(std::string(name) + ": expected a " + std::to_string(ndim) + "-D array, got shape " + shape_text(a));
  if (a.size() == 0) throw py::value_error(std::string(name) + ": empty array, shape " + shape_text(a));
  const bool c = (a.flags() & py::array::c_style) != 0, f = (a.flags() & py::array::f_style) != 0;
  if (!c && !f)
    throw py::value_error(std::string(name) + ": not contiguous (a strided view such as x[:, ::2], shape " + shape_text(a) +
                          "); pass numpy.ascontiguousarray(" + name + ")");
  if (finite) {
    const double* p = static_cast<const double*>(a.data());
    for (py::ssize_t i = 0; i < a.size(); ++i)
      if (!std::isfinite(p[i]))
        throw py::value_error(std::string(name) + ": contains NaN or infinity (entry " + std::to_string(i) + " in memory order)");
  }
  return a;
}

/// A float64 matrix argument (C or Fortran order) as an Eigen matrix.
inline Eigen::MatrixXd matrix_arg(const py::handle& obj, const char* name, bool finite = true) {
  const py::array a = checked_array(obj, name, 2, finite);
  const auto rows = static_cast<Eigen::Index>(a.shape(0)), cols = static_cast<Eigen::Index>(a.shape(1));
  const double* p = static_cast<const double*>(a.data());
  if (a.flags() & py::array::f_style) return Eigen::Map<const Eigen::MatrixXd>(p, rows, cols);
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return Eigen::Map<const RowMajor>(p, rows, cols);
}

/// A float64 vector argument as an Eigen vector.
inline Eigen::VectorXd vector_arg(const py::handle& obj, const char* name, bool finite = true) {
  const py::array a = checked_array(obj, name, 1, finite);
  return Eigen::Map<const Eigen::VectorXd>(static_cast<const double*>(a.data()), static_cast<Eigen::Index>(a.shape(0)));
}

/// A finite scalar argument; ValueError naming it otherwise.
inline double finite_arg(double x, const char* name) {
  if (!std::isfinite(x)) throw py::value_error(std::string(name) + ": must be finite, got " + std::to_string(x));
  return x;
}

/// Registration of each part of the module (one source file each).
void bind_spectral(py::module_& m);
void bind_estimators(py::module_& m);
void bind_routing(py::module_& m);
void bind_lsh(py::module_& m);

}  // namespace sparseact::python
