// The analysis contract (docs/DESIGN.md), end to end on the real executables at --scale quick: exit
// codes, the JSON fields, atomic outputs, nothing written on bad input, the same numbers for any
// thread count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sparseact/core/matrix_io.hpp>
#include <sparseact/core/version.hpp>
#include <sparseact/spectral/init.hpp>

#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;
using Catch::Matchers::WithinRel;

namespace {

bool no_temporaries(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE("mp_spectrum --scale quick: every check holds and the outputs are complete", "[analysis][mp_spectrum]") {
  const fs::path out = fresh_dir("mp_spectrum_quick");
  const Run r = run("mp_spectrum --scale quick --device cpu --out " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const json j = read_json(out / "mp_spectrum.json");
  require_contract_fields(j, "mp_spectrum");
  CHECK(j["device"] == "cpu");
  CHECK(j["paper"] == "001");
  CHECK(j["params"]["n"] == 768);  // the quick default, recorded
  CHECK(j["params"]["d"] == 192);
  CHECK(j["params"]["scale"] == "quick");
  CHECK(j["params"]["pdf"] == false);
  CHECK(j["checks"].size() == 4);
  for (const auto& c : j["checks"]) CHECK(c["holds"] == true);
  CHECK(j["data"]["ratio_limit"].get<double>() == Approx(9.0));
  CHECK(j["data"]["zero_fraction_predicted"].get<double>() == Approx(0.75));
  for (const char* f : {"trials.csv", "eigenvalues.csv", "theorem6.csv"}) CHECK(fs::exists(out / f));
  CHECK(no_temporaries(out));
  if (!j["data"].contains("figure_error")) {
    CHECK(fs::exists(out / "mp_spectrum_esd.png"));
    CHECK(fs::exists(out / "mp_spectrum_esd.svg"));
  }
}

TEST_CASE("mp_spectrum gives the same numbers for --threads 1 and 2", "[analysis][reproducible]") {
  const fs::path a = fresh_dir("mp_threads1"), b = fresh_dir("mp_threads2");
  REQUIRE(run("mp_spectrum --scale quick --device cpu --threads 1 --out " + a.string()).code == 0);
  REQUIRE(run("mp_spectrum --scale quick --device cpu --threads 2 --out " + b.string()).code == 0);
  const json ja = read_json(a / "mp_spectrum.json"), jb = read_json(b / "mp_spectrum.json");
  CHECK(ja["checks"] == jb["checks"]);
  json da = ja["data"], db = jb["data"];
  CHECK(da == db);
  std::ifstream ea(a / "eigenvalues.csv"), eb(b / "eigenvalues.csv");
  CHECK(std::string(std::istreambuf_iterator<char>(ea), {}) == std::string(std::istreambuf_iterator<char>(eb), {}));
}

TEST_CASE("mp_spectrum rejects bad flags with exit 2, one line, and writes nothing", "[analysis][cli]") {
  const fs::path out = fresh_dir("mp_bad");
  for (const std::string flags : {"--n 0", "--n 1", "--d -3", "--init orthogonal", "--dist cauchy", "--trials 0",
                                   "--seed banana", "--device tpu", "--scale huge", "--alpha 2", "--no-such-flag",
                                   "--n 500 --d 500"}) {
    CAPTURE(flags);
    const Run r = run("mp_spectrum " + flags + " --out " + out.string());
    CHECK(r.code == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK(r.output.find("error") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  const Run named = run("mp_spectrum --n 0 --out " + out.string());
  CHECK(named.output.find("--n") != std::string::npos);  // the message names the flag
}

TEST_CASE("mp_spectrum --weights: a corrupted .npy exits 2, a valid one is analysed", "[analysis][weights]") {
  const fs::path dir = fresh_dir("mp_weights");
  fs::create_directories(dir);
  const fs::path bad = dir / "corrupt.npy";
  {
    std::ofstream f(bad, std::ios::binary);
    f << "\x93NUMPY\x01\x00garbage";
  }
  const fs::path out = dir / "out_bad";
  const Run r = run("mp_spectrum --weights " + bad.string() + " --out " + out.string());
  INFO(r.output);
  CHECK(r.code == 2);
  CHECK(r.output.find("corrupt.npy") != std::string::npos);
  CHECK_FALSE(fs::exists(out));

  // A real i.i.d. matrix saved to .npy: the law at its shape fits.
  const fs::path good = dir / "K.npy";
  sparseact::save_npy(good, sparseact::spectral::init_weights(600, 150, sparseact::spectral::Init::kaiming,
                                                               sparseact::Distribution::uniform, 3));
  const fs::path out2 = dir / "out_good";
  const Run ok = run("mp_spectrum --weights " + good.string() + " --out " + out2.string());
  INFO(ok.output);
  CHECK(ok.code == 0);
  const json j = read_json(out2 / "mp_spectrum.json");
  CHECK(j["params"]["weights"] == good.string());
  CHECK(j["data"]["source"].get<std::string>().find("weights") == 0);

  // A low-rank "checkpoint" breaks Theorem 5's zero fraction: the check fails, exit 3.
  Eigen::MatrixXd low = sparseact::spectral::init_weights(300, 5, sparseact::spectral::Init::xavier, sparseact::Distribution::normal, 1) *
                        sparseact::spectral::init_weights(5, 100, sparseact::spectral::Init::xavier, sparseact::Distribution::normal, 2);
  const fs::path lowrank = dir / "lowrank.npy";
  sparseact::save_npy(lowrank, low);
  const Run fails = run("mp_spectrum --weights " + lowrank.string() + " --out " + (dir / "out_low").string());
  INFO(fails.output);
  CHECK(fails.code == 3);
  const json jl = read_json(dir / "out_low" / "mp_spectrum.json");
  CHECK(jl["checks"][1]["id"] == "thm5_zero_fraction");
  CHECK(jl["checks"][1]["holds"] == false);
}

TEST_CASE("mp_sweep --scale quick converges and writes its figures' data", "[analysis][mp_sweep]") {
  const fs::path out = fresh_dir("mp_sweep_quick");
  const Run r = run("mp_sweep --scale quick --device cpu --out " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const json j = read_json(out / "mp_sweep.json");
  require_contract_fields(j, "mp_sweep");
  CHECK(j["checks"].size() == 3);
  CHECK(fs::exists(out / "sweep.csv"));
  CHECK(run("mp_sweep --c 1 --out " + out.string() + "_c1").code == 2);
  CHECK(run("mp_sweep --n 64,128 --out " + out.string() + "_n").code == 2);
  CHECK_FALSE(fs::exists(out.string() + "_c1"));
}

TEST_CASE("an analysis without a GPU path answers --device cuda with exit 2 and writes nothing", "[analysis][cli][device]") {
  const fs::path out = fresh_dir("lsh_lower_bound_cuda");
  const Run r = run("lsh_lower_bound --scale quick --device cuda --out " + out.string());
  CHECK(r.code == 2);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK(r.output.find("--device cuda") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // auto resolves to the CPU, and the JSON says so
  const Run ok = run("lsh_lower_bound --scale quick --device auto --out " + out.string());
  REQUIRE(ok.code == 0);
  CHECK(read_json(out / "lsh_lower_bound.json")["device"] == "cpu");
}

TEST_CASE("an output folder that cannot be created exits 2 at once, before any work", "[analysis][cli]") {
  const fs::path dir = fresh_dir("out_under_file");
  fs::create_directories(dir);
  const fs::path file = dir / "plain_file";
  std::ofstream(file) << "x";
  const Run r = run("mp_spectrum --out " + (file / "results").string());  // the paper scale would take a while
  CHECK(r.code == 2);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK(r.output.find("--out") != std::string::npos);
}

TEST_CASE("help and version exit 0", "[analysis][cli]") {
  const Run h = run("mp_spectrum --help");
  CHECK(h.code == 0);
  CHECK(h.output.find("--weights") != std::string::npos);
  const Run v = run("mp_sweep --version");
  CHECK(v.code == 0);
  CHECK(v.output.find("sparseact") != std::string::npos);
}

/// Runs sparseact_report on `root`, requires exit 0 and returns the REPORT.md it wrote.
static std::string report_markdown(const fs::path& root) {
  const Run r = run("sparseact_report " + root.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  std::ifstream in(root / "REPORT.md");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("sparseact_report writes REPORT.md with a row per check", "[analysis][report]") {
  const fs::path root = fresh_dir("report");
  REQUIRE(run("mp_spectrum --scale quick --out " + (root / "mp_spectrum").string()).code == 0);
  const Run r = run("sparseact_report " + root.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  std::ifstream in(root / "REPORT.md");
  const std::string md(std::istreambuf_iterator<char>(in), {});
  CHECK(md.find("## Paper 001") != std::string::npos);
  CHECK(md.find("paper 001 Theorem 5") != std::string::npos);
  // The summary opens the report: mp_spectrum's one claim (Theorem 5's ratio) holds; its zero fraction (a rank by
  // construction) and Theorem 6 (an identity, two η sources) are self-checks.
  CHECK(md.find("| 001 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 3 (0) |") != std::string::npos);
  CHECK(md.find("### 1. What the papers get wrong\n\nErrata, and claims contradicted at the paper's own setup.\n\nNothing at this scale.") !=
        std::string::npos);
  CHECK(md.find("### 2. What did not reproduce in our setups") != std::string::npos);
  CHECK(md.find("### 3. What holds") != std::string::npos);
  CHECK(md.find("### 4. What this scale cannot settle, and the job that would") != std::string::npos);
  CHECK(md.find("### Where we depart from the paper's setup") != std::string::npos);
  CHECK(run("sparseact_report " + (root / "missing").string()).code == 2);
}

TEST_CASE("sparseact_report counts every verdict and kind, lists what is wrong, unsettled and departed, and never reads "
          "an inconclusive claim as a failure", "[analysis][report]") {
  const fs::path root = fresh_dir("report_verdicts");
  fs::create_directories(root / "fake");
  const auto check = [](const std::string& id, const std::string& kind, const std::string& verdict, json extra = json::object()) {
    json c = {{"id", id}, {"kind", kind}, {"claim", "paper 042 " + id}, {"statement", "s"}, {"predicted", 1},
              {"measured", "measured " + id}, {"verdict", verdict}, {"holds", verdict == "holds"}, {"tolerance", json::object()},
              {"note", ""}, {"detail", nullptr}, {"power", nullptr}};
    c.update(extra);
    return c;
  };
  const json checks = {
      check("ok", "claim", "holds", {{"statement", "a <b> & \"c\""}}),
      check("refuted", "claim", "contradicted", {{"note", "the interval lies below 0, [-2, -1]; see [ERRATA](../ERRATA.md)"}}),
      check("misprint", "claim", "erratum"),
      check("small", "claim", "inconclusive",
            {{"power", {{"power", 0.31}, {"effect", 0.5}, {"effect_source", "stated"}, {"n", 3}, {"unit", "seeds per arm"}, {"n_for_80", 12}}},
             {"departure", "width 32, not 1000"}}),
      check("mini", "claim", "not reproduced", {{"departure", "Fashion-MNIST for CIFAR-10"}}),
      check("weak", "claim", "direction only"),
      check("lower", "claim", "not refuted"),
      check("mine", "own-question", "contradicted"),
      check("seen", "observation", "observation"),
      check("ours", "self-check", "holds"),
      {{"id", "legacy"}, {"claim", "paper 042 legacy"}, {"holds", true}}};
  std::ofstream(root / "fake" / "fake.json")
      << json{{"analysis", "fake"}, {"paper", "042"}, {"elapsed_s", 100.0}, {"checks", checks}}.dump();
  const std::string md = report_markdown(root);
  INFO(md);
  // holds (ok, legacy) 2, not refuted 1, contradicted 1, not reproduced 1, direction only 1, erratum 1, inconclusive 1,
  // own question 1, observation 1, self-check 1 passing.
  CHECK(md.find("| 042 | 2 | 1 | 1 | 1 | 1 | 1 | 1 | 1 | 1 | 1 (0) |") != std::string::npos);
  // The page prints the same model (issue 49): the same counts, one row per check with its decided verdict and setup,
  // the lists' lines with their paper and verdict, the text escaped. tests/report checks it in a browser.
  {
    std::ifstream in(root / "report" / "index.html");
    const std::string page(std::istreambuf_iterator<char>(in), {});
    std::size_t rows = 0;
    for (std::size_t at = page.find("<tbody class=\"check\""); at != std::string::npos; at = page.find("<tbody class=\"check\"", at + 1)) ++rows;
    CHECK(rows == checks.size());
    CHECK(page.find("<tr><td>042</td><td>2</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1 (0)</td></tr>") !=
          std::string::npos);
    CHECK(page.find("data-paper=\"042\" data-kind=\"claim\" data-verdict=\"inconclusive\" data-setup=\"departs\"") != std::string::npos);
    CHECK(page.find("<li data-paper=\"042\" data-kind=\"claim\" data-verdict=\"contradicted\"><a href=\"#fake\">fake › refuted</a>") != std::string::npos);
    CHECK(page.find("a &lt;b&gt; &amp; &quot;c&quot;") != std::string::npos);
    // A bracketed interval before a link stays text; the link is relocated one folder up (the page is in report/).
    CHECK(page.find("the interval lies below 0, [-2, -1]; see <a href=\"../../ERRATA.md\">ERRATA</a>") != std::string::npos);
    CHECK(page.find("<b>") == std::string::npos);
  }
  const auto section = [&](const std::string& title) {
    const std::size_t at = md.find("### " + title);
    REQUIRE(at != std::string::npos);
    return md.substr(at, md.find("\n### ", at + 4) - at);
  };
  const std::string wrong = section("1. What the papers get wrong"), unsettled = section("4. What this scale cannot settle");
  CHECK(wrong.find("fake › refuted") != std::string::npos);
  CHECK(wrong.find("fake › misprint") != std::string::npos);
  CHECK(wrong.find("fake › small") == std::string::npos);
  CHECK(wrong.find("fake › mini") == std::string::npos);
  CHECK(wrong.find("fake › mine") == std::string::npos);
  // A departing run's exclusion, and a direction without the paper's size, are listed apart, with the departure.
  const std::string apart = section("2. What did not reproduce in our setups");
  CHECK(apart.find("fake › mini") != std::string::npos);
  CHECK(apart.find("departs: Fashion-MNIST for CIFAR-10") != std::string::npos);
  CHECK(apart.find("fake › weak") != std::string::npos);
  const std::string holds = section("3. What holds");
  CHECK(holds.find("fake › ok") != std::string::npos);
  CHECK(holds.find("fake › lower") != std::string::npos);
  CHECK(holds.find("*not refuted*") != std::string::npos);
  CHECK(section("Our own questions").find("fake › mine") != std::string::npos);
  // Without stored bounds the job falls back to the power at the named effect (never called the deciding size).
  CHECK(unsettled.find("fake › small") != std::string::npos);
  CHECK(unsettled.find("power 0.31") != std::string::npos);
  CHECK(unsettled.find("12 seeds per arm give 80 % power at that effect") != std::string::npos);
  CHECK(section("Where we depart from the paper's setup").find("width 32, not 1000") != std::string::npos);
  // An inconclusive verdict is italic with its power, never bold like a refutation.
  CHECK(md.find("*inconclusive* (power 0.31") != std::string::npos);
  CHECK(md.find("**inconclusive") == std::string::npos);
  CHECK(md.find("**contradicted**") != std::string::npos);
  CHECK(md.find("Self-checks of our own construction") != std::string::npos);
}

TEST_CASE("sparseact_report sets each at-scale claim beside the default run's verdict of the same check", "[analysis][report]") {
  const fs::path root = fresh_dir("report_at_scale");
  fs::create_directories(root / "fake");
  fs::create_directories(root / "at-scale" / "fake");
  const auto result = [](const std::string& verdict, int n, int trials) {
    const json power = {{"power", n > 50 ? 0.97 : 0.3}, {"effect", 0.05}, {"effect_source", "stated"}, {"n", n}, {"unit", "trials"},
                        {"n_for_80", 114}};
    const json c = {{"id", "p_at_least"}, {"kind", "claim"}, {"claim", "paper 042 Lemma 1"}, {"statement", "P ≥ 0.9 at every point"},
                    {"predicted", "θ > 0"}, {"measured", 1}, {"verdict", verdict}, {"holds", verdict == "holds"},
                    {"tolerance", json::object()}, {"note", ""}, {"detail", nullptr}, {"power", power}};
    return json{{"analysis", "fake"}, {"paper", "042"}, {"elapsed_s", 12.0 * trials}, {"params", {{"trials", trials}, {"out", "x"}}},
                {"checks", json::array({c})}};
  };
  std::ofstream(root / "fake" / "fake.json") << result("inconclusive", 30, 30).dump();
  std::ofstream(root / "at-scale" / "fake" / "fake.json") << result("holds", 120, 120).dump();
  // A second larger run of the same analysis, in a folder <name>@<variant>, is a row of its own.
  fs::create_directories(root / "at-scale" / "fake@t60");
  std::ofstream(root / "at-scale" / "fake@t60" / "fake.json") << result("inconclusive", 60, 60).dump();
  std::ofstream(root / "at-scale" / "runs.json") << json{{"fake", {{"setup", "120 trials"}, {"closeness", 1}}},
                                                         {"fake@t60", {{"setup", "60 trials"}, {"closeness", 1}}}}
                                                        .dump();
  const std::string md = report_markdown(root);
  INFO(md);
  // The at-scale folder is not an analysis of its own: the claim is counted once, from the run closest to the paper's
  // setup (equal closeness: the larger run, which holds), and the lists name that run and show the others.
  CHECK(md.find("| 042 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 (0) |") != std::string::npos);
  CHECK(md.find("(paper 042 Lemma 1; `at-scale/fake`, 120 trials)") != std::string::npos);
  CHECK(md.find("— across runs: holds at (120 trials, 120 trials); inconclusive at (default run, 30 trials), (60 trials, 60 trials)") !=
        std::string::npos);
  const std::size_t at = md.find("### At larger scale");
  REQUIRE(at != std::string::npos);
  const std::string row = md.substr(md.find("| [fake › p_at_least]", at), 400);
  CHECK(row.find("| inconclusive | 30 trials | --trials 30 → 120 | 120 trials | 1440 s | 0.97 | holds | 1 | θ > 0 | P ≥ 0.9 at every point |") !=
        std::string::npos);
  const std::size_t variant = md.find("| [fake@t60 › p_at_least](at-scale/fake@t60/fake.json)", at);
  REQUIRE(variant != std::string::npos);
  CHECK(md.substr(variant, 400).find("| inconclusive | 30 trials | --trials 30 → 60 | 60 trials | 720 s | 0.97 | *inconclusive*") !=
        std::string::npos);
}

TEST_CASE("sparseact_report shows only the flags a larger run recorded: no unrecorded value, no pre-standard 'quick'",
          "[analysis][report]") {
  // A larger run written before scaled flags recorded what ran says "" for them and scale "quick" for a
  // run without --scale; beside a default run that records both, only --trials may be shown as a departure.
  const fs::path root = fresh_dir("report_unrecorded");
  fs::create_directories(root / "fake");
  fs::create_directories(root / "at-scale" / "fake");
  const auto result = [](const json& params, int n) {
    const json c = {{"id", "p_at_least"}, {"kind", "claim"}, {"claim", "paper 042 Lemma 1"}, {"statement", "s"}, {"predicted", "θ > 0"},
                    {"measured", 1}, {"verdict", "inconclusive"}, {"holds", false}, {"tolerance", json::object()}, {"note", ""},
                    {"detail", nullptr},
                    {"power", {{"power", 0.3}, {"effect", 0.05}, {"effect_source", "stated"}, {"n", n}, {"unit", "trials"}, {"n_for_80", 500}}}};
    return json{{"analysis", "fake"}, {"paper", "042"}, {"elapsed_s", 10.0}, {"params", params}, {"checks", json::array({c})}};
  };
  std::ofstream(root / "fake" / "fake.json") << result({{"trials", 30}, {"epochs", 5}, {"scale", "default"}}, 30).dump();
  std::ofstream(root / "at-scale" / "fake" / "fake.json") << result({{"trials", 120}, {"epochs", ""}, {"scale", "quick"}}, 120).dump();
  std::ofstream(root / "at-scale" / "runs.json") << json{{"fake", {{"setup", "120 trials"}, {"closeness", 1}}}}.dump();
  const std::string md = report_markdown(root);
  INFO(md);
  const std::size_t at = md.find("### At larger scale");
  REQUIRE(at != std::string::npos);
  const std::string row = md.substr(md.find("| [fake › p_at_least]", at), 300);
  CHECK(row.find("| 30 trials | --trials 30 → 120 | 120 trials |") != std::string::npos);
}

TEST_CASE("sparseact_report reads a claim from the protocol run closest to the paper's setup, never by power, and shows every "
          "run on one line", "[analysis][report]") {
  const fs::path root = fresh_dir("report_closest");
  const auto result = [](const std::string& verdict, double estimate, double lo, double hi, int n) {
    const json c = {{"id", "beats"}, {"kind", "claim"}, {"claim", "paper 042 Table 4"}, {"statement", "MoMLP beats the baseline"},
                    {"predicted", "θ > 0"}, {"measured", fmt::format("θ̂ = {}", estimate)}, {"verdict", verdict}, {"holds", verdict == "holds"},
                    {"tolerance", {{"estimate", estimate}, {"std_error", 0.1}, {"lower_bound", lo}, {"upper_bound", hi}, {"alpha", 0.05},
                                   {"effect_that_counts", 0.0}}},
                    {"note", ""}, {"departure", "experts of width w (App. D.3.1: 1000)"}, {"detail", nullptr},
                    {"power", {{"power", 0.5}, {"effect", 0.1}, {"effect_source", "smallest effect of interest"}, {"n", n}, {"unit", "runs"}}}};
    return json{{"analysis", "fake"}, {"paper", "042"}, {"elapsed_s", 10.0}, {"params", json::object()}, {"checks", json::array({c})}};
  };
  for (const char* f : {"fake", "at-scale/fake@w32", "at-scale/fake@w256", "at-scale/fake@range"}) fs::create_directories(root / f);
  std::ofstream(root / "fake" / "fake.json") << result("inconclusive", 0.05, -0.11, 0.21, 5).dump();
  std::ofstream(root / "at-scale" / "fake@w32" / "fake.json") << result("inconclusive", 0.007, -0.036, 0.05, 80).dump();
  std::ofstream(root / "at-scale" / "fake@w256" / "fake.json") << result("holds", 0.42, 0.16, 0.67, 3).dump();
  // Outside the protocol, with the most runs and a decided verdict: it never decides while a protocol run exists.
  std::ofstream(root / "at-scale" / "fake@range" / "fake.json") << result("not reproduced", -0.3, -0.4, -0.2, 1000).dump();
  json runs = {{"fake@w32", {{"setup", "w = 32"}, {"closeness", 1}}},
               {"fake@w256", {{"setup", "w = 256"}, {"closeness", 4}}},
               {"fake@range", {{"setup", "another range"}, {"closeness", 5}, {"protocol", false}, {"why", "§5 draws from U(0, 1)"}}}};
  std::ofstream(root / "at-scale" / "runs.json") << runs.dump();
  const std::string md = report_markdown(root);
  INFO(md);
  CHECK(md.find("| 042 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 (0) |") != std::string::npos);
  CHECK(md.find("(paper 042 Table 4; `at-scale/fake@w256`, w = 256): θ̂ = 0.42") != std::string::npos);
  CHECK(md.find("— across runs: holds at (w = 256, 3 runs, θ̂ 0.42 [0.16, 0.67]); inconclusive at (default run, 5 runs, θ̂ 0.05 [-0.11, "
                "0.21]), (w = 32, 80 runs, θ̂ 0.007 [-0.036, 0.05]); not reproduced at (another range, 1000 runs, θ̂ -0.3 [-0.4, -0.2]; "
                "outside the paper's protocol: §5 draws from U(0, 1))") != std::string::npos);
  // An at-scale folder that runs.json does not describe is refused, and nothing is written.
  fs::create_directories(root / "at-scale" / "fake@w64");
  std::ofstream(root / "at-scale" / "fake@w64" / "fake.json") << result("holds", 0.2, 0.01, 0.4, 3).dump();
  fs::remove(root / "REPORT.md");
  const Run refused = run("sparseact_report " + root.string());
  CHECK(refused.code == 1);
  CHECK_THAT(refused.output, Catch::Contains("at-scale/fake@w64: no entry in at-scale/runs.json"));
  CHECK_FALSE(fs::exists(root / "REPORT.md"));
}

TEST_CASE("sparseact_report prints a claim's trend along a designed sweep, and refuses a sweep whose runs differ in more than its setting",
          "[analysis][report]") {
  const fs::path root = fresh_dir("report_trend");
  const auto result = [](double estimate, double width, const std::string& extra) {
    const json c = {{"id", "beats"}, {"kind", "claim"}, {"claim", "paper 042 Table 4"}, {"statement", "MoMLP beats the baseline"},
                    {"predicted", "θ > 0"}, {"measured", fmt::format("θ̂ = {}", estimate)}, {"verdict", "holds"}, {"holds", true},
                    {"tolerance", {{"estimate", estimate}, {"std_error", 0.01}, {"lower_bound", estimate - 0.02}, {"upper_bound", estimate + 0.02},
                                   {"alpha", 0.05}, {"effect_that_counts", 0.0}, {"effect_papers", true}, {"effect_value", 1.2}}},
                    {"note", ""}, {"departure", "experts of width w (App. D.3.1: 1000)"}, {"detail", nullptr},
                    {"power", {{"power", 0.9}, {"effect", 1.2}, {"effect_source", "the paper's"}, {"n", 3}, {"unit", "runs"}}}};
    return json{{"analysis", "fake"}, {"paper", "042"}, {"elapsed_s", 10.0}, {"params", {{"width", width}, {"runs", 3}, {"targets", extra}}},
                {"checks", json::array({c})}};
  };
  fs::create_directories(root / "fake");
  std::ofstream(root / "fake" / "fake.json") << result(0.3, 32, "all").dump();
  json runs = json::object(), sweep = json::array();
  // θ̂ = 0.1·log₂ w with residuals ±0.01 orthogonal to log₂ w (as test_app_trend): slope 0.1 per doubling, toward the paper's 1.2.
  const std::vector<std::pair<int, double>> points{{16, 0.41}, {32, 0.49}, {64, 0.59}, {128, 0.71}};
  for (const auto& [w, estimate] : points) {
    const std::string folder = fmt::format("fake@w{}", w);
    fs::create_directories(root / "at-scale" / folder);
    std::ofstream(root / "at-scale" / folder / "fake.json") << result(estimate, w, "all").dump();
    runs[folder] = {{"setup", fmt::format("w = {}", w)}, {"closeness", w / 16}};
    sweep.push_back(folder);
  }
  std::ofstream(root / "at-scale" / "runs.json") << runs.dump();
  std::ofstream(root / "at-scale" / "trends.json")
      << json{{"fake", {{"param", "width"}, {"symbol", "w"}, {"paper", 1024}, {"source", "App. D.3.1"}, {"runs", sweep}}}}.dump();
  const std::string md = report_markdown(root);
  INFO(md);
  CHECK(md.find("— trend in w: θ̂ 0.41 (16), 0.49 (32), 0.59 (64), 0.71 (128); per doubling of w 0.1 [") != std::string::npos);
  CHECK(md.find(": toward the paper's effect; the paper's θ = 1.2; one run at the paper's w = 1024 would read about 1 [") != std::string::npos);
  CHECK(md.find("(App. D.3.1: w = 1024)") != std::string::npos);
  CHECK(md.find("Trends toward the paper's setting: `beats` per doubling of w 0.1 [") != std::string::npos);
  // A run of the sweep that differs in another parameter: refused, nothing written.
  std::ofstream(root / "at-scale" / "fake@w64" / "fake.json") << result(0.59, 64, "fbm").dump();
  fs::remove(root / "REPORT.md");
  const Run refused = run("sparseact_report " + root.string());
  CHECK(refused.code == 1);
  CHECK_THAT(refused.output, Catch::Contains("at-scale/trends.json › fake: at-scale/fake@w64 differs from the sweep's first run in more than width"));
  CHECK_FALSE(fs::exists(root / "REPORT.md"));
  // A folder the sweep names that is not there.
  std::ofstream(root / "at-scale" / "fake@w64" / "fake.json") << result(0.59, 64, "all").dump();
  sweep.push_back("fake@w512");
  std::ofstream(root / "at-scale" / "trends.json")
      << json{{"fake", {{"param", "width"}, {"symbol", "w"}, {"paper", 1024}, {"source", "App. D.3.1"}, {"runs", sweep}}}}.dump();
  CHECK_THAT(run("sparseact_report " + root.string()).output, Catch::Contains("\"fake@w512\" is not an at-scale run of fake"));
}

TEST_CASE("sparseact_report does not read an at-scale result built from an uncommitted tree, and says how to regenerate it",
          "[analysis][report]") {
  const fs::path root = fresh_dir("report_dirty");
  const auto result = [](const std::string& verdict, const std::string& version) {
    const json c = {{"id", "beats"}, {"kind", "claim"}, {"claim", "paper 042 Table 4"}, {"statement", "MoMLP beats the baseline"},
                    {"predicted", "θ > 0"}, {"measured", "θ̂"}, {"verdict", verdict}, {"holds", verdict == "holds"},
                    {"tolerance", json::object()}, {"note", ""}, {"detail", nullptr}};
    return json{{"analysis", "fake"}, {"paper", "042"}, {"elapsed_s", 10.0}, {"version", version},
                {"params", {{"width", 64}, {"targets", "fbm,ackley2"}, {"pdf", false}, {"resume", true}, {"out", "x"}}}, {"checks", json::array({c})}};
  };
  for (const char* f : {"fake", "at-scale/fake@w64"}) fs::create_directories(root / f);
  std::ofstream(root / "fake" / "fake.json") << result("inconclusive", "").dump();
  std::ofstream(root / "at-scale" / "fake@w64" / "fake.json") << result("holds", "0.1.0-abc1234-dirty").dump();
  std::ofstream(root / "at-scale" / "runs.json") << json{{"fake@w64", {{"setup", "w = 64"}, {"closeness", 1}}}}.dump();
  const std::string md = report_markdown(root);
  INFO(md);
  CHECK(md.find("| 042 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0 (0) |") != std::string::npos);  // the default run decides
  CHECK(md.find("### At-scale results not read") != std::string::npos);
  CHECK(md.find("- `at-scale/fake@w64` (sparseact 0.1.0-abc1234-dirty): `build/bin/fake --targets fbm,ackley2 --width 64 "
                "--out figures/at-scale/fake@w64 --resume`") != std::string::npos);
  CHECK(md.find("across runs") == std::string::npos);
}

TEST_CASE("sparseact_report gives the run size at which an undecided interval would decide, never one the run had", "[analysis][report]") {
  const fs::path root = fresh_dir("report_settle");
  fs::create_directories(root / "fake");
  const auto undecided = [](const std::string& id, double estimate) {
    // se 0.1, one-sided 95 %: bounds θ̂ ∓ 0.1645, straddling 0; the effect that counts is 0.
    return json{{"id", id}, {"kind", "claim"}, {"claim", "paper 042 Lemma 1"}, {"statement", "s"}, {"predicted", "θ > 0"},
                {"measured", "m" + id}, {"verdict", "inconclusive"}, {"holds", false},
                {"tolerance", {{"estimate", estimate}, {"std_error", 0.1}, {"lower_bound", estimate - 0.1645}, {"upper_bound", estimate + 0.1645},
                               {"alpha", 0.05}, {"effect_that_counts", 0.0}}},
                {"note", ""}, {"departure", ""}, {"detail", nullptr},
                {"power", {{"power", 0.26}, {"effect", 0.1}, {"effect_source", "smallest effect of interest"}, {"n", 3}, {"unit", "seeds per arm"},
                           {"n_for_80", 19}}}};
  };
  // An equivalence whose margin we stated ourselves: no run size settles it (written before margin_fixed was stored).
  json stated = undecided("ours", 0.0);
  stated["tolerance"] = {{"estimate", 0.0}, {"std_error", 0.1}, {"interval", {-0.1645, 0.1645}}, {"margin", 0.1}, {"alpha", 0.05},
                         {"margin_source", "stated: 1 point"}, {"rule", "holds: the (1 − 2α) interval inside (−Δ, Δ)"}};
  std::ofstream(root / "fake" / "fake.json") << json{{"analysis", "fake"}, {"paper", "042"}, {"elapsed_s", 100.0},
                                                     {"checks", {undecided("near", 0.1), undecided("at", 0.001), stated}}}
                                                        .dump();
  const std::string md = report_markdown(root);
  INFO(md);
  // n′ = 3·(1.6449·0.1/0.1)² = 8.12 → 9 seeds per arm, 3× this run's 100 s.
  CHECK(md.find("fake › near](#fake) (paper 042 Lemma 1; default run): θ̂ = 0.1 with the same spread would put the interval above 0 (holds) at "
                "about 9 seeds per arm (this run: 3); about 0.083 h") != std::string::npos);
  // θ̂ a hundredth of a standard error from 0: no size is prescribed.
  CHECK(md.find("fake › at](#fake) (paper 042 Lemma 1; default run): θ̂ = 0.001 sits within") != std::string::npos);
  CHECK(md.find("more seeds per arm may never settle it (this run: 3)") != std::string::npos);
  CHECK(md.find("fake › ours](#fake) (paper 042 Lemma 1; default run): the margin was not fixed before the data") != std::string::npos);
  // The power's n₈₀ (19, at a smallest effect of interest) is not the job that would decide.
  const std::size_t list = md.find("### 4. What this scale cannot settle");
  REQUIRE(list != std::string::npos);
  CHECK(md.substr(list, md.find("\n### ", list + 4) - list).find("19 seeds per arm") == std::string::npos);
}

TEST_CASE("sparseact_report refuses a result the lint finds, with one line per offence and nothing written", "[analysis][report]") {
  const fs::path root = fresh_dir("report_lint");
  fs::create_directories(root / "fake");
  const auto c = [](const std::string& id, const std::string& note) {
    return json{{"id", id}, {"kind", "claim"}, {"claim", "paper 042 Lemma 1"}, {"statement", "s"}, {"predicted", "≤ 1"},
                {"measured", 0.5 + id.size()}, {"verdict", "holds"}, {"holds", true}, {"tolerance", {{"abs", 0}}},
                {"note", note}, {"departure", ""}, {"detail", nullptr}, {"power", nullptr}};
  };
  std::ofstream(root / "fake" / "fake.json")
      << json{{"analysis", "fake"}, {"paper", "042"}, {"checks", {c("a", "Always true: a failure is a bug."), c("bb", "Fashion-MNIST stands in for CIFAR-10.")}}}
             .dump();
  const Run r = run("sparseact_report " + root.string());
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Catch::Contains("sparseact_report: lint: fake › a: cannot-fail"));
  CHECK_THAT(r.output, Catch::Contains("sparseact_report: lint: fake › bb: stand-in"));
  CHECK_THAT(r.output, Catch::Contains("2 lint offences"));
  CHECK_FALSE(fs::exists(root / "REPORT.md"));
}

TEST_CASE("pricing a grid (--price-items) times the cheapest items, projects the grid through its cost model and writes only price.json",
          "[analysis][price]") {
  const fs::path out = fresh_dir("price");
  const std::string grid = "mp_sweep --scale quick --n 32,48,64 --c 0.25,4 --trials 2";
  const Run listed = run(grid + " --list-items --out " + (out / "listed").string());
  REQUIRE(listed.code == 0);
  std::vector<json> items;
  std::istringstream lines(listed.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') items.push_back(json::parse(line));
  REQUIRE(items.size() == 12);
  const Run priced = run(grid + " --price-items 2 --out " + out.string());
  INFO(priced.output);
  REQUIRE(priced.code == 0);
  CHECK_FALSE(fs::exists(out / "mp_sweep.json"));  // pricing computes no result
  std::ifstream in(out / "price.json");
  const json p = json::parse(in);
  CHECK(p["items"] == 12);
  // The first timed item is the cheapest of the listing, the second the median-cost one.
  double cheapest = items[0]["cost"], total = 0;
  for (const json& it : items) cheapest = std::min(cheapest, it["cost"].get<double>()), total += it["cost"].get<double>();
  REQUIRE(p["samples"].size() == 2);
  CHECK(p["samples"][0]["cost"].get<double>() == cheapest);
  CHECK_THAT(p["total_cost"].get<double>(), WithinRel(total, 1e-12));
  // The projection is the timed items' median seconds per unit of cost, carried over every item.
  std::vector<double> rates;
  for (const json& t : p["samples"]) rates.push_back(t["seconds"].get<double>() / t["cost"].get<double>());
  const double rate = 0.5 * (rates[0] + rates[1]);
  CHECK_THAT(p["seconds_per_cost"].get<double>(), WithinRel(rate, 1e-12));
  CHECK_THAT(p["core_hours"].get<double>(), WithinRel(total * rate / 3600, 1e-12));
  CHECK(p["peak_rss_mib"].get<double>() > 1);
  const std::string sbatch = p["sbatch"];
  CHECK(sbatch.rfind("ANALYSIS=mp_sweep sbatch --nodes=1 --time=00:10:00 examples/slurm/sweep.sbatch", 0) == 0);
  CHECK(sbatch.find("--n 32,48,64") != std::string::npos);
  CHECK(sbatch.find("--out") == std::string::npos);

  // A slice of each item timed (here: 2 trials standing for 20) counts --price-length times, and the
  // sbatch line runs the real job's flags.
  const fs::path sliced = out / "sliced";
  const Run scaled = run(grid + " --price-items 2 --price-length 10 --price-flags '--trials 20' --out " + sliced.string());
  INFO(scaled.output);
  REQUIRE(scaled.code == 0);
  std::ifstream in2(sliced / "price.json");
  const json q = json::parse(in2);
  CHECK(q["length_factor"] == 10.0);
  CHECK(q["gpu_path"] == true);  // mp_sweep has a --device cuda path
  CHECK_FALSE(q.contains("warning"));  // its items take seconds, not days
  // An item projected past a queue's limit is said: no node count shortens it.
  const Run huge = run("mp_sweep --scale quick --n 32,48,64 --c 0.25,4 --trials 20 --price-items 1 --price-length 1e9 --price-flags x --out " +
                       (out / "huge").string());  // ≥ 1 ms an item: ≥ 10⁶ s projected
  REQUIRE(huge.code == 0);
  std::ifstream in3(out / "huge" / "price.json");
  CHECK_THAT(json::parse(in3).value("warning", ""), Catch::Contains("no number of ranks shortens it"));
  CHECK(q["timed_flags"].get<std::string>().find("--trials 2") != std::string::npos);
  CHECK(q["sbatch"].get<std::string>().find(" --trials 20") != std::string::npos);
  CHECK(q["sbatch"].get<std::string>().find("--n 32") == std::string::npos);  // the real flags replace the timed ones
  std::vector<double> sliced_rates;
  for (const json& t : q["samples"]) {
    CHECK_THAT(t["projected_seconds"].get<double>(), WithinRel(10 * t["seconds"].get<double>(), 1e-12));
    sliced_rates.push_back(t["projected_seconds"].get<double>() / t["cost"].get<double>());
  }
  REQUIRE(sliced_rates.size() == 2);
  CHECK_THAT(q["seconds_per_cost"].get<double>(), WithinRel(0.5 * (sliced_rates[0] + sliced_rates[1]), 1e-12));
  // A length factor without the real flags, either flag without --price-items, a factor below 1: one
  // line, exit 2, nothing written.
  for (const std::string bad : {" --price-items 1 --price-length 10", " --price-length 10 --price-flags '--trials 20'",
                                " --price-items 1 --price-length 0.5 --price-flags x"}) {
    const fs::path none = out / "bad";
    const Run r = run(grid + bad + " --out " + none.string());
    INFO(bad << ": " << r.output);
    CHECK(r.code == 2);
    CHECK_FALSE(fs::exists(none));
  }
}

TEST_CASE("pricing on a GPU (--device cuda, here the CPU stand-in) projects GPU-hours, one GPU per rank", "[analysis][price][standin]") {
  const fs::path out = fresh_dir("price_gpu");
  const std::string grid = "comet_train --scale quick --widths 16 --models standard,comet --seeds 2 --epochs 1 --train 256 --test 64";
  const Run priced = run_shell("SPARSEACT_CUDA_STANDIN=exact " + std::string(SPARSEACT_BIN_DIR) + "/" + grid + " --device cuda --price-items 2 --out " +
                              out.string());
  INFO(priced.output);
  REQUIRE(priced.code == 0);
  std::ifstream in(out / "price.json");
  const json p = json::parse(in);
  CHECK(p["core_hours"].is_null());
  CHECK(p["longest_item_hours"].is_null());
  REQUIRE(p["gpu_hours"].is_number());
  CHECK_THAT(p["gpu_hours"].get<double>(), WithinRel(p["total_cost"].get<double>() * p["seconds_per_cost"].get<double>() / 3600, 1e-12));
  CHECK_THAT(p.value("gpu", ""), Catch::Contains("stand-in"));  // the card's name: a stand-in run can never pass for a GPU price
  const std::string sbatch = p["sbatch"];
  CHECK(sbatch.find("--ntasks-per-node=4 --gpus-per-task=1") != std::string::npos);
  CHECK(sbatch.find("--device cuda") != std::string::npos);
  CHECK_THAT(priced.output, Catch::Contains("GPU-hours projected"));
}

TEST_CASE("sparseact_report prices what does not fit from at-scale/pricing/*/price.json", "[analysis][report]") {
  const fs::path root = fresh_dir("report_pricing");
  fs::create_directories(root / "at-scale" / "pricing" / "fake");
  std::ofstream(root / "at-scale" / "pricing" / "fake" / "price.json")
      << json{{"analysis", "fake"}, {"items", 400}, {"samples", {{{"key", "width=3000 seed=0"}, {"seconds", 90.0}, {"cost", 3.0}}}},
              {"seconds_per_cost", 30.0}, {"rate_spread", 1.0}, {"core_hours", 250.0}, {"longest_item_hours", 1.5},
              {"peak_rss_mib", 812.0}, {"sbatch", "ANALYSIS=fake sbatch --nodes=4 --time=05:00:00 examples/slurm/sweep.sbatch"}}
             .dump();
  REQUIRE(run("sparseact_report " + root.string()).code == 0);
  std::ifstream in(root / "REPORT.md");
  const std::string md(std::istreambuf_iterator<char>(in), {});
  INFO(md);
  REQUIRE(md.find("### What does not fit here: the cluster job and its price") != std::string::npos);
  CHECK(md.find("| fake | 400 | width=3000 seed=0 (90 s) | 30 (1.00×) | 250 | 1.5 h | 812 MiB | CPU only | `ANALYSIS=fake sbatch --nodes=4") !=
        std::string::npos);
  CHECK(md.find("examples/slurm/sweep.sbatch` |") != std::string::npos);  // no warning: the line alone
  // The same grid priced on a GPU sits beside it, in GPU-hours.
  fs::create_directories(root / "at-scale" / "pricing" / "fake@gpu");
  std::ofstream(root / "at-scale" / "pricing" / "fake@gpu" / "price.json")
      << json{{"analysis", "fake"}, {"items", 400}, {"samples", {{{"key", "width=3000 seed=0"}, {"seconds", 0.9}, {"cost", 3.0}}}},
              {"seconds_per_cost", 0.3}, {"rate_spread", 1.0}, {"core_hours", nullptr}, {"gpu_hours", 2.5}, {"longest_item_hours", nullptr},
              {"longest_item_gpu_hours", 0.015}, {"gpu", "NVIDIA H100"}, {"peak_rss_mib", 900.0},
              {"sbatch", "ANALYSIS=fake sbatch --nodes=1 --ntasks-per-node=4 --gpus-per-task=1 --time=00:40:00 examples/slurm/sweep.sbatch"}}
             .dump();
  REQUIRE(run("sparseact_report " + root.string()).code == 0);
  std::ifstream in2(root / "REPORT.md");
  const std::string md2(std::istreambuf_iterator<char>(in2), {});
  INFO(md2);
  CHECK(md2.find("| fake@gpu | 400 | width=3000 seed=0 (0.9 s) | 0.3 (1.00×) | — | 0.015 h | 900 MiB | 2.5 GPU-hours on NVIDIA H100 |") !=
        std::string::npos);
  CHECK(md2.find("| fake | 400 | width=3000 seed=0 (90 s) | 30 (1.00×) | 250 | 1.5 h |") != std::string::npos);
}

TEST_CASE("sparseact_report --bench prints one row per speed check with the ratio of medians and the verdict", "[analysis][report]") {
  const fs::path root = fresh_dir("bench_report");
  fs::create_directories(root / "fake_bench");
  const json check = {{"id", "speedup"}, {"holds", false}, {"detail", {{"ours_s", {1.0, 2.0, 3.0}}, {"peer_s", {8.0, 6.0, 7.0}}}},
                      {"tolerance", {{"target", 4.0}, {"relative_spread", 0.05}, {"verdict", "does not hold"}}}};
  const json other = {{"id", "agree"}, {"holds", true}, {"tolerance", {{"abs", 1e-12}}}};  // not a speed check: no row
  std::ofstream(root / "fake_bench" / "fake_bench.json") << json{{"analysis", "fake_bench"}, {"checks", {check, other}}}.dump();
  // The same benchmark rerun under other conditions (e.g. other OpenBLAS kernels) gets its own row, named by its folder.
  fs::create_directories(root / "fake_bench@kernels");
  json faster = check;
  faster["detail"]["ours_s"] = {1.0, 1.0, 1.0};
  faster["tolerance"]["verdict"] = "holds";
  faster["holds"] = true;
  faster["verdict"] = "holds";
  std::ofstream(root / "fake_bench@kernels" / "fake_bench.json")
      << json{{"analysis", "fake_bench"}, {"checks", {faster}}, {"environment", {{"openblas_core", "Zen"}, {"cpu_model", "AMD EPYC 7B13"}}}}.dump();
  const Run r = run("sparseact_report --bench " + root.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  // A speed check written before verdicts said "does not hold" in its tolerance: a missed target.
  CHECK(r.output.find("| fake_bench | ? | ? | speedup | 2 | 7 | 3.5× | 4× | 5.0% | **contradicted** |") != std::string::npos);
  // Each row names the kernel set and the CPU it ran on (issue 50).
  CHECK(r.output.find("| fake_bench@kernels | Zen | AMD EPYC 7B13 | speedup | 1 | 7 | 7× | 4× | 5.0% | holds |") != std::string::npos);
  CHECK(r.output.find("agree") == std::string::npos);
  CHECK(r.output.find("2 speed checks") != std::string::npos);
  CHECK(fs::exists(root / "BENCH.md"));
  CHECK(run("sparseact_report --bench").code == 2);

  // A result written by a build of an uncommitted tree: a build of a committed one refuses it, one line, no BENCH.md
  // (a development build, itself uncommitted, reads it; CI's clean checkout takes the first branch).
  fs::remove(root / "BENCH.md");
  json stale = json{{"analysis", "fake_bench"}, {"version", "0.1.0-abc1234-dirty"}, {"checks", {check}}};
  fs::create_directories(root / "fake_bench@stale");
  std::ofstream(root / "fake_bench@stale" / "fake_bench.json") << stale.dump();
  const Run refused = run("sparseact_report --bench " + root.string());
  INFO(refused.output);
  if (std::string(sparseact::version()).find("-dirty") == std::string::npos) {
    CHECK(refused.code == 1);
    CHECK_THAT(refused.output, Catch::Contains("fake_bench@stale: written by sparseact 0.1.0-abc1234-dirty, a build of an uncommitted tree"));
    CHECK_FALSE(fs::exists(root / "BENCH.md"));
  } else {
    CHECK(refused.code == 0);
    CHECK(refused.output.find("| fake_bench@stale |") != std::string::npos);
  }
}

TEST_CASE("momlp_trees tests eq. (13) as printed against the built trees: an erratum with its smallest counterexample (issue 48)",
          "[analysis][momlp_trees]") {
  const fs::path out = fresh_dir("momlp_trees_eq13");
  const Run r = run("momlp_trees --scale quick --n 1,2 --nu 2,3 --probes 200 --out " + out.string());
  INFO(r.output);
  REQUIRE((r.code == 0 || r.code == 3));
  const json j = read_json(out / "momlp_trees.json");
  const auto c = std::find_if(j["checks"].begin(), j["checks"].end(), [](const json& x) { return x["id"] == "eq13_as_printed"; });
  REQUIRE(c != j["checks"].end());
  CHECK((*c)["kind"] == "claim");
  CHECK((*c)["verdict"] == "erratum");
  const std::string note = (*c)["note"];
  CHECK(note.find("Smallest counterexample among the built trees: ") != std::string::npos);
  // Every point: printed (ν^{h+1} − 1)/(h − 1) against the built count, which is the geometric sum (ν^{h+1} − 1)/(ν − 1); they
  // agree exactly where h = ν, and the check passes only there.
  for (const json& p : (*c)["detail"]["points"]) {
    const std::string label = p["point"];
    const auto nu = std::stoi(label.substr(label.find("ν = ") + std::string("ν = ").size()));
    const auto h = std::stoi(label.substr(label.find("h = ") + 4));
    CHECK(p["holds"].get<bool>() == (h == nu));
  }
}
