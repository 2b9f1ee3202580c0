// routing.cpp — COMET's routing for Python (paper 002): the k-winner-take-all cap C_k of eq. (3), the
// masks of a fixed random routing network (eqs. (4)–(6)), and the large-width law of the masks'
// overlap (issue 12).
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include <sparseact/routing/comet.hpp>
#include <sparseact/routing/kwta.hpp>
#include <sparseact/routing/overlap_law.hpp>

#include "arrays.hpp"

namespace sparseact::python {

namespace rt = sparseact::routing;
using namespace pybind11::literals;

void bind_routing(py::module_& m) {
  m.def(
      "kwta",
      [](const py::object& v, int k, const std::string& rule) {
        const rt::TieRule r = rt::parse_tie_rule(rule);
        if (k < 1) throw py::value_error("k: must be ≥ 1, got " + std::to_string(k));
        const py::array a = py::isinstance<py::array>(v) ? py::reinterpret_borrow<py::array>(v) : py::array();
        if (a && a.ndim() == 2) return py::cast(rt::kwta_columns(matrix_arg(v, "v"), k, r));
        return py::cast(rt::kwta(vector_arg(v, "v"), k, r));
      },
      "v"_a, "k"_a, "rule"_a = "strict",
      R"(The k-winner-take-all cap C_k of paper 002 (COMET), eq. (3): [C_k(v)]_i = 1 if |{j : v_j ≥ v_i}| ≤ k.
rule: "strict" (eq. (3) as printed: a tie across the k-th place drops every tied value, ERRATA 002),
"inclusive" (v_i ≥ the k-th largest: may keep more than k) or "exact" (exactly min(k, N) winners, ties
lowest index first). C_2([3, 2, 2, 1]) is [1, 0, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0] under the three.
v: a float64 vector, or an N × M matrix whose columns are capped one by one. Returns 0/1 floats.)");

  m.def(
      "active_units",
      [](double p_k, int N) { return rt::active_units(finite_arg(p_k, "p_k"), N); }, "p_k"_a, "N"_a,
      "k = max(1, round(p_k · N)), halves away from zero (paper 002; ERRATA 002).");

  m.def(
      "comet_masks",
      [](const py::object& X0, const std::vector<int>& widths, double p_k, std::uint64_t seed, std::uint64_t stream, const std::string& rule) {
        const rt::TieRule r = rt::parse_tie_rule(rule);
        if (widths.size() < 2) throw py::value_error("widths: need at least N_0 and N_1 (two layers)");
        if (!(p_k > 0 && p_k <= 1)) throw py::value_error("p_k: must lie in (0, 1], got " + std::to_string(p_k));
        const Eigen::MatrixXd x = matrix_arg(X0, "X0");
        if (x.rows() != widths[0])
          throw py::value_error("X0: has " + std::to_string(x.rows()) + " rows, but widths[0] (N_0, the input dimension) is " +
                                std::to_string(widths[0]) + "; inputs are the columns of X0");
        std::vector<Eigen::MatrixXd> masks;
        {
          py::gil_scoped_release release;
          masks = rt::comet_masks(rt::make_comet_router(widths, p_k, seed, stream, r), x);
        }
        return masks;
      },
      "X0"_a, "widths"_a, "p_k"_a, py::kw_only(), "seed"_a = 1, "stream"_a = 0, "rule"_a = "strict",
      R"(COMET's masks (paper 002 §4, eqs. (4)–(6)) for the columns of X0 (N_0 × M inputs): a fixed random routing
network of widths N_0, N_1, …, N_L with V_ℓ ~ U(−N_{ℓ−1}^{−1/2}, N_{ℓ−1}^{−1/2}) from Rng(seed,
stream_id(stream, ℓ)), c_ℓ = V_ℓ z_{ℓ−1}, m_ℓ = C_{k_ℓ}(c_ℓ), z_ℓ = m_ℓ ∘ c_ℓ, k_ℓ = max(1, round(p_k N_ℓ)).
Returns the list m_1 … m_{L−1} of N_ℓ × M 0/1 matrices (no mask for the output layer).)");

  m.def(
      "expected_overlap",
      py::vectorize([](double rho, double p_k) {
        if (!(rho >= -1 && rho <= 1)) throw py::value_error("rho: must lie in [−1, 1]");
        if (!(p_k > 0 && p_k <= 1)) throw py::value_error("p_k: must lie in (0, 1]");
        return rt::expected_overlap(rho, p_k);
      }),
      "rho"_a, "p_k"_a,
      R"(O(ρ) = P(Z > t, Z′ > t)/p_k, t = Φ⁻¹(1 − p_k): the expected fraction of the k = p_k N winners of C_k that two
inputs at cosine ρ share in a wide random layer (COMET's routing, paper 002; issue 12). O(0) = p_k, O(1) = 1.
Vectorised over rho and p_k.)");

  m.def(
      "comet_network_law",
      [](double input_cos, double p_k, const std::vector<int>& widths, const std::string& activation) {
        if (!(input_cos >= -1 && input_cos <= 1)) throw py::value_error("input_cos: must lie in [−1, 1]");
        const rt::NetworkLaw law = rt::comet_network_law(input_cos, p_k, widths, nn::parse_plain_activation(activation));
        py::list layers;
        for (const rt::LayerLaw& l : law.layers)
          layers.append(py::dict("overlap"_a = l.overlap, "routing_cos"_a = l.routing_cos, "act_cos"_a = l.act_cos));
        return py::dict("layers"_a = layers, "k"_a = law.k, "mask_cos"_a = law.mask_cos, "act_cos"_a = law.act_cos,
                        "ntk_block_cos"_a = law.ntk_block_cos, "ntk_cos"_a = law.ntk_cos);
      },
      "input_cos"_a, "p_k"_a, "widths"_a, "activation"_a = "relu",
      R"(The large-width law of a COMET MLP of widths N_0 … N_L without biases (paper 002; issue 12), for two inputs at
cosine input_cos: per hidden layer the routing overlap O_ℓ, the routing cosine and the activations' cosine;
the concatenated masks' and activations' cosines; the NTK's per-block and trace cosines.
activation: "relu" or "identity". Returns a dict.)");
}

}  // namespace sparseact::python
