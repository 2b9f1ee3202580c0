// lsh_vs_faiss — benchmark: hashing throughput of sign-pattern (hyperplane) LSH, paper 000 §2.2 /
// the LSH(d, s, m, Δ) model, ours against FAISS's IndexLSH and numpy on the same points and the
// same hyperplanes in one run (docs/DESIGN.md, Benchmarks; issue 3).
//
// Ours, two checks on the same numbers:
// - float64: sparseact::lsh::hash(HyperplaneLsh, const MatrixXd& X), the float64 points (the library's
//   type), hashed in blocks of points (one dgemm per block into a cache-sized tile, then the sign pass on
//   the tile, blocks over OpenMP threads with serial BLAS; bits within rounding of 0 decided exactly);
// - certified float32: sparseact::lsh::hash(HyperplaneLsh, const MatrixXf& Xf, {.precision =
//   HashPrecision::float32_certified}), the float32 points, the very array FAISS gets (sgemm straight on
//   each block, bits within float32's rounding of 0 recomputed from the points promoted to float64: the
//   float64 codes, checked against the float64 call; the fraction recomputed is in the JSON). Its
//   input is what FAISS's is, so neither side pays for a conversion the other does not.
// Targets (issue 15): float64 ≥ 1.5× FAISS, certified float32 ≥ 3× FAISS. b hyperplanes are
// s tables of m bits with s·m = b and m ≤ 62 (b = 64 is two tables of 32 bits; the codes are compared
// as one b-bit word).
//
// FAISS (libfaiss-dev): IndexLSH(d, b, rotate_data = true, train_thresholds = false), timed through
// sa_encode (FAISS's pure encoder: its RandomRotationMatrix as one sgemm, then fvecs2bitvecs, no
// storage of the codes). FAISS works in float32. Same projections: we take FAISS's rotation matrix
// A (b × d, orthonormal rows) as our w, with zero offsets, so both sides compute sign(W x) with the
// same W. Same points: X is drawn uniform on [−1, 1]^d (paper 000's domain) and rounded to float32
// values, held in float64 on our side, so both sides hash the identical numbers; the only
// difference is the arithmetic (our float64 product vs FAISS's float32 one).
//
// numpy (lsh_vs_faiss.py under Debian's /usr/bin/python3): np.packbits(X @ W.T > 0, axis=1,
// bitorder="little") on the same X and W (float64), product and packing inside the timing.
//
// Codes must agree bit for bit, up to FAISS's bit order (hyperplane j in bit j % 8 of byte j / 8,
// which read as a little-endian word is our bit j) and up to rounding: a bit may differ only where
// |wᵀx| is within the peer's floating-point error bound γ_d Σ_k |w_k x_k| of 0 (FAISS's fvec2bitvec
// also sets the bit for a projection of exactly 0, where we test > 0).
//
// Every side runs with the same thread count: OpenBLAS's pool (openblas_set_num_threads here,
// OPENBLAS_NUM_THREADS for numpy) and OpenMP's team (omp_set_num_threads here, used by our sign pass
// and FAISS's fvecs2bitvecs). Timings are medians of repeats, ours and FAISS interleaved repeat by
// repeat so that a change of the machine's load hits both alike.
//
// Where the time went before issue 15 is measured too (informational, "sketches" below, not the
// library): the product alone, the product as Eigen evaluates `MatrixXd P = w * X` (a fresh N-column
// buffer, zeroed, then gemm with β = 1: the unblocked library before), and the blocked sketches that
// the library's paths grew from.
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/lsh/hash.hpp>

#include "peer.hpp"

#ifdef SPARSEACT_HAVE_FAISS
#include <faiss/IndexLSH.h>
#endif

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::bench;
namespace fs = std::filesystem;

namespace {

constexpr double kTargetFaiss = 1.5;     // issue 15: float64 hashing t_faiss / t_ours ≥ 1.5
constexpr double kTargetFaiss32 = 3.0;   // issue 15: certified float32 hashing t_faiss / t_ours32 ≥ 3
constexpr Eigen::Index kBlockColumns = 8192;  // sketches: columns per block (b × 8192 doubles ≤ 4 MiB)

#ifdef SPARSEACT_HAVE_FAISS
constexpr bool kHaveFaiss = true;
#else
constexpr bool kHaveFaiss = false;
#endif


template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The BLAS the library loaded (Fortran interface, 32-bit integers: Debian's OpenBLAS), for the
// sketches only.
using dgemm_t = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
                         const double*, const int*, const double*, double*, const int*);
using sgemm_t = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
                         const float*, const int*, const float*, float*, const int*);

/// C (m × n, col-major) = A (m × k) B (k × n) + beta C.
template <class T, class G>
void gemm_nn(G gemm, int m, int n, int k, const T* a, const T* b, T beta, T* c) {
  const T one = 1;
  gemm("N", "N", &m, &n, &k, &one, a, &m, b, &k, &beta, c, &m);
}

/// The columns of X (d × N, col-major) as an N × d C-order float64 .npy: the same bytes, one write.
void save_points_npy(const fs::path& path, const Eigen::MatrixXd& X) {
  std::string header = fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", X.cols(), X.rows());
  constexpr std::size_t prefix = 10;
  const std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  static_assert(std::endian::native == std::endian::little, "the .npy says little-endian");
  std::ofstream f(path, std::ios::binary);
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', '\x01', '\x00'};
  f.write(magic, 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>((header.size() >> 8) & 0xff)};
  f.write(len, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(X.data()), static_cast<std::streamsize>(X.size() * sizeof(double)));
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

/// b hyperplanes as s tables of m ≤ 62 bits (the library's limit), s·m = b, s as small as possible.
std::pair<int, int> tables_for(int bits) {
  for (int s = 1; s <= bits; ++s)
    if (bits % s == 0 && bits / s <= 62) return {s, bits / s};
  return {bits, 1};
}

/// One b-bit word per point from our s × N table words: hyperplane t·m + j in bit t·m + j.
std::vector<std::uint64_t> join_tables(const Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic>& words, int m) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(words.cols()), 0);
  for (Eigen::Index n = 0; n < words.cols(); ++n)
    for (Eigen::Index t = 0; t < words.rows(); ++t) out[n] |= words(t, n) << (t * m);
  return out;
}

