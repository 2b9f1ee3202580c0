#pragma once
// The runner behind Analysis::sweep (internal to app/). Under MPI every rank calls
// run_on_ranks(); rank 0 hands out items (its main thread is the dispatcher, its compute threads
// take items like any rank's), gathers the records and returns them in index order; the other
// ranks return nothing.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <sparseact/app/sweep.hpp>

namespace sparseact::app {

/// An item that threw: which kind of error, so the run exits as the one-process run would.
struct ItemFailure {
  std::size_t index = 0;
  bool input_error = false;
  std::string message;
};

/// What --resume found: the records already there and the checkpoints that failed their digest.
struct ResumeState {
  std::vector<std::optional<std::string>> done;  ///< serialised records by index
  std::vector<std::size_t> redone;
  bool manifest_exists = false;
};

/// Validates <out>/.sweep against this run (InputError on other parameters or version) and reads
/// the finished items. Writes nothing.
ResumeState read_resume_state(const Sweep& sweep, const SweepOptions& options);
/// Creates .sweep, writes the manifest if new, removes leftover temporary files.
void open_resume_folder(const Sweep& sweep, const SweepOptions& options, const ResumeState& state);

/// One process; `state` may be null (no --resume). Throws the lowest-index item failure.
std::vector<Record> run_here(const Sweep& sweep, const SweepOptions& options, const ResumeState* state, SweepReport& report);
/// Every rank calls it; records on rank 0 only.
std::vector<Record> run_on_ranks(const Sweep& sweep, const SweepOptions& options, const ResumeState* state, SweepReport& report);

/// Writes .sweep/run.json (rank 0).
void write_run_json(const Sweep& sweep, const SweepOptions& options, const SweepReport& report,
                    const std::vector<std::string>& hosts, const std::string& device);

/// Items run at once in one process for `threads` (0: the cores of the affinity mask).
int item_threads(int threads);

}  // namespace sparseact::app
