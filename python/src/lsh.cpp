// lsh.cpp — paper 000's hash families for Python: sign-pattern (hyperplane) LSH through the origin
// ("sign", Charikar 2002) or with offsets c_j ~ U[−r, r] ("offset", the LSH(d, s, m, Δ) model), as packed
// codes: one 64-bit word per table and point, bit j the sign of w_jᵀx + c_j (certified exact signs,
// lsh/hash.hpp); and Euclidean LSH ⌊(a_iᵀx + b_i)/ε⌋ (Datar et al. 2004) as int32 codes.
#include <string>

#include <sparseact/lsh/hash.hpp>

#include "arrays.hpp"

namespace sparseact::python {

using namespace pybind11::literals;

void bind_lsh(py::module_& m) {
  m.def(
      "hash",
      [](const py::object& X, const std::string& family, int tables, int bits, double offset_range, double eps, std::uint64_t seed,
         std::uint64_t stream) -> py::object {
        const Eigen::MatrixXd x = matrix_arg(X, "X");
        if (family == "sign" || family == "offset") {
          if (family == "offset" && !(offset_range > 0 && std::isfinite(offset_range)))
            throw py::value_error("offset_range: the offset family needs a finite r > 0");
          const double r = family == "sign" ? 0.0 : offset_range;
          lsh::SignCodes codes;
          {
            py::gil_scoped_release release;
            codes = lsh::hash(lsh::make_hyperplane_lsh(x.rows(), tables, bits, r, seed, stream), x);
          }
          return py::cast(std::move(codes));
        }
        if (family == "euclidean") {
          lsh::CodeMatrix codes;
          {
            py::gil_scoped_release release;
            codes = lsh::hash(lsh::make_euclidean_lsh(x.rows(), tables, eps, seed, stream), x);
          }
          return py::cast(std::move(codes));
        }
        throw py::value_error("family: '" + family + "' is not one of sign, offset, euclidean");
      },
      "X"_a, py::kw_only(), "family"_a = "sign", "tables"_a = 1, "bits"_a = 16, "offset_range"_a = 1.0, "eps"_a = 1.0, "seed"_a = 1,
      "stream"_a = 0,
      R"(Hash the columns of X (d × N points) with paper 000's families (§2.2), functions drawn from (seed, stream):
  "sign"    hyperplanes through the origin, h_j(x) = sign(w_jᵀx), w_j ~ N(0, I_d);
  "offset"  hyperplanes with offsets, sign(w_jᵀx + c_j), c_j ~ U[−offset_range, offset_range];
  both: `tables` tables of `bits` ≤ 62 bits, packed: a tables × N uint64 array, entry (i, n) =
  Σ_j 2^j · 1[w_{i·bits+j}ᵀx_n + c > 0] (exact signs, independent of BLAS and threads);
  "euclidean" ⌊(a_iᵀx + b_i)/eps⌋, a_i ~ N(0, I_d), b_i ~ U[0, eps], for i < tables: a tables × N int32 array.)");
}

}  // namespace sparseact::python