/// Packed byte codes (N × code_bytes, FAISS's and np.packbits(bitorder="little")'s layout) as words.
std::vector<std::uint64_t> words_from_bytes(const std::uint8_t* bytes, std::size_t n, std::size_t code_bytes) {
  std::vector<std::uint64_t> out(n, 0);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(&out[i], bytes + i * code_bytes, code_bytes);
  return out;
}

/// γ_d = d u / (1 − d u): the forward error bound of a length-d dot product in any summation order
/// (with or without FMA), relative to Σ_k |w_k x_k| (Higham, Accuracy and Stability, §3.1).
double gamma_d(Eigen::Index d, double unit_roundoff) { return d * unit_roundoff / (1 - d * unit_roundoff); }

struct Agreement {
  double identical_fraction = 0;
  std::int64_t differing_codes = 0, differing_bits = 0, unexplained_bits = 0;
  double max_margin = 0;  ///< largest |wᵀx| / Σ|w_k x_k| over the differing bits (0 when none)
};

/// Compares two codes per point; a differing bit j of point n is explained when |w_jᵀx_n| ≤
/// bound · Σ_k |w_jk x_kn| (both sides' rounding; wᵀx evaluated in long double).
Agreement agree(const std::vector<std::uint64_t>& ours, const std::vector<std::uint64_t>& peer, const Eigen::MatrixXd& w,
                const Eigen::MatrixXd& X, double bound) {
  Agreement a;
  for (std::size_t n = 0; n < ours.size(); ++n) {
    std::uint64_t diff = ours[n] ^ peer[n];
    if (!diff) continue;
    ++a.differing_codes;
    while (diff) {
      const int j = std::countr_zero(diff);
      diff &= diff - 1;
      ++a.differing_bits;
      long double p = 0, s = 0;
      for (Eigen::Index k = 0; k < w.cols(); ++k) {
        const long double t = static_cast<long double>(w(j, k)) * X(k, static_cast<Eigen::Index>(n));
        p += t;
        s += std::fabs(t);
      }
      const double margin = s > 0 ? static_cast<double>(std::fabs(p) / s) : 0.0;
      a.max_margin = std::max(a.max_margin, margin);
      if (margin > bound) ++a.unexplained_bits;
    }
  }
  a.identical_fraction = ours.empty() ? 1.0 : 1.0 - static_cast<double>(a.differing_codes) / static_cast<double>(ours.size());
  return a;
}

json agreement_json(const Agreement& a, double bound) {
  return {{"identical_fraction", a.identical_fraction}, {"differing_codes", a.differing_codes},
          {"differing_bits", a.differing_bits},         {"unexplained_bits", a.unexplained_bits},
          {"max_margin_of_differing_bits", a.max_margin}, {"rounding_bound", bound}};
}

/// Sets OpenBLAS's pool to one thread for the scope (the sketches parallelise over column blocks with
/// OpenMP, each thread calling a single-threaded gemm on its own block), restoring it after.
struct SerialBlas {
  int saved;
  SerialBlas() : saved(blas_threads(0)) { blas_threads(1); }
  ~SerialBlas() { blas_threads(saved); }
  SerialBlas(const SerialBlas&) = delete;
  SerialBlas& operator=(const SerialBlas&) = delete;
};

/// Sketch (not the library): hash column blocks of kBlockColumns points, each block by one thread:
/// gemm (β = 0) into the thread's b × kBlockColumns buffer, then the sign pass while the block is in
/// cache. T is double (dgemm) or float (sgemm).
template <class T, class G>
void blocked_hash(G gemm, const T* w, const T* X, Eigen::Index d, Eigen::Index N, int bits, std::vector<std::uint64_t>& codes) {
  codes.resize(static_cast<std::size_t>(N));
  const Eigen::Index blocks = (N + kBlockColumns - 1) / kBlockColumns;
  const SerialBlas serial;
#pragma omp parallel
  {
    std::vector<T> buf(static_cast<std::size_t>(bits) * kBlockColumns);
#pragma omp for schedule(static)
    for (Eigen::Index blk = 0; blk < blocks; ++blk) {
      const Eigen::Index c0 = blk * kBlockColumns, nc = std::min(kBlockColumns, N - c0);
      gemm_nn<T>(gemm, bits, static_cast<int>(nc), static_cast<int>(d), w, X + c0 * d, T(0), buf.data());
      std::uint64_t* out = codes.data() + c0;
      for (Eigen::Index n = 0; n < nc; ++n) {
        std::uint64_t word = 0;
        for (int j = 0; j < bits; ++j) word |= static_cast<std::uint64_t>(buf[n * bits + j] > T(0)) << j;
        out[n] = word;
      }
    }
  }
}

