// moe_vs_torch — benchmark: one training step's computation (loss and full gradient) of paper 004's decoder-only
// transformer (§4), ours against PyTorch on the same θ and the same tokens, for the top-2 Mixture-of-Experts model
// and the dense model of the same width.
//
// Models (nn/decoder; defaults): d = 128, L = 2 blocks, 4 heads, FFN inner width 128, vocabulary 64, sequences of
// T = 64 tokens (max_len = T); "moe": K = 8 experts with top-2 token-choice routing, "dense": K = 1 (one expert,
// no router). θ: nn::init_decoder (GPT-2's N(0, 0.02²), gains 1) plus N(0, 0.1²) on every entry, so that gains
// differ from 1 and attention and routing are far from uniform. The batch: B = 32 sequences of T + 1 tokens drawn
// uniformly from the vocabulary; inputs the first T, targets the next token at every position (no position masked).
//
// Ours, timed: nn::DecoderModel::forward + nn::loss_value(LossKind::token_cross_entropy, with ∂L/∂F) +
// DecoderModel::backward (the full gradient ∂L/∂θ), one model object reused across repeats as a training loop does.
// PyTorch (moe_vs_torch.py under Debian's /usr/bin/python3, float64): an nn.Module that mirrors the architecture
// (pre-norm RMSNorm with gain and eps 1e-6, causal multi-head attention without biases, ReLU experts without biases,
// top-2 routing by a stable descending sort so that ties go to the lowest index, softmax over the two chosen logits,
// Mixtral's per-expert gather and index_add_), loaded with our θ (θ.npy plus its segment layout in meta.json; the
// script's docstring documents the layout), F.cross_entropy over every position, loss.backward(); timed: zero_grad,
// forward, loss and backward. Both sides warm up once, untimed, and report the median of --repeats.
//
// Checks: agree_loss (|L − L_torch| / |L_torch| ≤ 1e-10, both models), agree_grad (per segment of θ — E, P, each
// block's gains, W_q … W_o, router, every expert's W1 and W2, the final gain, W_out — max |g − g_torch| / max
// |g_torch| over the segment, the worst segment of both models ≤ 1e-8), ratio_moe (t_torch / t_ours ≥ 1.5 for the
// MoE model, ratio of medians, app::speedup_at_least: a noisy machine makes it inconclusive, never "holds").
// ratio_dense is reported in the JSON and the table, without a target.
//
// Threads: one on both sides by default (--threads overrides): OpenMP's team and OpenBLAS's pool here,
// torch.set_num_threads and OMP/OPENBLAS/MKL_NUM_THREADS for the peer.
//
// Where our time goes (informational, "profile_ours" in the JSON): the same forward and backward re-run from the
// library's layer functions (rmsnorm_*, attention_*, ffn_*) with a timer around each call; the embedding, the loss
// and the unembedding products (OpenBLAS's dgemm, as the library runs them) are timed as the decoder runs them.
// The re-run's gradient is compared with DecoderModel's (it is the same computation). This file instantiates no
// Eigen product of the library's operand types (see gemm below): one would interpose the library's own.
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/npy.hpp>
#include <sparseact/core/rng.hpp>
#include <sparseact/nn/attention.hpp>
#include <sparseact/nn/decoder.hpp>
#include <sparseact/nn/loss.hpp>
#include <sparseact/nn/moe_ffn.hpp>

#include "peer.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::bench;
namespace fs = std::filesystem;

