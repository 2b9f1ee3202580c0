// The analysis contract under bad input and kills (docs/DESIGN.md; issue 10), for every analysis:
//  * bad input exits 2 with one line on stderr and writes nothing — the common flags' cases for
//    every analysis, then each analysis's own cases;
//  * a run killed at any moment leaves --out with nothing or a complete set (the JSON and every
//    file it lists), also when it reruns into a folder that holds an earlier run;
//  * the same seed gives the same bytes in every output, PDF included (the JSON's elapsed_s aside).
// A new analysis joins with one line in kAnalyses (and its own bad cases in kOwnBadInput).
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <sparseact/core/npy.hpp>

#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace test_support;

namespace {

// kAnalyses (support.hpp): every analysis with flags for a run of about a second.

/// Bad values of the flags every analysis takes.
const char* kCommonBadInput[] = {
    "--seed -1", "--seed 1180591620717411303424", "--seed ''", "--seed 0x10", "--seed 1.5", "--seed nan",
    "--threads nan", "--threads -1", "--threads 1e3", "--threads ''", "--scale huge", "--device tpu",
    "--no-such-flag",
};

struct OwnCase {
  const char* name;
  const char* flags;
};

/// Each analysis's own bad input (flags added to its tiny run).
const OwnCase kOwnBadInput[] = {
    {"mp_spectrum", "--alpha nan"},
    {"mp_spectrum", "--weights ''"},
    {"mp_spectrum", "--n 0100 --d 0100"},  // base 10: 100 × 100 is square, c = 1 is refused
    {"mp_sweep", "--c nan,4"},
    {"mp_sweep", "--c inf"},
    {"lsh_buckets", "--eps nan"},
    {"lsh_learn", "--k-target 9 --d-lowdim 4 --targets lowdim"},
    {"lsh_learn", "--eps nan"},
    {"lsh_lower_bound", "--eps nan"},
    {"lsh_lower_bound", "--bits 0x10"},
    {"dsm_vs_dense", "--lr nan"},
    {"dsm_vs_dense", "--rho inf"},
    {"flatness_bounds", "--lr nan"},
    {"flatness_bounds", "--rel-tol inf"},
    {"sparsity_training", "--wd nan"},
    {"sparsity_training", "--test 20000"},  // the test split holds 10000 images
    {"weird_activation", "--shift nan"},
    {"weird_activation", "--steps 20 --warmup 30"},
    {"comet_utilization", "--sparsity-range 0.9,0.5"},
    {"comet_utilization", "--sparsity-range 0.5"},
    {"comet_utilization", "--sparsity-range 0.2,1.5"},
    {"spectral_training", "--c nan"},
    {"thm7_bounds", "--tau nan"},
    {"thm7_bounds", "--wd nan"},
    {"vc_super_expressive", "--k-max 40"},
    {"vc_super_expressive", "--k-random 0"},
    {"vc_shatter", "--class relu"},
    {"vc_shatter", "--L 9"},
    {"vc_shatter", "--J 0"},
    {"vc_shatter", "--net-n 9"},
    {"momlp_trees", "--delta 0.9"},
    {"momlp_trees", "--nu 1"},
    {"momlp_trees", "--domain sphere"},
    {"momlp_routing", "--nu 1"},
    {"momlp_routing", "--sets voronoi"},
    {"momlp_routing", "--prototypes /nonexistent/p.npy"},
    {"momlp_trees", "--eps 0"},
    {"momlp_trees", "--alpha 2"},
    {"momlp_regression", "--targets sphere"},
    {"momlp_regression", "--runs 1"},
    {"momlp_regression", "--K-sweep 0,2"},
    {"momlp_regression", "--budget time"},
    {"momlp_classify", "--K 0"},
    {"momlp_classify", "--K 400"},  // more prototypes than the tiny run's 300 training images
    {"momlp_classify", "--width 0"},
    {"momlp_classify", "--runs 1"},
    {"momlp_classify", "--batch 1"},  // BatchNorm needs two points a batch
    {"momlp_classify", "--test 20000"},  // the test split holds 10000 images
    {"momlp_classify", "--lr 0"},
    {"vc_super_expressive", "--k-certificates 0"},
    {"vc_bounds", "--L 0"},
    {"vc_bounds", "--J 1.5"},
    {"comet_ntk", "--pk 0.5,nan"},
    {"comet_ntk", "--gram-inputs 1"},
    {"comet_train", "--models moe"},
    {"comet_train", "--sparsity 1"},
    {"comet_train", "--widths 1"},
    {"comet_utilization", "--images 70000"},
    {"comet_utilization", "--nets 0"},
    {"comet_train", "--epochs 0"},
    {"comet_utilization", "--preprocess whiten"},
    {"comet_overlap", "--pk 0,0.5"},
    {"comet_overlap", "--pk 1.5"},
    {"comet_overlap", "--width 1"},
    {"comet_overlap", "--activation gelu"},
    {"comet_overlap", "--inputs /nonexistent/pairs.npy"},
    {"parrots_length2", "--V 16,2"},  // |V| < 3: no s, d and a vertex between
    {"parrots_length2", "--bits-max 0"},
    {"parrots_length2", "--n 0"},
    {"parrots_phonebook", "--lr 0"},
    {"parrots_phonebook", "--batch 1"},
    {"parrots_phonebook", "--heads 3"},  // 3 heads do not divide the widths 8, 12, 16
    {"parrots_memorize", "--K 1,3"},  // K must be a power of 2 (App. D.2, L671)
    {"parrots_memorize", "--m 2"},    // K = 4 routes on log₂K = 2 coordinates: the experts would see none
    {"parrots_memorize", "--c 0"},
    {"parrots_shortest_path", "--vertices 2"},  // a query needs s ≠ t and a path between them: |V| ≥ 3
    {"parrots_shortest_path", "--heads 3"},     // 3 heads do not divide the widths 8, 12, 16
    {"parrots_shortest_path", "--lr 0"},
    {"parrots_shortest_path", "--mean-length 0.5"},
    {"checkpoint_spectra", "/nonexistent/model.safetensors"},
    {"checkpoint_spectra", "--match 'no_such_layer'"},       // a regex that matches nothing
    {"checkpoint_spectra", "--match '('"},                   // not a regex
    {"checkpoint_spectra", "--min-dim 1000"},                // no tensor that large: no layer
    {"checkpoint_spectra", "--compare /nonexistent/b.safetensors"},  // --compare needs PATH
    {"checkpoint_spectra", "--conv fold"},
    {"checkpoint_spectra", "--mlp-input '['"},
    {"checkpoint_spectra", "--mp-level nan"},
};

const AnalysisUnderTest& find(const std::string& name) {
  for (const auto& a : kAnalyses)
    if (name == a.name) return a;
  FAIL("no analysis " << name << " in kAnalyses");
  return kAnalyses[0];
}

void require_rejected(const std::string& name, const std::string& flags, const fs::path& out) {
  CAPTURE(name, flags);
  const Run r = run(name + " " + find(name).tiny + " " + flags + " --out " + out.string());
  CHECK(r.code == 2);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK(r.output.find("error") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(out.parent_path()))  // no staging folder either
    CHECK(e.path().filename().string().find("sparseact-") == std::string::npos);
  fs::remove_all(out);  // one case's failure does not fail the next
}

/// --out holds nothing, or the JSON and every file it lists, and nothing else of ours.
void require_nothing_or_complete(const fs::path& out, const std::string& name) {
  if (!fs::exists(out)) return;
  const fs::path file = out / (name + ".json");
  REQUIRE(fs::exists(file));
  const json j = read_json(file);
  std::size_t listed = 1;
  for (const auto& f : j["files"]) {
    CHECK(fs::exists(out / f.get<std::string>()));
    ++listed;
  }
  CHECK(static_cast<std::size_t>(std::distance(fs::directory_iterator(out), fs::directory_iterator{})) == listed);
}

/// Starts `args` (argv[0] under the bin folder), kills it with SIGKILL after `delay`.
void run_and_kill(const std::vector<std::string>& args, std::chrono::microseconds delay) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    std::vector<std::string> store = args;
    store[0] = std::string(SPARSEACT_BIN_DIR) + "/" + store[0];
    for (auto& s : store) argv.push_back(s.data());
    argv.push_back(nullptr);
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

}  // namespace