/// Sketch (not the library): float64-exact codes at float32 speed, blocked as above. Each block of
/// float64 columns is rounded to float32 (with its norms ‖x_n‖), multiplied by W in float32 (sgemm),
/// and a bit is taken from the float32 projection p when |p| > τ_jn = 1.01 (γ_d^f32 + 3u) ‖w_j‖ ‖x_n‖,
/// which bounds the float32 error (rounding of x and w, then the dot product; Cauchy–Schwarz on
/// Σ|w_k x_k|), so its sign is the exact sign of w_jᵀx_n. The rare bits with |p| ≤ τ are recomputed
/// in float64; `uncertain` counts them.
void certified_hash(sgemm_t sgemm, const Eigen::MatrixXf& wf, const Eigen::VectorXd& w_norms, const Eigen::MatrixXd& w,
                    const Eigen::MatrixXd& X, std::vector<std::uint64_t>& codes, std::int64_t& uncertain) {
  const Eigen::Index d = X.rows(), N = X.cols();
  const int bits = static_cast<int>(wf.rows());
  const double u = std::ldexp(1.0, -24);
  const double tau_scale = 1.01 * (gamma_d(d, u) + 3 * u);
  std::vector<double> tau_w(static_cast<std::size_t>(bits));
  for (int j = 0; j < bits; ++j) tau_w[j] = tau_scale * w_norms(j);
  codes.resize(static_cast<std::size_t>(N));
  const Eigen::Index blocks = (N + kBlockColumns - 1) / kBlockColumns;
  std::int64_t unsure = 0;
  const SerialBlas serial;
#pragma omp parallel reduction(+ : unsure)
  {
    std::vector<float> buf(static_cast<std::size_t>(bits) * kBlockColumns), xbuf(static_cast<std::size_t>(d) * kBlockColumns);
    std::vector<double> xnorm(static_cast<std::size_t>(kBlockColumns));
#pragma omp for schedule(static)
    for (Eigen::Index blk = 0; blk < blocks; ++blk) {
      const Eigen::Index c0 = blk * kBlockColumns, nc = std::min(kBlockColumns, N - c0);
      const double* xs = X.data() + c0 * d;
      for (Eigen::Index n = 0; n < nc; ++n) {
        double s = 0;
        for (Eigen::Index k = 0; k < d; ++k) {
          const double v = xs[n * d + k];
          s += v * v;
          xbuf[n * d + k] = static_cast<float>(v);
        }
        xnorm[n] = std::sqrt(s);
      }
      gemm_nn<float>(sgemm, bits, static_cast<int>(nc), static_cast<int>(d), wf.data(), xbuf.data(), 0.0f, buf.data());
      std::uint64_t* out = codes.data() + c0;
      for (Eigen::Index n = 0; n < nc; ++n) {
        std::uint64_t word = 0;
        for (int j = 0; j < bits; ++j) {
          const double p = buf[n * bits + j], tau = tau_w[j] * xnorm[n];
          bool bit = p > tau;
          if (!bit && p >= -tau) {  // too close to 0 for float32: the float64 projection decides
            ++unsure;
            double q = 0;
            for (Eigen::Index k = 0; k < d; ++k) q += w(j, k) * xs[n * d + k];
            bit = q > 0;
          }
          word |= static_cast<std::uint64_t>(bit) << j;
        }
        out[n] = word;
      }
    }
  }
  uncertain = unsure;
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "lsh_vs_faiss",
                     .paper = "000",
                     .claims = {"§2.2 hyperplane LSH"},
                     .description = "Benchmark: sign-pattern LSH hashing throughput, ours against FAISS IndexLSH and numpy on the same "
                                    "points and hyperplanes",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  std::string bits_text, python = "/usr/bin/python3";
  int points = 0, d = 64, repeats = 0;
  double peer_budget = 300;
  analysis.scaled_option("--points", points, 100000, 1000000, "N, the number of points hashed")->check(CLI::Range(1000, 10000000));
  app.add_option("--d", d, "dimension d of the points")->check(CLI::Range(1, 1024))->capture_default_str();
  analysis.scaled_option("--bits", bits_text, std::string("16,64"), std::string("16,32,64"),
                         "numbers b of hyperplanes (hash bits per point), comma-separated, each in [1, 64]");
  analysis.scaled_option("--repeats", repeats, 3, 9, "timing repeats; the median is reported (a repeat takes under a second: nine keep the spread of the 1.5–3× ratios from resting on one outlier)")->check(CLI::Range(1, 1000));
  app.add_option("--python", python, "Python with numpy (Debian's python3-numpy)")->capture_default_str();
  app.add_option("--peer-budget", peer_budget, "seconds per numpy hyperplane count; repeats beyond the first stop once the next would exceed it")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    auto& r = a.result;
    std::vector<int> bit_counts;
    for (double b : parse_number_list("--bits", bits_text, 1, 64, true)) bit_counts.push_back(static_cast<int>(b));
    const Eigen::Index N = points;
    if (static_cast<double>(N) * d > 2.5e8)
      throw InputError(fmt::format("--points × --d = {} exceeds 2.5e8 coordinates (2 GB of float64 points)", double(N) * d));
    if (run_capture({python, "-c", "import numpy"}, {}, true).first != 0)
      throw InputError(fmt::format("--python {}: cannot import numpy; install python3-numpy (apt-get install python3-numpy)", python));
    const fs::path script = peer_script("lsh_vs_faiss.py");
    auto dgemm = reinterpret_cast<dgemm_t>(dlsym(RTLD_DEFAULT, "dgemm_"));
    auto sgemm = reinterpret_cast<sgemm_t>(dlsym(RTLD_DEFAULT, "sgemm_"));
    if (!dgemm || !sgemm) throw std::runtime_error("dgemm_/sgemm_ not found in the loaded BLAS");

    // One thread count for every side: OpenBLAS's pool and OpenMP's team.
    const int threads = blas_threads(a.common.threads);
    omp_set_num_threads(threads);
    const std::vector<std::string> peer_env = {fmt::format("OMP_NUM_THREADS={}", threads),
                                               fmt::format("OPENBLAS_NUM_THREADS={}", threads)};
    double load_start[3] = {0, 0, 0};
    getloadavg(load_start, 3);
    if (!kHaveFaiss)
      fmt::print(stderr, "lsh_vs_faiss: built without FAISS (libfaiss-dev not found at configure time): ours against numpy only\n");

    // The points: uniform on [−1, 1]^d, rounded to float32 values so FAISS hashes the same numbers.
    Eigen::MatrixXd X(d, N);
    fill_random(X.data(), static_cast<std::size_t>(X.size()), Distribution::uniform, 1 / std::sqrt(3.0), a.common.seed, 0);
    const Eigen::MatrixXf Xf = X.cast<float>();
    X = Xf.cast<double>();

    const TempDir tmp("lsh_vs_faiss");
    const fs::path points_file = tmp.path / "X.npy";
    save_points_npy(points_file, X);

    struct Case {
      int bits = 0, tables = 0, m = 0;
      lsh::HyperplaneLsh lsh;
      Eigen::MatrixXf wf;  // the same W in float32 (exact)
#ifdef SPARSEACT_HAVE_FAISS
      std::unique_ptr<faiss::IndexLSH> index;
#endif
      std::vector<double> ours, ours32, faiss, numpy, product, eigen_zero, eigen_gemm, blocked64, blocked32, certified;
      std::vector<std::uint64_t> ours32_codes;
      lsh::HashStats stats64, stats32;
      std::vector<std::uint64_t> ours_codes, faiss_codes, numpy_codes, blocked64_codes, blocked32_codes, certified_codes;
      Eigen::VectorXd w_norms;
      std::int64_t uncertain = 0;
    };
    std::vector<Case> cases(bit_counts.size());
    std::string weight_files;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Case& c = cases[i];
      c.bits = bit_counts[i];
      std::tie(c.tables, c.m) = tables_for(c.bits);
      c.lsh = lsh::make_hyperplane_lsh(d, c.tables, c.m, 0.0, a.common.seed, 1 + i);
#ifdef SPARSEACT_HAVE_FAISS
      c.index = std::make_unique<faiss::IndexLSH>(d, c.bits, /*rotate_data=*/true, /*train_thresholds=*/false);
      c.index->rrot.init(static_cast<int>((a.common.seed * 1000003 + c.bits) & 0x7fffffff));
      // FAISS's rotation: A is b × d, row-major, orthonormal rows. It becomes our w, offsets zero.
      c.lsh.w = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(c.index->rrot.A.data(), c.bits, d)
                    .cast<double>();
      if (!c.index->rrot.b.empty() || c.index->code_size != static_cast<std::size_t>((c.bits + 7) / 8))
        throw std::runtime_error("FAISS IndexLSH: unexpected rotation bias or code size");
#else
      c.lsh.w = c.lsh.w.cast<float>().cast<double>();
#endif
      c.lsh.c.setZero();
      c.wf = c.lsh.w.cast<float>();
      c.w_norms = c.lsh.w.rowwise().norm();
      const fs::path wfile = tmp.path / fmt::format("W{}.npy", c.bits);
      save_npy(wfile, c.lsh.w);
      weight_files += (i ? "," : "") + wfile.string();
    }

    // Warm-up, untimed: OpenBLAS's pool, OpenMP's team, first-call set-up on every path.
    {
      const Eigen::Index nw = std::min<Eigen::Index>(N, 16384);
      const Eigen::MatrixXd Xw = X.leftCols(nw);
      std::vector<std::uint64_t> tmpc;
      for (Case& c : cases) {
        (void)lsh::hash(c.lsh, Xw);
        (void)lsh::hash(c.lsh, Eigen::MatrixXf(Xf.leftCols(nw)), lsh::HashOptions{.precision = lsh::HashPrecision::float32_certified});
        blocked_hash<double>(dgemm, c.lsh.w.data(), Xw.data(), d, nw, c.bits, tmpc);
        blocked_hash<float>(sgemm, c.wf.data(), Xf.data(), d, nw, c.bits, tmpc);
        std::int64_t unsure = 0;
        certified_hash(sgemm, c.wf, c.w_norms, c.lsh.w, Xw, tmpc, unsure);
#ifdef SPARSEACT_HAVE_FAISS
        std::vector<std::uint8_t> fc(static_cast<std::size_t>(nw) * c.index->code_size);
        c.index->sa_encode(nw, Xf.data(), fc.data());
#endif
      }
    }

    auto progress = a.progress("bits", cases.size());
    for (Case& c : cases) {
      Eigen::MatrixXd P_warm(c.bits, N);
      P_warm.setZero();
#ifdef SPARSEACT_HAVE_FAISS
      std::vector<std::uint8_t> fcodes(static_cast<std::size_t>(N) * c.index->code_size);
#endif
      for (int rep = 0; rep < repeats; ++rep) {
        Eigen::Matrix<std::uint64_t, Eigen::Dynamic, Eigen::Dynamic> words;
        c.ours.push_back(seconds([&] { words = lsh::hash(c.lsh, X, lsh::HashOptions{}, &c.stats64); }));
        if (rep == 0) c.ours_codes = join_tables(words, c.m);
        words.resize(0, 0);
        // The certified float32 path on the float32 points FAISS hashes (no conversion inside the timing).
        c.ours32.push_back(seconds([&] {
          words = lsh::hash(c.lsh, Xf, lsh::HashOptions{.precision = lsh::HashPrecision::float32_certified}, &c.stats32);
        }));
        if (rep == 0) c.ours32_codes = join_tables(words, c.m);
        words.resize(0, 0);
#ifdef SPARSEACT_HAVE_FAISS
        c.faiss.push_back(seconds([&] { c.index->sa_encode(N, Xf.data(), fcodes.data()); }));
        if (rep == 0) c.faiss_codes = words_from_bytes(fcodes.data(), static_cast<std::size_t>(N), c.index->code_size);
#endif
        // Where our time goes: the product alone (warm output buffer, β = 0) ...
        c.product.push_back(seconds([&] { gemm_nn<double>(dgemm, c.bits, int(N), d, c.lsh.w.data(), X.data(), 0.0, P_warm.data()); }));
        // ... and as Eigen evaluates `MatrixXd P = w * X` with EIGEN_USE_BLAS: fresh buffer, zeroed, gemm with β = 1.
        {
          Eigen::MatrixXd P;
          c.eigen_zero.push_back(seconds([&] {
            P.resize(c.bits, N);
            P.setZero();
          }));
          c.eigen_gemm.push_back(seconds([&] { gemm_nn<double>(dgemm, c.bits, int(N), d, c.lsh.w.data(), X.data(), 1.0, P.data()); }));
        }
        std::vector<std::uint64_t> codes64, codes32, codesc;
        c.certified.push_back(seconds([&] { certified_hash(sgemm, c.wf, c.w_norms, c.lsh.w, X, codesc, c.uncertain); }));
        c.blocked64.push_back(seconds([&] { blocked_hash<double>(dgemm, c.lsh.w.data(), X.data(), d, N, c.bits, codes64); }));
        c.blocked32.push_back(seconds([&] { blocked_hash<float>(sgemm, c.wf.data(), Xf.data(), d, N, c.bits, codes32); }));
        if (rep == 0) {
          c.blocked64_codes = std::move(codes64);
          c.blocked32_codes = std::move(codes32);
          c.certified_codes = std::move(codesc);
        }
      }
      fmt::print(stderr, "lsh_vs_faiss: b = {}: ours {:.4g} s, FAISS {} s\n", c.bits, median(c.ours),
                 c.faiss.empty() ? std::string("-") : fmt::format("{:.4g}", median(c.faiss)));
      progress->advance();
    }

    // numpy, once for every b, on the same X and W.
    const auto [rc, out] = run_capture({python, script.string(), "--points", points_file.string(), "--weights", weight_files, "--outdir",
                                        tmp.path.string(), "--repeats", std::to_string(repeats), "--budget-s", fmt::format("{}", peer_budget)},
                                       peer_env);
    if (rc != 0) throw std::runtime_error(fmt::format("numpy peer failed (exit {})", rc));
    const std::string line = out.substr(0, out.find('\n'));
    const json peer = json::parse(line, nullptr, false);
    if (peer.is_discarded() || !peer.contains("bits")) throw std::runtime_error(fmt::format("numpy peer: unreadable output '{}'", line));
    for (Case& c : cases) {
      const std::string key = std::to_string(c.bits);
      if (!peer["bits"].contains(key)) throw std::runtime_error("numpy peer: no timing for b = " + key);
      c.numpy = peer["bits"][key]["times_s"].get<std::vector<double>>();
      const std::size_t code_bytes = static_cast<std::size_t>((c.bits + 7) / 8);
      std::ifstream f(tmp.path / fmt::format("codes_{}.bin", c.bits), std::ios::binary);
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(N) * code_bytes);
      f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      if (!f || f.peek() != std::char_traits<char>::eof())
        throw std::runtime_error(fmt::format("numpy peer: codes_{}.bin is not {} × {} bytes", c.bits, N, code_bytes));
      c.numpy_codes = words_from_bytes(bytes.data(), static_cast<std::size_t>(N), code_bytes);
    }

    // Results.
    const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
    const double bound_faiss = gamma_d(d, u32) + gamma_d(d, u64), bound_numpy = 2 * gamma_d(d, u64);
    Table timings{"timings",
                  {"bits", "ours_s", "faiss_s", "numpy_s", "ratio_faiss", "ratio_numpy", "identical_faiss", "identical_numpy",
                   "product_s", "eigen_zero_s", "eigen_gemm_s", "sign_pass_s", "blocked_f64_s", "blocked_f32_s", "certified_f32_s"},
                  {}};
    // method: 0 ours, 1 FAISS, 2 numpy, 3 product, 4 Eigen zero-fill, 5 Eigen gemm, 6 blocked f64, 7 blocked f32,
    // 8 certified f32 sketch (float64-exact codes), 9 ours with HashPrecision::float32_certified
    Table raw{"timings_raw", {"bits", "method", "repeat", "seconds"}, {}};
    json per_bits = json::array();
    std::vector<double> xs, tp_ours, tp_ours32, tp_faiss, tp_numpy, tp_b64, tp_b32, tp_cert;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::string numpy_version = peer.value("numpy", "");
    for (Case& c : cases) {
      const double ours_s = median(c.ours), numpy_s = median(c.numpy);
      const double faiss_s = c.faiss.empty() ? nan : median(c.faiss);
      const double ratio_faiss = faiss_s / ours_s, ratio_numpy = numpy_s / ours_s;
      const double product_s = median(c.product), zero_s = median(c.eigen_zero), egemm_s = median(c.eigen_gemm);
      const double sign_s = std::max(0.0, ours_s - zero_s - egemm_s);
      const double b64_s = median(c.blocked64), b32_s = median(c.blocked32), cert_s = median(c.certified);
      const Agreement ag_numpy = agree(c.ours_codes, c.numpy_codes, c.lsh.w, X, bound_numpy);
      const Agreement ag_b64 = agree(c.ours_codes, c.blocked64_codes, c.lsh.w, X, bound_numpy);
      const Agreement ag_cert = agree(c.ours_codes, c.certified_codes, c.lsh.w, X, bound_numpy);
      const Agreement ag_ours32 = agree(c.ours_codes, c.ours32_codes, c.lsh.w, X, 0.0);  // must be identical
      const double ours32_s = median(c.ours32), ratio_faiss32 = faiss_s / ours32_s;
      Agreement ag_faiss, ag_b32;
      if (kHaveFaiss) {
        ag_faiss = agree(c.ours_codes, c.faiss_codes, c.lsh.w, X, bound_faiss);
        ag_b32 = agree(c.faiss_codes, c.blocked32_codes, c.lsh.w, X, 2 * gamma_d(d, u32));
      }
      timings.add_row({double(c.bits), ours_s, faiss_s, numpy_s, ratio_faiss, ratio_numpy, kHaveFaiss ? ag_faiss.identical_fraction : nan,
                       ag_numpy.identical_fraction, product_s, zero_s, egemm_s, sign_s, b64_s, b32_s, cert_s});
      const std::vector<std::pair<int, const std::vector<double>*>> methods = {
          {0, &c.ours}, {1, &c.faiss}, {2, &c.numpy}, {3, &c.product}, {4, &c.eigen_zero}, {5, &c.eigen_gemm}, {6, &c.blocked64}, {7, &c.blocked32}, {8, &c.certified}, {9, &c.ours32}};
      for (const auto& [m, ts] : methods)
        for (std::size_t i = 0; i < ts->size(); ++i) raw.add_row({double(c.bits), double(m), double(i), (*ts)[i]});
      xs.push_back(c.bits);
      tp_ours.push_back(N / ours_s / 1e6);
      tp_numpy.push_back(N / numpy_s / 1e6);
      tp_b64.push_back(N / b64_s / 1e6);
      tp_b32.push_back(N / b32_s / 1e6);
      tp_cert.push_back(N / cert_s / 1e6);
      tp_ours32.push_back(N / ours32_s / 1e6);
      if (kHaveFaiss) tp_faiss.push_back(N / faiss_s / 1e6);

      json entry = {{"bits", c.bits},
                    {"tables", c.tables},
                    {"bits_per_table", c.m},
                    {"ours_s", ours_s},
                    {"ours_times_s", c.ours},
                    {"ours_f32_certified_s", ours32_s},
                    {"ours_f32_certified_times_s", c.ours32},
                    {"ratio_f32_certified_vs_ours", ours_s / ours32_s},
                    {"certification",
                     {{"f64_points_recomputed", c.stats64.points_recomputed},
                      {"f64_bits_recomputed", c.stats64.bits_recomputed},
                      {"f32_points_recomputed", c.stats32.points_recomputed},
                      {"f32_bits_recomputed", c.stats32.bits_recomputed},
                      {"f32_fraction_points_recomputed", c.stats32.recomputed_fraction()},
                      {"f32_fraction_bits_recomputed", double(c.stats32.bits_recomputed) / (double(N) * c.bits)},
                      {"agreement_f32_certified_vs_f64", agreement_json(ag_ours32, 0.0)},
                      {"f32_input", "float32 points (the array FAISS hashes); codes compared with the float64 call on the same values in float64"},
                      {"note", "A bit is recomputed when its BLAS projection lies within the rigorous rounding bound of 0 "
                               "(lsh/hash_certify.hpp): from the float64 values, exactly if need be. Counts are from the first repeat."}}},
                    {"peer_s", {{"numpy", numpy_s}}},
                    {"peer_times_s", {{"numpy", c.numpy}}},
                    {"ratio", {{"numpy", ratio_numpy}}},
                    {"ratio_best_of_repeats", {{"numpy", best(c.numpy) / best(c.ours)}}},
                    {"throughput_points_per_s", {{"ours", N / ours_s}, {"numpy", N / numpy_s}}},
                    {"agreement", {{"numpy", agreement_json(ag_numpy, bound_numpy)}}},
                    {"ours_breakdown",
                     {{"what", "the library before issue 15: `MatrixXd P = w * X` then the sign pass (timed pieces; not the library now)"},
                      {"product_only_s", product_s},
                      {"eigen_alloc_zero_s", zero_s},
                      {"eigen_gemm_beta1_s", egemm_s},
                      {"sign_pass_and_rest_s", sign_s},
                      {"note", "product_only: dgemm W·X into a warm buffer (β = 0). The library's `MatrixXd P = w * X` is a fresh "
                               "b × N buffer zeroed by Eigen (alloc_zero, page faults included) then dgemm with β = 1 (gemm_beta1); "
                               "sign_pass_and_rest = ours − alloc_zero − gemm_beta1 (the sign pass, the code matrix, freeing P)."}}},
                    {"sketches",
                     {{"blocked_f64_s", b64_s},
                      {"blocked_f32_s", b32_s},
                      {"certified_f32_s", cert_s},
                      {"certified_recomputed_bits", c.uncertain},
                      {"ratio_certified_vs_ours", ours_s / cert_s},
                      {"agreement_certified_vs_ours", agreement_json(ag_cert, bound_numpy)},
                      {"ratio_blocked_f64_vs_ours", ours_s / b64_s},
                      {"agreement_blocked_f64_vs_ours", agreement_json(ag_b64, bound_numpy)},
                      {"note", fmt::format("Not the library: column blocks of {} points, each block by one OpenMP thread with a single-threaded "
                                           "gemm (β = 0) into its b × {} buffer, then the sign pass while the block is in cache; same "
                                           "thread count. "
                                           "blocked_f32 hashes the float32 points (FAISS's arithmetic). certified_f32 hashes the float64 points: each block "
                                           "rounded to float32, sgemm, and a bit whose |p| ≤ 1.01 (γ_d^f32 + 3u) ‖w_j‖ ‖x_n‖ "
                                           "is recomputed in float64, so its codes are the float64 codes.",
                                           kBlockColumns, kBlockColumns)}}}};
      if (kHaveFaiss) {
        entry["peer_s"]["faiss_IndexLSH"] = faiss_s;
        entry["peer_times_s"]["faiss_IndexLSH"] = c.faiss;
        entry["ratio"]["faiss_IndexLSH"] = ratio_faiss;
        entry["ratio"]["faiss_IndexLSH_vs_ours_f32_certified"] = ratio_faiss32;
        entry["ratio_best_of_repeats"]["faiss_IndexLSH"] = best(c.faiss) / best(c.ours);
        entry["throughput_points_per_s"]["faiss_IndexLSH"] = N / faiss_s;
        entry["agreement"]["faiss_IndexLSH"] = agreement_json(ag_faiss, bound_faiss);
        entry["sketches"]["ratio_blocked_f32_vs_faiss"] = faiss_s / b32_s;
        entry["sketches"]["ratio_certified_f32_vs_faiss"] = faiss_s / cert_s;
        entry["sketches"]["agreement_blocked_f32_vs_faiss"] = agreement_json(ag_b32, 2 * gamma_d(d, u32));
      }
      per_bits.push_back(entry);

      const std::string bl = std::to_string(c.bits);
      if (kHaveFaiss) {
        equals(a, {.id = "codes_agree_faiss_b" + bl,
                     .claim = "Lemma 4.2 (the hash sign(W x), with FAISS's W)",
                     .statement = "unexplained differing bits = 0: ours and FAISS IndexLSH give the same b-bit code for every point, except bits whose projection "
                                  "|wᵀx| lies within float32 rounding of 0 (|wᵀx| ≤ (γ_d^f32 + γ_d^f64) Σ_k |w_k x_k|)",
                     .note = fmt::format("{} points, b = {} (ours: {} table(s) of {} bits). {} of {} codes differ ({} bits; largest "
                                         "|wᵀx|/Σ|w_k x_k| among them {:.3g}, bound {:.3g}). FAISS computes in float32 on the same "
                                         "float32-representable points; bit order: FAISS byte j/8 bit j%8 = our bit j.",
                                         N, c.bits, c.tables, c.m, ag_faiss.differing_codes, N, ag_faiss.differing_bits,
                                         ag_faiss.max_margin, bound_faiss)},
               static_cast<long long>(ag_faiss.unexplained_bits), 0)
          .tolerance = {{"abs", 0}, {"differing_bits_within_rounding", ag_faiss.differing_bits}, {"identical_fraction", ag_faiss.identical_fraction}, {"rounding_bound", bound_faiss}};
      }
      equals(a, {.id = "f32_certified_equals_f64_b" + bl,
                   .claim = "Lemma 4.2 (the hash sign(W x))",
                   .statement = "differing bits = 0: lsh::hash on the float32 points with HashPrecision::float32_certified gives exactly "
                                "the float64 codes of the same points held in float64",
                   .note = fmt::format("{} points, b = {}: {} points ({:.3g} of them) had a bit recomputed from the float64 values "
                                       "({} bits); {} codes differ.",
                                       N, c.bits, c.stats32.points_recomputed, c.stats32.recomputed_fraction(), c.stats32.bits_recomputed,
                                       ag_ours32.differing_codes)},
             static_cast<long long>(ag_ours32.differing_bits), 0)
          .tolerance = {{"abs", 0}, {"fraction_points_recomputed", c.stats32.recomputed_fraction()}};
      equals(a, {.id = "codes_agree_numpy_b" + bl,
                   .claim = "Lemma 4.2 (the hash sign(W x), numpy on the same W)",
                   .statement = "unexplained differing bits = 0: ours and numpy packbits(X @ W.T > 0) give the same b-bit code for every point, except bits whose "
                                "projection lies within float64 rounding of 0 (|wᵀx| ≤ 2 γ_d^f64 Σ_k |w_k x_k|)",
                   .note = fmt::format("{} points, b = {}: {} codes differ ({} bits).", N, c.bits, ag_numpy.differing_codes,
                                       ag_numpy.differing_bits)},
               static_cast<long long>(ag_numpy.unexplained_bits), 0)
          .tolerance = {{"abs", 0}, {"differing_bits_within_rounding", ag_numpy.differing_bits}, {"identical_fraction", ag_numpy.identical_fraction}, {"rounding_bound", bound_numpy}};
      if (kHaveFaiss) {
        const double ratio_best = best(c.faiss) / best(c.ours);
        speedup_at_least(a, {.id = "throughput_vs_faiss_b" + bl,
                     .claim = "benchmark target (issue 15): float64 hashing at least 1.5× FAISS's throughput on the CPU",
                     .statement = "ours (float64) hashes at least 1.5× as many points per second as FAISS IndexLSH::sa_encode: t_faiss / t_ours ≥ 1.5",
                     .note = fmt::format("{} points, d = {}, b = {}: ours {:.4g} s = {:.3g} M points/s (float64; median of {}, range "
                                         "{:.4g}–{:.4g}), FAISS {:.4g} s = {:.3g} M points/s (float32; median of {}, range "
                                         "{:.4g}–{:.4g}), {} threads each. Our time: alloc+zero of W·X {:.3g} s, dgemm {:.3g} s, "
                                         "sign pass and rest {:.3g} s. Sketches (not the library): blocked float64 {:.4g} s ({:.2f}x FAISS), "
                                         "blocked float32 {:.4g} s ({:.2f}x FAISS), float32 with float64 certification (codes "
                                         "identical to float64) {:.4g} s ({:.2f}x FAISS).",
                                         N, d, c.bits, ours_s, N / ours_s / 1e6, repeats, best(c.ours), worst(c.ours), faiss_s,
                                         N / faiss_s / 1e6, c.faiss.size(), best(c.faiss), worst(c.faiss), threads, zero_s, egemm_s,
                                         sign_s, b64_s, faiss_s / b64_s, b32_s, faiss_s / b32_s, cert_s, faiss_s / cert_s)},
                         c.ours, c.faiss, kTargetFaiss)
            .tolerance["ratio_best_of_repeats"] = ratio_best;
        speedup_at_least(a, {.id = "throughput_f32_certified_vs_faiss_b" + bl,
                     .claim = "benchmark target (issue 15): certified float32 hashing at least 3× FAISS's throughput on the CPU",
                     .statement = "ours (HashPrecision::float32_certified on the float32 points FAISS gets, float64 codes) hashes at "
                                  "least 3× as many points per second as FAISS IndexLSH::sa_encode: t_faiss / t_ours32 ≥ 3",
                     .note = fmt::format("{} points, d = {}, b = {}: ours float32-certified {:.4g} s = {:.3g} M points/s (median of {}, "
                                         "range {:.4g}–{:.4g}; {:.3g} of the points had a bit recomputed), FAISS {:.4g} s (float32), "
                                         "{} threads each.",
                                         N, d, c.bits, ours32_s, N / ours32_s / 1e6, repeats, best(c.ours32), worst(c.ours32),
                                         c.stats32.recomputed_fraction(), faiss_s, threads)},
                         c.ours32, c.faiss, kTargetFaiss32)
            .tolerance["ratio_best_of_repeats"] = best(c.faiss) / best(c.ours32);
      }
      fmt::print(stderr,
                 "lsh_vs_faiss: b = {}: ours {:.4g} s ({:.3g} Mpts/s), ours f32-certified {:.4g} s (ratio {:.3f}, {:.3g} recomputed), "
                 "FAISS {:.4g} s (ratio {:.3f}), numpy {:.4g} s (ratio {:.2f}); "
                 "identical codes: FAISS {:.8f}, numpy {:.8f}; sketches: blocked f64 {:.4g} s, f32 {:.4g} s, certified f32 {:.4g} s\n",
                 c.bits, ours_s, N / ours_s / 1e6, ours32_s, ratio_faiss32, c.stats32.recomputed_fraction(), faiss_s, ratio_faiss, numpy_s, ratio_numpy, kHaveFaiss ? ag_faiss.identical_fraction : nan,
                 ag_numpy.identical_fraction, b64_s, b32_s, cert_s);
    }

    r.data["bits"] = per_bits;
    r.data["points"] = N;
    r.data["d"] = d;
    r.data["threads"] = threads;
    {
      using corename_t = char* (*)();
      auto corename = reinterpret_cast<corename_t>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
      r.data["openblas_core"] = corename ? std::string(corename()) : std::string("unknown");
    }
    r.data["repeats"] = repeats;
    r.data["points_distribution"] = "uniform on [−1, 1]^d, rounded to float32 values (held as float64 by ours and numpy)";
    r.data["points_given"] = {{"ours_f64", "float64 (Eigen::MatrixXd X: the float32 values promoted)"},
                              {"ours_f32_certified", "float32 (Eigen::MatrixXf Xf: the same array FAISS gets)"},
                              {"faiss_IndexLSH", "float32 (Xf)"},
                              {"numpy", "float64 (X)"}};
    r.data["ours"] = {{"call", "sparseact::lsh::hash(const HyperplaneLsh&, const Eigen::MatrixXd& X, HashOptions{}, &stats) for float64; "
                               "sparseact::lsh::hash(const HyperplaneLsh&, const Eigen::MatrixXf& Xf, HashOptions{.precision = "
                               "float32_certified}, &stats) for certified float32"},
                      {"precision", "float64 (default) on float64 points; float32_certified on float32 points (sgemm, float64 codes)"},
                      {"threads", "blocks of points over OpenMP's team, serial OpenBLAS inside (set per call, restored after)"},
                      {"w", kHaveFaiss ? "FAISS's RandomRotationMatrix A (b × d, orthonormal rows), offsets c = 0"
                                       : "make_hyperplane_lsh's Gaussian rows rounded to float32, offsets c = 0"},
                      {"timer", "std::chrono::steady_clock"}};