namespace {

constexpr double kTarget = 1.5;        // ours ≥ 1.5× faster than PyTorch for the MoE model (the CPU target)
constexpr double kLossTol = 1e-10;     // relative difference of the losses
constexpr double kGradTol = 1e-8;      // per segment: max |Δg| / max |g_torch|
constexpr double kNoiseSd = 0.1;       // added to every entry of θ after init_decoder
constexpr int kDefaultThreads = 1;
constexpr std::uint64_t kInitStream = 0x496e697400000000ULL;   // "Init"
constexpr std::uint64_t kNoiseStream = 0x4e6f697365000000ULL;  // "Noise"
constexpr std::uint64_t kTokenStream = 0x546f6b656e000000ULL;  // "Token"

using CMap = Eigen::Map<const Eigen::MatrixXd>;
using Map = Eigen::Map<Eigen::MatrixXd>;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// OpenBLAS's kernel set, through the already-loaded library ("" where it is not OpenBLAS); both sides load it.
std::string openblas_core() {
  using namer = char* (*)();
  auto core = reinterpret_cast<namer>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  return core ? std::string(core()) : std::string();
}

/// C = α op(A) op(B) + β C through the BLAS's dgemm_, found in the already-loaded OpenBLAS: the products the
/// library hands to OpenBLAS (EIGEN_USE_BLAS, inside the library only) run the same kernels here. The profile must
/// not instantiate Eigen's own products of the library's operand types in this executable: such an instantiation
/// is exported from the executable as a weak symbol and then interposes the library's copy (ELF symbol
/// interposition), so that the library's CMap × MatrixXd products would run Eigen's kernels instead of OpenBLAS.
void gemm(char ta, char tb, int m, int n, int k, double alpha, const double* A, int lda, const double* B, int ldb, double beta, double* C,
          int ldc) {
  using dgemm_t = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
                           const double*, const int*, const double*, double*, const int*);
  static const auto f = reinterpret_cast<dgemm_t>(dlsym(RTLD_DEFAULT, "dgemm_"));
  if (!f) throw std::runtime_error("moe_vs_torch: the BLAS's dgemm_ is not loaded");
  f(&ta, &tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
}

/// Where each part of θ starts: nn/decoder's layout (decoder.hpp: E, P, then per block g₁, attention, g₂, FFN,
/// then the final gain and W_out), recomputed here for the hand-over and the profile.
struct Offsets {
  Eigen::Index d, A, E, P, blocks, block, final_gain, W_out, end;
  explicit Offsets(const nn::DecoderShape& s)
      : d(s.d), A(s.attention().parameter_count()), E(0), P(d * s.vocab), blocks(P + d * s.max_len), block(s.block_size()),
        final_gain(blocks + s.layers * block), W_out(final_gain + d), end(W_out + Eigen::Index(s.vocab) * d) {}
  Eigen::Index g1(int l) const { return blocks + l * block; }
  Eigen::Index attn(int l) const { return g1(l) + d; }
  Eigen::Index g2(int l) const { return attn(l) + A; }
  Eigen::Index ffn(int l) const { return g2(l) + d; }
};

/// One named segment of θ: a rows×cols matrix stored column-major at offset. kind: "table" (E, P: embeddings as
/// columns), "matrix" (y = W x), "gain".
struct Segment {
  std::string name, kind;
  Eigen::Index offset, rows, cols;
  Eigen::Index size() const { return rows * cols; }
};

std::vector<Segment> segments(const nn::DecoderShape& s) {
  const Offsets o(s);
  const Eigen::Index d = s.d, f = s.inner, K = s.experts, dd = d * d;
  std::vector<Segment> v{{"E", "table", o.E, d, s.vocab}, {"P", "table", o.P, d, s.max_len}};
  for (int l = 0; l < s.layers; ++l) {
    const std::string b = fmt::format("block{}.", l);
    v.push_back({b + "g1", "gain", o.g1(l), d, 1});
    const char* names[] = {"W_q", "W_k", "W_v", "W_o"};
    for (int i = 0; i < 4; ++i) v.push_back({b + "attn." + names[i], "matrix", o.attn(l) + i * dd, d, d});
    v.push_back({b + "g2", "gain", o.g2(l), d, 1});
    Eigen::Index at = o.ffn(l);
    if (K > 1) v.push_back({b + "ffn.W_r", "matrix", at, K, d}), at += K * d;
    for (Eigen::Index k = 0; k < K; ++k) {
      v.push_back({fmt::format("{}ffn.expert{}.W1", b, k), "matrix", at, f, d});
      v.push_back({fmt::format("{}ffn.expert{}.W2", b, k), "matrix", at + f * d, d, f});
      at += 2 * f * d;
    }
    if (at != o.g1(l) + o.block) throw std::logic_error("moe_vs_torch: a block's segments do not add up to its size");
  }
  v.push_back({"final.g", "gain", o.final_gain, d, 1});
  v.push_back({"W_out", "matrix", o.W_out, s.vocab, d});
  Eigen::Index next = 0;
  for (const Segment& g : v) {
    if (g.offset != next) throw std::logic_error("moe_vs_torch: θ's segments are not contiguous");
    next += g.size();
  }
  if (next != s.parameter_count()) throw std::logic_error("moe_vs_torch: θ's segments do not cover DecoderShape::parameter_count()");
  return v;
}

struct Params {
  std::string python = "/usr/bin/python3";
  int batch = 0, seq_len = 64, d = 128, layers = 2, heads = 4, inner = 128, experts = 8, top = 2, vocab = 64, repeats = 0;
  double peer_budget = 300;
  int threads = kDefaultThreads;
  std::uint64_t seed = 1;
};

/// One model of the benchmark: its shape and θ.
struct Model {
  std::string part;  // "moe" | "dense"
  nn::DecoderShape shape;
  Eigen::VectorXd theta;
  std::vector<Segment> layout;
};

Model make_model(const Params& p, const std::string& part, int experts) {
  Model m{part, {.vocab = p.vocab, .d = p.d, .heads = p.heads, .layers = p.layers, .max_len = p.seq_len, .inner = p.inner,
                 .experts = experts, .top = p.top}, {}, {}};
  m.layout = segments(m.shape);
  m.theta = nn::init_decoder(m.shape, p.seed, stream_id(kInitStream, std::uint64_t(experts)));
  Eigen::VectorXd noise(m.theta.size());
  fill_random(noise.data(), std::size_t(noise.size()), Distribution::normal, kNoiseSd, p.seed, stream_id(kNoiseStream, std::uint64_t(experts)));
  m.theta += noise;
  return m;
}

/// B sequences of T + 1 uniform tokens: inputs the first T (batch.x, T × B), targets the next token (batch.y).
nn::Batch make_tokens(const Params& p) {
  nn::Batch b;
  b.x.resize(p.seq_len, p.batch), b.y.resize(p.seq_len, p.batch);
  for (int s = 0; s < p.batch; ++s) {
    Rng rng(p.seed, stream_id(kTokenStream, std::uint64_t(s)));
    std::vector<double> seq(std::size_t(p.seq_len) + 1);
    for (double& t : seq) t = double(rng.below(std::uint64_t(p.vocab)));
    for (int t = 0; t < p.seq_len; ++t) b.x(t, s) = seq[std::size_t(t)], b.y(t, s) = seq[std::size_t(t) + 1];
  }
  return b;
}

void export_for_peer(const fs::path& dir, const Model& m, const nn::Batch& batch) {
  fs::create_directories(dir);
  json layout = json::array();
  for (const Segment& g : m.layout)
    layout.push_back({{"name", g.name}, {"kind", g.kind}, {"offset", g.offset}, {"rows", g.rows}, {"cols", g.cols}});
  const nn::DecoderShape& s = m.shape;
  const json meta = {{"vocab", s.vocab}, {"d", s.d}, {"heads", s.heads}, {"layers", s.layers}, {"max_len", s.max_len},
                     {"inner", s.inner}, {"experts", s.experts}, {"top", s.top}, {"rms_eps", nn::kRmsEps},
                     {"num_params", m.theta.size()}, {"layout", layout}};
  std::ofstream(dir / "meta.json") << meta.dump(1) << '\n';
  save_npy(dir / "theta.npy", m.theta.transpose());
  save_npy(dir / "tokens.npy", batch.x);
  save_npy(dir / "targets.npy", batch.y);
}

/// One step of ours: forward, loss with ∂L/∂F, backward.
struct OursRun {
  double loss = 0;
  Eigen::VectorXd grad;
  std::vector<std::vector<int>> load;
};

void step(nn::DecoderModel& model, const Eigen::VectorXd& theta, const nn::Batch& batch, OursRun& r, Eigen::MatrixXd& dF) {
  r.loss = nn::loss_value(nn::LossKind::token_cross_entropy, model.forward(theta, batch.x), batch, &dF);
  model.backward(theta, dF, r.grad);
}

/// Our profile: DecoderModel's forward and backward re-run from the library's layer functions with a timer around
/// each call (decoder.cpp's loop, sequence after sequence). Returns seconds per part and the re-run's gradient.
struct Profile {
  double embed = 0, norm = 0, attn = 0, ffn = 0, unembed = 0, loss = 0;  // forward
  double b_unembed = 0, b_norm = 0, b_attn = 0, b_ffn = 0, b_embed = 0;   // backward
  double total = 0;
  Eigen::VectorXd grad;
  double forward() const { return embed + norm + attn + ffn + unembed; }
  double backward() const { return b_unembed + b_norm + b_attn + b_ffn + b_embed; }
};

Profile profile_once(const nn::DecoderShape& s, const Eigen::VectorXd& theta, const nn::Batch& batch) {
  using clock = std::chrono::steady_clock;
  const Offsets o(s);
  const Eigen::Index T = batch.x.rows(), B = batch.x.cols(), d = s.d;
  const CMap E(theta.data() + o.E, d, s.vocab), P(theta.data() + o.P, d, s.max_len), W_out(theta.data() + o.W_out, s.vocab, d);
  struct Blk {
    nn::RmsNormCache n1, n2;
    nn::AttentionCache attn;
    nn::FfnCache ffn;
  };
  struct Seq {
    std::vector<Blk> blocks;
    nn::RmsNormCache fin;
    Eigen::MatrixXd Z;
  };
  Profile pr;
  const auto t_all = clock::now();
  std::vector<Seq> seqs(static_cast<std::size_t>(B));
  Eigen::MatrixXd logits(s.vocab, T * B);
  auto timed = [](double& acc, auto&& f) {
    const auto t0 = clock::now();
    f();
    acc += seconds_since(t0);
  };
  for (Eigen::Index b = 0; b < B; ++b) {
    Seq& q = seqs[std::size_t(b)];
    Eigen::MatrixXd H(d, T);
    timed(pr.embed, [&] {
      for (Eigen::Index t = 0; t < T; ++t) H.col(t) = E.col(Eigen::Index(batch.x(t, b))) + P.col(t);
    });
    q.blocks.resize(std::size_t(s.layers));
    for (int l = 0; l < s.layers; ++l) {
      Blk& k = q.blocks[std::size_t(l)];
      Eigen::MatrixXd Y;
      timed(pr.norm, [&] { Y = nn::rmsnorm_forward(theta.data() + o.g1(l), H, k.n1); });
      timed(pr.attn, [&] { H += nn::attention_forward(s.attention(), theta.data() + o.attn(l), Y, k.attn); });
      timed(pr.norm, [&] { Y = nn::rmsnorm_forward(theta.data() + o.g2(l), H, k.n2); });
      timed(pr.ffn, [&] { H += nn::ffn_forward(s.ffn(), theta.data() + o.ffn(l), Y, k.ffn); });
    }
    timed(pr.norm, [&] { q.Z = nn::rmsnorm_forward(theta.data() + o.final_gain, H, q.fin); });
    timed(pr.unembed, [&] {  // logits of sequence b = W_out Z
      gemm('N', 'N', s.vocab, int(T), int(d), 1.0, W_out.data(), s.vocab, q.Z.data(), int(d), 0.0, logits.data() + b * T * s.vocab, s.vocab);
    });
  }
  Eigen::MatrixXd dF;
  timed(pr.loss, [&] { nn::loss_value(nn::LossKind::token_cross_entropy, logits, batch, &dF); });
  pr.grad = Eigen::VectorXd::Zero(o.end);
  Map dE(pr.grad.data() + o.E, d, s.vocab), dP(pr.grad.data() + o.P, d, s.max_len), dW_out(pr.grad.data() + o.W_out, s.vocab, d);
  for (Eigen::Index b = 0; b < B; ++b) {
    const Seq& q = seqs[std::size_t(b)];
    const double* dlog = dF.data() + b * T * s.vocab;  // V × T
    Eigen::MatrixXd dZ(d, T), dH;
    timed(pr.b_unembed, [&] {  // dW_out += dlog Zᵀ, dZ = W_outᵀ dlog
      gemm('N', 'T', s.vocab, int(d), int(T), 1.0, dlog, s.vocab, q.Z.data(), int(d), 1.0, dW_out.data(), s.vocab);
      gemm('T', 'N', int(d), int(T), s.vocab, 1.0, W_out.data(), s.vocab, dlog, s.vocab, 0.0, dZ.data(), int(d));
    });
    timed(pr.b_norm, [&] { dH = nn::rmsnorm_backward(theta.data() + o.final_gain, q.fin, dZ, pr.grad.data() + o.final_gain); });
    for (int l = s.layers - 1; l >= 0; --l) {
      const Blk& k = q.blocks[std::size_t(l)];
      Eigen::MatrixXd dY;
      timed(pr.b_ffn, [&] { dY = nn::ffn_backward(s.ffn(), theta.data() + o.ffn(l), k.ffn, dH, pr.grad.data() + o.ffn(l)); });
      timed(pr.b_norm, [&] { dH += nn::rmsnorm_backward(theta.data() + o.g2(l), k.n2, dY, pr.grad.data() + o.g2(l)); });
      timed(pr.b_attn, [&] { dY = nn::attention_backward(s.attention(), theta.data() + o.attn(l), k.attn, dH, pr.grad.data() + o.attn(l)); });
      timed(pr.b_norm, [&] { dH += nn::rmsnorm_backward(theta.data() + o.g1(l), k.n1, dY, pr.grad.data() + o.g1(l)); });
    }
    timed(pr.b_embed, [&] {
      for (Eigen::Index t = 0; t < T; ++t) dE.col(Eigen::Index(batch.x(t, b))) += dH.col(t), dP.col(t) += dH.col(t);
    });
  }
  pr.total = seconds_since(t_all);
  return pr;
}

/// The profile's median over `reps` runs (part by part), as JSON, with the re-run's agreement with DecoderModel.
json profile_ours(const Model& m, const nn::Batch& batch, const OursRun& ours, int reps, double ours_median_s) {
  std::vector<Profile> runs;
  for (int r = 0; r < reps; ++r) runs.push_back(profile_once(m.shape, m.theta, batch));
  auto med = [&](double Profile::*field) {
    std::vector<double> v;
    for (const Profile& p : runs) v.push_back(p.*field);
    return median(v);
  };
  const double total = med(&Profile::total);
  const double grad_diff = (runs.back().grad - ours.grad).cwiseAbs().maxCoeff() / std::max(ours.grad.cwiseAbs().maxCoeff(), 1e-300);
  json parts = json::object();
  const std::pair<const char*, double Profile::*> fields[] = {
      {"forward.embedding", &Profile::embed}, {"forward.rmsnorm", &Profile::norm},        {"forward.attention", &Profile::attn},
      {"forward.ffn", &Profile::ffn},         {"forward.unembedding", &Profile::unembed}, {"loss", &Profile::loss},
      {"backward.unembedding", &Profile::b_unembed}, {"backward.rmsnorm", &Profile::b_norm}, {"backward.attention", &Profile::b_attn},
      {"backward.ffn", &Profile::b_ffn},      {"backward.embedding", &Profile::b_embed}};
  for (const auto& [name, field] : fields) {
    const double t = med(field);
    parts[name] = {{"s", t}, {"share", t / total}};
  }
  return {{"what", "DecoderModel's forward and backward re-run from nn/attention's and nn/moe_ffn's layer functions, a timer around "
                   "each call; median per part over the runs"},
          {"runs", reps},
          {"total_s", total},
          {"decoder_model_median_s", ours_median_s},
          {"parts", parts},
          {"rerun_grad_max_rel_diff_vs_decoder_model", grad_diff}};
}

/// The peer's JSON line for one part.
json run_peer(const Params& p, const fs::path& script, const fs::path& dir, const std::string& part, const std::vector<std::string>& env) {
  const auto [rc, out] = run_capture({p.python, script.string(), "--dir", dir.string(), "--part", part, "--threads", std::to_string(p.threads),
                                      "--repeats", std::to_string(p.repeats), "--budget-s", fmt::format("{}", p.peer_budget)},
                                     env);
  if (rc != 0) throw std::runtime_error(fmt::format("PyTorch peer ({}) failed (exit {})", part, rc));
  const std::string line = out.substr(0, out.find('\n'));
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("times_s") || !j.contains("loss")) throw std::runtime_error(fmt::format("PyTorch peer ({}): unreadable output '{}'", part, line));
  return j;
}

