#pragma once
// The GPU's CPU twin (docs/DESIGN.md, Devices): every library function that sends work to the GPU also
// computes one slice of that work on the CPU, once per process and path, and records how far the two
// agree. The analysis harness (app/analysis.cpp) turns each record into a self-check in the JSON and
// fails the run (exit 3, one line on stderr) when a record disagrees. So a GPU that computes something
// other than the CPU — a layout mix-up, a kernel bug, a driver fault — cannot pass silently.
//
//   if (device == Device::cuda) {
//     auto gpu = cuda::gram_eigenvalues(Ks);
//     if (twin::due("spectral.kkt_spectra")) {
//       twin::Timer t;
//       ... the smallest K on the CPU, the largest |Δλ| / λ_max ...
//       twin::record({.path = "spectral.kkt_spectra", .slice = "...", .rule = twin::Rule::relative,
//                     .error = err, .tolerance = 1e-10, .cpu_s = t.seconds()});
//     }
//   }
//
// The tolerances are what each GPU path promises: masks and hash codes identical (rule `identical`,
// error = the number of entries that differ), spectra to 1e-10 and activations to 1e-12 relative.
// The slice is kept small — the smallest matrix of a batch, one net on a few inputs, a block of points —
// so that the twin costs a few percent of the GPU run; each record carries its CPU seconds.
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sparseact::twin {

enum class Rule {
  identical,  ///< error: the number of entries that differ; tolerance 0
  relative,   ///< error: a relative difference (which norm: the record's `slice` text says)
};
const char* to_string(Rule r) noexcept;

struct Agreement {
  std::string path;   ///< the GPU function, e.g. "spectral.kkt_spectra"
  std::string slice;  ///< what the CPU recomputed, e.g. "trial 0 of 10 (3072 × 768), all 768 eigenvalues"
  Rule rule = Rule::identical;
  double error = 0;      ///< see Rule
  double tolerance = 0;  ///< the path's promise
  double cpu_s = 0;      ///< what the twin cost
  int rank = 0;          ///< the MPI rank whose GPU it checked (set by the harness when it gathers)
  bool agrees() const { return error <= tolerance; }
};

/// max_i |a_i − b_i| over n entries; NaN when any difference is NaN, so that a NaN never agrees.
double max_abs_difference(const double* a, const double* b, std::size_t n);

/// True the first time `path` asks in this process (thread-safe): that caller computes the twin.
bool due(std::string_view path);
/// Adds a comparison to this process's log (thread-safe).
void record(Agreement a);
/// This process's log, in the order the records were made.
std::vector<Agreement> recorded();
/// Empties the log and forgets which paths were due (tests, and a notebook running several analyses).
void reset();

/// Wall seconds since construction: a twin's cost.
class Timer {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace sparseact::twin
