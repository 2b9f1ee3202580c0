// Paper 002's statistical checks (comet_train, comet_utilization) on tiny runs: each comparison is a
// claim with a verdict from app::direction / app::equivalent, its power at the stated effect, and an
// exit code that follows the verdicts (0 all hold, 3 contradicted, 4 inconclusive).
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

namespace {


void require_powered_claim(const json& c, double effect) {
  INFO(c.dump(2));
  CHECK(c["kind"] == "claim");
  CHECK(std::set<std::string>{"holds", "inconclusive", "contradicted", "not reproduced"}.count(c["verdict"].get<std::string>()) == 1);
  REQUIRE(c["power"].is_object());
  CHECK(c["power"]["effect"].get<double>() == Approx(effect));
  CHECK(c["power"]["power"].get<double>() >= 0.0);
  CHECK(c["power"]["power"].get<double>() <= 1.0);
  CHECK(c["power"].contains("n_for_80"));
}

}  // namespace

TEST_CASE("comet_utilization: the dead percentage is resampled by net and every claim gives its power", "[analysis][comet_utilization]") {
  const fs::path out = fresh_dir("comet_utilization_checks");
  const Run r = run("comet_utilization --scale quick --nets 6 --images 300 --device cpu --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  const json j = read_json(out / "comet_utilization.json");
  CHECK(r.code == exit_code_from_verdicts(j));
  const json& dead = check_by_id(j, "dead_fraction");
  require_powered_claim(dead, 7.6e-4);
  CHECK(dead["power"]["unit"] == "nets");
  CHECK(dead["power"]["n"] == 6);
  CHECK(dead["tolerance"]["method"].get<std::string>().find("bootstrap over nets") != std::string::npos);
  // The per-net counts behind the bootstrap add up to the pooled percentage.
  double d = 0, n = 0;
  for (const auto& v : dead["detail"]["dead_by_net"]) d += v.get<double>();
  for (const auto& v : dead["detail"]["neurons_by_net"]) n += v.get<double>();
  CHECK(100 * d / n == Approx(j["data"]["dead_percent"].get<double>()));
  CHECK(7.6e-4 - j["data"]["dead_percent"].get<double>() == Approx(dead["tolerance"]["estimate"].get<double>()).margin(1e-15));
  for (const auto& c : j["checks"])
    if (c["id"] == "dead_vs_sparsity") require_powered_claim(c, 0.1);
}

TEST_CASE("comet_utilization without --scale: its own default run, and params say so", "[analysis][comet_utilization]") {
  // The default run sits between quick and paper (20 / 50 / 1000 nets); the JSON must record the
  // settings that ran, never "quick" for a run that was not.
  const fs::path out = fresh_dir("comet_utilization_default");
  const Run r = run("comet_utilization --images 300 --device cpu --list-items --out " + out.string());
  REQUIRE(r.code == 0);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 52);  // 50 nets and Figure 3's two
  const Run one = run("comet_utilization --nets 3 --images 300 --device cpu --out " + out.string());
  INFO(one.output);
  REQUIRE((one.code == 0 || one.code == 3 || one.code == 4));
  const json j = read_json(out / "comet_utilization.json");
  CHECK(j["params"]["scale"] == "default");
  CHECK(j["params"]["nets"] == 3);
  CHECK(j["params"]["images"] == 300);
  CHECK(j["data"]["resolved"]["split"] == "train");
  const Run quick = run("comet_utilization --scale quick --images 300 --device cpu --out " + out.string());
  REQUIRE((quick.code == 0 || quick.code == 3 || quick.code == 4));
  const json q = read_json(out / "comet_utilization.json");
  CHECK(q["params"]["scale"] == "quick");
  CHECK(q["params"]["nets"] == 20);  // resolved by scale, and recorded as the value that ran
  CHECK(q["data"]["resolved"]["split"] == "test");
  const Run help = run("comet_utilization --help");
  CHECK(help.output.find("[quick 20; default 50; paper 1000]") != std::string::npos);
}

