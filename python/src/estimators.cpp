// estimators.cpp — the library's stochastic estimators on a Python operator: any callable that maps a
// float64 vector x ∈ R^n to A x (a PyTorch Hessian-vector-product closure, a scipy LinearOperator's
// matvec, a numpy matrix product). The estimators are the C++ templates themselves, run on an operator
// that calls back into Python, so seeds, probes, stopping rule and intervals are the C++ ones: the same
// seed gives the same probes, hence the same estimate, as estimators::hutchinson on a C++ operator.
//
// The GIL is released for the estimator's own work and taken again for each call of the callable.
// Each call gets a fresh array (the callable may keep it); its result must be a float64 array of the
// right shape with finite entries (numpy.asarray is applied first, so a CPU torch tensor works), else
// ValueError. An exception raised by the callable ends the estimate and propagates unchanged.
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <sparseact/core/estimators/hutchinson.hpp>
#include <sparseact/core/estimators/hutchpp.hpp>
#include <sparseact/core/estimators/slq.hpp>
#include <sparseact/core/estimators/top_eigenvalues.hpp>

#include "arrays.hpp"

namespace sparseact::python {

namespace est = sparseact::estimators;
using namespace pybind11::literals;

namespace {

/// A Python callable as an operator (docs/DESIGN.md, Operators and estimators): perform_op calls it on one
/// vector. Holds a reference to the callable; every use of it happens with the GIL held.
class PyOperator {
 public:
  PyOperator(py::function f, Eigen::Index n) : f_(std::move(f)), n_(n) {}
  Eigen::Index rows() const { return n_; }
  Eigen::Index cols() const { return n_; }

  void perform_op(const double* x, double* y) const {
    py::gil_scoped_acquire gil;
    py::array_t<double> xa(n_);
    std::memcpy(xa.mutable_data(), x, sizeof(double) * static_cast<std::size_t>(n_));
    read_result(f_(xa), y, 1);
  }

 protected:
  /// The callable's result, checked, into y (n × k column-major; a 1-D result when k == 1 and not block).
  void read_result(const py::object& r, double* y, Eigen::Index k, bool block = false) const {
    const py::array a = py::array::ensure(r);
    if (!a) throw py::value_error(std::string("matvec: returned a ") + Py_TYPE(r.ptr())->tp_name + ", not an array of float64");
    if (a.dtype().num() != py::dtype::of<double>().num())
      throw py::value_error("matvec: must return float64, got " + std::string(py::str(a.dtype())));
    const bool ok = block ? (a.ndim() == 2 && a.shape(0) == n_ && a.shape(1) == k) : (a.ndim() == 1 && a.shape(0) == n_);
    if (!ok)
      throw py::value_error("matvec: returned shape " + shape_text(a) + ", expected " +
                            (block ? "(" + std::to_string(n_) + ", " + std::to_string(k) + ")" : "(" + std::to_string(n_) + ",)"));
    if (block) {
      const auto v = a.unchecked<double, 2>();
      for (Eigen::Index j = 0; j < k; ++j)
        for (Eigen::Index i = 0; i < n_; ++i) y[j * n_ + i] = v(i, j);
    } else {
      const auto v = a.unchecked<double, 1>();
      for (Eigen::Index i = 0; i < n_; ++i) y[i] = v(i);
    }
    for (Eigen::Index i = 0; i < n_ * k; ++i)
      if (!std::isfinite(y[i])) throw py::value_error("matvec: returned NaN or infinity (entry " + std::to_string(i) + ")");
  }

