// parrots_phonebook — paper 004 §4.2, Figure 4a, scaled down: dense decoders and MoEs memorise phone books of growing
// size (parrots/phonebook: 5-letter names, 8-digit numbers, 39 tokens, no loss mask, AdamW with weight decay 0.1, 20%
// warmup then linear decay); a model's capacity is the largest book on the grid it recalls with ≥ 90% exact accuracy
// over 1000 queries (§4.1). The paper's finding: capacity follows total, not active, parameters. One check: fit
// log capacity on log total (non-embedding) parameters over the dense models; the MoEs' position between the fit's
// readings by active (λ = 0) and by total parameters (λ = 1), λ = their mean gap above the fit at active parameters over
// α̂·ln(total/active), one-sided λ > 0 against the paper's λ = 1, its standard error carrying α̂'s. Per-MoE 95% prediction
// bands in detail.
//
// "Trained until the loss plateaus" becomes a fixed, generous epoch count (default 300), recorded with each run's
// final loss. Scales: quick (dense widths 16–40, MoEs of width 16, books to 200, 150 epochs: under a minute); default
// (dense widths 16–64, MoEs of width 16 and 24 with K = 4, 8, books to 800 on a √2 grid, 300 epochs: minutes on 2 cores).
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/core/stats.hpp>
#include <sparseact/parrots/capacity_position.hpp>
#include <sparseact/parrots/phonebook.hpp>

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::parrots;

namespace {

struct ModelSpec {
  int d, experts;
  std::string name() const { return experts == 1 ? fmt::format("dense d={}", d) : fmt::format("MoE d={} K={}", d, experts); }
};

}  // namespace