TEST_CASE("comet_train: each comparison is a one-sided paired claim with power; 'matches' is a TOST", "[analysis][comet_train]") {
  const fs::path out = fresh_dir("comet_train_checks");
  const Run r = run("comet_train --scale quick --widths 8,16 --sparsity 0.5,0.9 --seeds 3 --epochs 1 --train 200 --test 100 "
                    "--models standard,comet,smaller,bernoulli,example_tied --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  const json j = read_json(out / "comet_train.json");
  CHECK(r.code == exit_code_from_verdicts(j));
  for (const char* id : {"comet_beats_standard_large", "standard_beats_comet_small", "comet_beats_bernoulli", "comet_beats_example_tied"}) {
    const json& c = check_by_id(j, id);
    require_powered_claim(c, 0.01);
    CHECK(c["power"]["n"] == 3);
    CHECK(c["power"]["unit"] == "seeds (paired)");
    CHECK(c["tolerance"]["df"].get<double>() == Approx(2.0));
    // Excluded only with the interval on the other side (the effect is not the paper's; power never decides), and on
    // Fashion-MNIST for CIFAR-10 that reads "not reproduced", with the departure recorded.
    CHECK(c["verdict"] != "contradicted");
    CHECK(c["departure"].get<std::string>().rfind("Fashion-MNIST for CIFAR-10", 0) == 0);
    if (c["verdict"] == "not reproduced") CHECK(c["tolerance"]["upper_bound"].get<double>() < 0);
  }
  const json& same = check_by_id(j, "smaller_matches_standard");
  CHECK(same["kind"] == "claim");
  CHECK(same["tolerance"]["margin"].get<double>() == Approx(0.01));
}

TEST_CASE("comet_train records every model's final training loss against the constant predictor's, and a comparison "
          "with a model that did not train is inconclusive (issue 47)", "[analysis][comet_train]") {
  const fs::path out = fresh_dir("comet_train_did_not_train");
  const Run r = run("comet_train --scale quick --widths 8,16 --sparsity 0.9 --seeds 2 --epochs 1 --small-epochs 3 --train 200 --test 100 "
                    "--models standard,comet --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  const json j = read_json(out / "comet_train.json");
  const json& tl = j["data"]["training_loss"];
  // The constant predictor of 200 Fashion-MNIST labels: their entropy, at most ln 10.
  CHECK(tl["constant_predictor_loss"].get<double>() > 2.0);
  CHECK(tl["constant_predictor_loss"].get<double>() <= std::log(10.0) + 1e-12);
  std::set<std::string> small_runs;
  for (const json& run : tl["runs"]) {
    CHECK(run["final_train_loss"].size() == 2);
    if (run["epochs"] == 3) small_runs.insert(run["model"].get<std::string>());
  }
  CHECK(small_runs == std::set<std::string>{"standard", "comet"});  // standard_beats_comet_small's own runs
  const json& small = check_by_id(j, "standard_beats_comet_small");
  CHECK(small["detail"]["epochs"] == 3);
  CHECK(small["detail"]["final_train_loss"].contains("comet"));
  for (const json& c : j["checks"]) {
    INFO(c.dump(2));
    if (c["tolerance"].contains("model_did_not_train")) {
      CHECK(c["verdict"] == "inconclusive");
      CHECK(c["note"].get<std::string>().rfind("Not evidence: ", 0) == 0);
    }
    // Every model in the comparison: untrained in some seed exactly when the check says so.
    REQUIRE(c["detail"].contains("final_train_loss"));
    bool untrained = false;
    for (const auto& [model, rec] : c["detail"]["final_train_loss"].items()) untrained = untrained || rec["seeds_not_trained"].get<int>() > 0;
    CHECK(untrained == c["tolerance"].contains("model_did_not_train"));
  }
}

TEST_CASE("comet_utilization's departure names a sparsity range other than §5.1.2's U(0.05, 1)", "[analysis][comet_utilization]") {
  const fs::path out = fresh_dir("comet_utilization_range");
  const Run r = run("comet_utilization --scale quick --nets 6 --images 300 --sparsity-range 0.05,0.99 --device cpu --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
  const json j = read_json(out / "comet_utilization.json");
  for (const json& c : j["checks"]) {
    INFO(c.dump(2));
    if (c["id"] == "dead_count_forced_by_protocol") {
      // It reads no image and draws §5.1.2's own protocol whatever the flags: the paper's setup, an erratum there.
      CHECK(c["departure"] == "");
      CHECK(c["verdict"] == "erratum");
      continue;
    }
    CHECK(c["departure"].get<std::string>().find("1 − p_k ~ U(0.05, 0.99), not §5.1.2's U(0.05, 1)") != std::string::npos);
    CHECK(c["departure"].get<std::string>().find("6 nets (§5.1.2: 1000)") != std::string::npos);
  }
}

TEST_CASE("comet_ntk and comet_overlap: eq. (9) is a self-check, our large-width laws own questions, and the departure "
          "from §5.1.1's setup is recorded (issue 47)", "[analysis][comet_ntk][comet_overlap]") {
  const fs::path out = fresh_dir("comet_pairs_kinds");
  for (const std::string name : {"comet_ntk", "comet_overlap"}) {
    const Run r = run(name + " --scale quick --pairs 12 --nets 1 --depth 2 --width 32 --resamples 200 --out " + (out / name).string());
    INFO(r.output);
    REQUIRE((r.code == 0 || r.code == 3 || r.code == 4));
    const json j = read_json(out / name / (name + ".json"));
    if (name == "comet_ntk")
      for (const char* printed : {"eq11_as_printed", "eq9_as_printed"})
        CHECK(std::any_of(j["checks"].begin(), j["checks"].end(), [&](const json& c) { return c["id"] == printed; }));
    for (const json& c : j["checks"]) {
      INFO(c.dump(2));
      const std::string id = c["id"], claim = c["claim"];
      CHECK(claim.find("beyond the paper") == std::string::npos);
      if (id.rfind("law_", 0) == 0) CHECK(c["kind"] == "own-question");
      if (id == "eq9_first_order" || id == "eq11_blocks") CHECK(c["kind"] == "self-check");
      if (id == "eq11_as_printed" || id == "eq9_as_printed") {
        // The printed form of an identity that holds for every net: any net's counterexample is the paper's setup (issue 48).
        CHECK(c["kind"] == "claim");
        CHECK(c["verdict"] == "erratum");
        CHECK(c["note"].get<std::string>().find(id == "eq9_as_printed" ? "First counterexample (p_k ascending, then pair): p_k = "
                                                                       : "Smallest counterexample: p_k = ") != std::string::npos);
        continue;
      }
      if (c["kind"] == "claim" || c["kind"] == "own-question") CHECK(c["departure"].get<std::string>().find("12 pairs (§5.1.1: 500)") != std::string::npos);
    }
  }
}
