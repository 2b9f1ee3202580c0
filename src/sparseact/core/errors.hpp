#pragma once
// Exit codes and error types of the analysis contract (docs/DESIGN.md): 0 every claim holds, 3 a claim
// is contradicted or an erratum (or a self-check of our own construction fails), 4 none of those
// but a claim is inconclusive, 2 bad input (one line on stderr, nothing written), 1 internal error.
#include <stdexcept>
#include <string>

namespace sparseact {

enum ExitCode : int { exit_ok = 0, exit_internal = 1, exit_bad_input = 2, exit_check_failed = 3, exit_inconclusive = 4 };

/// Bad input from the user: a flag out of range, a malformed file. Maps to exit code 2.
/// The message is one line that names the flag or file and what is allowed.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A figure could not be rendered (gnuplot missing or failing). Data are still written.
struct PlotError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace sparseact