/// Everything measured for one model.
struct Outcome {
  std::vector<double> ours_s, peer_s;
  OursRun ours;
  json peer, profile;
  double loss_rel = 0, grad_err = 0, grad_err_global = 0;
  std::string worst_segment;
  json per_segment = json::object();
  bool loads_equal = false;
  double ratio() const { return median(peer_s) / median(ours_s); }
};

Outcome run_part(Analysis& a, const Params& p, const Model& m, const nn::Batch& batch, const fs::path& script, const fs::path& dir,
                 const std::vector<std::string>& env) {
  Outcome oc;
  export_for_peer(dir / m.part, m, batch);
  nn::DecoderModel model(m.shape);
  Eigen::MatrixXd dF;
  step(model, m.theta, batch, oc.ours, dF);  // warm-up, untimed
  auto progress = a.progress("ours " + m.part, std::size_t(p.repeats));
  for (int r = 0; r < p.repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    step(model, m.theta, batch, oc.ours, dF);
    oc.ours_s.push_back(seconds_since(t0));
    progress->advance();
  }
  progress->finish();
  oc.ours.load = model.expert_load();
  oc.peer = run_peer(p, script, dir, m.part, env);
  oc.peer_s = oc.peer["times_s"].get<std::vector<double>>();

  // Agreement: the loss, the gradient segment by segment, the routers' loads.
  const double loss_torch = oc.peer["loss"].get<double>();
  oc.loss_rel = std::abs(oc.ours.loss - loss_torch) / std::abs(loss_torch);
  const Eigen::VectorXd g_torch = load_npy(dir / m.part / "grad_torch.npy").row(0).transpose();
  if (g_torch.size() != oc.ours.grad.size())
    throw std::runtime_error(fmt::format("PyTorch peer ({}): a gradient of {} entries, expected {}", m.part, g_torch.size(), oc.ours.grad.size()));
  for (const Segment& g : m.layout) {
    const Eigen::VectorXd mine = oc.ours.grad.segment(g.offset, g.size()), theirs = g_torch.segment(g.offset, g.size());
    const double scale = theirs.cwiseAbs().maxCoeff();
    const double diff = (mine - theirs).cwiseAbs().maxCoeff();
    const double err = scale > 0 ? diff / scale : (diff > 0 ? INFINITY : 0.0);
    oc.per_segment[g.name] = {{"max_rel_err", err}, {"max_abs_torch", scale}};
    if (err >= oc.grad_err) oc.grad_err = err, oc.worst_segment = g.name;
  }
  oc.grad_err_global = (oc.ours.grad - g_torch).cwiseAbs().maxCoeff() / g_torch.cwiseAbs().maxCoeff();
  oc.loads_equal = oc.peer.contains("load") && oc.peer["load"].get<std::vector<std::vector<int>>>() == oc.ours.load;
  oc.profile = profile_ours(m, batch, oc.ours, 3, median(oc.ours_s));
  return oc;
}