int main(int argc, char** argv) {
  Analysis analysis({.name = "parrots_phonebook", .paper = "004", .claims = {"§4.2", "Figure 4a"},
                     .description = "phone-book memorisation capacity of dense decoders and top-2 MoEs against total and active parameters "
                                    "(paper 004 Figure 4a, scaled down); one work item per (model, book size)",
                     .default_scale = Scale::paper});
  auto& app = analysis.app();
  std::string dense_text, moe_text, experts_text = "4,8", sizes_text;
  int layers = 1, heads = 2, epochs = 0;
  PhonebookTraining training;
  analysis.scaled_option("--dense-widths", dense_text, std::string("16,24,32,40"), std::string("16,24,32,40,48,64"), "dense model widths d (FFN inner width d, §4.1)");
  analysis.scaled_option("--moe-widths", moe_text, std::string("16"), std::string("16,24"), "MoE widths d (each expert's inner width d)");
  analysis.scaled_option("--sizes", sizes_text, std::string("25,35,50,70,100,140,200"),
                         std::string("25,35,50,70,100,140,200,280,400,560,800"), "phone-book sizes (a √2 grid)");
  analysis.scaled_option("--epochs", epochs, 150, 300, "epochs over each book")->check(CLI::Range(1, 100000));
  app.add_option("--experts", experts_text, "expert counts K of the MoEs (top-2 routing)")->capture_default_str();
  app.add_option("--layers", layers, "decoder blocks L")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--heads", heads, "attention heads (dividing every width)")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--batch", training.batch, "batch size")->check(CLI::Range(2, 4096))->capture_default_str();
  app.add_option("--lr", training.lr, "peak AdamW learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--queries", training.queries, "recall queries per book (§4.1: 1000)")->check(CLI::Range(1, 10000000))->capture_default_str();

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    training.epochs = epochs;
    std::vector<ModelSpec> models;
    for (double w : parse_number_list("--dense-widths", dense_text, 2, 4096, true)) models.push_back({int(w), 1});
    const std::vector<double> ks = parse_number_list("--experts", experts_text, 2, 1024, true);
    for (double w : parse_number_list("--moe-widths", moe_text, 2, 4096, true))
      for (double k : ks) models.push_back({int(w), int(k)});
    for (const ModelSpec& m : models)
      if (m.d % heads != 0) throw InputError(fmt::format("--heads {} does not divide the width {}", heads, m.d));
    std::vector<double> sizes = parse_number_list("--sizes", sizes_text, 1, 1e6, true);
    std::sort(sizes.begin(), sizes.end());
    const auto shape = [&](const ModelSpec& m) {
      return nn::DecoderShape{.vocab = kPhonebookVocab, .d = m.d, .heads = heads, .layers = layers, .max_len = kEntryLength, .inner = m.d,
                              .experts = m.experts, .top = 2};
    };

    // --- Run: one item per (model, book size) ---------------------------------------------------------------
    const std::size_t S = sizes.size();
    const std::vector<Record> records = a.sweep({
        .label = "trainings", .count = models.size() * S,
        .key = [&](std::size_t i) { return fmt::format("model={} size={:g}", models[i / S].name(), sizes[i % S]); },
        .cost = [&](std::size_t i) { return double(shape(models[i / S]).active_count()) * sizes[i % S]; },
        .item = [&](std::size_t i) {
          const PhonebookRun run = train_phonebook(shape(models[i / S]), long(sizes[i % S]), training, a.common.seed, 0x004'0b00 + i % S);
          return Record().set("recall", run.recall).set("loss", run.final_loss);
        }});

    // --- Capacity per model, the two fits, the checks -------------------------------------------------------
    Table runs{"runs", {"d", "experts", "size", "recall", "final_loss", "total_params", "active_params"}, {}};
    std::vector<double> capacity(models.size(), NAN);
    for (std::size_t i = 0; i < records.size(); ++i) {
      const ModelSpec& m = models[i / S];
      const double recall = records[i].num("recall");
      runs.add_row({double(m.d), double(m.experts), sizes[i % S], recall, records[i].num("loss"), double(shape(m).non_embedding_count()),
                    double(shape(m).active_count())});
      if (recall >= 0.9) capacity[i / S] = sizes[i % S];  // sizes ascend: the last one kept is the largest recalled
    }
    Table caps{"capacity", {"d", "experts", "total_params", "active_params", "capacity"}, {}};
    std::vector<double> dense_x, dense_y;
    json per_model = json::array();
    for (std::size_t j = 0; j < models.size(); ++j) {
      const nn::DecoderShape s = shape(models[j]);
      caps.add_row({double(models[j].d), double(models[j].experts), double(s.non_embedding_count()), double(s.active_count()), capacity[j]});
      per_model.push_back({{"model", models[j].name()}, {"total", s.non_embedding_count()}, {"active", s.active_count()}, {"capacity", capacity[j]}});
      if (models[j].experts == 1 && std::isfinite(capacity[j])) dense_x.push_back(std::log(double(s.non_embedding_count()))), dense_y.push_back(std::log(capacity[j]));
    }
    r.data["capacity"] = per_model;
    r.data["setting"] = fmt::format("L = {}, {} heads, FFN inner width = d; top-2 MoEs; books of {} (unique names and numbers); {} epochs, batch {}, "
                                    "AdamW lr {:g} (weight decay 0.1, 20% warmup, linear decay); recall: exact over {} queries, threshold 90%; "
                                    "parameters non-embedding (E, P, W_out excluded). A capacity below the smallest book is left out of the fits.",
                                    layers, heads, sizes_text, training.epochs, training.batch, training.lr, training.queries);
    if (dense_x.size() >= 3) {
      const stats::LinearFit fit = stats::linear_fit(dense_x, dense_y);  // log capacity = β + α log parameters
      std::vector<Point> by_total;
      std::vector<MoePoint> moe_points;
      json per_moe = json::array();
      for (std::size_t j = 0; j < models.size(); ++j) {
        if (models[j].experts == 1 || !std::isfinite(capacity[j])) continue;
        const nn::DecoderShape s = shape(models[j]);
        const double y = std::log(capacity[j]), x_total = std::log(double(s.non_embedding_count())), x_active = std::log(double(s.active_count()));
        const stats::Interval total = fit.prediction_interval(x_total);
        const stats::Interval active = fit.prediction_interval(x_active);
        // inside the band: the distance to its nearer edge (≥ 0 inside), as measured ≥ 0
        by_total.push_back({fmt::format("{} (capacity {:g})", models[j].name(), capacity[j]), std::min(y - total.lo, total.hi - y), 0.0});
        const MoePoint& p = moe_points.emplace_back(MoePoint{y, x_active, x_total});
        per_moe.push_back({{"model", models[j].name()}, {"capacity", capacity[j]}, {"gap_at_active", gap_at_active(fit, p)},
                           {"gap_if_total_predicts", gap_if_total_predicts(fit, p)},
                           {"prediction_interval_at_active", {active.lo, active.hi}}, {"prediction_interval_at_total", {total.lo, total.hi}}});
      }
      const std::string fit_note = fmt::format("Dense fit over {} models: log capacity = {:.3f} + {:.3f} log parameters (R² {:.3f}).", dense_x.size(),
                                               fit.intercept, fit.slope, fit.r_squared);
      // §4.1's setup: L = 12, dense d ∈ {256, 512, 1024}, MoEs d ∈ {256, 512} with E ∈ {8, …, 64}, books of 1e5–3e6 names.
      // Ours is always far smaller, so a failed claim here is evidence about the miniature (issue 38's rule, DESIGN.md).
      const std::string departure = fmt::format("{} decoder block(s) of widths {} (MoEs {}, K = {}) on books of {}–{} names (§4.1: L = 12, "
                                                "d = 256–1024, K = 8–64, books of 1e5–3e6)",
                                                layers, dense_text, moe_text, experts_text, sizes.front(), sizes.back());
      if (!by_total.empty()) {
        // §4.2: "MoEs match the performance of dense transformers with the same number of total parameters": the MoEs' position
        // λ between the dense fit's readings by active (0) and by total parameters (1), one finding (parrots/capacity_position.hpp).
        // θ = λ > 0, one-sided, the effect that counts λ = 1 (the paper's own statement, fixed before the data).
        const CapacityPosition pos = capacity_position(fit, moe_points);
        const double mean_gap = pos.mean_gap, mean_paper_gap = pos.mean_paper_gap, mean_total_gap = pos.mean_gap_total;
        Claim follows{.id = "moe_capacity_follows_total", .claim = "§4.2, Figure 4a",
                      .statement = "“MoEs match the performance of dense transformers with the same number of total parameters” (capacity is "
                                   "not predicted by active parameters): λ = the MoEs' mean log capacity above the dense fit at their active "
                                   "parameters over the gap α̂·ln(total/active) that following total parameters implies (λ = 0: active "
                                   "parameters predict capacity; λ = 1: total parameters do); θ = λ > 0, one-sided, consistent with the "
                                   "paper's λ = 1",
                      .detail = {{"moes", per_moe},
                                 {"mean_gap_at_active", mean_gap},
                                 {"mean_gap_at_total", mean_total_gap},
                                 {"mean_gap_if_total_predicts", mean_paper_gap},
                                 {"per_moe_band_margin", [&] {
                                    json j = json::array();
                                    for (const Point& p : by_total) j.push_back({{"model", p.label}, {"distance_to_nearer_edge", p.measured}});
                                    return j;
                                  }()}}};
        follows.departure = departure;
        if (pos.testable) {
          const double lambda = pos.lambda, se = pos.std_error, se_alpha_fixed = pos.std_error_alpha_fixed, n = pos.df + 2;
          follows.detail["lambda"] = lambda;
          follows.detail["std_error"] = se;
          follows.detail["std_error_alpha_fixed"] = se_alpha_fixed;
          follows.detail["df"] = n - 2;
          follows.note = fit_note + fmt::format(
              " λ̂ = {:.3f}: the MoEs lie {:.3f} above the fit at their active parameters, where following total parameters puts "
              "them {:.3f} above it (α̂·ln(total/active), mean ln(total/active) {:.3f}), and {:.3f} from it at their total parameters. "
              "One finding, not two: the gaps at total and at active parameters differ by α̂·ln(total/active) exactly, so testing each "
              "would count one estimate twice. SE {:.3f} carries α̂'s uncertainty ({:.3f} with α̂ held fixed), t with {} df. Each "
              "MoE's band alone cannot separate the two fits at K = 4 (ln(total/active) ≈ 0.39), so the MoEs are pooled; §4.2 "
              "reports a 42M-active MoE beating a dense model with 10× its parameters (K up to 64). The run size for 80% counts "
              "dense models with the MoEs in proportion; per-MoE 95% prediction bands in detail.",
              lambda, mean_gap, mean_paper_gap, pos.mean_log_ratio, mean_total_gap, se, se_alpha_fixed, n - 2);
          direction(a, follows, {.estimate = lambda, .std_error = se, .df = n - 2, .n = dense_x.size(), .unit = "dense models (MoEs in proportion)",
                                 .method = "ratio of the MoEs' mean gap to α̂·ln(total/active), delta method on the dense fit (Student t, n − 2 df)"},
                    {.value = 1.0,
                     .source = "paper 004 §4.2: “MoEs match the performance of dense transformers with the same number of total "
                               "parameters” ⇒ λ = 1 (the statement itself, in these units; no number read off this run)",
                     .papers = true});
        } else {
          follows.note = fit_note;
          observation(a, follows, "MoE capacity between the dense fit's readings by active and by total parameters (§4.2)",
                      fmt::format("mean gap {:.3f} at active, {:.3f} at total parameters (no residual spread, or no rising dense fit: no test)",
                                  mean_gap, mean_total_gap));
        }
      }
      r.data["dense_fit"] = {{"slope", fit.slope}, {"intercept", fit.intercept}, {"r_squared", fit.r_squared}, {"n", fit.n}};
    } else {
      r.data["dense_fit"] = "fewer than 3 dense models reached 90% recall on the smallest book: no fit, no checks";
    }
    a.add_table(std::move(runs));
    a.add_table(std::move(caps));

    // --- Figure 4a: capacity against total and against active parameters ------------------------------------
    plot::Figure fig{.name = "parrots_phonebook_capacity", .title = "Phone-book capacity (≥ 90% exact recall)", .xlabel = "non-embedding parameters",
                     .ylabel = "largest book recalled", .logx = true, .logy = true, .legend = "top left"};
    plot::Series dense{.label = "dense (total = active)", .style = plot::Style::linespoints}, moe_total{.label = "MoE, total", .style = plot::Style::points},
        moe_active{.label = "MoE, active", .style = plot::Style::points};
    for (std::size_t j = 0; j < models.size(); ++j) {
      if (!std::isfinite(capacity[j])) continue;
      const nn::DecoderShape s = shape(models[j]);
      if (models[j].experts == 1) {
        dense.x.push_back(double(s.non_embedding_count())), dense.y.push_back(capacity[j]);
      } else {
        moe_total.x.push_back(double(s.non_embedding_count())), moe_total.y.push_back(capacity[j]);
        moe_active.x.push_back(double(s.active_count())), moe_active.y.push_back(capacity[j]);
      }
    }
    fig.series = {dense, moe_total, moe_active};
    a.add_figure(std::move(fig));
  });
}
