// Paper 004's re-formed checks on tiny runs: Theorem 3.5 is an upper bound read one-sidedly (app::rate, RateForm::upper,
// local slopes and the proof's shape in detail), and §4.2's "capacity is not predicted by active parameters" is a
// direction on the MoEs' mean gap above the dense fit, with its power at the gap that "total parameters predict" implies.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;


TEST_CASE("parrots_memorize: Theorem 3.5's slopes are upper bounds, one-sided, with local slopes and the proof's shape",
          "[analysis][parrots_memorize]") {
  const fs::path out = fresh_dir("parrots_memorize_checks");
  const Run r = run("parrots_memorize --scale quick --n 128,256,512 --draws 2 --max-points 128 --dense-max-n 256 --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  const json j = read_json(out / "parrots_memorize.json");
  CHECK(r.code == exit_code_from_verdicts(j));
  int seen = 0;
  for (const std::string id : {"thm35_expert_n_over_K", "thm35_active_sqrt", "thm35_total_linear"}) {
    const json* c = find_check(j, id);
    if (c == nullptr) continue;  // too few distinct x at this size
    ++seen;
    INFO(c->dump(2));
    CHECK((*c)["kind"] == "claim");
    CHECK(std::set<std::string>{"holds", "inconclusive", "contradicted"}.count((*c)["verdict"].get<std::string>()) == 1);
    CHECK((*c)["predicted"].get<std::string>().rfind("O(x^", 0) == 0);  // an upper bound, not Θ or a two-sided interval
    REQUIRE((*c)["detail"].contains("local_slopes"));
    CHECK((*c)["detail"].contains("proof_shape_slope"));
    // a witness lies below the proof's explicit bound (Lemma D.8's width with its constants) at every point
    CHECK((*c)["detail"]["largest_ratio_to_proof_bound"].get<double>() < 1.0);
    // the slack is one logarithmic factor at the largest x: 1/ln x_max
    const double slack = (*c)["power"]["effect"].get<double>();
    CHECK(slack > 0.0);
    CHECK(slack < 1.0 / std::log(4.0));
  }
  CHECK(seen >= 2);
}

TEST_CASE("parrots_phonebook: the MoEs' gap above the dense fit at active parameters is a direction with power at the paper's gap",
          "[analysis][parrots_phonebook]") {
  const fs::path out = fresh_dir("parrots_phonebook_checks");
  const Run r = run("parrots_phonebook --scale quick --dense-widths 16,24,32 --moe-widths 16 --experts 4,8 --sizes 25,35,50 --queries 100 --out " +
                    out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  const json j = read_json(out / "parrots_phonebook.json");
  CHECK(r.code == exit_code_from_verdicts(j));
  const json* c = find_check(j, "moe_above_active_fit");
  if (c == nullptr) {
    CHECK(j["data"]["dense_fit"].is_string());  // fewer than 3 dense models recalled the smallest book: no fit, no check
    return;
  }
  INFO(c->dump(2));
  if ((*c)["kind"] == "observation") return;  // a perfect dense fit: no spread to test against
  CHECK((*c)["kind"] == "claim");
  REQUIRE((*c)["power"].is_object());
  CHECK((*c)["power"].contains("n_for_80"));
  // the effect that counts is the paper's: the mean of α̂·ln(total/active) over the MoEs
  const json& moes = (*c)["detail"]["moes"];
  REQUIRE(moes.size() >= 1);
  double mean = 0;
  for (const auto& m : moes) mean += m["gap_if_total_predicts"].get<double>() / double(moes.size());
  CHECK((*c)["power"]["effect"].get<double>() == Approx(mean));
  CHECK((*c)["detail"]["mean_gap_if_total_predicts"].get<double>() == Approx(mean));
}