json record(const Model& m, const Outcome& oc) {
  const nn::DecoderShape& s = m.shape;
  const SpeedVerdict v = speed_verdict(oc.ours_s, oc.peer_s, kTarget);
  return {{"ours_s", median(oc.ours_s)},
          {"peer_s", median(oc.peer_s)},
          {"ratio", oc.ratio()},
          {"ratio_best_of_repeats", best(oc.peer_s) / best(oc.ours_s)},
          {"relative_spread", v.spread},
          {"ours_times_s", oc.ours_s},
          {"peer_times_s", oc.peer_s},
          {"agree", {{"loss_ours", oc.ours.loss},
                     {"loss_torch", oc.peer["loss"]},
                     {"loss_rel_diff", oc.loss_rel},
                     {"grad_max_rel_err", oc.grad_err},
                     {"grad_worst_segment", oc.worst_segment},
                     {"grad_max_rel_err_whole_vector", oc.grad_err_global},
                     {"grad_norm", oc.ours.grad.norm()},
                     {"expert_load_ours", oc.ours.load},
                     {"expert_load_torch", oc.peer.value("load", json::array())},
                     {"expert_loads_equal", oc.loads_equal},
                     {"per_segment", oc.per_segment}}},
          {"model", {{"vocab", s.vocab}, {"d", s.d}, {"heads", s.heads}, {"layers", s.layers}, {"max_len", s.max_len},
                     {"inner", s.inner}, {"experts", s.experts}, {"top", std::min(s.top, s.experts)},
                     {"parameters", s.parameter_count()}, {"non_embedding", s.non_embedding_count()}, {"active", s.active_count()}}},
          {"peer_last_repeat_split_s", oc.peer.value("last_repeat_split_s", json::object())},
          {"profile_ours", oc.profile}};
}

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "moe_vs_torch",
                     .paper = "004",
                     .claims = {"§4"},
                     .description = "Benchmark: loss and full gradient of the decoder-only transformer (top-2 MoE and dense), "
                                    "ours (nn::DecoderModel) against a float64 PyTorch module on the same θ and tokens",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  Params p;
  analysis.scaled_option("--batch", p.batch, 8, 32, "sequences in the batch")->check(CLI::Range(1, 4096));
  analysis.scaled_option("--repeats", p.repeats, 5, 7, "timing repeats per side and model; medians are compared")->check(CLI::Range(1, 1000));
  app.add_option("--seq-len", p.seq_len, "tokens per sequence (max_len)")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--width", p.d, "model width d")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--layers", p.layers, "transformer blocks L")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--heads", p.heads, "attention heads (dividing the width)")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--inner", p.inner, "each expert's inner width f")->check(CLI::Range(1, 16384))->capture_default_str();
  app.add_option("--experts", p.experts, "experts K of the MoE model (the dense model has 1)")->check(CLI::Range(2, 256))->capture_default_str();
  app.add_option("--vocab", p.vocab, "vocabulary size")->check(CLI::Range(2, 100000))->capture_default_str();
  app.add_option("--python", p.python, "Python with numpy and torch (Debian's python3-torch)")->capture_default_str();
  app.add_option("--peer-budget", p.peer_budget, "seconds per model for PyTorch's repeats beyond the first")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    const RecordBlas record_blas(a.result);
    if (p.d % p.heads != 0) throw InputError(fmt::format("--heads {} must divide --width {}", p.heads, p.d));
    if (run_capture({p.python, "-c", "import numpy, torch"}, {}, true).first != 0)
      throw InputError(fmt::format("--python {}: cannot import torch; install python3-torch (apt-get install python3-torch)", p.python));
    const fs::path script = peer_script("moe_vs_torch.py");
    p.seed = a.common.seed;
    p.threads = a.common.threads > 0 ? a.common.threads : kDefaultThreads;
    omp_set_num_threads(p.threads);
    blas_threads(p.threads);
    const std::vector<std::string> env = {fmt::format("OMP_NUM_THREADS={}", p.threads), fmt::format("OPENBLAS_NUM_THREADS={}", p.threads),
                                          fmt::format("MKL_NUM_THREADS={}", p.threads)};
    const TempDir tmp("moe_vs_torch");

    const nn::Batch batch = make_tokens(p);
    const Model moe = make_model(p, "moe", p.experts), dense = make_model(p, "dense", 1);
    const Outcome om = run_part(a, p, moe, batch, script, tmp.path, env);
    const Outcome od = run_part(a, p, dense, batch, script, tmp.path, env);

    // --- Checks ---------------------------------------------------------------------------------------
    const std::string shape = fmt::format("d = {}, L = {}, {} heads, inner {}, vocab {}, {} sequences × {} tokens", p.d, p.layers, p.heads,
                                          p.inner, p.vocab, p.batch, p.seq_len);
    const std::string models = fmt::format("MoE K = {} top-{} and dense K = 1", p.experts, p.top);
    at_most(a, {.id = "agree_loss",
                .claim = "§4 (decoder, token cross-entropy)",
                .statement = "the same θ and tokens give the same loss: |L − L_torch| / |L_torch| ≤ 1e-10, both models",
                .note = fmt::format("{}; {}: MoE {:.15g} vs torch {:.15g} ({:.3g}); dense {:.15g} vs torch {:.15g} ({:.3g}).", shape, models,
                                    om.ours.loss, om.peer["loss"].get<double>(), om.loss_rel, od.ours.loss, od.peer["loss"].get<double>(),
                                    od.loss_rel)},
            std::max(om.loss_rel, od.loss_rel), kLossTol);
    at_most(a, {.id = "agree_grad",
                .claim = "§4 (decoder, backward pass)",
                .statement = "the full gradient agrees with torch's autograd: per segment of θ (E, P, gains, W_q … W_o, router, every "
                             "expert's W1 and W2, W_out) max |g − g_torch| / max |g_torch| ≤ 1e-8, worst segment of both models",
                .note = fmt::format("{}; {}: MoE worst {:.3g} ({}), whole vector {:.3g}; dense worst {:.3g} ({}), whole vector {:.3g}; "
                                    "tokens per expert per block identical to torch's: MoE {}, dense {}.",
                                    shape, models, om.grad_err, om.worst_segment, om.grad_err_global, od.grad_err, od.worst_segment,
                                    od.grad_err_global, om.loads_equal ? "yes" : "no", od.loads_equal ? "yes" : "no")},
            std::max(om.grad_err, od.grad_err), kGradTol)
        .tolerance["norm"] = "each segment's differences divided by the segment's largest |g_torch| (entries near 0 carry the rounding of the larger ones)";
    speedup_at_least(a, {.id = "ratio_moe",
                         .claim = "benchmark target (§4: the MoE decoder's training step on the CPU)",
                         .statement = "ours ≥ 1.5× faster than the PyTorch module for the MoE model's loss and gradient: t_torch / t_ours ≥ 1.5 "
                                      "(ratio of medians)",
                         .note = fmt::format("{}; K = {}, top-{}: ours {:.4g} s (range {:.4g}–{:.4g}), PyTorch {:.4g} s (range {:.4g}–{:.4g}), "
                                             "{} repeats each, {} thread(s) each, float64; OpenBLAS kernels '{}'. Informational: the dense "
                                             "model ours {:.4g} s, PyTorch {:.4g} s, ratio {:.3g}.",
                                             shape, p.experts, p.top, median(om.ours_s), best(om.ours_s), worst(om.ours_s), median(om.peer_s),
                                             best(om.peer_s), worst(om.peer_s), om.ours_s.size(), p.threads, openblas_core(), median(od.ours_s),
                                             median(od.peer_s), od.ratio())},
                     om.ours_s, om.peer_s, kTarget);
    fmt::print(stderr, "moe_vs_torch: {}: MoE ours {:.4g} s, PyTorch {:.4g} s ({:.2f}x); dense ours {:.4g} s, PyTorch {:.4g} s ({:.2f}x); "
                       "loss rel diff {:.2g}/{:.2g}, grad {:.2g}/{:.2g}; {} thread(s)\n",
               shape, median(om.ours_s), median(om.peer_s), om.ratio(), median(od.ours_s), median(od.peer_s), od.ratio(), om.loss_rel,
               od.loss_rel, om.grad_err, od.grad_err, p.threads);

    // --- Data and tables ------------------------------------------------------------------------------
    json& d = a.result.data;
    d["ours_s"] = median(om.ours_s);  // the headline: the MoE model (the target's)
    d["peer_s"] = median(om.peer_s);
    d["ratio"] = om.ratio();
    d["ratio_moe"] = om.ratio();
    d["ratio_dense"] = od.ratio();
    d["moe"] = record(moe, om);
    d["dense"] = record(dense, od);
    d["threads"] = p.threads;
    d["device"] = "cpu";
    d["openblas_core"] = openblas_core();
    d["theta"] = {{"init", "nn::init_decoder (N(0, 0.02²) matrices, gains 1)"}, {"noise_sd", kNoiseSd}, {"seed", p.seed}};
    d["batch"] = {{"sequences", p.batch}, {"tokens", p.seq_len}, {"data", "uniform random ids; targets the next token, every position"}};
    d["ours"] = {{"call", "nn::DecoderModel::forward + nn::loss_value(token_cross_entropy, &dF) + DecoderModel::backward"},
                 {"timer", "std::chrono::steady_clock; one untimed warm-up"}};
    d["peer"] = {{"python", p.python}, {"script", script.string()}, {"torch", om.peer.value("torch", "")}, {"numpy", om.peer.value("numpy", "")},
                 {"torch_threads", om.peer.value("torch_threads", 0)}, {"env", env},
                 {"method", "nn.Module in float64 (RMSNorm, causal attention, Mixtral-style top-2 MoE with index_add_), "
                            "F.cross_entropy, loss.backward()"},
                 {"timer", "time.perf_counter, zero_grad + forward + loss + backward; one untimed warm-up"}};
    d["peer_budget_s"] = p.peer_budget;
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) == 3) d["load_average_at_end"] = {load[0], load[1], load[2]};

    Table t{"timings", {"experts", "ours_s", "peer_s", "ratio", "loss_rel_diff", "grad_max_rel_err", "repeats_ours", "repeats_peer"}, {}};
    for (const auto* oc : {&om, &od})
      t.add_row({double(oc == &om ? p.experts : 1), median(oc->ours_s), median(oc->peer_s), oc->ratio(), oc->loss_rel, oc->grad_err,
                 double(oc->ours_s.size()), double(oc->peer_s.size())});
    a.add_table(std::move(t));
    Table raw{"timings_raw", {"experts", "side", "repeat", "seconds"}, {}};  // side: 0 ours, 1 PyTorch
    for (const auto* oc : {&om, &od}) {
      const double K = oc == &om ? p.experts : 1;
      for (std::size_t r = 0; r < oc->ours_s.size(); ++r) raw.add_row({K, 0, double(r), oc->ours_s[r]});
      for (std::size_t r = 0; r < oc->peer_s.size(); ++r) raw.add_row({K, 1, double(r), oc->peer_s[r]});
    }
    a.add_table(std::move(raw));
  });
}
