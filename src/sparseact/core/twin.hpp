#pragma once
// The GPU's CPU twin (docs/DESIGN.md, Devices): every library function that sends work to the GPU also
// computes one slice of that work on the CPU, once per process and path, and records how far the two
// agree. The analysis harness (app/analysis.cpp) turns each record into a self-check in the JSON and
// fails the run (exit 3, one line on stderr) when a record disagrees. So a GPU that computes something
// other than the CPU — a layout mix-up, a kernel bug, a driver fault — cannot pass silently.
//
//   if (device == Device::cuda) {
//     CodeMatrix gpu = cuda::lsh_euclidean_codes(...);
//     if (twin::due("lsh.euclidean_codes")) {
//       twin::Timer t;
//       ... the first 4096 points on the CPU, the number of codes that differ ...
//       twin::record({.path = "lsh.euclidean_codes", .slice = "...", .rule = twin::Rule::identical,
//                     .error = differ, .tolerance = 0, .cpu_s = t.seconds()});
//     }
//   }
//
// A spectrum cannot be sliced: its path offers a deferred check instead (wants/offer/settle below), and
// the run's smallest matrix is solved again once the work is done.
//
// The tolerances are what each GPU path promises: masks and hash codes identical (rule `identical`,
// error = the number of entries that differ), spectra to 1e-10 and activations to 1e-12 relative.
// The slice is kept small — the run's smallest matrix, one net on a few inputs, a block of points —
// so that the twin costs a few percent of the GPU run; each record carries its CPU seconds.
#include <chrono>
#include <cstddef>
#include <functional>
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

/// True the first time `path` asks in this process (thread-safe): that caller computes the twin. For
/// paths whose slice is small whatever the call (a block of points, one net on a few inputs).
bool due(std::string_view path);

/// For paths whose twin cannot be sliced (a spectrum needs its whole matrix): the CPU side of the
/// cheapest call of the run is computed once the work is done. wants() says whether a call of this cost
/// (any unit, compared within the path) would be the cheapest so far; offer() keeps `check`, which
/// copies what it needs, if it is; settle() runs the kept checks and records their results (the harness
/// calls it after the work, on every MPI rank). So the twin costs one CPU solve of the smallest matrix.
bool wants(std::string_view path, double cost);
void offer(std::string_view path, double cost, std::function<Agreement()> check);
void settle();
/// Adds a comparison to this process's log (thread-safe).
void record(Agreement a);

// Training twins. A GPU training run trains its first kTrainingSteps steps again on the CPU and compares
// each step's batch loss. The devices are not bit-identical: cuBLAS sums in other orders than the CPU
// (relative differences ~1e-15·√N per product), and a step multiplies a difference in θ by at most 1 + η‖H‖,
// so over 8 steps at our learning rates (SGD 0.05, Adam 1e-4) the losses stay within 1e-12 relative; a
// k-WTA decision could flip only on a tie within that rounding (for continuous inputs, probability ~1e-10
// per column). The promise, 1e-9 relative to max(1, |L|), leaves three orders of magnitude.
inline constexpr int kTrainingSteps = 8;
inline constexpr double kTrainingLossTolerance = 1e-9;
/// Records the training twin of `path`: max_t |gpu_t − cpu_t| / max(1, |cpu_t|) over the CPU's steps
/// (NaN when a loss is NaN or the GPU ran fewer steps), against kTrainingLossTolerance.
void record_losses(const std::string& path, const std::string& what, const std::vector<double>& cpu, const std::vector<double>& gpu,
                   double cpu_seconds);
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
