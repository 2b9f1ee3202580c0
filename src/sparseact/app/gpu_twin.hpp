#pragma once
// The GPU twin in the analysis contract (docs/DESIGN.md, Devices): the library records, once per process
// and GPU path, how far a slice of the GPU's work agrees with the same slice on the CPU (core/twin.hpp);
// here each record becomes a self-check of the run's JSON. A disagreement is a failing self-check, one
// line on stderr, and exit 3: a GPU that computes something else never passes silently.
#include <string>
#include <vector>

#include <sparseact/app/analysis.hpp>
#include <sparseact/core/twin.hpp>

namespace sparseact::app {

/// Records as text, to gather them from the ranks of an MPI run, and back.
std::string twin_records_to_text(const std::vector<twin::Agreement>& records);
std::vector<twin::Agreement> twin_records_from_text(const std::string& text, int rank);

/// One self-check per record (ids gpu_twin_<path>[_rank<r>]), their cost beside the run's wall time in
/// data.gpu_twin, and a line on stderr for each disagreement. Returns the number of disagreements.
int add_twin_checks(Analysis& a, const std::vector<twin::Agreement>& records, double elapsed_s);

}  // namespace sparseact::app