  py::function f_;
  Eigen::Index n_;
};

/// The same operator when the callable takes an n × k block of vectors at once (block=True): one call
/// per batch of probes, X as a Fortran-ordered n × k array.
class PyBlockOperator : public PyOperator {
 public:
  using PyOperator::PyOperator;
  void perform_op_block(const double* X, double* Y, Eigen::Index k) const {
    py::gil_scoped_acquire gil;
    py::array_t<double, py::array::f_style> xa({py::ssize_t(n_), py::ssize_t(k)});
    std::memcpy(xa.mutable_data(), X, sizeof(double) * static_cast<std::size_t>(n_ * k));
    read_result(f_(xa), Y, k, true);
  }
};

Eigen::Index size_arg(long n) {
  if (n < 1) throw py::value_error("n: the operator's size must be ≥ 1, got " + std::to_string(n));
  return n;
}

/// Runs fn(op) on the right operator type with the GIL released.
template <class Fn>
auto with_operator(const py::function& matvec, long n, bool block, Fn&& fn) {
  const Eigen::Index size = size_arg(n);
  if (block) {
    const PyBlockOperator op(matvec, size);
    py::gil_scoped_release release;
    return fn(op);
  }
  const PyOperator op(matvec, size);
  py::gil_scoped_release release;
  return fn(op);
}

est::TraceOptions trace_options(std::uint64_t seed, std::uint64_t stream, long batch, long min_samples, long max_samples, double alpha,
                                double abs_tol, double rel_tol, bool keep_history) {
  if (batch < 1) throw py::value_error("batch: must be ≥ 1");
  if (min_samples < 2) throw py::value_error("min_samples: must be ≥ 2");
  if (max_samples < min_samples) throw py::value_error("max_samples: must be ≥ min_samples");
  if (!(alpha > 0 && alpha < 1)) throw py::value_error("alpha: must lie in (0, 1)");
  if (!(abs_tol >= 0) || !std::isfinite(abs_tol)) throw py::value_error("abs_tol: must be finite and ≥ 0");
  if (!(rel_tol >= 0) || !std::isfinite(rel_tol)) throw py::value_error("rel_tol: must be finite and ≥ 0");
  est::TraceOptions o;
  o.seed = seed;
  o.stream = stream;
  o.batch = batch;
  o.stop.min_samples = min_samples;
  o.stop.max_samples = max_samples;
  o.stop.alpha = alpha;
  o.stop.abs_tol = abs_tol;
  o.stop.rel_tol = rel_tol;
  o.keep_history = keep_history;
  return o;
}

constexpr const char* kMatvecDoc = R"(
    matvec: a callable taking a float64 array x of shape (n,) and returning A x, shape (n,), float64
    (with block=True it takes and returns n × k arrays, k probes at once). A is assumed symmetric.)";

}  // namespace