TEST_CASE("every analysis rejects bad common flags with exit 2, one line, nothing written", "[contract][cli]") {
  const fs::path dir = fresh_dir("contract_common");
  fs::create_directories(dir);
  const fs::path plain_file = dir / "plain_file";
  std::ofstream(plain_file) << "x";
  for (const auto& a : kAnalyses) {
    for (const char* flags : kCommonBadInput) require_rejected(a.name, flags, dir / "out");
    // --out that cannot be a folder, and a device this analysis cannot use
    CAPTURE(a.name);
    const Run under_file = run(std::string(a.name) + " " + a.tiny + " --out " + (plain_file / "sub").string());
    CHECK(under_file.code == 2);
    CHECK(std::count(under_file.output.begin(), under_file.output.end(), '\n') == 1);
    if (!a.gpu_path) require_rejected(a.name, "--device cuda", dir / "out");
    const Run empty_out = run(std::string(a.name) + " " + a.tiny + " --out ''");
    CHECK(empty_out.code == 2);
  }
}

TEST_CASE("each analysis rejects its own bad input with exit 2, one line, nothing written", "[contract][cli]") {
  const fs::path dir = fresh_dir("contract_own");
  fs::create_directories(dir);
  for (const auto& c : kOwnBadInput) require_rejected(c.name, c.flags, dir / "out");
}

