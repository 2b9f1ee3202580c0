#pragma once
// Paper 000 §5's training runs as sweep records (app/sweep.hpp), and back: a work item of
// dsm_vs_dense trains one job (lsh/sparse_vs_dense.hpp) and returns its Outcome; the reduction on
// rank 0 reads it back. Every double travels as its bits, so the verdicts do not depend on where a
// job ran.
//
// Fields: "test_mse", "train_mse", "ls_test_mse", "ls_train_mse" (NaN without the least-squares
// reference), "test_history" (per epoch) and, only when asked, "sq_err" (per test point: the S = 1
// verdict's spread, see needs_per_point_errors).
#include <sparseact/core/record.hpp>
#include <sparseact/lsh/sparse_vs_dense.hpp>

namespace sparseact::lsh {

Record outcome_record(const Outcome& outcome, bool with_sq_err);
/// sq_err comes back empty when the record has none. Throws std::out_of_range naming a missing field.
Outcome outcome_from_record(const Record& record);

}  // namespace sparseact::lsh