void bind_estimators(py::module_& m) {
  py::class_<est::SegmentTrace>(m, "SegmentTrace", "One segment's trace tr(A_ll) from the same probes as the whole.")
      .def_readonly("name", &est::SegmentTrace::name)
      .def_readonly("estimate", &est::SegmentTrace::estimate)
      .def_readonly("std_error", &est::SegmentTrace::std_error)
      .def_readonly("half_width", &est::SegmentTrace::half_width);

  py::class_<est::TraceEstimate>(m, "TraceEstimate", "A trace estimate with its standard error and (1 − α) Student-t interval.")
      .def_readonly("estimate", &est::TraceEstimate::estimate)
      .def_readonly("std_error", &est::TraceEstimate::std_error, "of the stochastic part (Hutch++: the deflated part)")
      .def_readonly("half_width", &est::TraceEstimate::half_width, "of the (1 − α) interval, Student-t quantile")
      .def_property_readonly("interval", [](const est::TraceEstimate& t) { return py::make_tuple(t.estimate - t.half_width, t.estimate + t.half_width); },
                             "(estimate − half_width, estimate + half_width)")
      .def_readonly("probes", &est::TraceEstimate::probes)
      .def_readonly("matvecs", &est::TraceEstimate::matvecs)
      .def_readonly("converged", &est::TraceEstimate::converged, "the stopping rule fired (False: max_samples reached or a fixed budget)")
      .def_readonly("exact_part", &est::TraceEstimate::exact_part, "Hutch++: tr(QᵀAQ); Hutchinson: 0")
      .def_readonly("sample_variance", &est::TraceEstimate::sample_variance)
      .def_property_readonly("history",
                             [](const est::TraceEstimate& t) {
                               py::list l;
                               for (const auto& s : t.history) l.append(py::make_tuple(s.probes, s.estimate, s.std_error, s.half_width));
                               return l;
                             },
                             "per batch (probes, estimate, std_error, half_width), when keep_history")
      .def_readonly("segments", &est::TraceEstimate::segments)
      .def("__repr__", [](const est::TraceEstimate& t) {
        return "TraceEstimate(estimate=" + std::to_string(t.estimate) + ", half_width=" + std::to_string(t.half_width) +
               ", probes=" + std::to_string(t.probes) + ")";
      });

  m.def(
      "hutchinson_trace",
      [](const py::function& matvec, long n, std::uint64_t seed, std::uint64_t stream, long batch, long min_samples, long max_samples,
         double alpha, double abs_tol, double rel_tol, bool block, bool keep_history,
         const std::vector<std::tuple<std::string, long, long>>& segments) {
        const est::TraceOptions o = trace_options(seed, stream, batch, min_samples, max_samples, alpha, abs_tol, rel_tol, keep_history);
        std::vector<ops::Segment> segs;
        for (const auto& [name, offset, size] : segments) {
          if (offset < 0 || size < 1 || offset + size > n)
            throw py::value_error("segments: '" + name + "' (offset " + std::to_string(offset) + ", size " + std::to_string(size) +
                                  ") does not lie in [0, n)");
          segs.push_back({offset, size, name});
        }
        return with_operator(matvec, n, block, [&](const auto& op) {
          return segs.empty() ? est::hutchinson(op, o) : est::hutchinson(op, segs, o);
        });
      },
      "matvec"_a, "n"_a, py::kw_only(), "seed"_a = 0, "stream"_a = 0, "batch"_a = 8, "min_samples"_a = 10, "max_samples"_a = 1000,
      "alpha"_a = 0.05, "abs_tol"_a = 0.0, "rel_tol"_a = 1e-2, "block"_a = false, "keep_history"_a = false,
      "segments"_a = std::vector<std::tuple<std::string, long, long>>{},
      (std::string(R"(tr(A) by Hutchinson's estimator (Hutchinson 1990), the measure of flatness of paper 001 §3.4 when A is
a network's Hessian. Rademacher probe j is drawn from Rng(seed, stream_id(stream, j)), as in C++.
Stopping rule: stop once the (1 − alpha) Student-t half-width ≤ max(abs_tol, rel_tol·|estimate|),
with at least min_samples probes, or at max_samples. segments: (name, offset, size) triples; each
gets tr(A_ll) from the same probes. Returns a TraceEstimate.)") + kMatvecDoc).c_str());

  m.def(
      "hutchpp",
      [](const py::function& matvec, long n, long matvecs, std::uint64_t seed, std::uint64_t stream, long batch, double alpha, bool block) {
        if (matvecs < 4) throw py::value_error("matvecs: Hutch++ needs at least 4 products, got " + std::to_string(matvecs));
        const est::TraceOptions o = trace_options(seed, stream, batch, 2, 2, alpha, 0, 0, false);
        return with_operator(matvec, n, block, [&](const auto& op) { return est::hutchpp(op, matvecs, o); });
      },
      "matvec"_a, "n"_a, "matvecs"_a, py::kw_only(), "seed"_a = 0, "stream"_a = 0, "batch"_a = 8, "alpha"_a = 0.05, "block"_a = false,
      (std::string(R"(tr(A) by Hutch++ (Meyer, Musco, Musco & Woodruff 2021) with a fixed budget of `matvecs` products: a
sketch of k = matvecs/3 columns, tr(QᵀAQ) exactly, Hutchinson on the deflated rest. Returns a TraceEstimate
(std_error and interval of the deflated part).)") + kMatvecDoc).c_str());

  m.def(
      "hutchpp_adaptive",
      [](const py::function& matvec, long n, long sketch, std::uint64_t seed, std::uint64_t stream, long batch, long min_samples,
         long max_samples, double alpha, double abs_tol, double rel_tol, bool block) {
        if (sketch < 0) throw py::value_error("sketch: must be ≥ 0");
        const est::TraceOptions o = trace_options(seed, stream, batch, min_samples, max_samples, alpha, abs_tol, rel_tol, false);
        return with_operator(matvec, n, block, [&](const auto& op) { return est::hutchpp_adaptive(op, sketch, o); });
      },
      "matvec"_a, "n"_a, "sketch"_a, py::kw_only(), "seed"_a = 0, "stream"_a = 0, "batch"_a = 8, "min_samples"_a = 10,
      "max_samples"_a = 1000, "alpha"_a = 0.05, "abs_tol"_a = 0.0, "rel_tol"_a = 1e-2, "block"_a = false,
      (std::string("Hutch++ with a given sketch size, the deflated part under Hutchinson's stopping rule.") + kMatvecDoc).c_str());

  py::class_<est::Slq>(m, "Slq", "Stochastic Lanczos quadrature: one Gauss rule (Ritz values, weights) per probe.")
      .def_readonly("n", &est::Slq::n)
      .def_readonly("matvecs", &est::Slq::matvecs)
      .def_property_readonly("probes", &est::Slq::probes)
      .def_property_readonly("quadrature",
                             [](const est::Slq& s) {
                               py::list l;
                               for (const est::Ritz& q : s.quadrature) l.append(py::make_tuple(q.values, q.weights));
                               return l;
                             },
                             "per probe (Ritz values θ_i, weights τ_i²)")
      .def(
          "trace",
          [](const est::Slq& s, const std::function<double(double)>& f, double alpha) {
            if (!(alpha > 0 && alpha < 1)) throw py::value_error("alpha: must lie in (0, 1)");
            return est::slq_trace(s, f, alpha);
          },
          "f"_a, "alpha"_a = 0.05, "tr f(A) ≈ n · mean over probes of Σ_i τ_i² f(θ_i), with its standard error across probes")
      .def(
          "density",
          [](const est::Slq& s, const py::object& grid, long points, double sigma) {
            if (!(sigma > 0) || !std::isfinite(sigma)) throw py::value_error("sigma: must be finite and > 0");
            const est::SpectralDensity d = grid.is_none() ? est::slq_density(s, Eigen::Index(points), sigma)
                                                          : est::slq_density(s, vector_arg(grid, "grid"), sigma);
            return py::dict("grid"_a = d.grid, "density"_a = d.density, "std_error"_a = d.std_error, "sigma"_a = d.sigma,
                            "probes"_a = d.probes);
          },
          "grid"_a = py::none(), "points"_a = 200, "sigma"_a = 0.01,
          "the SLQ density broadened by N(0, σ²) on `grid` (or `points` points around the nodes), with its standard error");

  m.def(
      "slq",
      [](const py::function& matvec, long n, long probes, long steps, const std::string& probe, std::uint64_t seed, std::uint64_t stream,
         long batch, bool block) {
        est::SlqOptions o;
        if (probes < 1) throw py::value_error("probes: must be ≥ 1");
        if (steps < 1 || steps > n) throw py::value_error("steps: must lie in [1, n]");
        if (batch < 1) throw py::value_error("batch: must be ≥ 1");
        if (probe == "rademacher") o.probe = est::ProbeKind::rademacher;
        else if (probe == "gaussian") o.probe = est::ProbeKind::gaussian;
        else throw py::value_error("probe: '" + probe + "' is not one of rademacher, gaussian");
        o.probes = probes;
        o.steps = steps;
        o.seed = seed;
        o.stream = stream;
        o.batch = batch;
        return with_operator(matvec, n, block, [&](const auto& op) { return est::slq(op, o); });
      },
      "matvec"_a, "n"_a, py::kw_only(), "probes"_a = 16, "steps"_a = 30, "probe"_a = "rademacher", "seed"_a = 0, "stream"_a = 0,
      "batch"_a = 8, "block"_a = false,
      (std::string(R"(Stochastic Lanczos quadrature (Lin, Saad & Yang 2016; PyHessian's spectral density, paper 001 §3.4's
Hessian): `steps` Lanczos steps from each of `probes` unit probes. Returns an Slq; Slq.trace(f) and
Slq.density(...) read it.)") + kMatvecDoc).c_str());

  py::class_<est::TopEigen>(m, "TopEigen", "The k largest eigenvalues of a symmetric operator (Spectra's restarted Lanczos).")
      .def_readonly("values", &est::TopEigen::values, "largest first")
      .def_readonly("vectors", &est::TopEigen::vectors, "n × k unit eigenvectors, when asked")
      .def_readonly("iterations", &est::TopEigen::iterations)
      .def_readonly("matvecs", &est::TopEigen::matvecs);

  m.def(
      "top_eigenvalues",
      [](const py::function& matvec, long n, long k, bool by_magnitude, double tol, bool vectors, long ncv, long max_iterations, bool block) {
        if (k < 1 || k >= n) throw py::value_error("k: must lie in [1, n − 1], got " + std::to_string(k));
        if (!(tol > 0) || !std::isfinite(tol)) throw py::value_error("tol: must be finite and > 0");
        if (ncv != 0 && (ncv <= k || ncv > n)) throw py::value_error("ncv: must be 0 (automatic) or lie in (k, n]");
        if (max_iterations < 1) throw py::value_error("max_iterations: must be ≥ 1");
        est::TopEigenOptions o;
        o.by_magnitude = by_magnitude;
        o.tol = tol;
        o.vectors = vectors;
        o.ncv = ncv;
        o.max_iterations = max_iterations;
        return with_operator(matvec, n, block, [&](const auto& op) { return est::top_eigenvalues(op, k, o); });
      },
      "matvec"_a, "n"_a, "k"_a = 1, py::kw_only(), "by_magnitude"_a = false, "tol"_a = 1e-10, "vectors"_a = false, "ncv"_a = 0,
      "max_iterations"_a = 5000, "block"_a = false,
      (std::string(R"(The k largest eigenvalues (by value, or by magnitude as PyHessian's power iteration) of a symmetric
operator by Spectra's implicitly restarted Lanczos: a network's sharpest directions from
Hessian-vector products alone (paper 001 §3.4). Returns a TopEigen.)") + kMatvecDoc).c_str());
}

}  // namespace sparseact::python