#ifdef SPARSEACT_HAVE_FAISS
    r.data["faiss"] = {{"available", true},
                       {"call", "faiss::IndexLSH(d, b, rotate_data=true, train_thresholds=false).sa_encode(N, X, codes)"},
                       {"precision", "float32"},
                       {"version", fmt::format("{}.{}.{}", FAISS_VERSION_MAJOR, FAISS_VERSION_MINOR, FAISS_VERSION_PATCH)}};
#else
    r.data["faiss"] = {{"available", false}, {"reason", "built without libfaiss-dev (not found when CMake configured the build)"}};
#endif
    r.data["peer"] = {{"python", python}, {"script", script.string()}, {"numpy", numpy_version},
                      {"call", "np.packbits(X @ W.T > 0, axis=1, bitorder='little')"}, {"precision", "float64"},
                      {"env", peer_env}, {"timer", "time.perf_counter, product and packing included"}};
    r.data["peer_budget_s"] = peer_budget;
    {
      double load[3] = {0, 0, 0};
      if (getloadavg(load, 3) == 3) r.data["load_average_at_end"] = {load[0], load[1], load[2]};
      r.data["load_average_at_start"] = {load_start[0], load_start[1], load_start[2]};
    }
    a.add_table(std::move(timings));
    a.add_table(std::move(raw));

    plot::Figure fig{.name = "lsh_vs_faiss",
                     .title = fmt::format("Hyperplane LSH, {} points, d = {}: throughput ({} threads, median of repeats)", N, d, threads),
                     .xlabel = "hash bits b (hyperplanes)",
                     .ylabel = "million points per second"};
    fig.series.push_back({.x = xs, .y = tp_ours, .label = "sparseact lsh::hash (float64)", .style = plot::Style::linespoints});
    fig.series.push_back({.x = xs, .y = tp_ours32, .label = "sparseact lsh::hash (float32 points, certified: float64 codes)", .style = plot::Style::linespoints});
    if (kHaveFaiss) fig.series.push_back({.x = xs, .y = tp_faiss, .label = "FAISS IndexLSH sa_encode (float32)", .style = plot::Style::linespoints});
    fig.series.push_back({.x = xs, .y = tp_numpy, .label = "numpy packbits(X @ W.T > 0) (float64)", .style = plot::Style::linespoints});
    fig.series.push_back({.x = xs, .y = tp_b64, .label = "sketch: blocked float64 (not in the library)", .style = plot::Style::linespoints, .dashed = true});
    fig.series.push_back({.x = xs, .y = tp_b32, .label = "sketch: blocked float32 (not in the library)", .style = plot::Style::linespoints, .dashed = true});
    fig.series.push_back({.x = xs, .y = tp_cert, .label = "sketch: float32 + float64 certification, float64 codes", .style = plot::Style::linespoints, .dashed = true});
    double ymax = 0;
    for (const auto& s : fig.series) ymax = std::max(ymax, *std::max_element(s.y.begin(), s.y.end()));
    fig.yrange = std::make_pair(0.0, ymax * 1.6);
    fig.xrange = std::make_pair(0.0, *std::max_element(xs.begin(), xs.end()) * 1.1);
    double y = 0.95;
    for (const json& e : per_bits) {
      std::string text = fmt::format("b = {}: ", e["bits"].get<int>());
      if (kHaveFaiss) text += fmt::format("{:.2f}x FAISS, ", e["ratio"]["faiss_IndexLSH"].get<double>());
      text += fmt::format("{:.2f}x numpy", e["ratio"]["numpy"].get<double>());
      fig.annotations.push_back({.x = 0.03, .y = y, .text = text, .graph = true});
      y -= 0.05;
    }
    fig.legend = "top right";
    a.add_figure(std::move(fig));
  });
}
