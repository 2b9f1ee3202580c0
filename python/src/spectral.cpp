// spectral.cpp — sparseact's spectra for Python: the spectrum of K Kᵀ and the Marchenko–Pastur law
// (paper 001 Theorems 1, 5 and 6), a layer's metrics and a whole checkpoint's table (issue 16,
// checkpoint_spectra), computed as the analysis computes them.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include <sparseact/core/blas_threads.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/spectral/checkpoint_layers.hpp>
#include <sparseact/spectral/layer_metrics.hpp>
#include <sparseact/spectral/layer_table.hpp>
#include <sparseact/spectral/marchenko_pastur.hpp>
#include <sparseact/spectral/spectrum.hpp>

#include "arrays.hpp"

namespace sparseact::python {

namespace sp = sparseact::spectral;
using namespace pybind11::literals;

namespace {

sp::EigenSolver parse_solver(const std::string& s) {
  if (s == "automatic") return sp::EigenSolver::automatic;
  if (s == "one_stage") return sp::EigenSolver::one_stage;
  if (s == "two_stage") return sp::EigenSolver::two_stage;
  throw py::value_error("solver: '" + s + "' is not one of automatic, one_stage, two_stage");
}

/// layer_metrics' options from the keyword arguments, each checked as the analysis's flags are.
sp::LayerMetricOptions metric_options(double spike_level, double censor, double mp_level, double ratio_level, double near_zero,
                                      double majority_fraction, const std::string& solver) {
  const auto in = [](double x, double lo, double hi, const char* name) {
    if (!(x >= lo && x <= hi))
      throw py::value_error(std::string(name) + ": " + std::to_string(x) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  in(spike_level, 1e-9, 0.5, "spike_level");
  in(censor, 0.0, 0.45, "censor");
  in(mp_level, 1e-9, 0.5, "mp_level");
  in(ratio_level, 1e-9, 0.5, "ratio_level");
  in(near_zero, 0.0, 1e300, "near_zero");
  in(majority_fraction, 1e-9, 1.0, "majority_fraction");
  sp::LayerMetricOptions o;
  o.mp.spike_level = spike_level;
  o.mp.censor = censor;
  o.mp_level = mp_level;
  o.ratio_level = ratio_level;
  o.near_zero = near_zero;
  o.majority_fraction = majority_fraction;
  o.solver = parse_solver(solver);
  return o;
}

/// One row of checkpoint_spectra's table (layers_json's keys, in its order) as a dict: the numbers as
/// floats with NaN and ±∞ kept (the JSON writes them as null), plus the eigenvalues as an array.
py::dict metrics_dict(const sp::LayerRef& ref, sp::LayerMetrics m) {
  py::dict d;
  d["name"] = ref.name;
  d["block"] = ref.block;
  d["rows"] = ref.rows;
  d["cols"] = ref.cols;
  d["kind"] = sp::to_string(m.kind);
  for (const sp::LayerColumn& c : sp::layer_columns()) d[c.name] = c.get(m);
  d["eigenvalues"] = py::cast(std::move(m.eigenvalues));
  return d;
}

/// The analysis's way for one layer (checkpoint_spectra's spectrum_item, then metrics_of): a non-finite
/// matrix is the non_finite kind, an all-zero one all_zero, otherwise the spectrum on serial BLAS.
sp::LayerMetrics analysis_metrics(const Eigen::MatrixXd& W, const sp::LayerMetricOptions& o) {
  Eigen::VectorXd gram;
  const Eigen::Index m = std::min(W.rows(), W.cols());
  if (!W.allFinite()) gram = Eigen::VectorXd::Constant(m, std::numeric_limits<double>::quiet_NaN());
  else if ((W.array() == 0).all()) gram = Eigen::VectorXd::Zero(m);
  else {
    const ScopedBlasThreads serial(1);
    gram = sp::kkt_spectrum(W, o.solver).gram;
  }
  return sp::layer_metrics_from_eigenvalues(W.rows(), W.cols(), std::move(gram), o);
}

constexpr const char* kMetricOptionsDoc = R"(
    Options (as checkpoint_spectra's flags): spike_level, the Tracy–Widom level of the spike
    threshold; censor, the fraction of the bulk censored at each end of the MP fit; mp_level, the bulk
    is Marchenko–Pastur when its KS p-value ≥ mp_level; ratio_level, the level of the Tracy–Widom
    interval of κ for an initialised layer (paper 001 Theorem 5); near_zero and majority_fraction,
    paper 001 §8.4's reading; solver, "automatic", "one_stage" (dsyevd) or "two_stage".)";

}  // namespace

void bind_spectral(py::module_& m) {
  py::class_<sp::Spectrum>(m, "Spectrum",
                           "The spectrum of K Kᵀ for K ∈ R^{n×d} from the smaller Gram matrix (paper 001 Theorems 5 and 6).")
      .def_readonly("n", &sp::Spectrum::n)
      .def_readonly("d", &sp::Spectrum::d)
      .def_readonly("gram", &sp::Spectrum::gram, "all min(n, d) eigenvalues of the smaller Gram matrix, ascending")
      .def_readonly("rank_tol", &sp::Spectrum::rank_tol, "eigenvalues ≤ rank_tol count as zero")
      .def_readonly("rank", &sp::Spectrum::rank, "numerical rank of K")
      .def_property_readonly("zeros", &sp::Spectrum::zeros, "number of zero eigenvalues of K Kᵀ, n − rank")
      .def_property_readonly("zero_fraction", &sp::Spectrum::zero_fraction, "Theorem 5: 1 − d/n when n > d")
      .def_property_readonly("nonzero", &sp::Spectrum::nonzero, "the nonzero eigenvalues, ascending")
      .def_property_readonly("lambda_max", &sp::Spectrum::lambda_max)
      .def_property_readonly("lambda_min_nonzero", &sp::Spectrum::lambda_min_nonzero)
      .def_property_readonly("ratio", &sp::Spectrum::ratio, "λ_max / λ_min⁺ (paper 001 Theorem 5)")
      .def("all_eigenvalues", &sp::Spectrum::all_eigenvalues, "all n eigenvalues of K Kᵀ, ascending, the zeros exactly 0")
      .def("__repr__", [](const sp::Spectrum& s) {
        return "Spectrum(n=" + std::to_string(s.n) + ", d=" + std::to_string(s.d) + ", rank=" + std::to_string(s.rank) +
               ", lambda_max=" + std::to_string(s.lambda_max()) + ")";
      });

  m.def(
      "kkt_spectrum",
      [](const py::object& K, const std::string& solver) {
        const sp::EigenSolver s = parse_solver(solver);
        Eigen::MatrixXd k = matrix_arg(K, "K");
        py::gil_scoped_release release;
        return sp::kkt_spectrum(k, s);
      },
      "K"_a, "solver"_a = "automatic",
      R"(The spectrum of K Kᵀ for K ∈ R^{n×d} (paper 001 Theorems 5 and 6) without forming the n×n matrix:
the eigenvalues of the smaller Gram matrix (one syrk and LAPACK's dsyevd), and n − rank(K) zeros.
K: float64 array, C or Fortran order. Returns a Spectrum; Spectrum.all_eigenvalues() equals
numpy.linalg.eigvalsh(K @ K.T) to rounding.)");

  m.def("zero_fraction_limit", &sp::zero_fraction_limit, "n"_a, "d"_a,
        "Theorem 5's zero fraction of K Kᵀ for K ∈ R^{n×d}: (n − d)/n when n > d, else 0 (paper 001).");

  py::class_<sp::MarchenkoPastur>(m, "MarchenkoPastur",
                                  R"(The Marchenko–Pastur law in paper 001's normalization (Theorem 1, eq. (3)): the limit of
the eigenvalues of (1/n) X Xᵀ for X ∈ R^{p×n} with i.i.d. entries of variance σ², c = p/n. Edges
a, b = σ²(1 ∓ √c)², an atom 1 − 1/c at 0 when c > 1. The CDF by quadrature (Boost.Math).)")
      .def(py::init([](double c, double sigma2) {
             if (!(std::isfinite(c) && c > 0)) throw py::value_error("c: must be finite and > 0, got " + std::to_string(c));
             if (!(std::isfinite(sigma2) && sigma2 > 0)) throw py::value_error("sigma2: must be finite and > 0, got " + std::to_string(sigma2));
             return sp::MarchenkoPastur(c, sigma2);
           }),
           "c"_a, "sigma2"_a = 1.0)
      .def_property_readonly("c", &sp::MarchenkoPastur::c)
      .def_property_readonly("sigma2", &sp::MarchenkoPastur::sigma2)
      .def_property_readonly("a", &sp::MarchenkoPastur::a, "lower edge σ²(1 − √c)²")
      .def_property_readonly("b", &sp::MarchenkoPastur::b, "upper edge σ²(1 + √c)²")
      .def_property_readonly("edges", [](const sp::MarchenkoPastur& mp) { return py::make_tuple(mp.a(), mp.b()); }, "(a, b)")
      .def_property_readonly("atom", &sp::MarchenkoPastur::atom, "mass of the atom at 0: 1 − 1/c when c > 1")
      .def_property_readonly("continuous_mass", &sp::MarchenkoPastur::continuous_mass)
      .def("density", py::vectorize([](sp::MarchenkoPastur& mp, double x) { return mp.density(x); }), "x"_a,
           "density of the continuous part (the atom excluded); vectorised over x")
      .def("cdf", py::vectorize([](sp::MarchenkoPastur& mp, double x) { return mp.cdf(x); }), "x"_a,
           "P(λ ≤ x), the atom included; vectorised over x")
      .def(
          "quantile",
          [](const sp::MarchenkoPastur& mp, double p) {
            if (!(p >= 0 && p <= 1)) throw py::value_error("p: must lie in [0, 1], got " + std::to_string(p));
            return mp.quantile(p);
          },
          "p"_a, "smallest x with cdf(x) ≥ p")
      .def("moment", &sp::MarchenkoPastur::moment, "k"_a, "E[λ^k] in closed form (Narayana polynomials)")
      .def_property_readonly("mean", &sp::MarchenkoPastur::mean)
      .def_property_readonly("variance", &sp::MarchenkoPastur::variance)
      .def(
          "density_grid",
          [](const sp::MarchenkoPastur& mp, int points) {
            if (points < 2) throw py::value_error("points: need at least 2");
            std::vector<double> xs;
            std::vector<double> f = mp.density_grid(points, &xs);
            return py::make_tuple(py::array_t<double>(py::ssize_t(xs.size()), xs.data()), py::array_t<double>(py::ssize_t(f.size()), f.data()));
          },
          "points"_a = 200, "(x, density) on equally spaced points over [a, b]")
      .def("__repr__", [](const sp::MarchenkoPastur& mp) {
        return "MarchenkoPastur(c=" + std::to_string(mp.c()) + ", sigma2=" + std::to_string(mp.sigma2()) + ")";
      });

  m.def(
      "ratio_limit", py::vectorize([](double c) {
        if (!(std::isfinite(c) && c > 0)) throw py::value_error("c: must be finite and > 0");
        return sp::ratio_limit(c);
      }),
      "c"_a, "((1 + √c)/(1 − √c))², the limit of λ_max/λ_min⁺ in paper 001 Theorem 5; vectorised over c.");

  m.def(
      "layer_metrics",
      [](const py::object& W, double spike_level, double censor, double mp_level, double ratio_level, double near_zero,
         double majority_fraction, const std::string& solver) {
        const sp::LayerMetricOptions o = metric_options(spike_level, censor, mp_level, ratio_level, near_zero, majority_fraction, solver);
        const Eigen::MatrixXd w = matrix_arg(W, "W");
        sp::LayerMetrics metrics;
        {
          py::gil_scoped_release release;
          metrics = analysis_metrics(w, o);
        }
        sp::LayerRef ref;
        ref.name = "W";
        ref.block = "W";
        ref.rows = w.rows();
        ref.cols = w.cols();
        return metrics_dict(ref, std::move(metrics));
      },
      "W"_a, py::kw_only(), "spike_level"_a = 0.01, "censor"_a = 0.05, "mp_level"_a = 0.05, "ratio_level"_a = 0.05,
      "near_zero"_a = sp::kNearZeroThreshold, "majority_fraction"_a = sp::kMajorityFraction, "solver"_a = "automatic",
      (std::string(R"(Everything checkpoint_spectra computes for one layer W ∈ R^{N×M} (issue 16; paper 001 Theorem 1,
Theorem 5 and §8.4), as a dict with the keys of a row of its JSON's data.layers: norms and stable
rank, Marchenko–Pastur with the layer's own and a fitted σ² (KS p-values, spikes above the
Tracy–Widom threshold, soft rank), the power-law tail α, κ = λ_max/λ_min⁺ against Theorem 5's
interval for an initialised layer, §8.4's near-zero portion and majority ratio; plus "eigenvalues",
the min(N, M) eigenvalues of the smaller Gram matrix, ascending. Numbers the JSON writes as null
(NaN, ±∞) are floats here. W: float64, C or Fortran order, finite.)") + kMetricOptionsDoc).c_str());

  m.def(
      "_checkpoint_spectra",
      [](const std::string& path, const std::string& match, long min_dim, const std::string& conv, double spike_level, double censor,
         double mp_level, double ratio_level, double near_zero, double majority_fraction, const std::string& solver) {
        const sp::LayerMetricOptions o = metric_options(spike_level, censor, mp_level, ratio_level, near_zero, majority_fraction, solver);
        if (min_dim < 2 || min_dim > (1 << 20)) throw py::value_error("min_dim: must lie in [2, 1048576]");
        sp::ModelLayers model;
        std::vector<sp::LayerMetrics> metrics;
        {
          py::gil_scoped_release release;
          const sp::LayerSelection selection{.match = match, .min_dim = min_dim, .conv = sp::parse_conv_mode(conv)};
          model = sp::checkpoint_layers(path, selection);
          metrics.resize(model.layers.size());
          for (std::size_t i = 0; i < model.layers.size(); ++i) metrics[i] = analysis_metrics(model.load(i), o);
        }
        py::list layers, skipped;
        for (std::size_t i = 0; i < model.layers.size(); ++i) layers.append(metrics_dict(model.layers[i], std::move(metrics[i])));
        for (const sp::SkippedTensor& s : model.skipped) skipped.append(py::dict("name"_a = s.name, "shape"_a = s.shape, "reason"_a = s.reason));
        return py::dict("source"_a = model.source, "format"_a = model.format, "tensors"_a = model.tensors, "conv"_a = conv,
                        "layers"_a = layers, "skipped"_a = skipped);
      },
      "path"_a, "match"_a, "min_dim"_a, "conv"_a, "spike_level"_a, "censor"_a, "mp_level"_a, "ratio_level"_a, "near_zero"_a,
      "majority_fraction"_a, "solver"_a, "The work of sparseact.checkpoint_spectra (see there).");

  m.attr("_default_near_zero") = sp::kNearZeroThreshold;
  m.attr("_default_majority_fraction") = sp::kMajorityFraction;
}

}  // namespace sparseact::python
