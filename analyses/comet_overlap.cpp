// comet_overlap — paper 002 §5.1.1, Figure 2: COMET's fixed random router sends similar inputs to
// overlapping masks (2a), and the masked backbone maps them to similar activations, more sharply
// the sparser the masks (2b). Beside the paper's plots, the large-width law of routing/overlap_law
// predicts every per-layer overlap and cosine and the concatenated ones.
//
// Setting (§5.1.1): 500 pairs of length-100 inputs, entries N(μ, 25) with μ uniform on {0..100} per
// input; 10 fresh COMET nets per pair (router and backbone: 10 hidden layers of 512), the same
// weights for every p_k; per pair the cosines averaged over its nets. ReLU backbone without biases
// (ERRATA 002). The output layer is unused here (width 1).
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "comet_pairs.hpp"

using namespace sparseact;
using namespace sparseact::app;
using namespace sparseact::routing;
using namespace comet_pairs;

int main(int argc, char** argv) {
  Analysis analysis({.name = "comet_overlap",
                     .paper = "002",
                     .claims = {"§5.1.1", "Figure 2a", "Figure 2b"},
                     .description = "Mask and activation similarity of input pairs under COMET routing, against a large-width law "
                                    "(paper 002 §5.1.1, Figure 2); work items at --scale paper: 500, one per pair",
                     .default_scale = Scale::paper,
                     .gpu_path = true});
  // Parameters (§5.1.1): quick is 100 pairs, 3 nets, 4 × 128.
  PairFlags flags;
  flags.add(analysis, "0.05,0.1,0.25,0.5,0.75,1", 100, 500, 3, 10, 4, 10, 128, 512);

  return analysis.run(argc, argv, [&](Analysis& a) {
    auto& r = a.result;
    // --- Run: one work item per pair ---------------------------------------------------------------
    const PairStudy study = run_pairs(a, flags, /*with_ntk=*/false);

    // --- Checks --------------------------------------------------------------------------------------
    // (a) Figure 2a: the mask cosine rises with the input cosine for every p_k < 1. θ = atanh ρ_S > 0 at each p_k, read on
    // Fisher's scale with Spearman's standard error √(1.06/(n − 3)) (Fieller, Hartley and Pearson 1957); "every p_k" is an
    // intersection, decided by the p_k with the smallest z (no multiplicity correction: all must pass).
    constexpr double kRhoOfInterest = 0.1;
    // atanh of ρ_S kept finite: every pair in rank order (ρ_S = ±1) reads as the largest double below 1.
    const auto fisher_z = [](double rho) { return std::atanh(std::clamp(rho, -std::nextafter(1.0, 0.0), std::nextafter(1.0, 0.0))); };
    json spearman = json::object();
    std::optional<std::pair<double, stats::Spearman>> worst;  // (p_k, its test) with the smallest z
    for (std::size_t p = 0; p < study.pks.size(); ++p) {
      if (study.pks[p] >= 1) continue;
      stats::Spearman s;
      try {
        s = stats::spearman(study.input_cos(), study.measured(Quantity::mask_cos, p), stats::Alternative::greater);
      } catch (const std::invalid_argument& e) {  // a constant column (e.g. every pair's masks equal): no ranking
        r.data["not_tested"].push_back(fmt::format("fig2a at p_k = {:g}: {}", study.pks[p], e.what()));
        continue;
      }
      spearman[fmt::format("{:g}", study.pks[p])] = {{"rho", s.rho}, {"p_value", s.p_value}, {"n", s.n}};
      if (s.n > 3 && (!worst || fisher_z(s.rho) < fisher_z(worst->second.rho))) worst = {study.pks[p], s};
    }
    if (worst) {
      const stats::Spearman& s = worst->second;
      const double se = std::sqrt(1.06 / (double(s.n) - 3));
      direction(a, {.id = "fig2a_mask_similarity", .claim = "§5.1.1, Figure 2a",
                    .statement = "similar inputs get similar masks: Spearman's ρ(input cosine, concatenated mask cosine) > 0 at every p_k < 1: "
                                 "θ = atanh ρ_S > 0, one-sided, at each; the deciding p_k's shown",
                    .note = flags.setting() + fmt::format(". Deciding p_k = {:g} (ρ_S = {:.3f} over {} pairs); every p_k's ρ_S and p in detail. "
                                                          "Figure 2a prints no ρ: ρ = {:g} is a smallest effect of interest and sets the power only.",
                                                          worst->first, s.rho, s.n, kRhoOfInterest),
                    .detail = {{"spearman", spearman}},
                    .departure = flags.departure()},
                {.estimate = fisher_z(s.rho), .std_error = se, .df = INFINITY, .n = s.n, .unit = "pairs",
                 .method = "Fisher z of Spearman's ρ, se √(1.06/(n − 3))"},
                {std::atanh(kRhoOfInterest), fmt::format("smallest effect of interest: ρ = {:g} (atanh {:.4f}); Figure 2a prints no ρ",
                                                         kRhoOfInterest, std::atanh(kRhoOfInterest)), false});
    }

    // (b) Figure 2b: sharper when sparser.
    sharper_checks(a, study, Quantity::act_cos, "fig2b_sharper", "§5.1.1, Figure 2b", "act_cos", flags.resamples, {{0.1, 1.0}, {0.5, 1.0}},
                   flags.departure());

    // (c) The large-width law, per layer and concatenated, within the interval widened by max(0.01, 1/k_ℓ).
    const auto overlap_rows = compare_with_law(study, Quantity::mask_cos, Quantity::overlap, 0.01, 1.0);
    const auto act_rows = compare_with_law(study, Quantity::act_cos, Quantity::act_layer, 0.01, 1.0);
    if (study.has_law()) {
      // At p_k = 1 every mask is all ones: overlap 1 measured and predicted, a number compared with itself; left out.
      std::vector<routing::LawComparison> masked_rows;
      for (const auto& row : overlap_rows)
        if (row.p_k < 1) masked_rows.push_back(row);
      if (!masked_rows.empty())
        law_check(a, masked_rows, "law_overlap",
                  "mean mask overlap per layer = O(ρ_{ℓ−1}) = 1 − 2T(t, √((1−ρ)/(1+ρ)))/p_k, concatenated = Σ k_ℓ O_ℓ / Σ k_ℓ, every p_k < 1 "
                  "(at p_k = 1 both are 1); within the 95% interval of measured − predicted widened by max(0.01, 1/k_ℓ)",
                  flags.departure());
      law_check(a, act_rows, "law_act_cos",
                "mean activation cosine per layer = O_ℓ κ_f(cos x_{ℓ−1}), concatenated weighted by the predicted squared norms "
                "(× k_ℓ e_f/(3N_{ℓ−1}) per layer); within the 95% interval widened by max(0.01, 1/k_ℓ)",
                flags.departure());
    } else {
      r.data["law"] = "not compared: the law has no closed form for tanh";
    }

    r.data["spearman"] = spearman;
    r.data["nu"] = narrowness_json(study, Quantity::act_cos);
    r.data["undefined_cosines"] = study.undefined();
    r.data["setting"] = flags.setting();
    a.add_table(pairs_table(study, {{"mask_cos", Quantity::mask_cos}, {"act_cos", Quantity::act_cos}}));
    Table layers{"layers", {"pk", "layer", "width", "k", "overlap", "overlap_pred", "act_cos", "act_cos_pred"}, {}};
    for (std::size_t i = 0; i < overlap_rows.size(); ++i)
      if (overlap_rows[i].layer > 0)
        layers.add_row({overlap_rows[i].p_k, double(overlap_rows[i].layer), double(flags.width), double(overlap_rows[i].k),
                        overlap_rows[i].measured_mean, overlap_rows[i].predicted_mean, act_rows[i].measured_mean, act_rows[i].predicted_mean});
    a.add_table(std::move(layers));

    // --- Figures: Figure 2a, 2b, and the law per layer ------------------------------------------------
    a.add_figure(scatter_figure(study, Quantity::mask_cos, "comet_overlap_fig2a", "Figure 2a: mask similarity vs input similarity",
                                "concatenated mask cosine"));
    a.add_figure(scatter_figure(study, Quantity::act_cos, "comet_overlap_fig2b", "Figure 2b: activation similarity vs input similarity",
                                "concatenated activation cosine"));
    if (study.has_law()) {
      a.add_figure(law_figure(overlap_rows, "comet_overlap_law_overlap", "Mask overlap per layer", "mask overlap O_ℓ"));
      a.add_figure(law_figure(act_rows, "comet_overlap_law_act", "Activation cosine per layer", "cos(x_ℓ, x′_ℓ)"));
    }
  });
}