TEST_CASE("integers are read in base 10 and params record exactly what ran", "[contract][cli]") {
  const fs::path out = fresh_dir("contract_base10");
  const Run r = run("lsh_lower_bound --scale quick --seed 0100 --bits +010 --out " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const json j = read_json(out / "lsh_lower_bound.json");
  CHECK(j["seed"] == 100);
  CHECK(j["params"]["seed"] == 100);
  CHECK(j["params"]["bits"] == 10);
}

TEST_CASE("a run killed at any moment leaves nothing or a complete set, and the next run cleans up", "[contract][kill]") {
  const std::string name = "lsh_lower_bound";
  const fs::path dir = fresh_dir("contract_kill");
  fs::create_directories(dir);
  const fs::path out = dir / "out";
  const std::vector<std::string> args{name, "--scale", "quick", "--pdf", "--out", out.string()};
  // A complete run's duration sets the kill moments.
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(run(name + " --scale quick --pdf --out " + (dir / "reference").string()).code == 0);
  const auto full = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  constexpr int kKills = 12;
  for (int i = 1; i <= kKills; ++i) {  // into a fresh folder
    fs::remove_all(out);
    run_and_kill(args, full * i / (kKills + 1));
    require_nothing_or_complete(out, name);
  }
  REQUIRE(run(name + " --scale quick --pdf --out " + out.string()).code == 0);
  for (int i = 1; i <= kKills; ++i) {  // reruns into a folder holding a complete earlier run
    run_and_kill(args, full * i / (kKills + 1));
    REQUIRE(fs::exists(out / (name + ".json")));
    require_nothing_or_complete(out, name);
  }
  REQUIRE(run(name + " --scale quick --pdf --out " + out.string()).code == 0);
  for (const auto& e : fs::directory_iterator(dir)) {  // the completed run removed the killed runs' staging
    CAPTURE(e.path());
    CHECK(e.path().filename().string().find("sparseact-") == std::string::npos);
  }
}

TEST_CASE("the same seed gives the same bytes in every output, PDF included", "[contract][reproducible]") {
  const fs::path a = fresh_dir("contract_bytes_a"), b = fresh_dir("contract_bytes_b");
  REQUIRE(run("lsh_lower_bound --scale quick --pdf --out " + a.string()).code == 0);
  REQUIRE(run("lsh_lower_bound --scale quick --pdf --threads 1 --out " + b.string()).code == 0);
  json ja = read_json(a / "lsh_lower_bound.json"), jb = read_json(b / "lsh_lower_bound.json");
  REQUIRE(ja["files"].size() >= 4);
  bool has_pdf = false;
  for (const auto& f : ja["files"]) {
    const std::string file = f.get<std::string>();
    CAPTURE(file);
    has_pdf = has_pdf || file.size() > 4 && file.substr(file.size() - 4) == ".pdf";
    CHECK(read_bytes(a / file) == read_bytes(b / file));
  }
  CHECK(has_pdf);
  for (json* j : {&ja, &jb}) {
    j->erase("elapsed_s");
    (*j)["params"].erase("threads");
    (*j)["params"].erase("out");
  }
  CHECK(ja == jb);
}

TEST_CASE("comet_overlap --inputs: an odd row count or a non-finite entry exits 2; an even file is analysed", "[contract][cli]") {
  const fs::path dir = fresh_dir("contract_comet_inputs");
  fs::create_directories(dir);
  Eigen::MatrixXd odd = Eigen::MatrixXd::Random(7, 5), bad = Eigen::MatrixXd::Random(8, 5), good = Eigen::MatrixXd::Random(8, 5);
  bad(3, 2) = std::numeric_limits<double>::infinity();
  sparseact::save_npy(dir / "odd.npy", odd);
  sparseact::save_npy(dir / "bad.npy", bad);
  sparseact::save_npy(dir / "good.npy", good);
  for (const char* file : {"odd.npy", "bad.npy"}) {
    CAPTURE(file);
    const Run r = run(std::string("comet_overlap ") + find("comet_overlap").tiny + " --inputs " + (dir / file).string() + " --out " + (dir / "out").string());
    CHECK(r.code == 2);
    CHECK_FALSE(fs::exists(dir / "out"));
  }
  const Run ok = run(std::string("comet_overlap ") + find("comet_overlap").tiny + " --inputs " + (dir / "good.npy").string() + " --out " + (dir / "out").string());
  CHECK((ok.code == 0 || ok.code == 3 || ok.code == 4));
  CHECK(fs::exists(dir / "out" / "pairs.csv"));
}
